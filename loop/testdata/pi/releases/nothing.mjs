// A tool whose execute resolves undefined / null, per release, sequential and parallel, with
// and without afterToolCall.
import { loadPi, scriptedStream, short, model } from "./lib.mjs";
const [version, value, mode, after] = process.argv.slice(2);
const pi = await loadPi(version);
const log = [];
const nothing = value === "null" ? null : undefined;
const tools = [
	{ name: "nil", label: "nil", description: "d", parameters: { type: "object" }, execute: async () => nothing },
	{ name: "ok", label: "ok", description: "d", parameters: { type: "object" }, execute: async () => ({ content: [{ type: "text", text: "fine" }] }) },
];
const responses = [
	{ content: [{ type: "toolCall", id: "a", name: "ok", arguments: {} }, { type: "toolCall", id: "b", name: "nil", arguments: {} }] },
	{ text: "done" },
];
const config = { model, toolExecution: mode ?? "parallel", convertToLlm: (m) => m };
if (after) config.afterToolCall = async (c) => { log.push(["afterToolCall", c.toolCall.id, JSON.stringify({ result: c.result, isError: c.isError })]); return JSON.parse(after); };
const emit = async (e) => log.push(["ev", short(e)]);
try {
	const msgs = await pi.runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools }, config, emit, undefined, scriptedStream(responses, log));
	log.push(["returned", msgs.length]);
} catch (e) { log.push(["run failed", e.message]); }
for (const l of log) console.log(l.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(" "));
