// Hook answers that take time (PROTOCOL.md §13.6, feature waitingHooks): a `wait` returned at
// its hookReturn delivery, an `untilAbort` once the signal the hook was given fires (at once
// when it has fired, never when there is none), the first of the two; the stop ends a waiting
// hook; a plain hook() refuses an answer that waits.

import assert from "node:assert/strict";
import { test } from "node:test";
import { installVirtualTime, now } from "../index.mjs";
import { HELLO2, answer, briefs, converse, deliver, start, stop } from "./harness.mjs";

installVirtualTime();

/** A loop calling each [hook, whether it passes the run's signal] in turn, emitting the time each returned at. */
const stepped = (...steps) => async (s) => {
	const out = [];
	for (const [name, withSignal] of steps) {
		out.push(await s.hookThen(name, {}, withSignal ? s.signal : undefined, (a) => a));
		s.emit({ type: "returned", name, at: now() });
	}
	return out;
};
const returned = (written) => written.filter((m) => m.notification?.data?.type === "returned").map((m) => `${m.notification.data.name}@${m.notification.data.at}`);

test("a delayed answer is returned at its hookReturn", async () => {
	const { status, written } = await converse(stepped(["finishTurn", true]), [HELLO2, start(1, { hooks: ["finishTurn"] }), { ...answer(1, { action: "end" }), wait: "h1" }, deliver("hookReturn", 7, "h1"), stop()], { protocol: 2 });
	assert.equal(status, 0);
	assert.deepEqual(returned(written), ["finishTurn@7"]);
	assert.deepEqual(written.find((m) => m.notification?.kind === "end").notification.data, { messages: [{ action: "end" }] });
});

test("an answer held until the abort returns when the hook's signal fires, at once when it has fired; its late hookReturn changes nothing", async () => {
	const { status, written } = await converse(
		stepped(["beforeToolCall", true], ["beforeToolCall", true]),
		[HELLO2, start(1, { hooks: ["beforeToolCall"] }), { ...answer(1, { block: true }), untilAbort: true }, deliver("abort", 3), { ...answer(2, {}), untilAbort: true, wait: "h1" }, deliver("hookReturn", 9, "h1"), stop()],
		{ protocol: 2 },
	);
	assert.equal(status, 0);
	assert.deepEqual(returned(written), ["beforeToolCall@3", "beforeToolCall@3"]);
	assert.ok(!briefs(written).some((b) => b.startsWith("error")), briefs(written).join("\n"));
});

test("a hook given no signal is not returned by the abort: it waits for its delay", async () => {
	const { status, written } = await converse(stepped(["getApiKey", false]), [HELLO2, start(1, { hooks: ["getApiKey"] }), { ...answer(1, { apiKey: "k" }), untilAbort: true, wait: "h1" }, deliver("abort", 3), deliver("hookReturn", 30, "h1"), stop()], { protocol: 2 });
	assert.equal(status, 0);
	assert.deepEqual(returned(written), ["getApiKey@30"]);
});

test("the stop ends a waiting hook; a plain hook() refuses an answer that waits; an unknown hookReturn is an error", async () => {
	let seen;
	const held = async (s) => {
		try {
			await s.hookThen("finishTurn", {}, undefined, (a) => a);
		} catch (err) {
			seen = err.name;
			throw err;
		}
	};
	const stopped = await converse(held, [HELLO2, start(1, { hooks: ["finishTurn"] }), { ...answer(1, {}), untilAbort: true }, stop()], { protocol: 2 });
	assert.equal(stopped.status, 0);
	assert.equal(seen, "SessionStopped");
	assert.deepEqual(briefs(stopped.written).slice(-2), ["idle", "stopped"]);

	const plain = await converse(async (s) => s.hook("finishTurn", {}), [HELLO2, start(1, { hooks: ["finishTurn"] }), { ...answer(1, {}), wait: "h1" }, stop()], { protocol: 2 });
	assert.match(briefs(plain.written).join("\n"), /the answer to finishTurn waits \(PROTOCOL.md §13.6\): call it with hookThen/);

	const unknown = await converse(async (s) => s.hook("finishTurn", {}), [HELLO2, start(1, { hooks: ["finishTurn"] }), answer(1, {}), deliver("hookReturn", 1, "h9"), stop()], { protocol: 2 });
	assert.ok(briefs(unknown.written).includes('error hookReturn for unknown wait "h9"'), briefs(unknown.written).join("\n"));
});
