#!/usr/bin/env node
// The turnstile conformance adapter for pi's agent loop (@earendil-works/pi-agent-core, any
// release from 0.87.1 to 1.6.0): protocol v1 (conformance/PROTOCOL.md) over stdin/stdout, one
// session per scenario.
//
//	cd conformance/adapters/pi && npm ci
//	node conformance/adapters/pi/adapter.mjs              # pi 1.6.0
//	node conformance/adapters/pi/adapter.mjs --pi 1.3.0   # an older release
//
// Each release is installed under an npm alias (package.json: "pi-agent-core-1.3.0") with the
// pi-ai it was released with; --pi chooses one (the environment variable TURNSTILE_PI too).
// The hello reports the pi-agent-core and pi-ai versions, and tracks the pi-agent-core one.
//
// It runs pi's own low-level loop, runAgentLoop / runAgentLoopContinue, with:
//   - emit = async (event) => notify(event);
//   - an AbortController whose abort() is the "abort" delivery;
//   - a stream function that makes the "stream" call and returns a plain async-iterable stream
//     ({[Symbol.asyncIterator], result()}) fed by streamEvent / streamEnd / streamFail deliveries;
//   - tools whose execute makes the "tool" call and settles on toolUpdate / toolResult
//     deliveries (prepareArguments is applied locally, from the setup);
//   - every installed hook forwarded to the harness with the payload shapes of sim/bind.go;
//   - Date.now and performance.now returning the virtual time of the last delivery.
//
// Calls are synchronous: the adapter writes the call and blocks on stdin until its answer
// arrives, the way a hook that answers at once behaves in-process. Everything else pi does
// is promise continuations, so the adapter is idle once a turn of the event loop passes in
// which it wrote nothing. stderr is for diagnostics only.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
/** The releases installed (package.json), newest last; the newest is the plain package. */
const RELEASES = ["0.87.1", "0.99.1", "1.0.3", "1.3.0", "1.4.0", "1.5.2", "1.6.0"];
const NEWEST = RELEASES[RELEASES.length - 1];

function chosenRelease(argv) {
	let release = process.env.TURNSTILE_PI || NEWEST;
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		if (a === "--pi" && i + 1 < argv.length) release = argv[++i];
		else if (a.startsWith("--pi=")) release = a.slice(5);
		else if (a === "--help" || a === "-h") {
			process.stdout.write(`usage: node adapter.mjs [--pi VERSION]\nreleases: ${RELEASES.join(", ")} (default ${NEWEST})\n`);
			process.exit(0);
		} else {
			process.stderr.write(`pi adapter: unknown argument ${JSON.stringify(a)} (usage: node adapter.mjs [--pi VERSION])\n`);
			process.exit(2);
		}
	}
	if (!RELEASES.includes(release)) {
		process.stderr.write(`pi adapter: pi ${release} is not installed here; the releases are ${RELEASES.join(", ")}\n`);
		process.exit(2);
	}
	return release;
}

const RELEASE = chosenRelease(process.argv.slice(2));
const CORE = RELEASE === NEWEST ? "@earendil-works/pi-agent-core" : `pi-agent-core-${RELEASE}`;
const corePackage = require.resolve(`${CORE}/package.json`);
const PI_VERSION = require(corePackage).version;
/** pi-ai as this pi-agent-core resolves it (its own nested copy for the older releases). */
const PI_AI_VERSION = (() => {
	// Node's own lookup from the pi-agent-core folder (pi-ai exports no package.json).
	for (let dir = path.dirname(corePackage); ; dir = path.dirname(dir)) {
		const file = path.join(dir, "node_modules", "@earendil-works", "pi-ai", "package.json");
		if (fs.existsSync(file)) return require(file).version;
		if (path.dirname(dir) === dir) return "unknown";
	}
})();
// pi is imported at the first start, not before the hello: loading pi-ai's providers takes
// seconds on a busy machine, which the hello's 10 s must not pay.
let pi = null;

const PROTOCOL = 1;
const HOOKS = [
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
];
const STOPPED = "the simulation session was stopped";

// ---- virtual time: it only moves with deliveries.

let now = 0;
Date.now = () => now;
performance.now = () => now;

// ---- synchronous line I/O on fds 0 and 1.

const nap = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => Atomics.wait(nap, 0, 0, ms);

let activity = 0; // lines written so far: the idle check watches it

function writeLine(msg) {
	const buf = Buffer.from(JSON.stringify(msg) + "\n");
	let off = 0;
	while (off < buf.length) {
		try {
			off += fs.writeSync(1, buf, off);
		} catch (err) {
			if (err.code !== "EAGAIN") throw err;
			sleep(1);
		}
	}
	activity++;
}

const input = { buf: Buffer.alloc(1 << 16), len: 0, scanned: 0, eof: false, line: 0 };

