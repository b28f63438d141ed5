// Scripted sessions of the pi adapter over protocol version 2 (PROTOCOL.md §13): the harness's
// lines written in advance (the adapter reads a line only when the protocol lets the harness
// speak), the adapter run as a process on pi 1.6.0, its lines compared. One Agent scenario
// (prompt, steer during the run, followUp, waitForIdle, state) and one session per loop-level
// gap (a tool resolving nothing, stream options, an abort during a hook).
//
//	npm ci --prefix conformance/adapters/pi && node --test conformance/adapters/pi/tests/

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { RELEASES } from "../releases.mjs";

const ADAPTER = fileURLToPath(new URL("../adapter.mjs", import.meta.url));
const HELLO2 = { type: "hello", protocol: 1, protocols: [1, 2] };
const MODEL = { id: "faux-1", api: "faux", provider: "faux" };
const USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const PI_IDENTITY = { attribution: { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] } };

const user = (text, timestamp = 0) => ({ role: "user", content: text, timestamp });
const assistant = (content, stopReason = "stop", timestamp = 0) => ({ role: "assistant", content, api: "faux", provider: "faux", model: "faux-1", usage: USAGE, stopReason, timestamp });
const text = (t) => [{ type: "text", text: t }];
const done = (message) => ({ type: "done", reason: message.stopReason, message });

const start = (setup) => ({ type: "start", session: 1, setup: { scenario: "t", messages: [], tools: [], activeTools: [], model: MODEL, thinkingLevel: "off", toolExecution: "parallel", hooks: [], entry: "run", ...setup } });
const answer = (id, data, extra = {}) => ({ type: "answer", id, data, ...extra });
const deliver = (kind, now, target, data) => ({ type: "deliver", session: 1, delivery: { kind, now, target, data } });
const op = (now, id, data) => deliver("agent", now, id, data);
const STOP = { type: "stop", session: 1 };

/** Runs the adapter on the scripted lines; returns its output, parsed. */
function converse(msgs, args = []) {
	const input = [...msgs, { type: "shutdown" }].map((m) => JSON.stringify(m) + "\n").join("");
	const r = spawnSync(process.execPath, [ADAPTER, ...args], { input, encoding: "utf8", timeout: 60_000 });
	assert.equal(r.status, 0, `adapter exited ${r.status}: ${r.stderr}`);
	return r.stdout.trim().split("\n").map((l) => JSON.parse(l));
}

/** A short line per message: what the assertions compare. */
function brief(m) {
	if (m.type === "call") return `call ${m.id} ${m.call.kind}${m.call.name ? ":" + m.call.name : ""}`;
	if (m.type !== "notify") return m.type;
	const { kind, data } = m.notification;
	if (kind === "outcome") return `outcome ${data.id} ${data.op} ${data.outcome}${data.error ? ": " + data.error : ""}`;
	if (kind === "end") return `end${data.error ? " " + data.error : ""}`;
	const msg = data.message;
	const what = msg ? ` ${msg.role}${typeof msg.content === "string" ? " " + msg.content : Array.isArray(msg.content) ? " " + msg.content.map((c) => c.text ?? c.type).join("|") : ""}` : "";
	return `ev ${data.type}${what}${data.type === "tool_execution_end" ? ` ${data.isError ? "error" : "ok"} ${data.result?.content?.[0]?.text}` : ""}`;
}
const find = (out, pred) => out.find(pred);
const outcome = (out, id) => find(out, (m) => m.notification?.kind === "outcome" && m.notification.data.id === id)?.notification.data;


