// The adapter's main loop: hello, sessions, deliveries, idle, stop and shutdown.

import { CallError, DeliveryError, Session, StreamError } from "./session.mjs";
import { clock, discardJobs, hasRunnable, installVirtualTime, real, runJob, takeRunnable } from "./vtime.mjs";
import { AdapterError, ProtocolError, Shutdown, Wire } from "./wire.mjs";

/** The newest protocol version the kit speaks. */
export const PROTOCOL = 2;

/** Every protocol version the kit speaks. An adapter chooses its own with `options.protocol`. */
export const PROTOCOLS = Object.freeze([1, 2]);

/** Every hook of the protocol, by pi's names. */
export const ALL_HOOKS = Object.freeze([
	"convertToLlm",
	"transformContext",
	"getApiKey",
	"prepareRequest",
	"prepareNextTurn",
	"finishTurn",
	"getSteeringMessages",
	"getFollowUpMessages",
	"beforeToolCall",
	"afterToolCall",
]);

/** The optional features a loop may lack (docs/SEMANTICS.md, "Optional features"). */
export const FEATURES = Object.freeze([
	"continue",
	"severalPrompts",
	"customMessages",
	"prepareArguments",
	"argumentMutation",
	"throwingHooks",
	"throwingStreams",
	"argumentsError",
	"structuredContent",
	"agent",
	"toolResolvesNothing",
	"streamOptions",
	"abortInHook",
	"waitingHooks",
	"runToolCall",
	"defaultModel",
]);

/** The optional features version 2 adds (PROTOCOL.md §13): a version-1 hello never names them. */
export const V2_FEATURES = Object.freeze(["agent", "toolResolvesNothing", "streamOptions", "abortInHook", "waitingHooks", "runToolCall", "defaultModel"]);

// Real resources that cannot make the loop progress: stdio pipes and terminals, signal handlers.
const QUIET = new Set(["PipeWrap", "TTYWrap", "SignalWrap"]);
const MAX_JOBS = 10_000_000; // one settle; a loop that keeps itself busy is reported, not waited for
const REAL_IO_LIMIT_MS = 10_000; // real I/O still in flight after this is reported

/** A turn of Node's event loop: when it resolves, every microtask and nextTick queued before has run. */
const turn = () => new Promise((resolve) => real.setImmediate(resolve));
const pause = (ms) => new Promise((resolve) => real.setTimeout(resolve, ms));

/** The text of a failed run: the error's message, as pi's rejected promise reports it. */
export function errorText(err) {
	return err instanceof Error ? err.message : String(err);
}

/** Errors that are almost always a bug in the loop or the adapter, not a failure it means. */
const BUG_TYPES = [TypeError, ReferenceError, RangeError, SyntaxError];

/**
 * Says with log what a failed run most likely is: nothing for a CallError or a StreamError
 * (the harness's scripted failure, passed on as the scenario means), the stack for a bug (TypeError,
 * ReferenceError, …), one line for anything else; TURNSTILE_KIT_DEBUG=1 gives every stack.
 */
function logFailure(log, err) {
	if (process.env.TURNSTILE_KIT_DEBUG || BUG_TYPES.some((t) => err instanceof t)) {
		log(`turnstile-kit: the run failed with ${err?.name ?? typeof err}:\n${err?.stack ?? err}`);
	} else if (!(err instanceof CallError || err instanceof StreamError)) {
		log(`turnstile-kit: the run failed: ${errorText(err)}`);
	}
}

/** Serves one adapter process. Use serve(); this class is public for tests. */
export class Kit {
	/**
	 * @param run (session) => the run's new messages (or a promise of them)
	 * @param options {name, version, tracks, hooks, lacks, capabilities, protocol, agent, runToolCall, load, input, output, log}
	 */
	constructor(run, options = {}) {
		if (typeof run !== "function") throw new TypeError(`turnstile-kit: serve(run, options) needs run, a function (session) => the run's promise; got ${typeof run}`);
		const speaks = options.protocol ?? 1;
		if (!PROTOCOLS.includes(speaks)) throw new TypeError(`turnstile-kit: options.protocol must be one of ${PROTOCOLS.join(", ")}; got ${JSON.stringify(options.protocol)}`);
		if (options.agent !== undefined && typeof options.agent !== "function") throw new TypeError(`turnstile-kit: options.agent must be a function (session) => {operate, abort?}; got ${typeof options.agent}`);
		this.run = run;
		/** The newest version the adapter speaks; the hello negotiates `protocol`, the one spoken. */
		this.speaks = speaks;
		this.protocol = 1;
		if (options.runToolCall !== undefined && typeof options.runToolCall !== "function") throw new TypeError(`turnstile-kit: options.runToolCall must be a function (session, toolCall, onUpdate) => the call's outcome; got ${typeof options.runToolCall}`);
		this.agent = options.agent;
		this.runToolCall = options.runToolCall;
		this.options = options;
		this.hello = null; // made by the harness's hello: it depends on the version negotiated
		this.load = options.load;
		this.loaded = false;
		this.wire = new Wire(options.input ?? 0, options.output ?? 1);
		this.log = options.log ?? ((line) => process.stderr.write(line + "\n"));
		this.current = null;
		/** Deliveries that came ahead, while a call waited for its answer (§14), with their line numbers. */
		this.queued = [];
		this.callId = 0;
		this.fatal = null; // a Shutdown / ProtocolError / AdapterError met while the loop ran
	}

