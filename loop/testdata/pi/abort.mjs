// Checks abort_test.go: aborts before, during and after tools (pi 1.6.0: every remaining call
// still gets its start/end and "Operation aborted"; the next request is still made).
import { run, provider, says, calls, call, tool, show, ok, user, queue, resultTexts } from "./lib.mjs";

async function scenario(name, blocks, { abortOn, tools: makeTools, config = {}, toolExecution } = {}) {
	const ac = new AbortController();
	const steering = queue();
	const followUp = queue("one-at-a-time", user("later"));
	const log = [];
	let beforeCalls = 0;
	const abort = () => ac.abort();
	const tools = makeTools ? makeTools(abort, log) : [tool("a", undefined, {}, log), tool("b", undefined, {}, log), tool("c", undefined, {}, log)];
	const p = provider(calls(...blocks), says("never"));
	const r = await run({
		provider: p,
		tools,
		signal: ac.signal,
		config: {
			toolExecution,
			getSteeringMessages: steering.poll,
			getFollowUpMessages: followUp.poll,
			beforeToolCall: async (ctx) => {
				beforeCalls++;
				return config.beforeToolCall?.(ctx, abort);
			},
			afterToolCall: config.afterToolCall && ((ctx) => config.afterToolCall(ctx, abort)),
		},
		onEvent: (e) => abortOn?.(e, abort),
	});
	show(`${name}: lines`, r.lines);
	show(`${name}: texts`, resultTexts(r.messages));
	show(`${name}: ends with durationMs`, r.events.filter((e) => e.type === "tool_execution_end" && "durationMs" in e).map((e) => e.toolCallId));
	show(`${name}: executed, beforeToolCall calls, requests, steering polls, follow-up polls, follow-ups queued`, [log, beforeCalls, p.requests.length, steering.polls, followUp.polls, followUp.items.length]);
	show(`${name}: last assistant`, [r.messages.at(-1).stopReason, r.messages.at(-1).errorMessage]);
}

const three = [call("a", "a"), call("b", "ghost"), call("c", "c")];
await scenario("before the run", three, { abortOn: (e, abort) => e.type === "agent_start" && abort() });
await scenario("before tools", three, { abortOn: (e, abort) => e.type === "message_end" && e.message.role === "assistant" && abort() });
await scenario("during tools (sequential)", [call("a", "a"), call("b", "b"), call("c", "c")], {
	toolExecution: "sequential",
	tools: (abort, log) => [tool("a", async () => (abort(), ok("a ok")), {}, log), tool("b", undefined, {}, log), tool("c", undefined, {}, log)],
});
await scenario("during tools (parallel)", [call("a", "a"), call("b", "b")], {
	tools: (abort, log) => {
		let release;
		const bStarted = new Promise((resolve) => (release = resolve));
		return [
			tool("a", async () => (await bStarted, abort(), ok("a ok")), {}, log),
			tool(
				"b",
				async (id, args, signal) => {
					release();
					await new Promise((resolve) => signal.addEventListener("abort", resolve));
					throw new Error("b saw the abort");
				},
				{},
				log,
			),
		];
	},
});
await scenario("during preparation (parallel)", [call("a", "a"), call("b", "b"), call("c", "c")], {
	config: { beforeToolCall: async ({ toolCall }, abort) => void (toolCall.id === "b" && abort()) },
});
await scenario("after tools", [call("a", "a"), call("b", "b")], {
	config: { afterToolCall: async ({ toolCall }, abort) => void (toolCall.id === "b" && abort()) },
});