for (const release of RELEASES) test(`an Agent scenario on pi ${release}'s Agent: prompt, steer during the run, followUp, waitForIdle, state`, () => {
	const old = RELEASES.indexOf(release) < RELEASES.indexOf("1.4.0"); // no identity before 1.4.0
	const level = release === "0.87.1" ? {} : { thinkingLevel: "off" }; // 0.99.1 stamps the requested level
	const out = converse([
		HELLO2,
		start({ entry: "agent", streamOptions: true, agent: { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", systemPrompt: "Be brief.", sessionId: "s-1" } }),
		op(0, "u1", { op: "prompt", text: "hi" }),
		answer(1, { stream: "1" }),
		op(1, "u2", { op: "steer", message: user("steer", 1) }),
		op(2, "u3", { op: "followUp", message: user("later", 2) }),
		op(3, "u4", { op: "waitForIdle" }),
		op(4, "u5", { op: "prompt", text: "busy?" }),
		deliver("streamEvent", 5, "1", done(assistant(text("one")))),
		answer(2, { stream: "2" }),
		op(6, "u6", { op: "state" }),
		deliver("streamEvent", 8, "2", done(assistant(text("two"), "stop", 5))),
		answer(3, { stream: "3" }),
		deliver("streamEvent", 10, "3", done(assistant(text("three"), "stop", 8))),
		op(10, "final", { op: "state" }),
		STOP,
	], ["--pi", release]);
	assert.deepEqual(out.map(brief), [
		"hello",
		"idle",
		"ev agent_start",
		"ev turn_start",
		"ev message_start user hi",
		"ev message_end user hi",
		"call 1 stream",
		"idle",
		"outcome u2 steer accepted",
		"idle",
		"outcome u3 followUp accepted",
		"idle",
		"idle", // waitForIdle: nothing until the run ends
		"outcome u5 prompt refused: Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.",
		"idle",
		"ev message_start assistant one",
		"ev message_end assistant one",
		"ev turn_end assistant one",
		"ev turn_start",
		"ev message_start user steer",
		"ev message_end user steer",
		"call 2 stream",
		"idle",
		"outcome u6 state accepted",
		"idle",
		"ev message_start assistant two",
		"ev message_end assistant two",
		"ev turn_end assistant two",
		"ev turn_start",
		"ev message_start user later",
		"ev message_end user later",
		"call 3 stream",
		"idle",
		"ev message_start assistant three",
		"ev message_end assistant three",
		"ev turn_end assistant three",
		"ev agent_end",
		"outcome u4 waitForIdle resolved", // pi settles waitForIdle first,
		"outcome u1 prompt resolved", // then the prompt that started the run
		"idle",
		"outcome final state accepted",
		"idle",
		"stopped",
	]);
	assert.equal(out[0].protocol, 2);
	const system = { role: "system", content: "Be brief.", timestamp: 0 };
	const hi = { role: "user", content: text("hi"), timestamp: 0 };
	assert.deepEqual(out[6].call.data, { model: MODEL, messages: [system, hi], thinkingLevel: "off", apiKey: "", options: old ? { sessionId: "s-1" } : { sessionId: "s-1", identity: PI_IDENTITY } });
	assert.deepEqual(outcome(out, "u6").state, {
		isStreaming: true,
		messages: [system, hi, { ...assistant(text("one")), ...level }, user("steer", 1)],
		pendingToolCalls: [],
		queued: [user("later", 2)],
		hasQueuedMessages: true,
	});
	const final = outcome(out, "final").state;
	assert.deepEqual(
		final.messages.map((m) => (typeof m.content === "string" ? m.content : m.content[0].text)),
		["Be brief.", "hi", "one", "steer", "two", "later", "three"],
	);
	assert.deepEqual({ ...final, messages: undefined }, { isStreaming: false, messages: undefined, pendingToolCalls: [], queued: [], hasQueuedMessages: false });
});

const CLOCK = { name: "clock", description: "Reads the clock", parameters: { type: "object" } };
const callClock = assistant([{ type: "toolCall", id: "t1", name: "clock", arguments: {} }], "toolUse");

test("a tool resolving nothing (§13.3): pi 1.6.0 turns undefined and null into an error result", () => {
	for (const nothing of ["undefined", "null"]) {
		const out = converse([
			HELLO2,
			start({ tools: [CLOCK], activeTools: ["clock"], prompts: [user("time?")] }),
			answer(1, { stream: "1" }),
			deliver("streamEvent", 5, "1", done(callClock)),
			answer(2, {}),
			deliver("toolResult", 15, "t1", { nothing }),
			answer(3, { stream: "2" }),
			STOP,
		]);
		const end = find(out, (m) => m.notification?.data?.type === "tool_execution_end").notification.data;
		const property = nothing === "undefined" ? "Cannot read properties of undefined (reading 'isError')" : "Cannot read properties of null (reading 'isError')";
		assert.deepEqual(end, { type: "tool_execution_end", toolCallId: "t1", toolName: "clock", result: { content: text(property), details: {} }, isError: true, durationMs: 10 });
		assert.equal(brief(out.at(-3)), "call 3 stream"); // the run goes on to the next request
	}
});

test("stream options (§13.4): sessionId and identity reach the stream function; absent without streamOptions", () => {
	const script = (setup) => [HELLO2, start({ prompts: [user("hi")], ...setup }), answer(1, { stream: "1" }), STOP];
	const streamCall = (out) => find(out, (m) => m.type === "call").call;
	const on = converse(script({ streamOptions: true, sessionId: "s-9", identity: { userAgent: "short", version: "9" } }));
	assert.deepEqual(streamCall(on).data.options, { sessionId: "s-9", identity: { ...PI_IDENTITY, userAgent: "short", version: "9" } });
	const bare = converse(script({ streamOptions: true }));
	assert.deepEqual(streamCall(bare).data.options, { identity: PI_IDENTITY });
	const off = converse(script({ sessionId: "s-9" }));
	assert.deepEqual(Object.keys(streamCall(off).data).sort(), ["apiKey", "messages", "model", "thinkingLevel"]);
	// Before 1.4.0, config.identity as it is: none when unset, the given one unmerged.
	const old = converse(script({ streamOptions: true, sessionId: "s-9" }), ["--pi", "1.3.0"]);
	assert.equal(old[0].capabilities.lacks?.length ?? 0, 0);
	assert.deepEqual(streamCall(old).data.options, { sessionId: "s-9" });
	const oldGiven = converse(script({ streamOptions: true, identity: { userAgent: "short" } }), ["--pi", "1.3.0"]);
	assert.deepEqual(streamCall(oldGiven).data.options, { identity: { userAgent: "short" } });
});

test("an abort during a hook (§13.5): the run's signal fires before beforeToolCall returns", () => {
	const out = converse([
		HELLO2,
		start({ tools: [CLOCK], activeTools: ["clock"], hooks: ["beforeToolCall"], prompts: [user("time?")] }),
		answer(1, { stream: "1" }),
		deliver("streamEvent", 5, "1", done(callClock)),
		answer(2, {}, { abort: true }),
		answer(3, { stream: "2" }),
		STOP,
	]);
	assert.deepEqual(out.slice(-9).map(brief), [
		"call 2 hook:beforeToolCall",
		"ev tool_execution_end error Operation aborted", // pi checks the signal right after beforeToolCall
		"ev message_start toolResult Operation aborted",
		"ev message_end toolResult Operation aborted",
		"ev turn_end assistant toolCall",
		"ev turn_start",
		"call 3 stream", // the loop checks the signal nowhere else: the stream function must (a provider would)
		"idle",
		"stopped",
	]);
});

test("an abort during a hook in an Agent scenario calls agent.abort(): the tool call is aborted, the Agent's signal fired", () => {
	const out = converse([
		HELLO2,
		start({ entry: "agent", tools: [CLOCK], activeTools: ["clock"], hooks: ["beforeToolCall"], agent: { steeringMode: "all", followUpMode: "all" } }),
		op(0, "u1", { op: "prompt", text: "time?" }),
		answer(1, { stream: "1" }),
		deliver("streamEvent", 5, "1", done(callClock)),
		answer(2, {}, { abort: true }),
		answer(3, { stream: "2" }),
		op(6, "u2", { op: "state" }),
		STOP,
	]);
	assert.deepEqual(out.slice(-11).map(brief), [
		"call 2 hook:beforeToolCall",
		"ev tool_execution_end error Operation aborted",
		"ev message_start toolResult Operation aborted",
		"ev message_end toolResult Operation aborted",
		"ev turn_end assistant toolCall",
		"ev turn_start",
		"call 3 stream",
		"idle",
		"outcome u2 state accepted",
		"idle",
		"stopped",
	]);
	assert.equal(outcome(out, "u2").state.isStreaming, true);
});

test("barriers hold pi's Agent: nothing moves until the release; at agent_end, waitForIdle and the prompt settle after it", () => {
	const out = converse([
		HELLO2,
		start({ entry: "agent", agent: { steeringMode: "all", followUpMode: "all", barriers: [{ id: "b1", event: "message_end", nth: 2 }, { id: "b2", event: "agent_end" }] } }),
		op(0, "u1", { op: "prompt", text: "hi" }),
		answer(1, { stream: "1" }),
		deliver("streamEvent", 5, "1", done(assistant(text("one")))),
		op(6, "u2", { op: "waitForIdle" }),
		op(7, "u3", { op: "release", barrier: "b2" }),
		op(8, "u4", { op: "release", barrier: "b1" }),
		op(9, "u5", { op: "reset" }),
		op(10, "u6", { op: "release", barrier: "b2" }),
		op(11, "u7", { op: "reset" }),
		op(12, "final", { op: "state" }),
		STOP,
	]);
	assert.deepEqual(out.map(brief), [
		"hello",
		"idle",
		"ev agent_start",
		"ev turn_start",
		"ev message_start user hi",
		"ev message_end user hi",
		"call 1 stream",
		"idle",
		"ev message_start assistant one",
		"ev message_end assistant one", // the 2nd message_end: held by b1
		"idle",
		"idle",
		"outcome u3 release refused: barrier b2 is not held",
		"idle",
		"outcome u4 release accepted",
		"ev turn_end assistant one",
		"ev agent_end", // held by b2
		"idle",
		"outcome u5 reset refused: Agent is already processing. Wait for completion before resetting.",
		"idle",
		"outcome u6 release accepted",
		"outcome u2 waitForIdle resolved",
		"outcome u1 prompt resolved",
		"idle",
		"outcome u7 reset accepted",
		"idle",
		"outcome final state accepted",
		"idle",
		"stopped",
	]);
	assert.deepEqual(outcome(out, "final").state, { isStreaming: false, messages: [], pendingToolCalls: [], queued: [], hasQueuedMessages: false });
});

test("runToolCall (§13.7): pi's runToolCall from 0.99.1 on, no events, an outcome per call; 0.87.1 lacks it", () => {
	const tools = [{ name: "echo", description: "Echo", parameters: { type: "object", properties: { v: { type: "string" } } } }];
	const calls = [
		{ type: "toolCall", id: "a", name: "echo", arguments: { v: "x" } },
		{ type: "toolCall", id: "d", name: "missing", arguments: {} },
	];
	const script = [HELLO2, start({ entry: "runToolCall", tools, activeTools: ["echo"], messages: [user("go"), assistant(calls, "toolUse")] }), answer(1, {}),
		deliver("toolUpdate", 1, "a", { content: text("half") }), deliver("toolResult", 2, "a", { result: { content: text("x") } }), STOP];
	const out = converse(script);
	assert.equal(out[0].capabilities.lacks, undefined);
	assert.equal(out.filter((m) => m.notification?.kind === "event").length, 0, "runToolCall emits no events");
	const outcomes = out.filter((m) => m.notification?.kind === "outcome").map((m) => m.notification.data);
	assert.deepEqual(outcomes.map((o) => [o.id, o.outcome, o.isError, o.result.content[0].text]), [["a", "resolved", false, "x"], ["d", "resolved", true, "Tool missing not found"]]);
	assert.deepEqual(outcomes[0].updates, [{ content: text("half") }]);
	assert.deepEqual(find(out, (m) => m.notification?.kind === "end").notification.data, { messages: [] });
	const old = converse([HELLO2], ["--pi", "0.87.1"]);
	assert.deepEqual(old[0].capabilities.lacks, ["runToolCall"]);
});
