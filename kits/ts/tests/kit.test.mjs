import assert from "node:assert/strict";
import { test } from "node:test";
import { CallError, SessionStopped, STOPPED, StreamError, ToolError, installVirtualTime } from "../index.mjs";
import { HELLO, answer, briefs, converse, deliver, start, stop } from "./harness.mjs";

installVirtualTime();

const DONE = { type: "done", reason: "stop", message: { role: "assistant", content: [], stopReason: "stop" } };

// A toy loop touching every part of a session.
async function toyLoop(s) {
	s.hook("getSteeringMessages", {});
	s.emit({ type: "agent_start", at: Date.now() });
	const stream = s.openStream({ messages: [] });
	for await (const event of stream) s.emit({ type: "message_update", text: event.type, at: Date.now() });
	const final = await stream.result();
	const a = s.runTool("t1", "x", {}, (p) => s.emit({ type: "tool_execution_update", text: p.content, at: performance.now() }));
	const b = s.runTool("t2", "x", {});
	const results = await Promise.all([a, b]);
	return [final, { results, at: Date.now() }];
}

const TOY = [
	HELLO,
	start(),
	answer(1, { messages: [] }),
	answer(2, { stream: "1" }),
	deliver("streamEvent", 5, "1", { type: "start", partial: {} }),
	deliver("streamEvent", 6, "1", DONE),
	answer(3, {}),
	answer(4, {}),
	deliver("toolUpdate", 7, "t1", { content: "half" }),
	deliver("toolResult", 8, "t2", { result: "two" }),
	deliver("toolResult", 9, "t1", { result: "one" }),
	stop(),
];

test("a whole session: calls, events, stream, tools, the clock, end, idle, stop", async () => {
	const { status, written } = await converse(toyLoop, TOY);
	assert.equal(status, 0);
	assert.deepEqual(briefs(written), [
		"hello",
		"call 1 hook:getSteeringMessages",
		"ev agent_start@0",
		"call 2 stream",
		"idle",
		"ev message_update@5 start",
		"idle",
		"ev message_update@6 done",
		"call 3 tool",
		"call 4 tool",
		"idle",
		"ev tool_execution_update@7 half",
		"idle",
		"idle",
		`end ${JSON.stringify({ messages: [DONE.message, { results: ["one", "two"], at: 9 }] })}`,
		"idle",
		"stopped",
	]);
	assert.deepEqual(written[0], { type: "hello", protocol: 1, name: "test", version: "0", tracks: "1.6.0", capabilities: { hooks: ["getSteeringMessages"], deliveriesAhead: true, standingAnswers: true } });
	assert.deepEqual(written[1], { type: "call", id: 1, session: 1, call: { kind: "hook", name: "getSteeringMessages", data: {} } });
	assert.deepEqual(written[8].call, { kind: "tool", data: { toolCallId: "t1", toolName: "x", args: {} } });
});

test("the hello carries lacks and extra capabilities; a wrong protocol is refused", async () => {
	const { written } = await converse(() => [], [HELLO], { lacks: ["continue"], capabilities: { note: 1 } });
	assert.deepEqual(written[0].capabilities, { hooks: ["getSteeringMessages"], deliveriesAhead: true, standingAnswers: true, note: 1, lacks: ["continue"] });
	const optOut = await converse(() => [], [HELLO], { capabilities: { deliveriesAhead: false } });
	assert.equal(optOut.written[0].capabilities.deliveriesAhead, false, "an adapter may turn deliveries ahead off");
	const bad = await converse(() => [], [{ type: "hello", protocol: 2 }]);
	assert.equal(bad.status, 1);
	assert.deepEqual(briefs(bad.written), ["error the harness speaks protocol 2; this adapter speaks 1"]);
});

