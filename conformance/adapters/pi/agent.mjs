// Agent scenarios (PROTOCOL.md §13.2) on pi's own `Agent` class: the setup builds
// `new Agent({...})`, one subscribed listener notifies every event (and holds at barriers, through
// the kit), and each `agent` delivery is one user operation whose outcome is reported when pi
// settles it. The same for every pi release the adapter installs (0.87.1–1.6.0): their Agent
// classes have the same constructor options and methods, except `identity` (1.4.0 and later,
// which adapter.mjs covers by lacking streamOptions before 1.4.0).

import { DeliveryError } from "turnstile-kit";
import { bind, wireModel } from "./bind.mjs";

/** The observable part of `agent.state`, plus the queues (§13.2). */
export function stateOf(agent) {
	const st = agent.state;
	const state = {
		isStreaming: st.isStreaming,
		messages: st.messages,
		pendingToolCalls: [...st.pendingToolCalls],
		queued: agent.peekQueuedMessages(),
		hasQueuedMessages: agent.hasQueuedMessages(),
	};
	if (st.errorMessage !== undefined) state.errorMessage = st.errorMessage;
	if (st.streamingMessage !== undefined) state.streamingMessage = st.streamingMessage;
	return state;
}

/**
 * Builds the scenario's Agent with pi's `Agent` class (`pi` is pi-agent-core's module) and
 * subscribes its listener; returns the kit's Agent handler: `operate(op)` applies one operation,
 * `abort()` is `agent.abort()` (an answer's `abort: true`, and the stop).
 */
export function startAgent(s, pi) {
	const setup = s.setup;
	const a = setup.agent ?? {};
	const { byName, hooks, streamFn } = bind(s);
	const { prepareNextTurn, getSteeringMessages: _steer, getFollowUpMessages: _follow, ...rest } = hooks; // the Agent owns its queues
	const options = {
		initialState: {
			systemPrompt: a.systemPrompt,
			// none (feature defaultModel, §13.8): pi's Agent then takes its DEFAULT_MODEL, the same
			// in every release 0.87.1–1.6.0 (initialState.model ?? DEFAULT_MODEL)
			model: setup.model ? wireModel(setup.model) : undefined,
			// "off" (none) is left out: pi's Agent then takes its default, which the scenarios
			// with "off" pin (pi: initialState.thinkingLevel ?? "off")
			thinkingLevel: setup.thinkingLevel && setup.thinkingLevel !== "off" ? setup.thinkingLevel : undefined,
			tools: byName(setup.activeTools),
			messages: [...(setup.messages ?? [])],
		},
		streamFn,
		steeringMode: a.steeringMode,
		followUpMode: a.followUpMode,
		toolExecution: setup.toolExecution,
		sessionId: a.sessionId ?? setup.sessionId,
		identity: setup.identity,
		...rest,
	};
	if (prepareNextTurn) options.prepareNextTurnWithContext = prepareNextTurn;
	const agent = new pi.Agent(options);
	agent.subscribe((event, signal) => s.agentEvent(event, signal)); // pi passes listeners the run's signal

	const accepted = (op, fn) => {
		fn();
		s.outcome(op, "accepted");
	};
	return {
		abort: () => agent.abort(),
		operate(op) {
			switch (op.op) {
				case "prompt":
					// pi's promise, as it is: the outcome is reported when pi settles it
					s.track(op, op.messages !== undefined ? agent.prompt(op.messages) : agent.prompt(op.text));
					return;
				case "continue":
					s.track(op, agent.continue());
					return;
				case "waitForIdle":
					s.track(op, agent.waitForIdle());
					return;
				case "steer":
					return accepted(op, () => agent.steer(op.message));
				case "followUp":
					return accepted(op, () => agent.followUp(op.message));
				case "abort":
					return accepted(op, () => agent.abort());
				case "reset":
					try {
						agent.reset();
					} catch (err) {
						s.outcome(op, "refused", { error: err instanceof Error ? err.message : String(err) });
						return;
					}
					s.outcome(op, "accepted");
					return;
				case "setSteeringMode":
					return accepted(op, () => (agent.steeringMode = op.mode));
				case "setFollowUpMode":
					return accepted(op, () => (agent.followUpMode = op.mode));
				case "clearQueues": {
					const clear = { steering: () => agent.clearSteeringQueue(), followUp: () => agent.clearFollowUpQueue(), all: () => agent.clearAllQueues() }[op.queue];
					if (!clear) throw new DeliveryError(`clearQueues: unknown queue ${JSON.stringify(op.queue)} (steering, followUp or all)`);
					return accepted(op, clear);
				}
				case "setTools":
					return accepted(op, () => (agent.state.tools = byName(op.tools)));
				case "state":
					s.outcome(op, "accepted", { state: stateOf(agent) });
					return;
				default:
					throw new DeliveryError(`unknown agent operation ${JSON.stringify(op.op)}`);
			}
		},
	};
}
