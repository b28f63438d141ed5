// A session: one scenario's run, its calls, notifications, streams, tool runs and abort signal.

import { clock } from "./vtime.mjs";
import { ProtocolError } from "./wire.mjs";

/** The text every wait fails with once the session is stopped. */
export const STOPPED = "the simulation session was stopped";

/** The harness answered a call with an error: the hook, stream function or execute throws it. */
export class CallError extends Error {
	constructor(message) {
		super(message);
		this.name = "CallError";
	}
}

/** A provider stream failed (a `streamFail` delivery): iterating it throws this. */
export class StreamError extends Error {
	constructor(message) {
		super(message);
		this.name = "StreamError";
	}
}

/** A tool's execution failed in the world (a `toolResult` delivery with an error). */
export class ToolError extends Error {
	constructor(message) {
		super(message);
		this.name = "ToolError";
	}
}

/** The session was stopped while the loop waited; every wait and call throws it from then on. */
export class SessionStopped extends Error {
	constructor() {
		super(STOPPED);
		this.name = "SessionStopped";
	}
}

/**
 * A delivery names nothing this session knows (or an operation the adapter cannot apply); the
 * kit reports it to the harness as an `error` for the session. An Agent's `operate` may throw it.
 */
export class DeliveryError extends Error {
	constructor(message) {
		super(message);
		this.name = "DeliveryError";
	}
}

/** An answer that waits (PROTOCOL.md §13.6), as call returns it to callAsync. */
class Waiting {
	constructor(msg) {
		this.msg = msg;
	}
}

/** An answer's data (undefined for null), or its error thrown as a CallError. */
function settleAnswer(msg) {
	if (typeof msg.error === "string") throw new CallError(msg.error);
	return msg.data ?? undefined;
}

const textOf = (err) => (err instanceof Error ? err.message : String(err));

/**
 * A provider response fed by `streamEvent` / `streamEnd` / `streamFail` deliveries: an async
 * iterable of pi-ai AssistantMessageEvents with `result()`, the shape pi's stream function
 * returns. A `streamFail` makes the iteration throw a StreamError with its text.
 */
export class Stream {
	constructor(session, id) {
		this.session = session;
		this.id = id;
		this.queue = [];
		this.ended = false;
		this.final = undefined;
		this.error = undefined;
		this.waiter = null;
	}

	/** @internal a delivery arrived, or the session stopped */
	wake() {
		const w = this.waiter;
		this.waiter = null;
		w?.();
	}

	/** The next event ({value, done}), as an async iterator's next(). */
	async next() {
		for (;;) {
			if (this.queue.length > 0) {
				const event = this.queue.shift();
				if (event?.type === "done" || event?.type === "error") {
					this.ended = true;
					this.final = event.type === "done" ? event.message : event.error;
				}
				return { value: event, done: false };
			}
			if (this.error) throw this.error;
			if (this.ended) return { value: undefined, done: true };
			if (this.session.stopping) throw new SessionStopped();
			await new Promise((resolve) => {
				this.waiter = resolve;
			});
		}
	}

	[Symbol.asyncIterator]() {
		return { next: () => this.next() };
	}

	/** The final message: of `done` / `error`, or the one `streamEnd` carried. */
	async result() {
		if (!this.final) throw new StreamError("the stream ended without a final message");
		return this.final;
	}
}

/**
 * One scenario. The adapter's `run(session)` builds its loop from `setup` and runs it;
 * everything the loop asks of the world goes through this object.
 */
export class Session {
	constructor(kit, id, setup, standingAnswers = {}) {
		this.kit = kit;
		// The answers the start promised to every call of a hook (PROTOCOL.md §15), as JSON
		// text by hook name: each call of one is written marked standing and not waited for.
		this.standing = new Map(Object.entries(standingAnswers).map(([hook, data]) => [hook, JSON.stringify(data)]));
		/** The session number. */
		this.id = id;
		/** The scenario's setup (PROTOCOL.md §4). */
		this.setup = setup;
		this.controller = new AbortController();
		/** The run's abort signal: the `abort` delivery fires it. */
		this.signal = this.controller.signal;
		/** True once `stop` arrived: calls fail locally, notifications are dropped. */
		this.stopping = false;
		this.streams = new Map(); // stream id -> Stream
		this.tools = new Map(); // tool call id -> run
		/** The protocol version negotiated at the hello (1 or 2). */
		this.protocol = kit.protocol ?? 1;
		/** An Agent scenario's handler, {operate(op), abort?()}: what options.agent returned. */
		this.agentHandler = null;
		// Barriers (PROTOCOL.md §13.2): each {id, event, nth}; held ones wait for their release.
		this.barriers = (setup.agent?.barriers ?? []).map((b) => ({ id: b.id, event: b.event, nth: b.nth ?? 1, untilAbort: b.untilAbort === true, state: "waiting", release: null }));
		this.eventCounts = new Map(); // event type -> occurrences seen by agentEvent
		this.returns = new Map(); // wait -> a hook answer waiting for its hookReturn (§13.6)
		this.held = new Set(); // hook answers waiting for the abort of the signal their hook was given
	}