	/**
	 * The next message for a call waiting for its answer. A delivery sent ahead (PROTOCOL.md
	 * §14: the kit's hello says `deliveriesAhead`) is queued: it is applied once the run is
	 * idle, exactly as if it had come after the idle.
	 */
	receiveAnswer() {
		for (;;) {
			const msg = this.wire.receive();
			if (msg.type !== "deliver") return msg;
			this.queued.push({ msg, line: this.wire.line });
		}
	}

	/** The next message of a session: a delivery that came ahead first, then the wire's. */
	receiveNext() {
		const next = this.queued.shift();
		if (next) return next;
		const msg = this.wire.receive();
		return { msg, line: this.wire.line };
	}

	send(msg) {
		try {
			this.wire.send(msg);
		} catch (err) {
			this.fatal ??= err;
			throw err;
		}
	}

	/** Serves until shutdown (0) or a protocol or adapter error (1, after reporting it). */
	async serve() {
		try {
			for (;;) {
				const msg = this.wire.receive();
				if (msg.type === "hello") {
					this.protocol = this.negotiate(msg);
					this.hello = this.helloFor(this.protocol);
					this.send(this.hello);
				} else if (msg.type === "start") await this.session(msg);
				else throw new ProtocolError(`protocol error at line ${this.wire.line}: unexpected "${msg.type}" message (no session is running)`);
			}
		} catch (err) {
			if (err instanceof Shutdown) return 0;
			const message = err instanceof ProtocolError || err instanceof AdapterError ? err.message : `adapter error: ${err?.stack ?? err}`;
			const report = { type: "error", message };
			if (this.current) report.session = this.current.id;
			try {
				this.wire.send(report);
			} catch {
				// stdout is gone: nothing to tell
			}
			return 1;
		}
	}

	/**
	 * The version to speak: the newest the harness lists (`protocols`, or only `protocol` from a
	 * version-1 harness) that the adapter speaks too. PROTOCOL.md §13.1.
	 */
	negotiate(msg) {
		const theirs = Array.isArray(msg.protocols) ? msg.protocols : [msg.protocol];
		const ours = PROTOCOLS.filter((v) => v <= this.speaks);
		const common = theirs.filter((v) => ours.includes(v));
		if (common.length === 0) {
			throw new ProtocolError(`the harness speaks protocol ${theirs.join(", ")}; this adapter speaks ${ours.join(", ")}`);
		}
		return Math.max(...common);
	}

	/**
	 * The adapter's hello for a version. Version 1: the version-2 features are left out of
	 * `lacks` (a version-1 harness knows none of them). Version 2: `agent` is lacked when the
	 * adapter gave no `agent` function, `runToolCall` when it gave no `runToolCall` function.
	 * `defaultModel` (§13.8) comes with `agent`: an adapter whose Agent needs a model lists it
	 * in `lacks`.
	 */
	helloFor(protocol) {
		const options = this.options;
		const capabilities = { hooks: [...(options.hooks ?? [])], deliveriesAhead: true, standingAnswers: true, ...(options.capabilities ?? {}) };
		let lacks = [...(options.lacks ?? [])];
		if (protocol < 2) lacks = lacks.filter((f) => !V2_FEATURES.includes(f));
		else {
			if (!this.agent && !lacks.includes("agent")) lacks.push("agent");
			if (!this.runToolCall && !lacks.includes("runToolCall")) lacks.push("runToolCall");
		}
		if (lacks.length) capabilities.lacks = lacks;
		return {
			type: "hello",
			protocol,
			name: options.name ?? "unnamed-loop",
			version: options.version ?? "0.0.0",
			tracks: options.tracks ?? "1.6.0",
			capabilities,
		};
	}

