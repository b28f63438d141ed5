// What the loop adapter (adapter.mjs) and the Agent adapter (agent.mjs) share: the setup's tools
// as pi AgentTools executed in the world, the installed hooks as hook calls with the payload
// shapes of sim/bind.go, and the stream function as a stream call.

import { ALL_HOOKS } from "turnstile-kit";

export const wireModel = (m) => ({ id: m.id, api: m.api, provider: m.provider });
export const wireContext = (c) => ({ messages: c.messages, tools: (c.tools ?? []).map((t) => t.name) });
const levelOf = (level) => (level === undefined || level === null || level === "" ? undefined : level);

/** An AgentTool whose execution happens in the world. */
function makeTool(s, ts) {
	const tool = {
		name: ts.name,
		label: ts.name,
		description: ts.description,
		parameters: ts.parameters,
		execute: async (toolCallId, args, _signal, onUpdate) => s.runTool(toolCallId, ts.name, args, onUpdate),
	};
	if (ts.executionMode) tool.executionMode = ts.executionMode;
	if (ts.prepareArguments) tool.prepareArguments = (args) => ({ ...(args ?? {}), ...ts.prepareArguments });
	return tool;
}

/**
 * The session's world as pi sees it: `byName(names)` the setup's tools by name (unknown names
 * dropped), `hooks` every installed hook by pi's loop-config name, `streamFn` pi's stream
 * function (a stream call; with the setup's `streamOptions`, the call also records the
 * options' sessionId and identity, PROTOCOL.md §13.4).
 */
export function bind(s) {
	const pool = new Map((s.setup.tools ?? []).map((ts) => [ts.name, makeTool(s, ts)]));
	const byName = (names) => (names ?? []).map((n) => pool.get(n)).filter(Boolean);
	const contextOf = (raw) => (raw ? { messages: raw.messages ?? [], tools: byName(raw.tools) } : undefined);
	const turnOf = (t) => ({ message: t.message, toolResults: t.toolResults, context: wireContext(t.context), newMessages: t.newMessages });
	// Each hook passes on the signal pi gives it (its last argument; none for the queue polls,
	// convertToLlm, getApiKey and the loop's prepareNextTurn): an answer held until the abort
	// (PROTOCOL.md §13.6) is returned when that signal fires, never by the adapter itself.
	const h = (name, data, signal, then) => s.hookThen(name, data, signal, then);
	const all = {
		convertToLlm: async (messages, signal) => h("convertToLlm", { messages }, signal, (a) => a.messages ?? []),
		transformContext: async (messages, signal) => h("transformContext", { messages }, signal, (a) => a.messages ?? []),
		getApiKey: async (provider, signal) => h("getApiKey", { provider }, signal, (a) => a.apiKey),
		prepareRequest: async (req, signal) =>
			h("prepareRequest", { context: wireContext(req.context), model: wireModel(req.model), thinkingLevel: req.thinkingLevel }, signal, (a) => ({
				context: contextOf(a.context),
				model: a.model ?? undefined,
				thinkingLevel: levelOf(a.thinkingLevel),
			})),
		// The loop calls it (turn); the Agent as prepareNextTurnWithContext (turn, signal).
		prepareNextTurn: async (turn, signal) =>
			h("prepareNextTurn", { turn: turnOf(turn) }, signal, (a) => ({
				context: contextOf(a.context),
				messages: a.messages ?? undefined,
				model: a.model ?? undefined,
				thinkingLevel: levelOf(a.thinkingLevel),
			})),
		finishTurn: async (turn, signal) => h("finishTurn", { turn: turnOf(turn) }, signal, (a) => (a.action ? { action: a.action } : undefined)),
		getSteeringMessages: async () => s.hook("getSteeringMessages", {}).messages ?? [],
		getFollowUpMessages: async () => s.hook("getFollowUpMessages", {}).messages ?? [],
		beforeToolCall: async (c, signal) =>
			h("beforeToolCall", { assistantMessage: c.assistantMessage, toolCall: c.toolCall, args: c.args, context: wireContext(c.context) }, signal, (a) => {
				if (a.setArgs) Object.assign(c.args, a.setArgs); // in place: they reach execute unvalidated
				return { block: a.block === true, reason: a.reason, terminate: a.terminate === true };
			}),
		afterToolCall: async (c, signal) => {
			const { assistantMessage, toolCall, args, result, isError } = c;
			const keys = ["content", "details", "structuredContent", "isError", "terminate", "usage"];
			return h("afterToolCall", { assistantMessage, toolCall, args, result, isError, context: wireContext(c.context) }, signal, (a) =>
				Object.fromEntries(keys.map((k) => [k, a[k] ?? undefined])),
			);
		},
	};
	const hooks = {};
	for (const name of ALL_HOOKS) if (s.installed(name)) hooks[name] = all[name];
	const streamFn = async (model, llmContext, options) =>
		s.openStream(
			{ model: wireModel(model), messages: llmContext.messages, thinkingLevel: options.reasoning ?? "off", apiKey: options.apiKey ?? "" },
			{ sessionId: options.sessionId, identity: options.identity },
		);
	return { byName, hooks, streamFn };
}
