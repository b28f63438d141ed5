#!/usr/bin/env node
// The order in which pi's Agent settles what several user operations wait for, measured on pi's
// own Agent class (PROTOCOL.md §13.2: outcomes are reported when pi settles them; the Go
// reference must reproduce this order). Each case drives a real Agent with a stream function the
// script controls, attaches `.then` to each operation's promise at the moment of the operation
// (as the adapter does), and logs listener events and outcomes in the order they happen.
//
//	node conformance/adapters/pi/testdata/outcome-order.mjs [--pi VERSION]   # prints, checks
//
// It exits 1 when an observed order differs from the one written below.

const argv = process.argv.slice(2);
const release = argv[0] === "--pi" ? argv[1] : "1.6.0";
const pkg = release === "1.6.0" ? "@earendil-works/pi-agent-core" : `pi-agent-core-${release}`;
const { Agent } = await import(pkg); // from the adapter's node_modules

const MODEL = { id: "faux-1", api: "faux", provider: "faux" };
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const reply = (text) => ({ role: "assistant", content: [{ type: "text", text }], api: "faux", provider: "faux", model: "faux-1", usage, stopReason: "stop", timestamp: 0 });
const turn = () => new Promise((resolve) => setImmediate(resolve)); // every microtask runs first

/** A world: a stream function whose responses the case releases one at a time. */
function world(log) {
	const pending = [];
	const streamFn = async () => {
		let finish;
		const done = new Promise((resolve) => (finish = resolve));
		pending.push(finish);
		log.push("stream");
		return {
			async *[Symbol.asyncIterator]() {
				const text = await done;
				yield { type: "done", reason: "stop", message: reply(text) };
			},
			result: async () => reply(await done),
		};
	};
	return { streamFn, answer: (text) => pending.shift()(text) };
}

/** An Agent whose listener logs events and can hold one event type until released. */
function agentFor(log, streamFn, holdOn) {
	const agent = new Agent({ initialState: { model: MODEL }, streamFn, steeringMode: "one-at-a-time", followUpMode: "one-at-a-time" });
	const held = [];
	agent.subscribe((event) => {
		log.push(`ev ${event.type}`);
		if (event.type === holdOn) return new Promise((resolve) => held.push(resolve));
	});
	return { agent, release: () => held.shift()() };
}

/** An operation: its promise's outcome is logged when pi settles it. */
const track = (log, id, op, promise) =>
	promise.then(
		() => log.push(`${id} ${op} resolved`),
		(err) => log.push(`${id} ${op} refused: ${err.message}`),
	);

const cases = {
	"waitForIdle (twice) and the prompt that started the run settle when the run ends": async (log) => {
		const w = world(log);
		const { agent } = agentFor(log, w.streamFn);
		track(log, "u1", "prompt", agent.prompt("hi"));
		await turn();
		log.push("--");
		track(log, "u2", "waitForIdle", agent.waitForIdle());
		track(log, "u3", "waitForIdle", agent.waitForIdle());
		await turn();
		log.push("--");
		w.answer("hello");
		await turn();
	},
	"a prompt while busy is refused in its own delivery; waitForIdle while idle resolves at once": async (log) => {
		const w = world(log);
		const { agent } = agentFor(log, w.streamFn);
		track(log, "u1", "waitForIdle", agent.waitForIdle());
		await turn();
		log.push("--");
		track(log, "u2", "prompt", agent.prompt("hi"));
		await turn();
		log.push("--");
		track(log, "u3", "prompt", agent.prompt("again"));
		track(log, "u4", "continue", agent.continue());
		await turn();
		log.push("--");
		w.answer("hello");
		await turn();
	},
	"a barrier on agent_end: the release's listener returns, then waitForIdle, then the prompt": async (log) => {
		const w = world(log);
		const { agent, release } = agentFor(log, w.streamFn, "agent_end");
		track(log, "u1", "prompt", agent.prompt("hi"));
		await turn();
		track(log, "u2", "waitForIdle", agent.waitForIdle());
		log.push("--");
		w.answer("hello");
		await turn();
		log.push("--");
		track(log, "u3", "prompt", agent.prompt("while held"));
		await turn();
		log.push("--");
		log.push("release");
		release();
		await turn();
	},
	"a failed run (the stream function throws) still resolves its prompt after the failure's events": async (log) => {
		const agent = new Agent({
			initialState: { model: MODEL },
			streamFn: async () => {
				throw new Error("no provider");
			},
		});
		agent.subscribe((event) => log.push(`ev ${event.type}`));
		track(log, "u1", "prompt", agent.prompt("hi"));
		track(log, "u2", "waitForIdle", agent.waitForIdle());
		await turn();
	},
};

const expected = {
	"waitForIdle (twice) and the prompt that started the run settle when the run ends": [
		"ev agent_start", "ev turn_start", "ev message_start", "ev message_end", "stream", "--", "--",
		"ev message_start", "ev message_end", "ev turn_end", "ev agent_end",
		"u2 waitForIdle resolved", "u3 waitForIdle resolved", "u1 prompt resolved",
	],
	"a prompt while busy is refused in its own delivery; waitForIdle while idle resolves at once": [
		"u1 waitForIdle resolved", "--",
		"ev agent_start", "ev turn_start", "ev message_start", "ev message_end", "stream", "--",
		"u3 prompt refused: Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.",
		"u4 continue refused: Agent is already processing. Wait for completion before continuing.", "--",
		"ev message_start", "ev message_end", "ev turn_end", "ev agent_end", "u2 prompt resolved",
	],
	"a barrier on agent_end: the release's listener returns, then waitForIdle, then the prompt": [
		"ev agent_start", "ev turn_start", "ev message_start", "ev message_end", "stream", "--",
		"ev message_start", "ev message_end", "ev turn_end", "ev agent_end", "--",
		"u3 prompt refused: Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.", "--",
		"release", "u2 waitForIdle resolved", "u1 prompt resolved",
	],
	"a failed run (the stream function throws) still resolves its prompt after the failure's events": [
		"ev agent_start", "ev turn_start", "ev message_start", "ev message_end",
		"ev message_start", "ev message_end", "ev turn_end", "ev agent_end",
		"u2 waitForIdle resolved", "u1 prompt resolved",
	],
};

let failed = false;
for (const [name, run] of Object.entries(cases)) {
	const log = [];
	await run(log);
	const same = JSON.stringify(log) === JSON.stringify(expected[name]);
	failed ||= !same;
	console.log(`${same ? "ok  " : "DIFF"} ${name} (pi ${release})`);
	for (const line of log) console.log(`       ${line}`);
	if (!same) console.log(`     expected:\n${expected[name].map((l) => `       ${l}`).join("\n")}`);
}
process.exit(failed ? 1 : 0);
