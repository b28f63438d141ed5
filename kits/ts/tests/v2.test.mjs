// Protocol version 2 (PROTOCOL.md §13): negotiation, Agent scenarios (operations, outcomes,
// barriers), tools resolving nothing, answers with abort, stream options.

import assert from "node:assert/strict";
import { test } from "node:test";
import { DeliveryError, installVirtualTime } from "../index.mjs";
import { HELLO, HELLO2, answer, briefs, converse, deliver, start, stop } from "./harness.mjs";

installVirtualTime();

const agentStart = (agent, setup = {}) => start(1, { entry: "agent", hooks: [], agent: { steeringMode: "all", followUpMode: "all", ...agent }, ...setup });
const op = (now, id, data) => deliver("agent", now, id, data);

test("negotiation: a v2 adapter answers 2 to a v2 harness, 1 to a v1 hello; v1 hellos never name v2 features", async () => {
	const options = { protocol: 2, agent: () => ({ operate() {} }), lacks: ["continue", "streamOptions"] };
	const v2 = await converse(() => [], [HELLO2], options);
	assert.equal(v2.written[0].protocol, 2);
	assert.deepEqual(v2.written[0].capabilities.lacks, ["continue", "streamOptions", "runToolCall"]);
	const v1 = await converse(() => [], [HELLO], options);
	assert.equal(v1.written[0].protocol, 1);
	assert.deepEqual(v1.written[0].capabilities.lacks, ["continue"]);
	const only = await converse(() => [], [HELLO], { protocol: 2, lacks: ["agent", "defaultModel"] });
	assert.equal(only.written[0].capabilities.lacks, undefined);
});

test("negotiation: defaultModel comes with agent; an adapter whose Agent needs a model lacks it (§13.8)", async () => {
	const agent = () => ({ operate() {} });
	const served = await converse(() => [], [HELLO2], { protocol: 2, agent, runToolCall: async () => ({}) });
	assert.equal(served.written[0].capabilities.lacks, undefined);
	const lacked = await converse(() => [], [HELLO2], { protocol: 2, agent, runToolCall: async () => ({}), lacks: ["defaultModel"] });
	assert.deepEqual(lacked.written[0].capabilities.lacks, ["defaultModel"]);
});

test("negotiation: a v2 adapter without an agent function lacks agent; a v1 adapter answers 1 to a v2 harness", async () => {
	const noAgent = await converse(() => [], [HELLO2], { protocol: 2 });
	assert.deepEqual(noAgent.written[0].capabilities, { hooks: ["getSteeringMessages"], deliveriesAhead: true, standingAnswers: true, lacks: ["agent", "runToolCall"] });
	const v1 = await converse(() => [], [HELLO2]);
	assert.equal(v1.written[0].protocol, 1);
	const none = await converse(() => [], [{ type: "hello", protocol: 3, protocols: [3] }], { protocol: 2 });
	assert.equal(none.status, 1);
	assert.deepEqual(briefs(none.written), ["error the harness speaks protocol 3; this adapter speaks 1, 2"]);
	await assert.rejects(converse(() => [], [HELLO2], { protocol: 3 }), /options\.protocol must be one of 1, 2/);
});

test("v1 negotiated: agent deliveries are unknown, nothing and abort fields are ignored, stream data has no options", async () => {
	let got;
	const loop = async (s) => {
		s.openStream({ messages: [] }, { sessionId: "x" });
		got = await s.runTool("t1", "x", {});
		return [s.signal.aborted];
	};
	const { written } = await converse(
		loop,
		[HELLO, start(1, { streamOptions: true }), { type: "answer", id: 1, data: { stream: "1" }, abort: true }, answer(2, {}), deliver("toolResult", 1, "t1", { nothing: "null", result: "r" }), deliver("agent", 2, "u1", { op: "state" }), stop()],
		{ protocol: 2, agent: () => ({ operate() {} }) },
	);
	assert.deepEqual(written[1].call.data, { messages: [] });
	assert.equal(got, "r");
	assert.deepEqual(briefs(written).slice(-4), ["end {\"messages\":[false]}", "idle", "error unknown delivery kind \"agent\"", "stopped"]);
});