	async session(msg) {
		if (!Number.isInteger(msg.session) || msg.setup === null || typeof msg.setup !== "object") {
			throw new ProtocolError(`protocol error at line ${this.wire.line}: start needs a session number and a setup`);
		}
		if (this.load && !this.loaded) {
			this.loaded = true;
			await this.loading();
		}
		discardJobs();
		this.queued = [];
		clock.ms = 0;
		const s = new Session(this, msg.session, msg.setup, this.standingAnswers(msg));
		this.current = s;
		this.begin(s);
		await this.settle();
		this.send({ type: "idle", session: s.id });
		for (;;) {
			const { msg: m, line } = this.receiveNext();
			if (m.type !== "deliver" && m.type !== "stop") throw new ProtocolError(`protocol error at line ${line}: unexpected "${m.type}" message while session ${s.id} runs`);
			if (m.session !== s.id) throw new ProtocolError(`protocol error at line ${line}: a "${m.type}" for session ${m.session}, but session ${s.id} is running`);
			if (m.type === "stop") {
				s.stop();
				await this.settle();
				discardJobs();
				this.send({ type: "stopped", session: s.id });
				this.current = null;
				return;
			}
			const d = m.delivery !== null && typeof m.delivery === "object" ? m.delivery : {};
			if (typeof d.now === "number") clock.ms = d.now;
			if (hasRunnable()) await this.settle(); // timers due by now fire before the delivery
			try {
				s.deliver(d);
			} catch (err) {
				if (!(err instanceof DeliveryError)) throw err;
				this.send({ type: "error", session: s.id, message: err.message });
				continue; // the harness fails the scenario; no idle
			}
			await this.settle();
			this.send({ type: "idle", session: s.id });
		}
	}

	/**
	 * The answers a start promises to every call of a hook (PROTOCOL.md §15), when the hello
	 * claimed standingAnswers: an object of answer data by hook name; {} when there are none.
	 */
	standingAnswers(msg) {
		const answers = msg.standingAnswers;
		if (answers === undefined || this.hello?.capabilities?.standingAnswers !== true) return {};
		const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
		if (!isObject(answers) || !Object.values(answers).every(isObject)) {
			throw new ProtocolError(`protocol error at line ${this.wire.line}: start's standingAnswers must be an object of answer data (objects) by hook name`);
		}
		return answers;
	}

	/** Awaits options.load: real work (imports, files) on Node's loop, the kit's queue pumped. */
	async loading() {
		let done = false;
		let failure = null;
		Promise.resolve()
			.then(() => this.load())
			.then(
				() => (done = true),
				(err) => {
					done = true;
					failure = err;
				},
			);
		while (!done) {
			await turn();
			const job = takeRunnable();
			if (job) runJob(job);
			else if (!done) await pause(1);
		}
		if (failure) throw new AdapterError(`load failed: ${failure?.stack ?? failure}`);
	}

	/**
	 * Starts the run; its settlement is the `end` notification. An Agent scenario (version 2,
	 * `entry: "agent"`) starts nothing: the adapter's `agent(session)` builds the Agent and
	 * subscribes its listener, and the operations are the deliveries; it has no `end`.
	 */
	begin(s) {
		if (s.setup.entry === "agent") {
			if (this.protocol < 2 || !this.agent) {
				throw new AdapterError(`session ${s.id} is an Agent scenario (entry "agent"), but ${this.protocol < 2 ? "protocol 1 was negotiated" : "the adapter gave serve() no agent function"}`);
			}
			const handler = this.agent(s);
			if (handler === null || typeof handler !== "object" || typeof handler.operate !== "function") {
				throw new AdapterError(`agent(session) must return {operate(op), abort?()}; got ${handler === null ? "null" : typeof handler}`);
			}
			s.agentHandler = handler;
			return;
		}
		if (s.setup.entry === "runToolCall" && (this.protocol < 2 || !this.runToolCall)) {
			throw new AdapterError(`session ${s.id} is a runToolCall scenario, but ${this.protocol < 2 ? "protocol 1 was negotiated" : "the adapter gave serve() no runToolCall function"}`);
		}
		let result;
		try {
			result = s.setup.entry === "runToolCall" ? this.runToolCalls(s) : this.run(s);
		} catch (err) {
			result = Promise.reject(err);
		}
		Promise.resolve(result).then(
			(messages) => s.notify("end", { messages: messages ?? [] }),
			(err) => {
				if (!s.stopping && !this.fatal) logFailure(this.log, err);
				s.notify("end", { error: errorText(err) });
			},
		);
	}

