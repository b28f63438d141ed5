// Checks execute_test.go: execution, updates, durationMs, afterToolCall overrides.
import { run, provider, says, calls, call, tool, show, ok, text, resultTexts } from "./lib.mjs";

// A monotonic clock only tools advance, so durationMs is exact.
let mono = 0;
performance.now = () => mono;

async function scenario(name, execute, config = {}) {
	const r = await run({ provider: provider(calls(call("t1", "job", { q: "raw" })), says("done")), tools: [tool("job", execute)], config });
	const end = r.events.find((e) => e.type === "tool_execution_end");
	const msg = r.messages.find((m) => m.role === "toolResult");
	show(`${name}: lines`, r.lines.slice(8, 14));
	show(`${name}: end result, isError, durationMs`, [end.result, end.isError, end.durationMs]);
	show(`${name}: message content, details, isError, durationMs`, [msg.content, msg.details, msg.isError, msg.durationMs]);
	return r;
}

await scenario("throws", async () => {
	mono += 3;
	throw new Error("disk full");
});
await scenario("isError result", async () => ({ content: [text("bad input")], details: { code: 7 }, isError: true }));
await scenario("null content", async () => ({ content: null, details: { note: "nothing" } }));
await scenario("rounding up", async () => ((mono += 1.5), ok("slow")));
await scenario("rounding down", async () => ((mono += 1.4), ok("quick")));
{
	let late;
	const r = await scenario("updates", async (id, args, signal, onUpdate) => {
		onUpdate({ content: [text("25%")], details: {} });
		onUpdate({ content: [text("50%")], details: {} });
		late = onUpdate;
		return ok("100%");
	}, { afterToolCall: async () => void late({ content: [text("late")], details: {} }) });
	const updates = r.events.filter((e) => e.type === "tool_execution_update");
	show("updates: update events", updates.map((e) => [e.toolCallId, e.toolName, e.args, e.partialResult.content[0].text]));
	late({ content: [text("after the run")], details: {} });
	show("updates: after the run", r.events.filter((e) => e.type === "tool_execution_update").length);
}
const structured = async () => ({ content: [text("orig")], details: { d: 1 }, structuredContent: { s: 1 }, usage: undefined });
await scenario("after replaces content", structured, { afterToolCall: async () => ({ content: [text("replaced")] }) });
await scenario("after replaces content and structured", structured, { afterToolCall: async () => ({ content: [text("replaced")], structuredContent: { s: 2 } }) });
await scenario("after replaces details", structured, { afterToolCall: async () => ({ details: { d: 2 } }) });
await scenario("after marks error", structured, { afterToolCall: async () => ({ isError: true }) });
await scenario("after clears error", async () => ({ content: [text("bad")], details: {}, isError: true }), { afterToolCall: async () => ({ isError: false }) });
await scenario("after returns nothing", structured, { afterToolCall: async () => undefined });
await scenario("after throws", structured, {
	afterToolCall: async () => {
		throw new Error("after exploded");
	},
});
{
	const seen = [];
	await scenario("after sees", async () => ({ content: [text("bad")], details: {}, isError: true }), {
		afterToolCall: async ({ toolCall, args, result, isError, assistantMessage, context }) =>
			void seen.push([toolCall.id, args, result.content[0].text, isError, assistantMessage.stopReason, context.messages.map((m) => m.role)]),
	});
	show("after sees: hook saw", seen);
}
