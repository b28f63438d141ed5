// runToolCall sessions (PROTOCOL.md §13.7): each tool call of the transcript's last message
// through the adapter's runToolCall, one outcome per call, then an end with no messages.

import assert from "node:assert/strict";
import { test } from "node:test";
import { installVirtualTime } from "../index.mjs";
import { HELLO2, answer, briefs, converse, deliver, start, stop } from "./harness.mjs";

installVirtualTime();

const assistant = (...ids) => ({ role: "assistant", content: ids.map((id) => ({ type: "toolCall", id, name: "echo", arguments: { v: id } })), timestamp: 0 });
const session = (...ids) => start(1, { entry: "runToolCall", tools: [{ name: "echo", parameters: { type: "object" } }], messages: [{ role: "user", content: "go", timestamp: 0 }, assistant(...ids)] });

test("runToolCall: the calls run one after the other; each outcome carries the updates onUpdate got; a rejection is refused; the end has no messages", async () => {
	const runToolCall = async (s, toolCall, onUpdate) => {
		if (toolCall.id === "c") throw new Error("boom");
		const result = await s.runTool(toolCall.id, toolCall.name, toolCall.arguments, onUpdate);
		return { toolCall, result, isError: false, durationMs: 4 };
	};
	const { written } = await converse(
		() => assert.fail("run is not called in a runToolCall session"),
		[HELLO2, session("a", "b", "c"), answer(1, {}), deliver("toolUpdate", 1, "a", { content: [{ type: "text", text: "half" }] }), deliver("toolResult", 4, "a", { result: { content: [] } }), answer(2, {}), deliver("toolResult", 5, "b", { result: { content: [] } }), stop()],
		{ protocol: 2, runToolCall },
	);
	assert.deepEqual(written[0].capabilities.lacks, ["agent"], "an adapter with a runToolCall function does not lack it");
	assert.deepEqual(briefs(written).filter((b) => b !== "idle"), [
		"hello", "call 1 tool", "outcome a runToolCall resolved", "call 2 tool", "outcome b runToolCall resolved", "outcome c runToolCall refused boom", 'end {"messages":[]}', "stopped",
	]);
	const outcomes = written.filter((m) => m.notification?.kind === "outcome").map((m) => m.notification.data);
	assert.deepEqual(outcomes[0], { id: "a", op: "runToolCall", outcome: "resolved", toolCall: assistant("a").content[0], result: { content: [] }, isError: false, durationMs: 4, updates: [{ content: [{ type: "text", text: "half" }] }] });
	assert.equal(outcomes[1].updates, undefined, "no updates: the field is left out");
});

test("runToolCall: without a runToolCall function the hello lacks it, and a runToolCall session is an adapter error", async () => {
	const { written, status } = await converse(() => [], [HELLO2, session("a"), stop()], { protocol: 2, agent: () => ({ operate() {} }) });
	assert.deepEqual(written[0].capabilities.lacks, ["runToolCall"]);
	assert.equal(status, 1);
	assert.match(briefs(written).at(-1), /^error session 1 is a runToolCall scenario, but the adapter gave serve\(\) no runToolCall function/);
	await assert.rejects(converse(() => [], [HELLO2], { protocol: 2, runToolCall: 1 }), /options\.runToolCall must be a function/);
});
