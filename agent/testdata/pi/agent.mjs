// Replays with pi's own Agent (@earendil-works/pi-agent-core@1.6.0, dist/agent.js) the cases of
// ../../pi_test.go and prints one line per observation; agent.out is this script's output, and
// the Go test runs the same cases on the reference Agent and compares line by line. Run it from
// a directory where pi is installed, e.g. bench/:
//
//	npm ci --prefix bench && cd bench && node ../agent/testdata/pi/agent.mjs > ../agent/testdata/pi/agent.out
import { core, says, calls, call, user, tool, show, model, textOf } from "../../../loop/testdata/pi/lib.mjs";
import { responseEvents, reply } from "../../../loop/testdata/pi/lib.mjs";

/** One message as a short line: role, then what distinguishes it. */
function summary(m) {
	switch (m.role) {
		case "system": {
			let s = `system:${textOf({ content: m.content })}`;
			if (m.toolsAdded?.length) s += ` +${m.toolsAdded.map((t) => t.name).join(",")}`;
			if (m.toolsRemoved?.length) s += ` -${m.toolsRemoved.map((t) => t.name).join(",")}`;
			return s;
		}
		case "user":
			return `user${typeof m.content === "string" ? "" : "[blocks]"}:${textOf(m)}`;
		case "assistant":
			return `assistant:${m.stopReason}:${textOf(m)}${m.errorMessage ? ` !${m.errorMessage}` : ""}`;
		case "toolResult":
			return `toolResult:${m.toolCallId}:${textOf(m)}`;
		default:
			return m.role;
	}
}

/** A short line per event, as the Go recorder renders it (message_update left out). */
function line(e) {
	switch (e.type) {
		case "message_start":
		case "message_end":
			return `${e.type} ${summary(e.message)}`;
		case "tool_execution_start":
			return `${e.type} ${e.toolCallId}`;
		case "tool_execution_end":
			return `${e.type} ${e.toolCallId} ${e.isError ? "err" : "ok"}`;
		case "turn_end":
			return `turn_end ${summary(e.message)} results=${e.toolResults.length}`;
		case "agent_end":
			return `agent_end ${e.messages.map(summary).join(" | ")}`;
		default:
			return e.type;
	}
}

/** A scripted stream function: each request takes the next reply (a message, or a function of
 * the request returning one or throwing); an aborted request is answered "aborted". */
function provider(...replies) {
	const p = {
		requests: [],
		streamFn(m, ctx, options) {
			p.requests.push(ctx.messages.map(summary));
			let next = replies.shift() ?? says("(unscripted)");
			if (typeof next === "function") next = next(p.requests.length);
			const final = options.signal?.aborted ? { ...reply("aborted"), errorMessage: "Request was aborted" } : structuredClone(next);
			const events = responseEvents(final);
			return {
				async *[Symbol.asyncIterator]() {
					yield* events;
				},
				result: async () => final,
			};
		},
	};
	return p;
}

/** A new Agent on the provider, recording its event lines. */
function agent(p, opts = {}) {
	const a = new core.Agent({ streamFn: p.streamFn, initialState: { model, ...opts.initialState }, ...opts.options });
	a.lines = [];
	a.subscribe((e) => {
		if (e.type !== "message_update") a.lines.push(line(e));
	});
	return a;
}

const u = (t) => user(t);
const err = async (f) => {
	try {
		await f();
		return "ok";
	} catch (e) {
		return e.message;
	}
};
const state = (a) => a.state.messages.map(summary);