/** The next line of stdin, without its newline; null at the end of the input. */
function readLine() {
	for (;;) {
		const nl = input.buf.subarray(input.scanned, input.len).indexOf(10);
		if (nl >= 0) {
			const end = input.scanned + nl;
			const line = input.buf.toString("utf8", 0, end).replace(/\r$/, "");
			input.buf.copyWithin(0, end + 1, input.len);
			input.len -= end + 1;
			input.scanned = 0;
			input.line++;
			return line;
		}
		input.scanned = input.len;
		if (input.eof) {
			if (input.len === 0) return null;
			const line = input.buf.toString("utf8", 0, input.len);
			input.len = input.scanned = 0;
			input.line++;
			return line;
		}
		if (input.len === input.buf.length) {
			const bigger = Buffer.alloc(input.buf.length * 2);
			input.buf.copy(bigger, 0, 0, input.len);
			input.buf = bigger;
		}
		let n;
		try {
			n = fs.readSync(0, input.buf, input.len, input.buf.length - input.len, null);
		} catch (err) {
			if (err.code === "EAGAIN") {
				sleep(1);
				continue;
			}
			if (err.code === "EOF") n = 0;
			else throw err;
		}
		if (n === 0) input.eof = true;
		input.len += n;
	}
}

/** The next message from the harness; exits when the harness has gone or shuts us down. */
function readMessage() {
	const line = readLine();
	if (line === null) process.exit(0);
	let msg;
	try {
		msg = JSON.parse(line);
	} catch (err) {
		fatal(`protocol error at line ${input.line}: not JSON: ${err.message}`);
	}
	if (msg === null || typeof msg !== "object" || typeof msg.type !== "string") {
		fatal(`protocol error at line ${input.line}: expected an object with a "type"`);
	}
	if (msg.type === "shutdown") process.exit(0);
	return msg;
}

function fatal(message) {
	writeLine({ type: "error", message });
	process.exit(1);
}

// ---- sessions

let current = null; // the running session
let nextCallId = 0;

class Session {
	constructor(id, setup) {
		this.id = id;
		this.setup = setup;
		this.controller = new AbortController();
		this.streams = new Map(); // stream id -> Stream
		this.calls = new Map(); // tool call id -> ToolRun
		this.stopping = false; // stop received: calls fail locally, nothing is reported
	}

	notify(kind, data) {
		if (this.stopping) return;
		writeLine({ type: "notify", session: this.id, notification: { kind, data } });
	}

	/** Makes a call and returns its answer's data; a failed call throws its error text. */
	call(kind, name, data) {
		if (this.stopping) throw new Error(STOPPED);
		const id = ++nextCallId;
		const call = name ? { kind, name, data } : { kind, data };
		writeLine({ type: "call", id, session: this.id, call });
		const msg = readMessage();
		if (msg.type !== "answer") fatal(`protocol error at line ${input.line}: expected the answer to call ${id}, got a "${msg.type}" message`);
		if (msg.id !== id) fatal(`protocol error at line ${input.line}: an answer for unknown call id ${msg.id} (the outstanding call is ${id})`);
		if (typeof msg.error === "string") throw new Error(msg.error);
		return msg.data ?? undefined;
	}

	hook(name, data) {
		return this.call("hook", name, data) ?? {};
	}
}

/** A provider stream on the adapter's side: the events delivered so far. */
class Stream {
	constructor(session) {
		this.session = session;
		this.queue = [];
		this.ended = false;
		this.final = undefined;
		this.error = undefined;
		this.waiter = null;
	}

	wake() {
		const w = this.waiter;
		this.waiter = null;
		w?.();
	}

	async next() {
		for (;;) {
			if (this.queue.length > 0) {
				const event = this.queue.shift();
				if (event.type === "done" || event.type === "error") {
					this.ended = true;
					this.final = event.type === "done" ? event.message : event.error;
				}
				return { value: event, done: false };
			}
			if (this.error) throw this.error;
			if (this.ended) return { value: undefined, done: true };
			if (this.session.stopping) throw new Error(STOPPED);
			await new Promise((resolve) => {
				this.waiter = resolve;
			});
		}
	}

	/** What the stream function returns: an async iterable with result(). */
	handle() {
		return {
			[Symbol.asyncIterator]: () => ({ next: () => this.next() }),
			result: async () => {
				if (!this.final) throw new Error("the stream ended without a final message");
				return this.final;
			},
		};
	}
}

// ---- the loop's configuration, from the setup

const defaultConvertToLlm = (messages) =>
	messages.filter((m) => m.role === "system" || m.role === "user" || m.role === "assistant" || m.role === "toolResult");

const levelOf = (level) => (level === undefined || level === null || level === "" ? undefined : level);
const reasoningOf = (level) => (level === "off" || !level ? undefined : level);
const wireModel = (m) => ({ id: m.id, api: m.api, provider: m.provider });