	/** The virtual time in milliseconds. */
	now() {
		return clock.ms;
	}

	/** Whether the scenario installs this hook (setup.hooks). */
	installed(hook) {
		return (this.setup.hooks ?? []).includes(hook);
	}

	/**
	 * Makes a call and returns its answer's data (undefined for null); throws CallError with the
	 * answer's error. Synchronous: the harness answers at once. After a stop it throws
	 * SessionStopped without asking the harness.
	 */
	call(kind, data, name) {
		const kit = this.kit;
		if (kit.fatal) throw kit.fatal;
		if (this.stopping) throw new SessionStopped();
		const id = ++kit.callId;
		const call = name ? { kind, name, data } : { kind, data };
		const standing = kind === "hook" ? this.standing.get(name) : undefined;
		if (standing !== undefined) {
			// §15: the harness answers nothing; the loop gets a fresh copy of the promised answer.
			kit.send({ type: "call", id, session: this.id, call, standing: true });
			return JSON.parse(standing) ?? undefined;
		}
		let msg;
		try {
			kit.wire.send({ type: "call", id, session: this.id, call });
			msg = kit.receiveAnswer();
			if (msg.type !== "answer") throw new ProtocolError(`protocol error at line ${kit.wire.line}: expected the answer to call ${id}, got a "${msg.type}" message`);
			if (msg.id !== id) throw new ProtocolError(`protocol error at line ${kit.wire.line}: an answer for unknown call id ${msg.id} (the outstanding call is ${id})`);
		} catch (err) {
			kit.fatal = err; // the kit ends once the loop lets go, whatever the loop does with err
			throw err;
		}
		if (msg.abort === true && this.protocol >= 2) this.abortRun(); // §13.5: before the hook returns or throws
		if (this.protocol >= 2 && (typeof msg.wait === "string" || msg.untilAbort === true)) {
			// §13.6: the answer is returned later; callAsync gives the loop a promise of it
			return new Waiting(msg);
		}
		return settleAnswer(msg);
	}

	/**
	 * Makes a call whose answer may wait (a hook call, PROTOCOL.md §13.6): returns the answer's
	 * data at once, as call does, or a promise of it when the harness answers with a wait: the
	 * `hookReturn` delivery it names resolves it, or, for `untilAbort`, the abort of `signal`
	 * (the signal the loop gave the hook; at once when it has fired; never when there is none).
	 */
	callAsync(kind, data, name, signal) {
		const a = this.call(kind, data, name);
		if (!(a instanceof Waiting)) return a;
		const msg = a.msg;
		if (msg.untilAbort === true && signal?.aborted) {
			// returned at once; its hookReturn, if it has one, still comes and changes nothing
			if (typeof msg.wait === "string") this.returns.set(msg.wait, { resolve() {}, reject() {} });
			return settleAnswer(msg);
		}
		return new Promise((resolve, reject) => {
			let done = false;
			const wait = {
				resolve: () => {
					if (done) return; // the first of the hookReturn and the abort returns it
					done = true;
					this.held.delete(wait);
					try {
						resolve(settleAnswer(msg));
					} catch (err) {
						reject(err);
					}
				},
				reject: (err) => {
					done = true;
					reject(err);
				},
			};
			if (typeof msg.wait === "string") this.returns.set(msg.wait, wait);
			if (msg.untilAbort === true) {
				this.held.add(wait);
				signal?.addEventListener("abort", () => wait.resolve(), { once: true });
			}
		});
	}

	/**
	 * Fires the run's abort: an `abort` delivery, or an answer carrying `abort: true` (§13.5).
	 * In a loop scenario it aborts `signal`; in an Agent scenario it calls the handler's
	 * `abort()` (pi: `agent.abort()`), or aborts `signal` when the handler has none.
	 */
	abortRun() {
		if (this.agentHandler?.abort) this.agentHandler.abort();
		else this.controller.abort();
	}

	/** Calls an installed hook; returns its answer ({} when none); throws CallError. */
	hook(name, data) {
		const a = this.call("hook", data, name);
		if (a instanceof Waiting) throw new DeliveryError(`the answer to ${name} waits (PROTOCOL.md §13.6): call it with hookThen, or lack waitingHooks`);
		return a !== null && typeof a === "object" ? a : {};
	}