{
	const p = provider(says("hello"));
	const a = agent(p);
	await a.prompt("hi");
	show("prompt text lines", a.lines);
	show("prompt text state", state(a));
	show("prompt text requests", p.requests);
	show("prompt text idle", [a.state.isStreaming, a.state.errorMessage ?? "", a.hasQueuedMessages()]);
}
{
	const p = provider(says("one"), says("two"));
	const a = agent(p);
	const running = a.prompt(u("first"));
	const refusals = [
		await err(() => a.prompt("again")),
		await err(() => a.continue()),
		await err(async () => a.reset()),
	];
	a.followUp(u("queued"));
	await running;
	show("busy refusals", refusals);
	show("busy lines", a.lines);
	show("busy requests", p.requests);
}
{
	const a = agent(provider());
	show("continue empty", await err(() => a.continue()));
	const b = agent(provider(), { initialState: { systemPrompt: "sys" } });
	show("continue system only", [await err(() => b.continue()), state(b), b.lines]);
}
{
	const p = provider();
	const a = agent(p, { initialState: { messages: [u("hi"), says("hello")] } });
	show("continue assistant empty queues", [await err(() => a.continue()), a.lines, p.requests.length]);
}
for (const mode of ["one-at-a-time", "all"]) {
	const p = provider(says("r1"), says("r2"), says("r3"));
	const a = agent(p, { initialState: { messages: [u("hi"), says("hello")] }, options: { steeringMode: mode } });
	a.steer(u("s1"));
	a.steer(u("s2"));
	a.followUp(u("f1"));
	const out = await err(() => a.continue());
	show(`continue assistant steering ${mode}`, [out, p.requests]);
	show(`continue assistant steering ${mode} lines`, a.lines);
	show(`continue assistant steering ${mode} queued`, a.hasQueuedMessages());
}
for (const mode of ["one-at-a-time", "all"]) {
	const p = provider(says("r1"), says("r2"), says("r3"));
	const a = agent(p, { initialState: { messages: [u("hi"), says("hello")] }, options: { followUpMode: mode } });
	a.followUp(u("f1"));
	a.followUp(u("f2"));
	show(`continue assistant follow-ups ${mode}`, [await err(() => a.continue()), p.requests]);
}
{
	const p = provider(says("again"));
	const a = agent(p, { initialState: { messages: [u("hi")] } });
	a.steer(u("s1"));
	show("continue user tail", [await err(() => a.continue()), p.requests, a.lines]);
}
{
	const p = provider(says("r1"), says("r2"));
	const a = agent(p);
	a.followUp(u("f1"));
	a.steer(u("s1"));
	await a.prompt("p");
	show("queued before prompt", p.requests);
	show("queued before prompt lines", a.lines);
}
for (const mode of ["one-at-a-time", "all"]) {
	const p = provider(calls(call("t1", "echo")), says("r2"), says("r3"), says("r4"));
	const a = agent(p, { initialState: { tools: [tool("echo")] }, options: { steeringMode: mode } });
	a.subscribe((e) => {
		if (e.type === "tool_execution_end") {
			a.steer(u("s1"));
			a.steer(u("s2"));
		}
	});
	await a.prompt("p");
	show(`steer during run ${mode}`, p.requests);
}
{
	const p = provider(says("r1"), says("r2"), says("r3"), says("r4"));
	const a = agent(p);
	for (const t of ["s1", "s2", "s3"]) a.steer(u(t));
	let switched = false;
	a.subscribe((e) => {
		if (e.type === "turn_end" && !switched) {
			switched = true;
			a.steeringMode = "all";
		}
	});
	await a.prompt("p");
	show("switch steering mode", [p.requests, a.steeringMode]);
}
{
	const p = provider(says("r1"), says("r2"), says("r3"));
	const a = agent(p, { options: { followUpMode: "all" } });
	a.followUp(u("f1"));
	a.subscribe((e) => {
		if (e.type === "turn_end" && p.requests.length === 1) {
			a.followUpMode = "one-at-a-time";
			a.followUp(u("f2"));
		}
	});
	await a.prompt("p");
	show("switch follow-up mode", [p.requests, a.followUpMode]);
}
{
	const p = provider(() => {
		throw new Error("provider down");
	});
	const a = agent(p, { initialState: { model: { ...model, api: "faux-api", provider: "faux", id: "faux-1" } } });
	let agentEnd;
	a.subscribe((e) => {
		if (e.type === "agent_end") agentEnd = e.messages[0];
	});
	const out = await err(() => a.prompt("hi"));
	show("error turn", [out, a.lines]);
	show("error turn state", [state(a), a.state.errorMessage, a.state.isStreaming]);
	const { timestamp, ...rest } = agentEnd;
	show("error turn message", rest);
	show("error turn continue", await err(() => a.continue()));
	a.steer(u("retry"));
	p.streamFn = undefined;
}
{
	let n = 0;
	const p = provider(says("fine"));
	const a = agent(p, {
		options: {
			prepareRequest: async () => {
				if (++n === 1) throw new Error("boom");
			},
		},
	});
	show("hook failure", [await err(() => a.prompt("hi")), a.lines, a.state.errorMessage]);
	a.steer(u("retry"));
	show("continue after error with steering", [await err(() => a.continue()), p.requests, state(a), a.state.errorMessage ?? ""]);
}
{
	const p = provider(calls(call("t1", "echo")), says("never"));
	const a = agent(p, { initialState: { tools: [tool("echo")] } });
	a.followUp(u("f1"));
	a.subscribe((e) => {
		if (e.type === "turn_end") a.abort();
	});
	a.steer(u("s1"));
	await a.prompt("p");
	show("abort between turns", [a.lines, a.state.errorMessage, a.hasQueuedMessages(), a.peekQueuedMessages().map(summary)]);
	show("abort between turns requests", p.requests);
}
{
	let n = 0;
	const p = provider(calls(call("t1", "echo")), says("never"));
	let a;
	a = agent(p, {
		initialState: { tools: [tool("echo")] },
		options: {
			prepareRequest: async () => {
				if (++n === 2) {
					a.abort();
					throw new Error("hook saw abort");
				}
			},
		},
	});
	a.followUp(u("f1"));
	await a.prompt("p");
	show("abort during hook", [a.lines, a.state.errorMessage, a.hasQueuedMessages()]);
}
{
	const p = provider(says("hello"));
	const a = agent(p);
	const log = [];
	let release;
	const gate = new Promise((r) => (release = r));
	let entered;
	const inListener = new Promise((r) => (entered = r));
	a.subscribe(async (e) => {
		if (e.type === "agent_end") {
			log.push(`listener holds, streaming=${a.state.isStreaming}`);
			entered();
			await gate;
			log.push("listener released");
		}
	});
	let promptDone = false;
	let idle = false;
	const running = a.prompt("hi").then(() => (promptDone = true));
	const waiting = a.waitForIdle().then(() => (idle = true));
	await inListener;
	for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
	log.push(`held: prompt=${promptDone} idle=${idle} refusal=${await err(() => a.prompt("x"))}`);
	release();
	await running;
	await waiting;
	log.push(`after: prompt=${promptDone} idle=${idle} streaming=${a.state.isStreaming}`);
	show("listener barrier", log);
}
{
	const p = provider(says("hello"));
	const a = agent(p);
	const log = [];
	a.subscribe(async (e) => {
		if (e.type === "message_end") {
			log.push(`A start ${summary(e.message)}`);
			await new Promise((r) => setTimeout(r, 5));
			log.push(`A end ${summary(e.message)}`);
		}
	});
	a.subscribe((e) => {
		if (e.type === "message_end") log.push(`B ${summary(e.message)}`);
	});
	await a.prompt("hi");
	show("listeners in order", log);
}
{
	const p = provider(calls(call("t1", "echo")), says("r1"), says("r2"), says("r3"));
	const a = agent(p, { initialState: { systemPrompt: "sys", tools: [tool("echo")] } });
	show("initial state", state(a));
	await a.prompt("one");
	a.state.tools = [tool("grep")];
	await a.prompt("two");
	a.state.tools = [];
	await a.prompt("three");
	show("tools change between prompts", state(a));
	show("tools change between prompts requests", p.requests);
	a.steer(u("s1"));
	a.followUp(u("f1"));
	show("reset", [await err(async () => a.reset()), state(a), a.hasQueuedMessages(), a.state.systemPrompt]);
}
{
	const p = provider(calls(call("t1", "probe")), says("done"));
	let a;
	const seen = [];
	const probe = tool("probe", () => {
		seen.push(`in execute: pending=${[...a.state.pendingToolCalls].join(",")} streaming=${a.state.isStreaming}`);
		return { content: [{ type: "text", text: "probed" }], details: {} };
	});
	a = agent(p, { initialState: { tools: [probe] } });
	a.subscribe((e) => {
		const sm = a.state.streamingMessage;
		if (["agent_start", "message_start", "message_end", "tool_execution_end", "agent_end"].includes(e.type))
			seen.push(`${e.type}: streaming=${a.state.isStreaming} streamingMessage=${sm ? sm.role : "-"} pending=${[...a.state.pendingToolCalls].join(",")} messages=${a.state.messages.length}`);
	});
	await a.prompt("hi");
	show("state during run", seen);
}
{
	const p = provider(() => {
		throw new Error("down");
	}, says("ok"));
	const a = agent(p);
	await a.prompt("hi");
	const before = a.state.errorMessage;
	let atStart;
	a.subscribe((e) => {
		if (e.type === "agent_start") atStart = a.state.errorMessage ?? "";
	});
	await a.prompt("again");
	show("error cleared by next run", [before, atStart, a.state.errorMessage ?? ""]);
}
{
	const p = provider(calls(call("t1", "echo")), says("r2"), says("r3"));
	const a = agent(p, { initialState: { tools: [tool("echo")] } });
	a.subscribe((e) => {
		if (e.type === "tool_execution_end") a.followUp(u("f1"));
	});
	await a.prompt("p");
	show("follow-up during run", p.requests);
}
{
	const a = agent(provider());
	a.abort();
	let resolved = false;
	await a.waitForIdle().then(() => (resolved = true));
	show("idle calls", [resolved, a.state.isStreaming, a.lines]);
}
{
	const p = provider(says("r1"));
	const a = agent(p);
	await a.prompt([u("a"), u("b")]);
	show("prompt messages", [p.requests, a.lines]);
}
{
	const a = agent(provider());
	a.steer(u("s1"));
	a.steer(u("s2"));
	a.followUp(u("f1"));
	a.followUp(u("f2"));
	const peeks = [a.peekQueuedMessages().map(summary)];
	a.steeringMode = "all";
	peeks.push(a.peekQueuedMessages().map(summary));
	a.clearSteeringQueue();
	peeks.push(a.peekQueuedMessages().map(summary));
	a.followUpMode = "all";
	peeks.push(a.peekQueuedMessages().map(summary));
	a.clearFollowUpQueue();
	peeks.push(a.peekQueuedMessages().map(summary), a.hasQueuedMessages());
	a.steer(u("s3"));
	a.followUp(u("f3"));
	a.clearAllQueues();
	peeks.push(a.hasQueuedMessages());
	show("peek and clear", peeks);
}
{
	const p = provider(says("hello"));
	const a = agent(p);
	const log = [];
	let unsubscribeB;
	let added = false;
	a.subscribe((e) => {
		if (e.type === "message_end" && !added) {
			added = true;
			log.push(`A ${summary(e.message)}`);
			unsubscribeB();
			a.subscribe((e2) => {
				if (e2.type === "message_end") log.push(`C ${summary(e2.message)}`);
			});
		}
	});
	unsubscribeB = a.subscribe((e) => {
		if (e.type === "message_end") log.push(`B ${summary(e.message)}`);
	});
	await a.prompt("hi");
	show("listener set changes during an event", log);
}
{
	const p = provider(says("r1"), says("r2"));
	const meta = [];
	const streamFn = p.streamFn;
	p.streamFn = (m, ctx, options) => {
		meta.push(`${m.id}:${options.reasoning ?? "off"}`);
		return streamFn(m, ctx, options);
	};
	const a = agent(p, { initialState: { thinkingLevel: "low" } });
	await a.prompt("one");
	a.state.model = { ...model, id: "other-model" };
	a.state.thinkingLevel = "off";
	await a.prompt("two");
	show("model and thinking level between prompts", [meta, state(a)]);
}
{
	const p = provider(says("r1"), says("r2"));
	const history = [u("hi"), calls(call("t1", "echo")), { role: "toolResult", toolCallId: "t1", toolName: "echo", content: [{ type: "text", text: "echo ok" }], isError: false, timestamp: 0 }];
	const a = agent(p, { initialState: { messages: history } });
	a.followUp(u("f1"));
	show("continue tool-result tail", [await err(() => a.continue()), p.requests]);
}
{
	const p = provider(says("r1"));
	const a = agent(p);
	a.state.messages = [u("replaced")];
	show("transcript replaced then continued", [await err(() => a.continue()), p.requests, state(a)]);
}
{
	const p = provider(says("r1"), says("r2"));
	const a = agent(p);
	a.steer(u("s1"));
	a.followUp(u("f1"));
	const running = a.prompt("p");
	const refusals = [await err(() => a.prompt("x")), await err(() => a.continue())];
	const peek = a.peekQueuedMessages().map(summary);
	await running;
	show("refusals keep the queues", [refusals, peek, p.requests]);
}
{
	const p = provider(calls(call("t1", "echo")), () => {
		throw new Error("down on turn 2");
	});
	const a = agent(p, { initialState: { tools: [tool("echo")] } });
	await a.prompt("p");
	show("error after a tool turn", [a.lines.slice(-4), state(a), a.state.errorMessage]);
}
{
	const p = provider(() => {
		throw new Error("no model");
	});
	const a = new core.Agent({ streamFn: p.streamFn });
	let end;
	a.subscribe((e) => {
		if (e.type === "agent_end") end = e.messages[0];
	});
	await a.prompt("hi");
	show("default model", [end.api, end.provider, end.model, a.state.thinkingLevel]);
}