function build(s) {
	const setup = s.setup;
	const installed = new Set(setup.hooks ?? []);
	const pool = new Map();
	for (const ts of setup.tools ?? []) pool.set(ts.name, makeTool(s, ts));
	const byName = (names) => (names ?? []).map((n) => pool.get(n)).filter(Boolean);
	const wireContext = (c) => ({ messages: c.messages, tools: (c.tools ?? []).map((t) => t.name) });
	const contextOf = (raw) => (raw ? { messages: raw.messages ?? [], tools: byName(raw.tools) } : undefined);
	const turnOf = (t) => ({ message: t.message, toolResults: t.toolResults, context: wireContext(t.context), newMessages: t.newMessages });

	const config = {
		model: wireModel(setup.model),
		reasoning: reasoningOf(setup.thinkingLevel),
		apiKey: setup.apiKey || undefined,
		toolExecution: setup.toolExecution,
		convertToLlm: defaultConvertToLlm,
	};
	if (installed.has("convertToLlm")) {
		config.convertToLlm = async (messages) => s.hook("convertToLlm", { messages }).messages ?? [];
	}
	if (installed.has("transformContext")) {
		config.transformContext = async (messages) => s.hook("transformContext", { messages }).messages ?? [];
	}
	if (installed.has("getApiKey")) {
		config.getApiKey = async (provider) => s.hook("getApiKey", { provider }).apiKey;
	}
	if (installed.has("prepareRequest")) {
		config.prepareRequest = async (req) => {
			const a = s.hook("prepareRequest", { context: wireContext(req.context), model: wireModel(req.model), thinkingLevel: req.thinkingLevel });
			return { context: contextOf(a.context), model: a.model ?? undefined, thinkingLevel: levelOf(a.thinkingLevel) };
		};
	}
	if (installed.has("prepareNextTurn")) {
		config.prepareNextTurn = async (turn) => {
			const a = s.hook("prepareNextTurn", { turn: turnOf(turn) });
			return { context: contextOf(a.context), messages: a.messages ?? undefined, model: a.model ?? undefined, thinkingLevel: levelOf(a.thinkingLevel) };
		};
	}
	if (installed.has("finishTurn")) {
		config.finishTurn = async (turn) => {
			const a = s.hook("finishTurn", { turn: turnOf(turn) });
			return a.action ? { action: a.action } : undefined;
		};
	}
	if (installed.has("getSteeringMessages")) {
		config.getSteeringMessages = async () => s.hook("getSteeringMessages", {}).messages ?? [];
	}
	if (installed.has("getFollowUpMessages")) {
		config.getFollowUpMessages = async () => s.hook("getFollowUpMessages", {}).messages ?? [];
	}
	if (installed.has("beforeToolCall")) {
		config.beforeToolCall = async (c) => {
			const a = s.hook("beforeToolCall", { assistantMessage: c.assistantMessage, toolCall: c.toolCall, args: c.args, context: wireContext(c.context) });
			if (a.setArgs) Object.assign(c.args, a.setArgs);
			return { block: a.block === true, reason: a.reason, terminate: a.terminate === true };
		};
	}
	if (installed.has("afterToolCall")) {
		config.afterToolCall = async (c) => {
			const a = s.hook("afterToolCall", {
				assistantMessage: c.assistantMessage,
				toolCall: c.toolCall,
				args: c.args,
				result: c.result,
				isError: c.isError,
				context: wireContext(c.context),
			});
			return {
				content: a.content ?? undefined,
				details: a.details ?? undefined,
				structuredContent: a.structuredContent ?? undefined,
				isError: a.isError ?? undefined,
				terminate: a.terminate ?? undefined,
				usage: a.usage ?? undefined,
			};
		};
	}

	const streamFn = async (model, llmContext, options) => {
		const answer = s.call("stream", "", {
			model: wireModel(model),
			messages: llmContext.messages,
			thinkingLevel: options.reasoning ?? "off",
			apiKey: options.apiKey ?? "",
		});
		const stream = new Stream(s);
		s.streams.set(String(answer?.stream), stream);
		return stream.handle();
	};

	const context = { messages: [...(setup.messages ?? [])], tools: byName(setup.activeTools) };
	return { context, config, streamFn, prompts: setup.prompts ?? [] };
}

/** An AgentTool whose execution happens in the world. */
function makeTool(s, ts) {
	const tool = {
		name: ts.name,
		label: ts.name,
		description: ts.description,
		parameters: ts.parameters,
		execute: async (toolCallId, args, _signal, onUpdate) => {
			const run = { onUpdate, settled: false, resolve: null, reject: null };
			const settled = new Promise((resolve, reject) => {
				run.resolve = resolve;
				run.reject = reject;
			});
			s.calls.set(toolCallId, run);
			s.call("tool", "", { toolCallId, toolName: ts.name, args });
			return settled;
		},
	};
	if (ts.executionMode) tool.executionMode = ts.executionMode;
	if (ts.prepareArguments) tool.prepareArguments = (args) => ({ ...(args ?? {}), ...ts.prepareArguments });
	return tool;
}