test("deliveries sent ahead (§14) wait in a queue until the run is idle: the same conversation as one at a time", async () => {
	// Each stream event makes a hook call; the second event comes before the first one's answer.
	const loop = async (s) => {
		const stream = s.openStream({});
		for await (const ev of stream) {
			const got = s.hook("getSteeringMessages", {});
			s.emit({ type: "seen", text: `${ev.type} ${got.messages.length} @${Date.now()}` });
		}
		return [];
	};
	const steps = (ahead) => [
		HELLO,
		start(),
		answer(1, { stream: "s" }),
		deliver("streamEvent", 1, "s", { type: "x" }),
		...(ahead ? [deliver("streamEvent", 2, "s", { type: "y" }), answer(2, { messages: [] })] : [answer(2, { messages: [] }), deliver("streamEvent", 2, "s", { type: "y" })]),
		answer(3, { messages: [1] }),
		deliver("streamEnd", 3, "s", { message: {} }),
		stop(),
	];
	const one = await converse(loop, steps(false));
	const ahead = await converse(loop, steps(true));
	assert.deepEqual(briefs(one.written), ["hello", "call 1 stream", "idle", "call 2 hook:getSteeringMessages", "ev seen x 0 @1", "idle", "call 3 hook:getSteeringMessages", "ev seen y 1 @2", "idle", 'end {"messages":[]}', "idle", "stopped"]);
	assert.deepEqual(ahead.written, one.written);
	// A delivery ahead names its own line when it is wrong.
	const wrong = await converse(loop, [HELLO, start(), answer(1, { stream: "s" }), deliver("streamEvent", 1, "s", { type: "x" }), deliver("streamEvent", 2, "s", { type: "y" }, 2), answer(2, { messages: [] })]);
	assert.match(wrong.written.at(-1).message, /^protocol error at line 5: a "deliver" for session 2, but session 1 is running/);
});

test("standing answers (§15): a promised hook's call is written marked standing and not waited for; the loop gets a fresh copy each time", async () => {
	const loop = async (s) => {
		const first = s.hook("getSteeringMessages", {});
		first.messages.push("mutated by the loop");
		const second = s.hook("getSteeringMessages", {});
		s.emit({ type: "seen", text: `${first.messages.length} ${second.messages.length}` });
		const other = s.hook("getFollowUpMessages", {});
		s.emit({ type: "seen", text: JSON.stringify(other) });
		return [];
	};
	const promised = { ...start(1, { hooks: ["getSteeringMessages", "getFollowUpMessages"] }), standingAnswers: { getSteeringMessages: { messages: [] } } };
	const { status, written } = await converse(loop, [HELLO, promised, answer(3, { messages: [7] }), stop()], { hooks: ["getSteeringMessages", "getFollowUpMessages"] });
	assert.equal(status, 0);
	assert.deepEqual(briefs(written), ["hello", "call 1 hook:getSteeringMessages", "call 2 hook:getSteeringMessages", "ev seen 1 0", "call 3 hook:getFollowUpMessages", 'ev seen {"messages":[7]}', 'end {"messages":[]}', "idle", "stopped"]);
	assert.deepEqual(written[1], { type: "call", id: 1, session: 1, call: { kind: "hook", name: "getSteeringMessages", data: {} }, standing: true });
	assert.equal(written[4].standing, undefined, "a hook without a promise is answered as always");
	// An adapter that turned the capability off waits for every answer, whatever the start says.
	const optOut = await converse(loop, [HELLO, promised, answer(1, { messages: [] }), answer(2, { messages: [] }), answer(3, { messages: [] }), stop()], { capabilities: { standingAnswers: false } });
	assert.equal(optOut.written[0].capabilities.standingAnswers, false);
	assert.equal(optOut.written.filter((m) => m.standing).length, 0);
	assert.equal(optOut.status, 0);
	// A start whose promises are not answer objects is a protocol error.
	const bad = await converse(loop, [HELLO, { ...start(), standingAnswers: { getSteeringMessages: [] } }]);
	assert.equal(bad.status, 1);
	assert.match(bad.written.at(-1).message, /^protocol error at line 2: start's standingAnswers must be an object of answer data/);
});

test("events are serialised when emitted: later mutation does not show", async () => {
	const loop = async (s) => {
		const ev = { type: "e", text: "before" };
		s.emit(ev);
		ev.text = "after";
		return [];
	};
	const { written } = await converse(loop, [HELLO, start(), stop()]);
	assert.deepEqual(briefs(written).slice(1, 2), ["ev e before"]);
});

test("idle is exact: long await chains, nextTick, queueMicrotask, setImmediate and setTimeout(0) all run first", async () => {
	const loop = async (s) => {
		const stream = s.openStream({});
		for await (const ev of stream) {
			for (let i = 0; i < 5000; i++) await Promise.resolve(); // far beyond any "N quiet passes"
			await new Promise((r) => process.nextTick(r));
			await new Promise((r) => queueMicrotask(r));
			for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r)); // each a turn of Node's loop
			await new Promise((r) => setTimeout(r, 0));
			await new Promise((r) => setTimeout(r)); // no delay: at once too
			s.emit({ type: "seen", text: ev.type });
		}
		return [];
	};
	const { written } = await converse(loop, [HELLO, start(), answer(1, { stream: "s" }), deliver("streamEvent", 1, "s", { type: "x" }), deliver("streamEnd", 2, "s", { message: {} }), stop()]);
	assert.deepEqual(briefs(written), ["hello", "call 1 stream", "idle", "ev seen x", "idle", 'end {"messages":[]}', "idle", "stopped"]);
});

