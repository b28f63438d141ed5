// Checks failures_test.go: a hook, stream function or stream that throws leaves pi's run
// unfinished: the run's promise rejects and no agent_end is emitted.
import { run, provider, says, calls, call, tool, show } from "./lib.mjs";

const boom = () => {
	throw new Error("boom");
};
const once = (f) => {
	let n = 0;
	return async (...args) => (n++ === 0 ? undefined : f(...args));
};

async function scenario(name, config, p = provider(calls(call("t1", "echo")), says("done"))) {
	const r = await run({ provider: p, tools: [tool("echo")], config });
	show(`${name}: error, requests, agent_end, last line`, [r.error, p.requests.length, r.lines.includes("agent_end"), r.lines.at(-1)]);
}

await scenario("prepareRequest", { prepareRequest: async () => boom() });
await scenario("prepareNextTurn", { prepareNextTurn: async () => boom() });
await scenario("finishTurn", { finishTurn: async () => boom() });
await scenario("steering poll A", { getSteeringMessages: async () => boom() });
await scenario("steering poll C", { getSteeringMessages: once(boom) });
await scenario("follow-up", { getFollowUpMessages: async () => boom() });
await scenario("transformContext", { transformContext: async () => boom() });
await scenario("convertToLlm", { convertToLlm: async () => boom() });
await scenario("getApiKey", { getApiKey: async () => boom() });
await scenario("stream function", {}, { requests: [], streamFn: boom });
await scenario("stream iteration", {}, {
	requests: [],
	streamFn: () => ({
		async *[Symbol.asyncIterator]() {
			yield { type: "start", partial: says("") };
			boom();
		},
		result: async () => says(""),
	}),
});
await scenario("stream result", {}, {
	requests: [],
	streamFn: () => ({
		async *[Symbol.asyncIterator]() {
			yield { type: "done", reason: "stop", message: says("") };
		},
		result: async () => boom(),
	}),
});
