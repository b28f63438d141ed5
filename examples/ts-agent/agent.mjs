// A small stateful Agent written from turnstile's contract (docs/SEMANTICS.md, "The Agent",
// R-AGENT-*), on top of pi's low-level loop (runAgentLoop / runAgentLoopContinue). It is NOT
// pi's Agent class: it is what a port author would write from the contract alone.
//
// The Agent owns a transcript, the executable tools, a steering and a follow-up queue with
// their modes, and runs the loop for prompt() and continue(). Listeners are awaited, in
// subscription order, after the Agent has updated its state for the event.

import { runAgentLoop, runAgentLoopContinue } from "@earendil-works/pi-agent-core";
import { getCurrentSystemMessage } from "@earendil-works/pi-ai";

/** R-AGENT-BUSY: the refusal texts, byte for byte. */
export const BUSY_PROMPT =
	"Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.";
export const BUSY_CONTINUE = "Agent is already processing. Wait for completion before continuing.";
export const BUSY_RESET = "Agent is already processing. Wait for completion before resetting.";
/** R-AGENT-CONTINUE's refusals. */
export const NOTHING_TO_CONTINUE = "No messages to continue from";
export const CONTINUE_FROM_ASSISTANT = "Cannot continue from message role: assistant";

const UNKNOWN_MODEL = { id: "unknown", name: "unknown", api: "unknown", provider: "unknown" };
const LLM_ROLES = new Set(["system", "user", "assistant", "toolResult"]);

/** pi Agent's default convertToLlm: keep the LLM roles, drop every other (custom) role. */
export const defaultConvertToLlm = (messages) => messages.filter((m) => LLM_ROLES.has(m.role));