test("timers with a delay run on virtual time, before the delivery that reaches them", async () => {
	const loop = async (s) => {
		setTimeout(() => s.emit({ type: "timer", text: "30", at: Date.now() }), 30);
		setTimeout(() => s.emit({ type: "timer", text: "10", at: Date.now() }), 10);
		const never = setTimeout(() => s.emit({ type: "timer", text: "cleared" }), 5);
		clearTimeout(never);
		let ticks = 0;
		const iv = setInterval(() => {
			s.emit({ type: "tick", text: String(++ticks) });
			if (ticks === 3) clearInterval(iv);
		}, 4);
		const { setTimeout: sleep } = await import("node:timers/promises");
		sleep(20, "p").then((v) => s.emit({ type: "promise", text: v }));
		await s.runTool("t", "x", {}, (p) => s.emit({ type: "update", text: p, at: Date.now() }));
		return [];
	};
	const { written } = await converse(loop, [
		HELLO,
		start(),
		answer(1, {}),
		deliver("toolUpdate", 10, "t", "u10"),
		deliver("toolUpdate", 40, "t", "u40"),
		deliver("toolResult", 40, "t", { result: "r" }),
		stop(),
	]);
	assert.deepEqual(briefs(written), [
		"hello",
		"call 1 tool",
		"idle",
		// at 10: the interval at 4 and 8, then the 10 ms timeout (due 10), interval due 12 waits
		"ev tick 1",
		"ev tick 2",
		"ev timer@10 10",
		"ev update@10 u10",
		"idle",
		"ev tick 3",
		"ev promise p",
		"ev timer@40 30",
		"ev update@40 u40",
		"idle",
		'end {"messages":[]}',
		"idle",
		"stopped",
	]);
});

test("the clocks are virtual: Date.now, new Date(), Date(), performance.now, process.hrtime", async () => {
	const loop = async (s) => {
		await s.runTool("t", "x", {});
		return [{ now: Date.now(), date: new Date().getTime(), str: Date() === new Date(1500).toString(), perf: performance.now(), hr: process.hrtime()[1], big: String(process.hrtime.bigint()), explicit: new Date(7).getTime(), inst: new Date() instanceof Date }];
	};
	const { written } = await converse(loop, [HELLO, start(), answer(1, {}), deliver("toolResult", 1500, "t", { result: 1 }), stop()]);
	assert.deepEqual(written.find((m) => m.notification?.kind === "end").notification.data.messages[0], {
		now: 1500,
		date: 1500,
		str: true,
		perf: 1500,
		hr: 1500000000 % 1e9,
		big: "1500000000",
		explicit: 7,
		inst: true,
	});
});