test("a tool resolving nothing: {nothing: undefined} and {nothing: null}", async () => {
	const loop = async (s) => {
		const a = await s.runTool("t1", "x", {});
		const b = await s.runTool("t2", "x", {});
		return [a === undefined ? "undefined" : a, b === null ? "null" : b];
	};
	const { written } = await converse(loop, [HELLO2, start(), answer(1, {}), deliver("toolResult", 1, "t1", { nothing: "undefined" }), answer(2, {}), deliver("toolResult", 2, "t2", { nothing: "null" }), stop()], { protocol: 2 });
	assert.deepEqual(written.at(-3).notification.data, { messages: ["undefined", "null"] });
});

test("an answer with abort fires the run's signal before the hook returns, and before it throws", async () => {
	const seen = [];
	const loop = async (s) => {
		const a = s.hook("beforeToolCall", {});
		seen.push(["returned", s.signal.aborted, a.block]);
		return seen;
	};
	const { written } = await converse(loop, [HELLO2, start(), { type: "answer", id: 1, data: { block: true }, abort: true }, stop()], { protocol: 2 });
	assert.deepEqual(written.at(-3).notification.data, { messages: [["returned", true, true]] });

	const throwing = async (s) => {
		try {
			s.hook("afterToolCall", {});
		} catch (err) {
			return [err.message, s.signal.aborted];
		}
		return [];
	};
	const t = await converse(throwing, [HELLO2, start(), { type: "answer", id: 1, error: "no", abort: true }, stop()], { protocol: 2 });
	assert.deepEqual(t.written.at(-3).notification.data, { messages: ["no", true] });
});

test("stream options: in the call's data only when the setup says streamOptions", async () => {
	const loop = async (s) => {
		s.openStream({ messages: [] }, { sessionId: "s-1", identity: { attribution: null }, dropped: undefined });
		return [];
	};
	const on = await converse(loop, [HELLO2, start(1, { streamOptions: true }), answer(1, { stream: "1" }), stop()], { protocol: 2 });
	assert.deepEqual(on.written[1].call.data, { messages: [], options: { sessionId: "s-1", identity: { attribution: null } } });
	const off = await converse(loop, [HELLO2, start(), answer(1, { stream: "1" }), stop()], { protocol: 2 });
	assert.deepEqual(off.written[1].call.data, { messages: [] });
});

// A toy Agent: prompt runs until a stream delivers; the listener is the kit's agentEvent.
function toyAgent(s) {
	let running = null;
	let aborted = 0;
	const listen = (event) => s.agentEvent(event);
	const runOnce = async () => {
		await listen({ type: "agent_start" });
		const stream = s.openStream({ messages: [] });
		for await (const ev of stream) await listen({ type: "message_update", text: ev.type });
		await listen({ type: "agent_end" });
	};
	return {
		abort: () => aborted++,
		operate(o) {
			switch (o.op) {
				case "prompt": {
					if (running) {
						s.track(o, Promise.reject(new Error("busy")));
						return;
					}
					running = runOnce().finally(() => (running = null));
					s.track(o, running);
					return;
				}
				case "waitForIdle":
					s.track(o, running ?? Promise.resolve());
					return;
				case "state":
					s.outcome(o, "accepted", { state: { isStreaming: running !== null, aborted } });
					return;
				default:
					throw new DeliveryError(`unknown operation ${o.op}`);
			}
		},
	};
}

test("an Agent scenario: operations, outcomes when promises settle, a barrier held until its release, no end", async () => {
	const done = { type: "done", reason: "stop", message: {} };
	const { status, written } = await converse(
		() => assert.fail("run is not called for an Agent scenario"),
		[
			HELLO2,
			agentStart({ barriers: [{ id: "b1", event: "agent_end" }] }),
			op(0, "u1", { op: "prompt", text: "hi" }),
			answer(1, { stream: "1" }),
			op(1, "u2", { op: "prompt", text: "again" }),
			op(2, "u3", { op: "waitForIdle" }),
			op(3, "u4", { op: "release", barrier: "b1" }),
			deliver("streamEvent", 4, "1", done),
			op(5, "u5", { op: "state" }),
			op(6, "u6", { op: "release", barrier: "b1" }),
			op(7, "u7", { op: "release", barrier: "b1" }),
			op(8, "final", { op: "state" }),
			stop(),
		],
		{ protocol: 2, agent: toyAgent },
	);
	assert.equal(status, 0);
	assert.deepEqual(briefs(written), [
		"hello",
		"idle",
		"ev agent_start",
		"call 1 stream",
		"idle",
		"outcome u2 prompt refused busy", // rejected before any await: same delivery
		"idle",
		"idle", // waitForIdle: nothing until the run settles
		"outcome u4 release refused barrier b1 is not held", // not reached yet
		"idle",
		"ev message_update done",
		"ev agent_end", // held here by b1
		"idle",
		"outcome u5 state accepted",
		"idle",
		"outcome u6 release accepted",
		"outcome u1 prompt resolved", // the run settles: the prompt's then runs first (attached first)
		"outcome u3 waitForIdle resolved",
		"idle",
		"outcome u7 release refused barrier b1 is not held", // released already
		"idle",
		"outcome final state accepted",
		"idle",
		"stopped",
	]);
	assert.deepEqual(written[13].notification.data, { id: "u5", op: "state", outcome: "accepted", state: { isStreaming: true, aborted: 0 } });
	assert.deepEqual(written[21].notification.data, { id: "final", op: "state", outcome: "accepted", state: { isStreaming: false, aborted: 0 } });
});