// ---- the protocol's steps

function start(msg) {
	now = 0;
	const s = new Session(msg.session, msg.setup);
	current = s;
	const { context, config, streamFn, prompts } = build(s);
	const emit = async (event) => s.notify("event", event);
	const signal = s.controller.signal;
	const run =
		s.setup.entry === "continue"
			? pi.runAgentLoopContinue(context, config, emit, signal, streamFn)
			: pi.runAgentLoop(prompts, context, config, emit, signal, streamFn);
	run.then(
		(messages) => s.notify("end", { messages }),
		(err) => s.notify("end", { error: err instanceof Error ? err.message : String(err) }),
	);
}

/** Applies a delivery; returns an error text when it names nothing known. */
function deliver(s, d) {
	if (typeof d.now === "number") now = d.now;
	switch (d.kind) {
		case "abort":
			s.controller.abort();
			return;
		case "streamEvent":
		case "streamEnd":
		case "streamFail": {
			const stream = s.streams.get(d.target);
			if (!stream) return `delivery for unknown stream "${d.target}"`;
			if (d.kind === "streamEvent") stream.queue.push(d.data);
			else if (d.kind === "streamEnd") {
				stream.ended = true;
				stream.final = d.data?.message;
			} else stream.error = new Error(d.data?.error ?? "");
			stream.wake();
			return;
		}
		case "toolUpdate":
		case "toolResult": {
			const run = s.calls.get(d.target);
			if (!run) return `delivery for unknown tool call "${d.target}"`;
			if (run.settled) return;
			if (d.kind === "toolUpdate") {
				run.onUpdate(d.data);
				return;
			}
			run.settled = true;
			if (typeof d.data?.error === "string" && d.data.error !== "") run.reject(new Error(d.data.error));
			else run.resolve(d.data?.result);
			return;
		}
		default:
			return `unknown delivery kind "${d.kind}"`;
	}
}

/** Ends the session: everything still waiting fails, and the run winds down unreported. */
async function stop(s) {
	s.stopping = true;
	s.controller.abort();
	for (const stream of s.streams.values()) stream.wake();
	for (const run of s.calls.values()) {
		if (!run.settled) {
			run.settled = true;
			run.reject(new Error(STOPPED));
		}
	}
	await settle();
}

/** Waits until a turn of the event loop passes without output: the adapter is idle. */
async function settle() {
	for (;;) {
		const before = activity;
		await new Promise((resolve) => setImmediate(resolve));
		if (activity === before) return;
	}
}

function sessionError(msg) {
	if (!current) return `${msg.type} for session ${msg.session}, but no session is running`;
	if (msg.session !== current.id) return `${msg.type} for session ${msg.session}, but session ${current.id} is running`;
	return null;
}

async function main() {
	for (;;) {
		const msg = readMessage();
		switch (msg.type) {
			case "hello":
				if (msg.protocol !== PROTOCOL) fatal(`the harness speaks protocol ${msg.protocol}; this adapter speaks ${PROTOCOL}`);
				writeLine({
					type: "hello",
					protocol: PROTOCOL,
					name: "pi-agent-core",
					version: `${PI_VERSION} (pi-ai ${PI_AI_VERSION})`,
					tracks: PI_VERSION,
					capabilities: { hooks: HOOKS },
				});
				break;
			case "start":
				if (current) fatal(`protocol error at line ${input.line}: start of session ${msg.session} while session ${current.id} runs`);
				pi ??= await import(CORE);
				start(msg);
				await settle();
				writeLine({ type: "idle", session: msg.session });
				break;
			case "deliver": {
				const bad = sessionError(msg) ?? deliver(current, msg.delivery ?? {});
				if (bad) {
					writeLine({ type: "error", session: msg.session, message: bad });
					break;
				}
				await settle();
				writeLine({ type: "idle", session: msg.session });
				break;
			}
			case "stop": {
				const bad = sessionError(msg);
				if (bad) fatal(`protocol error at line ${input.line}: ${bad}`);
				const s = current;
				current = null;
				await stop(s);
				writeLine({ type: "stopped", session: msg.session });
				break;
			}
			default:
				fatal(`protocol error at line ${input.line}: unexpected "${msg.type}" message`);
		}
	}
}

process.on("unhandledRejection", (err) => {
	process.stderr.write(`pi adapter: unhandled rejection: ${err?.stack ?? err}\n`);
});

main().catch((err) => fatal(`pi adapter: ${err?.stack ?? err}`));