test("stop fails what waits, fires the signal, drops notifications and calls; the next session is clean", async () => {
	const seen = [];
	const loop = async (s) => {
		if (s.id === 2) {
			seen.push(["clock at start", Date.now()]);
			return [];
		}
		s.signal.addEventListener("abort", () => seen.push(["aborted", s.signal.aborted]));
		setTimeout(() => seen.push(["stale timer ran"]), 1000);
		const tool = s.runTool("t", "x", {}).catch((e) => seen.push(["tool", e instanceof SessionStopped, e.message]));
		const stream = s.openStream({});
		try {
			for await (const _ of stream);
		} catch (e) {
			seen.push(["stream", e instanceof SessionStopped, e.message]);
		}
		await tool;
		s.emit({ type: "dropped" });
		try {
			s.hook("getSteeringMessages", {});
		} catch (e) {
			seen.push(["call", e instanceof SessionStopped]);
		}
		return [];
	};
	const { status, written } = await converse(loop, [HELLO, start(1), answer(1, {}), answer(2, { stream: "1" }), deliver("toolUpdate", 5, "t", {}), stop(1), start(2), deliver("abort", 2000, undefined, undefined, 2), stop(2)]);
	assert.equal(status, 0);
	assert.deepEqual(briefs(written), ["hello", "call 1 tool", "call 2 stream", "idle", "idle", "stopped", 'end {"messages":[]}', "idle", "idle", "stopped"]);
	assert.deepEqual(seen, [
		["aborted", true],
		["tool", true, STOPPED], // a rejection handler is one microtask away, the stream's for-await three
		["stream", true, STOPPED],
		["call", true],
		["clock at start", 0],
	]);
});

test("the abort delivery fires the run's signal at once", async () => {
	const loop = async (s) => {
		s.signal.addEventListener("abort", () => s.emit({ type: "abort", at: Date.now() }));
		await s.runTool("t", "x", {});
		return [];
	};
	const { written } = await converse(loop, [HELLO, start(), answer(1, {}), deliver("abort", 3), stop()]);
	assert.deepEqual(briefs(written), ["hello", "call 1 tool", "idle", "ev abort@3", "idle", "stopped"]);
});

test("failures: a refused call, a failed stream, a failed tool, a failed run", async () => {
	const loop = async (s) => {
		try {
			s.hook("getSteeringMessages", {});
		} catch (e) {
			s.emit({ type: "hook", text: `${e instanceof CallError} ${e.message}` });
		}
		const stream = s.openStream({});
		try {
			for await (const _ of stream);
		} catch (e) {
			s.emit({ type: "stream", text: `${e instanceof StreamError} ${e.message}` });
		}
		try {
			await s.runTool("t", "x", {});
		} catch (e) {
			s.emit({ type: "tool", text: `${e instanceof ToolError} ${e.message}` });
		}
		try {
			s.runTool("u", "x", {});
		} catch (e) {
			s.emit({ type: "execute", text: `${e instanceof CallError} ${e.message}` });
		}
		throw new Error("the run failed");
	};
	const { written, logs } = await converse(loop, [
		HELLO,
		start(),
		answer(1, undefined, "hook down"),
		answer(2, { stream: "1" }),
		deliver("streamFail", 1, "1", { error: "provider down" }),
		answer(3, {}),
		deliver("toolResult", 2, "t", { error: "tool down" }),
		answer(4, undefined, "no such tool"),
		stop(),
	]);
	assert.deepEqual(briefs(written), [
		"hello",
		"call 1 hook:getSteeringMessages",
		"ev hook true hook down",
		"call 2 stream",
		"idle",
		"ev stream true provider down",
		"call 3 tool",
		"idle",
		"ev tool true tool down",
		"call 4 tool",
		"ev execute true no such tool",
		'end {"error":"the run failed"}',
		"idle",
		"stopped",
	]);
	assert.deepEqual(logs, ["turnstile-kit: the run failed: the run failed"]);
});

