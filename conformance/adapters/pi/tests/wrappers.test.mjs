// pi's public wrappers agentLoop / agentLoopContinue in every release the adapter installs, and
// the adapter's mode that drives them (--entry wrappers): agentLoopContinue refuses an empty
// context or an assistant tail by throwing synchronously, before it starts anything (pi's
// "should throw when context has no messages"), and the wrappers mode reports a refusal that
// only the run's promise makes as the wrapper's failure.
//
//	npm ci --prefix conformance/adapters/pi && node --test conformance/adapters/pi/tests/

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { NEWEST, RELEASES } from "../releases.mjs";

const ADAPTER = fileURLToPath(new URL("../adapter.mjs", import.meta.url));
const MODEL = { id: "faux-1", api: "faux", provider: "faux" };
const importRelease = (release) => import(release === NEWEST ? "@earendil-works/pi-agent-core" : `pi-agent-core-${release}`);

for (const release of RELEASES) {
	test(`pi ${release}: agentLoopContinue throws synchronously on an empty context and an assistant tail, calling nothing`, async () => {
		const pi = await importRelease(release);
		assert.equal(typeof pi.agentLoop, "function");
		assert.equal(typeof pi.agentLoopContinue, "function");
		let called = 0;
		const streamFn = () => {
			called++;
			throw new Error("no request is made");
		};
		const config = { model: MODEL, convertToLlm: (m) => m };
		assert.throws(() => pi.agentLoopContinue({ messages: [], tools: [] }, config, undefined, streamFn), { message: "Cannot continue: no messages in context" });
		const tail = { role: "assistant", content: [], stopReason: "stop", timestamp: 0 };
		assert.throws(() => pi.agentLoopContinue({ messages: [tail], tools: [] }, config, undefined, streamFn), { message: "Cannot continue from message role: assistant" });
		assert.equal(called, 0);
	});
}

/** Runs the adapter on the scripted lines; returns its output, parsed. */
function converse(msgs, args) {
	const input = [...msgs, { type: "shutdown" }].map((m) => JSON.stringify(m) + "\n").join("");
	const r = spawnSync(process.execPath, [ADAPTER, ...args], { input, encoding: "utf8", timeout: 60_000 });
	assert.equal(r.status, 0, `adapter exited ${r.status}: ${r.stderr}`);
	return r.stdout.trim().split("\n").map((l) => JSON.parse(l));
}

const start = (setup) => ({
	type: "start",
	session: 1,
	setup: { scenario: "t", messages: [], tools: [], activeTools: [], model: MODEL, thinkingLevel: "off", toolExecution: "parallel", hooks: [], entry: "run", ...setup },
});
const ends = (out) => out.filter((m) => m.notification?.kind === "end").map((m) => m.notification.data);

test("the wrappers mode: a refused continue ends the run with the wrapper's thrown text, a run's messages are the stream's result", () => {
	const out = converse(
		[{ type: "hello", protocol: 1, protocols: [1, 2] }, start({ entry: "continue" }), { type: "stop", session: 1 }],
		["--entry", "wrappers"],
	);
	assert.match(out[0].implementation?.version ?? out[0].version ?? JSON.stringify(out[0]), /agentLoop \/ agentLoopContinue/);
	assert.deepEqual(ends(out), [{ error: "Cannot continue: no messages in context" }]);
	assert.equal(out.filter((m) => m.notification?.kind === "event").length, 0);

	const prompt = { role: "user", content: "hi", timestamp: 0 };
	const reply = { role: "assistant", content: [{ type: "text", text: "hello" }], api: "faux", provider: "faux", model: "faux-1", stopReason: "stop", timestamp: 0, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } };
	const run = converse(
		[
			{ type: "hello", protocol: 1, protocols: [1, 2] },
			start({ prompts: [prompt] }),
			{ type: "answer", id: 1, data: { stream: "1" } },
			{ type: "deliver", session: 1, delivery: { kind: "streamEvent", now: 1, target: "1", data: { type: "done", reason: "stop", message: reply } } },
			{ type: "stop", session: 1 },
		],
		["--entry", "wrappers"],
	);
	const types = run.filter((m) => m.notification?.kind === "event").map((m) => m.notification.data.type);
	assert.deepEqual(types, ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]);
	const [end] = ends(run);
	assert.deepEqual(end.messages.map((m) => m.role), ["user", "assistant"]);
});

test("the adapter refuses an unknown entry", () => {
	const r = spawnSync(process.execPath, [ADAPTER, "--entry", "stream"], { encoding: "utf8" });
	assert.equal(r.status, 2);
	assert.match(r.stderr, /unknown entry "stream"; the entries are run, wrappers/);
});