	/**
	 * Calls an installed hook given `signal` (the abort signal the loop passed it; undefined
	 * when none) and returns `then(answer)` ({} when none): at once, or a promise of it when
	 * the answer waits (a delay, or until the signal fires: PROTOCOL.md §13.6). Throws (or
	 * rejects with) CallError.
	 */
	hookThen(name, data, signal, then) {
		const object = (a) => (a !== null && typeof a === "object" ? a : {});
		const a = this.callAsync("hook", data, name, signal);
		return a instanceof Promise ? a.then((x) => then(object(x))) : then(object(a));
	}

	/** Writes a notification now (nothing after a stop). */
	notify(kind, data) {
		if (this.stopping || this.kit.fatal) return;
		this.kit.send({ type: "notify", session: this.id, notification: { kind, data } });
	}

	/** Reports one loop event; it is serialised now, so later mutation of it does not show. */
	emit(event) {
		this.notify("event", event);
	}

	/** Whether the setup asks for the stream function's options in `stream` calls (§13.4). */
	wantsStreamOptions() {
		return this.protocol >= 2 && this.setup.streamOptions === true;
	}

	/**
	 * Makes the `stream` call ({model, messages, thinkingLevel, apiKey}); returns its Stream.
	 * `options` is what the stream function received besides the model and the context
	 * ({sessionId, identity}, PROTOCOL.md §13.4): added to the call's data as `options` only when
	 * the setup says `streamOptions: true` (protocol 2), else left out.
	 */
	openStream(data, options) {
		if (this.wantsStreamOptions()) data = { ...data, options: options ?? {} };
		const answer = this.call("stream", data);
		const stream = new Stream(this, String(answer?.stream));
		this.streams.set(stream.id, stream);
		return stream;
	}

	/**
	 * Makes the `tool` call and returns a promise of the result that deliveries settle:
	 * `toolUpdate` calls onUpdate(partial) at once (also after the result: onUpdate is retained,
	 * and the loop decides what to drop), `toolResult` resolves it or rejects it with a ToolError. Throws CallError (synchronously) when the harness refuses the call.
	 */
	runTool(toolCallId, toolName, args, onUpdate) {
		if (onUpdate !== undefined && onUpdate !== null && typeof onUpdate !== "function") {
			// Checked here, not at the first toolUpdate: pi's execute is (toolCallId, args,
			// signal, onUpdate), and a signal passed in onUpdate's place failed only scenarios
			// with updates, with a stack inside the kit.
			throw new TypeError(`turnstile-kit: runTool(toolCallId, toolName, args, onUpdate): onUpdate must be a function or undefined; got ${onUpdate?.constructor?.name ?? typeof onUpdate} (pi's execute is (toolCallId, args, signal, onUpdate): was the signal passed in its place?)`);
		}
		const run = { onUpdate, settled: false, resolve: null, reject: null };
		const settled = new Promise((resolve, reject) => {
			run.resolve = resolve;
			run.reject = reject;
		});
		this.tools.set(toolCallId, run);
		try {
			this.call("tool", { toolCallId, toolName, args });
		} catch (err) {
			run.settled = true; // execute throws at once; nothing will wait for this run
			throw err;
		}
		return settled;
	}

	/** @internal Applies a delivery (the clock is already set); throws DeliveryError. */
	deliver(d) {
		const data = d.data !== null && typeof d.data === "object" ? d.data : {};
		switch (d.kind) {
			case "abort":
				this.abortRun();
				return;
			case "streamEvent":
			case "streamEnd":
			case "streamFail": {
				const stream = this.streams.get(d.target);
				if (!stream) throw new DeliveryError(`delivery for unknown stream "${d.target}"`);
				if (d.kind === "streamEvent") stream.queue.push(d.data);
				else if (d.kind === "streamEnd") {
					stream.ended = true;
					stream.final = data.message;
				} else stream.error = new StreamError(String(data.error ?? ""));
				stream.wake();
				return;
			}
			case "toolUpdate":
			case "toolResult": {
				const run = this.tools.get(d.target);
				if (!run) throw new DeliveryError(`delivery for unknown tool call "${d.target}"`);
				if (d.kind === "toolUpdate") {
					// Also after the tool settled, and after the run: the loop's retained onUpdate
					// decides what to drop (PROTOCOL.md §7; pi drops it, emitting nothing).
					if (!this.stopping) run.onUpdate?.(d.data);
					return;
				}
				if (run.settled) return;
				run.settled = true;
				if (typeof data.error === "string" && data.error !== "") run.reject(new ToolError(data.error));
				else if (this.protocol >= 2 && data.nothing === "undefined") run.resolve(undefined); // §13.3
				else if (this.protocol >= 2 && data.nothing === "null") run.resolve(null);
				else run.resolve(data.result);
				return;
			}
			case "hookReturn": {
				// kept once returned: a hook the abort let return first gets its hookReturn later
				const wait = this.protocol >= 2 ? this.returns.get(d.target) : undefined;
				if (!wait) throw new DeliveryError(`hookReturn for unknown wait "${d.target}"`);
				wait.resolve();
				return;
			}
			case "agent":
				if (this.protocol >= 2) {
					this.operate(d, data);
					return;
				}
			// fall through: version 1 has no agent deliveries
			default:
				throw new DeliveryError(`unknown delivery kind "${d.kind}"`);
		}
	}