test("an Agent scenario: an answer's abort calls the handler's abort; stop releases held barriers and aborts", async () => {
	let aborts = 0;
	let wound = false;
	const agent = (s) => ({
		abort: () => aborts++,
		operate(o) {
			const run = (async () => {
				s.hook("transformContext", {});
				await s.agentEvent({ type: "agent_end" });
				wound = true;
			})();
			s.track(o, run);
		},
	});
	const { written } = await converse(() => [], [HELLO2, agentStart({ barriers: [{ id: "b", event: "agent_end", nth: 1 }] }), op(1, "u1", { op: "prompt", text: "x" }), { type: "answer", id: 1, data: {}, abort: true }, stop()], { protocol: 2, agent });
	assert.deepEqual(briefs(written), ["hello", "idle", "call 1 hook:transformContext", "ev agent_end", "idle", "stopped"]);
	assert.equal(aborts, 2); // the answer's abort, then the stop's
	assert.equal(wound, true); // the held listener was let go at stop; its outcome is dropped
});

test("barriers count occurrences: nth picks the occurrence, two barriers on one event both hold it", async () => {
	const order = [];
	const agent = (s) => ({
		operate(o) {
			const run = (async () => {
				for (let i = 1; i <= 3; i++) {
					await s.agentEvent({ type: "turn_end", text: String(i) });
					order.push(i);
				}
			})();
			s.track(o, run);
		},
	});
	const barriers = [
		{ id: "two", event: "turn_end", nth: 2 },
		{ id: "also-two", event: "turn_end", nth: 2 },
	];
	const { written } = await converse(() => [], [HELLO2, agentStart({ barriers }), op(1, "u1", { op: "prompt" }), op(2, "r1", { op: "release", barrier: "two" }), op(3, "r2", { op: "release", barrier: "also-two" }), stop()], { protocol: 2, agent });
	assert.deepEqual(briefs(written), [
		"hello",
		"idle",
		"ev turn_end 1",
		"ev turn_end 2",
		"idle",
		"outcome r1 release accepted",
		"idle",
		"outcome r2 release accepted",
		"ev turn_end 3",
		"outcome u1 prompt resolved",
		"idle",
		"stopped",
	]);
	assert.deepEqual(order, [1, 2, 3]);
});

test("an Agent scenario without an agent function, or an unknown operation, is an error", async () => {
	const noAgent = await converse(() => [], [HELLO2, agentStart({})], { protocol: 2 });
	assert.equal(noAgent.status, 1);
	assert.match(briefs(noAgent.written).at(-1), /error session 1 is an Agent scenario \(entry "agent"\), but the adapter gave serve\(\) no agent function/);
	const unknown = await converse(() => [], [HELLO2, agentStart({}), op(1, "u1", { op: "dance" }), stop()], { protocol: 2, agent: toyAgent });
	assert.deepEqual(briefs(unknown.written), ["hello", "idle", "error unknown operation dance", "stopped"]);
	const notAgent = await converse(async () => new Promise(() => {}), [HELLO2, start(), op(1, "u1", { op: "state" }), stop()], { protocol: 2, agent: toyAgent });
	assert.deepEqual(briefs(notAgent.written), ["hello", "idle", 'error an agent delivery ("state"), but session 1 is not an Agent scenario', "stopped"]);
});