test("a run that throws at once, and one that returns nothing", async () => {
	const { written } = await converse(
		(s) => {
			if (s.id === 1) throw new Error("no loop");
		},
		[HELLO, start(1), stop(1), start(2), stop(2)],
	);
	assert.deepEqual(briefs(written), ["hello", 'end {"error":"no loop"}', "idle", "stopped", 'end {"messages":[]}', "idle", "stopped"]);
});

test("a failed run's log says what it most likely is: a scripted CallError or StreamError nothing, a bug its stack, anything else a line", async () => {
	const saved = process.env.TURNSTILE_KIT_DEBUG;
	delete process.env.TURNSTILE_KIT_DEBUG;
	try {
		const { written, logs } = await converse(
			(s) => {
				if (s.id === 1) throw new CallError("provider exploded");
				if (s.id === 4) throw new StreamError("socket closed");
				if (s.id === 2) return {}.result.durationMs;
				throw new Error("Cannot continue");
			},
			[HELLO, start(1), stop(1), start(2), stop(2), start(3), stop(3), start(4), stop(4)],
		);
		assert.equal(briefs(written).filter((b) => b.startsWith("end")).length, 4);
		assert.equal(logs.length, 2, logs.join("\n"));
		assert.match(logs[0], /^turnstile-kit: the run failed with TypeError:\nTypeError: Cannot read properties of undefined \(reading 'durationMs'\)\n\s+at /);
		assert.equal(logs[1], "turnstile-kit: the run failed: Cannot continue");
	} finally {
		if (saved !== undefined) process.env.TURNSTILE_KIT_DEBUG = saved;
	}
});

test("a delivery for an unknown target is reported for its session, without idle", async () => {
	const { written } = await converse((s) => s.runTool("t", "x", {}), [HELLO, start(), answer(1, {}), deliver("streamEvent", 1, "9", {}), deliver("toolResult", 2, "zz", {}), deliver("bogus", 3), stop()]);
	assert.deepEqual(briefs(written).slice(3), ['error delivery for unknown stream "9"', 'error delivery for unknown tool call "zz"', 'error unknown delivery kind "bogus"', "stopped"]);
	assert.equal(written[3].session, 1);
	assert.deepEqual(briefs(written).slice(0, 3), ["hello", "call 1 tool", "idle"]);
});

test("protocol errors end the adapter with status 1 and say what came", async () => {
	const cases = [
		[["not json"], /^protocol error at line 1: not JSON/],
		[["[1]"], /^protocol error at line 1: expected an object with a "type"/],
		[[HELLO, stop()], /^protocol error at line 2: unexpected "stop" message \(no session is running\)/],
		[[HELLO, start(), answer(7, {})], /^protocol error at line 3: an answer for unknown call id 7 \(the outstanding call is 1\)/],
		[[HELLO, start(), start()], /^protocol error at line 3: expected the answer to call 1, got a "start" message/],
		[[HELLO, start(), deliver("abort", 1), start()], /^protocol error at line 4: expected the answer to call 1, got a "start" message/],
		[[HELLO, start(), answer(1, {}), deliver("abort", 1, undefined, undefined, 2)], /^protocol error at line 4: a "deliver" for session 2, but session 1 is running/],
		[[HELLO, { type: "start", session: "one", setup: {} }], /start needs a session number and a setup/],
	];
	for (const [msgs, want] of cases) {
		const { status, written } = await converse((s) => s.hook("getSteeringMessages", {}), msgs);
		assert.equal(status, 1, String(want));
		const last = written.at(-1);
		assert.equal(last.type, "error");
		assert.match(last.message, want);
	}
});

test("a protocol error or shutdown met inside a call ends the kit even if the loop swallows it", async () => {
	const loop = async (s) => {
		for (let i = 0; i < 3; i++) {
			try {
				s.hook("getSteeringMessages", {});
			} catch {
				// a loop that swallows every hook error
			}
		}
		return [];
	};
	const shut = await converse(loop, [HELLO, start(), { type: "shutdown" }]);
	assert.equal(shut.status, 0);
	assert.deepEqual(briefs(shut.written), ["hello", "call 1 hook:getSteeringMessages"]);
	const eof = await converse(loop, [HELLO, start()]);
	assert.equal(eof.status, 0);
	const bad = await converse(loop, [HELLO, start(), "{oops"]);
	assert.equal(bad.status, 1);
	assert.deepEqual(briefs(bad.written).slice(1, 2), ["call 1 hook:getSteeringMessages"]);
	assert.equal(bad.written.length, 3);
	assert.equal(bad.written[2].session, 1);
});

