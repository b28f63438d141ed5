// Drivers of pi's runAgentLoop at any release installed by the pi adapter, for the checks of
// nothing.mjs (a tool resolving undefined/null), options.mjs (the stream function's sessionId
// and identity) and abort.mjs (an abort fired inside a hook). Run from the adapter's folder:
//
//	npm ci --prefix conformance/adapters/pi && cd conformance/adapters/pi
//	node ../../../loop/testdata/pi/releases/nothing.mjs 0.87.1 undefined parallel
import { pathToFileURL } from "node:url";
const ADAPTER = process.cwd() + "/";
export async function loadPi(version = "1.6.0") {
	const name = version === "1.6.0" ? "@earendil-works/pi-agent-core" : `pi-agent-core-${version}`;
	return import(pathToFileURL(ADAPTER + "node_modules/" + name + "/dist/index.js").href);
}
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
export const model = { id: "faux-1", api: "faux", provider: "faux" };
/** A stream of one scripted response; honours abort (ends aborted) when asked. */
export function scriptedStream(responses, log, opts = {}) {
	let n = 0;
	return async (m, ctx, options) => {
		const r = responses[n++];
		log.push(["stream", n, { sessionId: options.sessionId, identity: options.identity, aborted: options.signal?.aborted }]);
		if (!r) throw new Error(`request ${n} was not scripted`);
		const msg = { role: "assistant", content: r.content ?? [{ type: "text", text: r.text ?? "ok" }], api: "faux", provider: "faux", model: "faux-1", usage, stopReason: r.stopReason ?? ((r.content ?? []).some((b) => b.type === "toolCall") ? "toolUse" : "stop"), timestamp: 0 };
		const signal = options.signal;
		const events = async function* () {
			if (signal?.aborted && !r.ignoresAbort) {
				const a = { ...msg, content: [], stopReason: "aborted", errorMessage: "Request was aborted" };
				final = a; yield { type: "error", reason: "aborted", error: a }; return;
			}
			yield { type: "start", partial: { ...msg, content: [], stopReason: "pending" } };
			final = msg;
			if (signal?.aborted && !r.ignoresAbort) { const a = { ...msg, content: [], stopReason: "aborted", errorMessage: "Request was aborted" }; final = a; yield { type: "error", reason: "aborted", error: a }; return; }
			yield { type: "done", reason: msg.stopReason, message: msg };
		};
		let final;
		const it = events();
		return { [Symbol.asyncIterator]: () => it, result: async () => final };
	};
}
export function short(e) {
	switch (e.type) {
		case "message_start": case "message_end": {
			const m = e.message; let s = `${e.type} ${m.role}`;
			if (m.role === "assistant") s += ` ${m.stopReason}`;
			if (m.role === "toolResult") s += ` ${m.toolCallId} isError=${m.isError} ${JSON.stringify(m.content)} dur=${m.durationMs}`;
			if (m.role === "user") s += ` ${JSON.stringify(m.content)}`;
			return s;
		}
		case "tool_execution_start": return `${e.type} ${e.toolCallId}`;
		case "tool_execution_end": return `${e.type} ${e.toolCallId} ${JSON.stringify({ result: e.result, isError: e.isError, durationMs: e.durationMs })}`;
		case "turn_end": return `turn_end ${e.message.stopReason} results=${e.toolResults.length}`;
		case "agent_end": return `agent_end n=${e.messages.length}`;
		default: return e.type;
	}
}