const zeroUsage = () => ({
	input: 0,
	output: 0,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 0,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

/** A tool's declaration as the transcript carries it (R-DECL-DIFF compares name, description, parameters). */
const declaration = (t) => ({ name: t.name, description: t.description, parameters: t.parameters });

/** A queue with a mode: a poll takes the oldest message (one-at-a-time) or every message (all). */
class Queue {
	constructor(mode) {
		this.mode = mode ?? "one-at-a-time";
		this.items = [];
	}
	push(m) {
		this.items.push(m);
	}
	peek() {
		return this.mode === "all" ? this.items.slice() : this.items.slice(0, 1);
	}
	drain() {
		const taken = this.peek();
		this.items = this.items.slice(taken.length);
		return taken;
	}
	clear() {
		this.items = [];
	}
}

export class Agent {
	/**
	 * @param {object} options
	 * @param {object} [options.initialState] {systemPrompt, model, thinkingLevel, tools, messages}
	 * @param {Function} options.streamFn pi's StreamFn
	 * @param {"one-at-a-time"|"all"} [options.steeringMode]
	 * @param {"one-at-a-time"|"all"} [options.followUpMode]
	 * @param {"parallel"|"sequential"} [options.toolExecution]
	 * @param {string} [options.sessionId]
	 * @param {object} [options.identity]
	 * @param {object} [options.hooks] loop hooks in pi's shapes: convertToLlm, transformContext,
	 *   getApiKey, prepareRequest, prepareNextTurn, finishTurn, beforeToolCall, afterToolCall
	 */
	constructor(options = {}) {
		const init = options.initialState ?? {};
		this._model = init.model ?? UNKNOWN_MODEL;
		this._thinkingLevel = init.thinkingLevel ?? "off";
		this._tools = [...(init.tools ?? [])];
		const messages = [...(init.messages ?? [])];
		const systemPrompt = init.systemPrompt ?? "";
		// R-AGENT-STATE: a leading system message with the prompt and the tools, when the given
		// messages do not start with one and either is non-empty.
		if (messages[0]?.role !== "system" && (systemPrompt !== "" || this._tools.length > 0)) {
			const sys = { role: "system", content: systemPrompt, timestamp: 0 };
			if (this._tools.length > 0) sys.toolsAdded = this._tools.map(declaration);
			messages.unshift(sys);
		}
		this._messages = messages;
		this._streamFn = options.streamFn;
		this._toolExecution = options.toolExecution;
		this._sessionId = options.sessionId;
		this._identity = options.identity;
		this._hooks = options.hooks ?? {};
		this._steering = new Queue(options.steeringMode);
		this._followUp = new Queue(options.followUpMode);
		this._listeners = [];
		this._isStreaming = false;
		this._streamingMessage = undefined;
		this._pendingToolCalls = new Set();
		this._errorMessage = undefined;
		this._active = undefined; // {controller, promise}

		const agent = this;
		this._state = {
			get systemPrompt() {
				return systemPrompt;
			},
			get model() {
				return agent._model;
			},
			set model(m) {
				agent._model = m;
			},
			get thinkingLevel() {
				return agent._thinkingLevel;
			},
			set thinkingLevel(l) {
				agent._thinkingLevel = l;
			},
			get tools() {
				return agent._tools;
			},
			set tools(t) {
				agent._tools = [...t];
			},
			get messages() {
				return agent._messages;
			},
			set messages(m) {
				agent._messages = [...m];
			},
			get isStreaming() {
				return agent._isStreaming;
			},
			get streamingMessage() {
				return agent._streamingMessage;
			},
			get pendingToolCalls() {
				return agent._pendingToolCalls;
			},
			get errorMessage() {
				return agent._errorMessage;
			},
		};
	}

	get state() {
		return this._state;
	}

	get steeringMode() {
		return this._steering.mode;
	}
	set steeringMode(mode) {
		this._steering.mode = mode;
	}
	get followUpMode() {
		return this._followUp.mode;
	}
	set followUpMode(mode) {
		this._followUp.mode = mode;
	}

	/** Adds a listener; returns the function that removes it. */
	subscribe(listener) {
		this._listeners.push(listener);
		return () => {
			const i = this._listeners.indexOf(listener);
			if (i >= 0) this._listeners.splice(i, 1);
		};
	}

	steer(message) {
		this._steering.push(message);
	}
	followUp(message) {
		this._followUp.push(message);
	}
	clearSteeringQueue() {
		this._steering.clear();
	}
	clearFollowUpQueue() {
		this._followUp.clear();
	}
	clearAllQueues() {
		this._steering.clear();
		this._followUp.clear();
	}
	/**
	 * The messages the next poll would take, without taking them: the steering queue's by its
	 * mode (the oldest, or all), else the follow-up queue's. Not in the docs ("queued is
	 * agent.peekQueuedMessages()"); found by running pi (NOTES.md).
	 */
	peekQueuedMessages() {
		const steering = this._steering.peek();
		return steering.length > 0 ? steering : this._followUp.peek();
	}
	hasQueuedMessages() {
		return this._steering.items.length > 0 || this._followUp.items.length > 0;
	}

	/** R-AGENT-ABORT: aborts the active run's signal; nothing when idle. */
	abort() {
		this._active?.controller.abort();
	}

	/** R-AGENT-LISTENERS: resolves when the active run is over, at once when idle. */
	waitForIdle() {
		return this._active ? this._active.promise : Promise.resolve();
	}

	/** R-AGENT-RESET: the replayed system message alone; both queues and the error cleared. */
	reset() {
		if (this._active) throw new Error(BUSY_RESET);
		const sys = getCurrentSystemMessage(this._messages);
		this._messages = sys ? [sys] : [];
		this.clearAllQueues();
		this._errorMessage = undefined;
		this._streamingMessage = undefined;
		this._pendingToolCalls = new Set();
	}

	/** R-AGENT-PROMPT: prompt(text) or prompt(messages); settles when the run is over. */
	async prompt(input) {
		if (this._active) throw new Error(BUSY_PROMPT);
		const prompts =
			typeof input === "string"
				? [{ role: "user", content: [{ type: "text", text: input }], timestamp: Date.now() }]
				: Array.isArray(input)
					? input
					: [input];
		return this._start({ prompts });
	}

	/** R-AGENT-CONTINUE. */
	async continue() {
		if (this._active) throw new Error(BUSY_CONTINUE);
		if (!this._messages.some((m) => m.role !== "system")) throw new Error(NOTHING_TO_CONTINUE);
		const last = this._messages[this._messages.length - 1];
		if (last.role === "assistant") {
			const steering = this._steering.drain();
			if (steering.length > 0) return this._start({ prompts: steering, skipFirstSteeringPoll: true });
			const followUps = this._followUp.drain();
			if (followUps.length > 0) return this._start({ prompts: followUps });
			throw new Error(CONTINUE_FROM_ASSISTANT);
		}
		return this._start({ prompts: undefined });
	}

	/** Starts a run synchronously (the Agent is busy from here) and returns its promise. */
	_start(how) {
		const controller = new AbortController();
		const active = { controller, promise: undefined };
		this._active = active;
		this._isStreaming = true;
		this._streamingMessage = undefined;
		this._errorMessage = undefined;
		active.promise = this._run(how, controller.signal).finally(() => {
			this._isStreaming = false;
			this._active = undefined;
		});
		return active.promise;
	}

	async _emit(event) {
		this._apply(event);
		for (const listener of [...this._listeners]) await listener(event, this._active?.controller.signal);
	}

	/** R-AGENT-STATE: the state changes an event makes, before listeners see it. */
	_apply(event) {
		switch (event.type) {
			case "message_start":
			case "message_update":
				this._streamingMessage = event.message;
				break;
			case "message_end":
				this._streamingMessage = undefined;
				this._messages.push(event.message);
				break;
			case "tool_execution_start":
				this._pendingToolCalls.add(event.toolCallId);
				break;
			case "tool_execution_end":
				this._pendingToolCalls.delete(event.toolCallId);
				break;
			case "turn_end":
				if (event.message?.errorMessage !== undefined) this._errorMessage = event.message.errorMessage;
				break;
		}
	}

	async _run({ prompts, skipFirstSteeringPoll }, signal) {
		const context = { messages: [...this._messages], tools: [...this._tools] };
		let skip = !!skipFirstSteeringPoll;
		const h = this._hooks;
		const config = {
			model: this._model,
			reasoning: this._thinkingLevel === "off" ? undefined : this._thinkingLevel,
			sessionId: this._sessionId,
			identity: this._identity,
			toolExecution: this._toolExecution,
			convertToLlm: h.convertToLlm ?? defaultConvertToLlm,
			transformContext: h.transformContext,
			getApiKey: h.getApiKey,
			prepareRequest: h.prepareRequest,
			prepareNextTurn: h.prepareNextTurn,
			finishTurn: h.finishTurn,
			beforeToolCall: h.beforeToolCall,
			afterToolCall: h.afterToolCall,
			// R-AGENT-QUEUES: the queues answer the polls, each by its mode at the poll.
			getSteeringMessages: async () => {
				if (skip) {
					skip = false;
					return [];
				}
				return this._steering.drain();
			},
			getFollowUpMessages: async () => this._followUp.drain(),
		};
		for (const k of Object.keys(config)) if (config[k] === undefined) delete config[k];
		const emit = (event) => this._emit(event);
		try {
			if (prompts) await runAgentLoop(prompts, context, config, emit, signal, this._streamFn);
			else await runAgentLoopContinue(context, config, emit, signal, this._streamFn);
		} catch (err) {
			await this._errorTurn(err, signal);
		}
	}

	/** R-AGENT-ERROR-TURN: a failed run ends with a synthetic assistant message. */
	async _errorTurn(err, signal) {
		const message = {
			role: "assistant",
			content: [{ type: "text", text: "" }],
			api: this._model.api,
			provider: this._model.provider,
			model: this._model.id,
			usage: zeroUsage(),
			stopReason: signal.aborted ? "aborted" : "error",
			errorMessage: err instanceof Error ? err.message : String(err),
			timestamp: Date.now(),
		};
		await this._emit({ type: "message_start", message });
		await this._emit({ type: "message_end", message });
		await this._emit({ type: "turn_end", message, toolResults: [] });
		await this._emit({ type: "agent_end", messages: [message] });
	}
}