test("an event that is not JSON names itself", async () => {
	const { status, written } = await converse(
		(s) => {
			s.emit({ type: "turn_end", big: 1n });
			return [];
		},
		[HELLO, start()],
	);
	assert.equal(status, 1);
	assert.match(written.at(-1).message, /^cannot write a "notify" message \(turn_end\) as JSON: .*BigInt/);
});

test("real I/O in flight is waited for; a real timer is refused", async () => {
	const fs = await import("node:fs");
	const io = await converse(
		async (s) => {
			const text = await fs.promises.readFile(new URL(import.meta.url), "utf8");
			s.emit({ type: "read", text: String(text.length > 0) });
			return [];
		},
		[HELLO, start(), stop()],
	);
	assert.deepEqual(briefs(io.written), ["hello", "ev read true", 'end {"messages":[]}', "idle", "stopped"]);

	const { real } = await import("../src/vtime.mjs");
	let timer;
	const refused = await converse(
		() => {
			timer = real.setTimeout(() => {}, 60_000);
			return [];
		},
		[HELLO, start()],
	);
	real.clearTimeout(timer);
	assert.equal(refused.status, 1);
	assert.match(refused.written.at(-1).message, /^the loop scheduled a real timer \(Timeout\)/);
});

test("a timer callback that throws is an uncaught exception: reported, status 1", async () => {
	const { status, written } = await converse(
		() => {
			setImmediate(() => {
				throw new Error("boom");
			});
			return [];
		},
		[HELLO, start()],
	);
	assert.equal(status, 1);
	assert.match(written.at(-1).message, /^the loop threw from a timer callback \(an uncaught exception\): Error: boom/);
});

test("load runs once, after the hello, before the first session", async () => {
	const order = [];
	const { written } = await converse(
		() => {
			order.push("run");
			return [];
		},
		[HELLO, start(1), stop(1), start(2), stop(2)],
		{
			load: async () => {
				order.push("load");
				await new Promise((r) => setImmediate(r));
			},
		},
	);
	assert.deepEqual(order, ["load", "run", "run"]);
	assert.equal(written[0].type, "hello");
});

test("a tool update after its result reaches the retained onUpdate: the loop decides what to drop", async () => {
	const loop = async (s) => {
		const r = await s.runTool("t", "x", {}, (p) => s.emit({ type: "update", text: p }));
		s.emit({ type: "result", text: r });
		await s.runTool("u", "x", {});
		return [];
	};
	const { written } = await converse(loop, [HELLO, start(), answer(1, {}), deliver("toolUpdate", 1, "t", "early"), deliver("toolResult", 2, "t", { result: "r" }), answer(2, {}), deliver("toolUpdate", 3, "t", "late"), stop()]);
	assert.deepEqual(briefs(written), ["hello", "call 1 tool", "idle", "ev update early", "idle", "ev result r", "call 2 tool", "idle", "ev update late", "idle", "stopped"]);
});

test("runTool refuses an onUpdate that is not a function at once, naming the likely mix-up", async () => {
	const loop = async (s) => {
		try {
			s.runTool("t", "x", {}, new AbortController().signal);
			return [{ threw: false }];
		} catch (err) {
			return [{ threw: err instanceof TypeError, message: err.message }];
		}
	};
	const { written } = await converse(loop, [HELLO, start(), stop()]);
	const [result] = written.find((m) => m.notification?.kind === "end").notification.data.messages;
	assert.equal(result.threw, true);
	assert.match(result.message, /onUpdate must be a function or undefined; got AbortSignal \(pi's execute is \(toolCallId, args, signal, onUpdate\)/);
});
