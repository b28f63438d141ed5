// An abort fired inside a hook (AbortController.abort() before the hook returns): what the loop
// does next, per hook kind.  node abort.mjs VERSION HOOK NTH [sequential|parallel]
import { loadPi, scriptedStream, short, model } from "./lib.mjs";
const [version, hook, nth, mode] = process.argv.slice(2);
const pi = await loadPi(version);
const log = [];
const ac = new AbortController();
const calls = {};
const hooked = (name, answer) => async (...args) => {
	calls[name] = (calls[name] ?? 0) + 1;
	const abort = name === hook && calls[name] === Number(nth);
	if (abort) ac.abort();
	log.push(["hook", `${name}#${calls[name]}${abort ? " ABORT" : ""} signal.aborted=${ac.signal.aborted}`]);
	return answer(...args);
};
const tool = (name) => ({ name, label: name, description: "d", parameters: { type: "object" },
	execute: async (id, _a, signal) => { log.push(["execute", id, `signal.aborted=${signal?.aborted}`]); return { content: [{ type: "text", text: "ran " + id }] }; } });
const responses = [
	{ content: [{ type: "toolCall", id: "a", name: "t", arguments: {} }, { type: "toolCall", id: "b", name: "t", arguments: {} }] },
	{ text: "done" },
	{ text: "extra" },
];
const config = {
	model, toolExecution: mode ?? "sequential", convertToLlm: (m) => m,
	transformContext: hooked("transformContext", (m) => m),
	getSteeringMessages: hooked("getSteeringMessages", () => []),
	getFollowUpMessages: hooked("getFollowUpMessages", () => []),
	beforeToolCall: hooked("beforeToolCall", () => undefined),
	afterToolCall: hooked("afterToolCall", () => undefined),
	finishTurn: hooked("finishTurn", () => undefined),
	prepareRequest: hooked("prepareRequest", () => undefined),
	prepareNextTurn: hooked("prepareNextTurn", () => undefined),
	getApiKey: hooked("getApiKey", () => "k"),
};
const emit = async (e) => { if (e.type !== "message_start") log.push(["ev", short(e)]); };
try {
	const msgs = await pi.runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [tool("t")] }, config, emit, ac.signal, scriptedStream(responses, log));
	log.push(["returned", msgs.length]);
} catch (e) { log.push(["run failed", e.message]); }
for (const l of log) console.log(l.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(" "));
