// Checks prepare_test.go: tool call preparation (lookup, prepareArguments, validation,
// beforeToolCall) and the error results it produces.
import { run, provider, says, calls, call, tool, show, ok, resultTexts } from "./lib.mjs";

const numberSchema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };

/** Runs one response's calls; returns results texts, executed args, before-hook views and end events. */
async function scenario(name, blocks, { toolExtra = {}, config = {} } = {}) {
	const executed = [];
	const calc = tool("calc", async (id, args) => (executed.push(args), ok(`n=${JSON.stringify(args.n)}`)), { parameters: numberSchema, ...toolExtra });
	const r = await run({ provider: provider(calls(...blocks), says("done")), tools: [calc, tool("echo")], config });
	const ends = r.events.filter((e) => e.type === "tool_execution_end").map((e) => [e.toolCallId, e.isError, "durationMs" in e, e.result.details]);
	show(`${name}: texts`, resultTexts(r.messages));
	show(`${name}: executed args, ends [id, isError, has durationMs, details]`, [executed, ends]);
	return r;
}

let beforeCalls = 0;
await scenario("not found", [call("t1", "ghost", { a: 1 })], { config: { beforeToolCall: async () => void beforeCalls++ } });
show("not found: beforeToolCall calls", beforeCalls);
await scenario("missing property", [call("t1", "calc", {})]);
await scenario("wrong type", [call("t1", "calc", { n: "abc" })]);
{
	const r = await scenario("coerced", [call("t1", "calc", { n: "42" })]);
	const start = r.events.find((e) => e.type === "tool_execution_start");
	show("coerced: start args, transcript args", [start.args, r.messages.find((m) => m.role === "assistant").content[0].arguments]);
}
await scenario("arguments error", [call("t1", "calc", {}, { argumentsError: "Unexpected token } in JSON at position 7" })]);
await scenario("prepareArguments", [call("t1", "calc", { num: 5 })], { toolExtra: { prepareArguments: (a) => ({ n: a.num }) } });
await scenario("prepareArguments throws", [call("t1", "calc", { num: 5 })], {
	toolExtra: {
		prepareArguments: () => {
			throw new Error("cannot prepare");
		},
	},
});
await scenario("prepareArguments then argumentsError", [call("t1", "calc", {}, { argumentsError: "bad json" })], { toolExtra: { prepareArguments: () => ({ n: 1 }) } });
const guard = (answer) => async ({ toolCall }) => (toolCall.name === "calc" ? answer() : undefined);
await scenario("blocked with reason", [call("t1", "calc", { n: 1 }), call("t2", "echo")], { config: { beforeToolCall: guard(() => ({ block: true, reason: "not allowed" })) } });
await scenario("blocked without reason", [call("t1", "calc", { n: 1 })], { config: { beforeToolCall: guard(() => ({ block: true })) } });
await scenario("before throws", [call("t1", "calc", { n: 1 })], {
	config: {
		beforeToolCall: guard(() => {
			throw new Error("hook exploded");
		}),
	},
});
await scenario("before answers block false", [call("t1", "calc", { n: 1 })], { config: { beforeToolCall: guard(() => ({ block: false, reason: "ignored" })) } });
{
	const views = [];
	await scenario("before mutates args", [call("t1", "calc", { n: "7" })], {
		config: {
			beforeToolCall: async ({ toolCall, args, assistantMessage, context }) => {
				views.push({ toolCallArgs: toolCall.arguments, args: { ...args }, assistant: assistantMessage.stopReason, context: context.messages.map((m) => m.role) });
				args.n = "not a number";
				args.extra = true;
			},
		},
	});
	show("before mutates args: hook saw", views);
}
{
	const r = await run({ provider: provider(calls(call("t1", 'say "hi"', {}, { argumentsError: "bad json" })), says("done")), tools: [tool('say "hi"')] });
	show("arguments error, quoted name: texts", resultTexts(r.messages));
}