	/**
	 * Reports one Agent event (§13.2), from the Agent's listener: notifies it, then, when it is
	 * the `nth` occurrence of a barrier's event type, returns a promise the barrier's `release`
	 * resolves (return it from the listener: pi awaits listeners, so the run is held there).
	 * Otherwise returns undefined. After a stop nothing is held.
	 */
	agentEvent(event, signal) {
		this.emit(event);
		if (this.stopping || this.barriers.length === 0) return undefined;
		const type = event?.type;
		const n = (this.eventCounts.get(type) ?? 0) + 1;
		this.eventCounts.set(type, n);
		const holds = [];
		for (const b of this.barriers) {
			if (b.state !== "waiting" || b.event !== type || b.nth !== n) continue;
			if (b.untilAbort && signal?.aborted) {
				b.state = "released"; // §13.6: a fired signal holds nothing
				continue;
			}
			b.state = "held";
			holds.push(new Promise((resolve) => (b.release = resolve)));
			if (b.untilAbort) {
				signal?.addEventListener("abort", () => {
					if (b.state !== "held") return;
					b.state = "released";
					b.release();
				}, { once: true });
			}
		}
		if (holds.length === 0) return undefined;
		return holds.length === 1 ? holds[0] : Promise.all(holds).then(() => undefined);
	}

	/** Writes a runToolCall outcome (§13.7): pi's AgentToolCallOutcome and the updates onUpdate got. */
	toolCallOutcome(op, o, updates) {
		const data = { id: op.id, op: op.op, outcome: "resolved", toolCall: o?.toolCall, result: o?.result, isError: o?.isError };
		if (o?.durationMs !== undefined) data.durationMs = o.durationMs;
		if (updates.length > 0) data.updates = updates;
		this.notify("outcome", data);
	}

	/** Writes an operation's outcome (§13.2): `{id, op, outcome, error?, state?}`. */
	outcome(op, outcome, extra = {}) {
		const data = { id: op.id, op: op.op, outcome };
		if (extra.error !== undefined) data.error = extra.error;
		if (extra.state !== undefined) data.state = extra.state;
		this.notify("outcome", data);
	}

	/**
	 * Reports a promise's operation when the promise settles, at that moment: `resolved`, or
	 * `refused` with the rejection's message (prompt, continue, waitForIdle). Attach it to the
	 * loop's own promise right away, so the outcomes come in the order the loop settles them.
	 */
	track(op, promise) {
		Promise.resolve(promise).then(
			() => this.outcome(op, "resolved"),
			(err) => this.outcome(op, "refused", { error: textOf(err) }),
		);
	}

	/** @internal An `agent` delivery: `release` is the kit's; every other operation the handler's. */
	operate(d, data) {
		if (!this.agentHandler) throw new DeliveryError(`an agent delivery (${JSON.stringify(data.op)}), but session ${this.id} is not an Agent scenario`);
		if (typeof d.target !== "string" || d.target === "") throw new DeliveryError(`an agent delivery without an operation id (target)`);
		const op = { ...data, id: d.target };
		if (op.op === "release") {
			const b = this.barriers.find((x) => x.id === op.barrier);
			if (!b || b.state !== "held") {
				this.outcome(op, "refused", { error: `barrier ${op.barrier} is not held` });
				return;
			}
			b.state = "released";
			this.outcome(op, "accepted");
			b.release();
			return;
		}
		this.agentHandler.operate(op);
	}

	/** The ids of the barriers still held (a listener waits for their release). */
	heldBarriers() {
		return this.barriers.filter((b) => b.state === "held").map((b) => b.id);
	}

	/** @internal The session ends: nothing more is reported, every wait fails, the signal fires. */
	stop() {
		this.stopping = true;
		this.controller.abort();
		for (const b of this.barriers) {
			if (b.state === "held") {
				b.state = "released";
				b.release();
			}
		}
		try {
			this.agentHandler?.abort?.();
		} catch {
			// winding down: the harness ignores what follows
		}
		for (const wait of new Set([...this.returns.values(), ...this.held])) wait.reject(new SessionStopped());
		this.returns.clear();
		this.held.clear();
		for (const stream of this.streams.values()) stream.wake();
		for (const run of this.tools.values()) {
			if (!run.settled) {
				run.settled = true;
				run.reject(new SessionStopped());
			}
		}
	}
}
