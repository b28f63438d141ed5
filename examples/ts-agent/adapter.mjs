#!/usr/bin/env node
// The turnstile adapter for the example Agent (agent.mjs), on the TypeScript kit, protocol
// version 2. It serves Agent scenarios only (setup.entry "agent"): run it with
//
//	go run ./cmd/turnstile conform --impl "node examples/ts-agent/adapter.mjs" --run agent/

import { ALL_HOOKS, serve } from "turnstile-kit";
import { Agent } from "./agent.mjs";

// The loop hooks the Agent passes to pi's loop; the Agent owns the two queue hooks.
const HOOKS = ALL_HOOKS.filter((h) => h !== "getSteeringMessages" && h !== "getFollowUpMessages");

const wireModel = (m) => ({ id: m.id, api: m.api, provider: m.provider });
const wireContext = (ctx) => ({ messages: ctx.messages, tools: (ctx.tools ?? []).map((t) => t.name) });
const wireTurn = (t) => ({ message: t.message, toolResults: t.toolResults, context: wireContext(t.context), newMessages: t.newMessages });

/** Every installed hook in pi's shapes; each is one synchronous call to the harness. */
function hooksFor(s, pool) {
	const contextOf = (raw) => raw && { messages: raw.messages ?? [], tools: (raw.tools ?? []).map((n) => pool.get(n)).filter(Boolean) };
	const table = {
		convertToLlm: (messages) => s.hook("convertToLlm", { messages }).messages ?? [],
		transformContext: (messages) => s.hook("transformContext", { messages }).messages ?? [],
		getApiKey: (provider) => s.hook("getApiKey", { provider }).apiKey,
		prepareRequest: (req) => {
			const a = s.hook("prepareRequest", { context: wireContext(req.context), model: wireModel(req.model), thinkingLevel: req.thinkingLevel });
			return { context: contextOf(a.context), model: a.model, thinkingLevel: a.thinkingLevel };
		},
		prepareNextTurn: (turn) => {
			const a = s.hook("prepareNextTurn", { turn: wireTurn(turn) });
			return { ...a, context: contextOf(a.context) };
		},
		finishTurn: (turn) => {
			const action = s.hook("finishTurn", { turn: wireTurn(turn) }).action;
			return action ? { action } : undefined;
		},
		beforeToolCall: (c) => {
			const a = s.hook("beforeToolCall", { assistantMessage: c.assistantMessage, toolCall: c.toolCall, args: c.args, context: wireContext(c.context) });
			if (a.setArgs && c.args && typeof c.args === "object") Object.assign(c.args, a.setArgs);
			return { block: a.block, reason: a.reason, terminate: a.terminate };
		},
		afterToolCall: (c) =>
			s.hook("afterToolCall", {
				assistantMessage: c.assistantMessage,
				toolCall: c.toolCall,
				args: c.args,
				result: c.result,
				isError: c.isError,
				context: wireContext(c.context),
			}),
	};
	return Object.fromEntries(
		Object.entries(table)
			.filter(([name]) => s.installed(name))
			.map(([name, f]) => [name, async (...a) => f(...a)]),
	);
}

/** The Agent's state as the protocol reports it (PROTOCOL.md §13.2). */
function stateOf(agent) {
	const st = agent.state;
	const out = {
		isStreaming: st.isStreaming,
		messages: st.messages,
		pendingToolCalls: [...st.pendingToolCalls],
		queued: agent.peekQueuedMessages(),
		hasQueuedMessages: agent.hasQueuedMessages(),
	};
	if (st.errorMessage !== undefined) out.errorMessage = st.errorMessage;
	if (st.streamingMessage !== undefined) out.streamingMessage = st.streamingMessage;
	return out;
}

/** One Agent scenario: build the Agent, subscribe the listener, return the operation handler. */
function startAgent(s) {
	const setup = s.setup;
	const pool = new Map();
	for (const ts of setup.tools ?? []) {
		const tool = {
			name: ts.name,
			label: ts.name,
			description: ts.description,
			parameters: ts.parameters,
			execute: (toolCallId, args, _signal, onUpdate) => s.runTool(toolCallId, ts.name, args, onUpdate),
		};
		if (ts.executionMode) tool.executionMode = ts.executionMode;
		if (ts.prepareArguments) tool.prepareArguments = (args) => ({ ...(args ?? {}), ...ts.prepareArguments });
		pool.set(ts.name, tool);
	}
	const streamFn = (model, context, options) =>
		s.openStream(
			{ model: wireModel(model), messages: context.messages, thinkingLevel: options?.reasoning ?? "off", apiKey: options?.apiKey ?? "" },
			{ sessionId: options?.sessionId, identity: options?.identity },
		);
	const cfg = setup.agent ?? {};
	const agent = new Agent({
		initialState: {
			systemPrompt: cfg.systemPrompt,
			model: setup.model,
			thinkingLevel: setup.thinkingLevel,
			tools: (setup.activeTools ?? []).map((n) => pool.get(n)).filter(Boolean),
			messages: setup.messages ?? [],
		},
		streamFn,
		steeringMode: cfg.steeringMode,
		followUpMode: cfg.followUpMode,
		toolExecution: setup.toolExecution,
		sessionId: setup.sessionId ?? cfg.sessionId,
		identity: setup.identity,
		hooks: hooksFor(s, pool),
	});
	agent.subscribe((event) => s.agentEvent(event));

	const accept = (op, extra) => s.outcome(op, "accepted", extra);
	return {
		operate(op) {
			switch (op.op) {
				case "prompt":
					return s.track(op, agent.prompt(op.messages ?? op.text));
				case "continue":
					return s.track(op, agent.continue());
				case "waitForIdle":
					return s.track(op, agent.waitForIdle());
				case "steer":
					agent.steer(op.message);
					return accept(op);
				case "followUp":
					agent.followUp(op.message);
					return accept(op);
				case "abort":
					agent.abort();
					return accept(op);
				case "reset":
					try {
						agent.reset();
					} catch (err) {
						return s.outcome(op, "refused", { error: err.message });
					}
					return accept(op);
				case "setSteeringMode":
					agent.steeringMode = op.mode;
					return accept(op);
				case "setFollowUpMode":
					agent.followUpMode = op.mode;
					return accept(op);
				case "clearQueues":
					if (op.queue === "steering") agent.clearSteeringQueue();
					else if (op.queue === "followUp") agent.clearFollowUpQueue();
					else agent.clearAllQueues();
					return accept(op);
				case "setTools":
					agent.state.tools = (op.tools ?? []).map((n) => pool.get(n)).filter(Boolean);
					return accept(op);
				case "state":
					return accept(op, { state: stateOf(agent) });
				default:
					throw new Error(`unknown Agent operation ${op.op}`);
			}
		},
		abort: () => agent.abort(),
	};
}

function run() {
	throw new Error("examples/ts-agent serves Agent scenarios only: run conform with --run agent/");
}

serve(run, { name: "ts-agent-example", version: "0.1.0", tracks: "1.6.0", hooks: HOOKS, protocol: 2, agent: startAgent, lacks: ["waitingHooks"] }); // its hooks answer at once