	/**
	 * A runToolCall session (version 2, §13.7): each tool call of the transcript's last message,
	 * one after the other, through the adapter's `runToolCall(session, toolCall, onUpdate)`;
	 * each outcome is reported with the partial results onUpdate received, a rejection as
	 * `refused`. The run's new messages are none.
	 */
	async runToolCalls(s) {
		const messages = s.setup.messages ?? [];
		const last = messages[messages.length - 1];
		const calls = last?.role === "assistant" && Array.isArray(last.content) ? last.content.filter((b) => b?.type === "toolCall") : [];
		for (const call of calls) {
			const op = { id: call.id, op: "runToolCall" };
			const updates = [];
			try {
				const o = await this.runToolCall(s, call, (partial) => {
					updates.push(partial);
				});
				s.toolCallOutcome(op, o, updates);
			} catch (err) {
				s.outcome(op, "refused", { error: errorText(err) });
			}
		}
		return [];
	}

	/**
	 * Returns once nothing can make progress until the next delivery, exactly:
	 *   1. a turn of Node's event loop runs every microtask and nextTick queued before it, and
	 *      those they queue (Node empties both queues before it takes the next callback);
	 *   2. the loop's own callbacks (immediates, timers) are on the kit's queue (vtime.mjs),
	 *      never Node's: while one is runnable, run it and go back to 1;
	 *   3. real I/O in flight (an import, a file read) will make progress without a delivery:
	 *      wait for it. A real timer is refused: time is virtual here.
	 * With all three empty, every task waits on a promise only a delivery (or stop) settles.
	 * Throws the fatal error a call met, or an AdapterError.
	 */
	async settle() {
		let jobs = 0;
		let waitedSince = 0;
		for (;;) {
			await turn();
			if (this.fatal) throw this.fatal;
			const job = takeRunnable();
			if (job) {
				if (++jobs > MAX_JOBS) throw new AdapterError(`the loop keeps itself busy: ${MAX_JOBS} timer callbacks without becoming idle`);
				try {
					runJob(job);
				} catch (err) {
					if (this.fatal) throw this.fatal;
					throw new AdapterError(`the loop threw from a timer callback (an uncaught exception): ${err?.stack ?? err}`);
				}
				continue;
			}
			const pending = process.getActiveResourcesInfo().filter((r) => !QUIET.has(r));
			if (pending.length === 0) return;
			const timers = pending.filter((r) => r === "Timeout" || r === "Immediate");
			if (timers.length > 0) {
				throw new AdapterError(
					`the loop scheduled a real timer (${timers.join(", ")}) the kit cannot see: time is virtual here; ` +
						"use the global setTimeout / setImmediate, or call installVirtualTime() before your loop captures them",
				);
			}
			waitedSince ||= real.dateNow();
			if (real.dateNow() - waitedSince > REAL_IO_LIMIT_MS) {
				throw new AdapterError(`the loop has waited more than ${REAL_IO_LIMIT_MS / 1000} s for real I/O (${[...new Set(pending)].join(", ")}); the harness owns the world: reach it through the session`);
			}
			await pause(1);
		}
	}
}

/**
 * Serves the protocol on stdin/stdout and exits: 0 at shutdown, 1 after a protocol error.
 *
 * `run(session)` builds the loop for `session.setup` and starts it, returning the run's new
 * messages or a promise of them (the `end` notification); a throw or rejection is a failed
 * run. Options: `name`, `version`, `tracks` (the pi release whose behaviour you claim),
 * `hooks` (the hooks you can install), `lacks` (the optional features your loop does not
 * have: their scenarios are skipped), `capabilities` (any other key), `load` (an async
 * function awaited once before the first session, after the hello: slow imports go there),
 * `protocol` (the newest version you speak: 1, the default, or 2), `agent` (version 2: builds
 * an Agent scenario's Agent; without it the hello lacks `agent`).
 *
 * It makes time virtual (installVirtualTime) and sends console.log and process.stdout to
 * stderr: stdout carries the protocol only.
 */
export function serve(run, options = {}) {
	const kit = new Kit(run, options); // a wrong run throws here, before anything is written
	installVirtualTime();
	const errorConsole = new console.Console({ stdout: process.stderr, stderr: process.stderr });
	for (const m of ["log", "info", "debug", "dir", "dirxml", "table", "trace", "group", "groupCollapsed", "timeLog", "count"]) {
		if (typeof console[m] === "function") console[m] = errorConsole[m].bind(errorConsole);
	}
	Object.defineProperty(process, "stdout", { configurable: true, enumerable: true, get: () => process.stderr });
	process.on("unhandledRejection", (err) => {
		process.stderr.write(`turnstile-kit: unhandled rejection: ${err?.stack ?? err}\n`);
	});
	return kit.serve().then((status) => process.exit(status));
}
