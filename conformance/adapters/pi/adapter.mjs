#!/usr/bin/env node
// The turnstile conformance adapter for pi's agent loop (@earendil-works/pi-agent-core, any
// release from 0.87.1 to 1.6.0), on the TypeScript/JavaScript kit (kits/ts, "turnstile-kit").
//
//	npm ci --prefix conformance/adapters/pi
//	node conformance/adapters/pi/adapter.mjs              # pi 1.6.0
//	node conformance/adapters/pi/adapter.mjs --pi 1.3.0   # an older release (or TURNSTILE_PI)
//	node conformance/adapters/pi/adapter.mjs --entry wrappers  # pi's public agentLoop / agentLoopContinue
//
// Each release is installed under an npm alias (package.json: "pi-agent-core-1.3.0") with the
// pi-ai it was released with. The hello reports the pi-agent-core and pi-ai versions and
// tracks the pi-agent-core one. The kit does the protocol (version 2, or 1 with a version-1
// harness), virtual time and idle; this file maps pi's runAgentLoop / runAgentLoopContinue onto a
// session: emit is an event, the stream function a stream call, each tool's execute a tool call,
// each installed hook a hook call with the payload shapes of sim/bind.go (bind.mjs),
// prepareArguments applied locally from the setup. Agent scenarios (entry "agent") run pi's
// Agent class instead (agent.mjs), runToolCall scenarios pi's runToolCall (0.99.1 and later).

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import { ALL_HOOKS, serve } from "turnstile-kit";
import { startAgent } from "./agent.mjs";
import { bind, wireModel } from "./bind.mjs";
import { NEWEST, RELEASES } from "./releases.mjs";

const require = createRequire(import.meta.url);
/**
 * The loop's entry points the adapter drives: "run" pi's runAgentLoop / runAgentLoopContinue
 * (an emit callback, the run's promise); "wrappers" pi's public agentLoop / agentLoopContinue,
 * whose event stream the adapter consumes (every release 0.87.1–1.6.0 has both).
 */
const ENTRIES = ["run", "wrappers"];
const USAGE = "usage: node adapter.mjs [--pi VERSION] [--entry run|wrappers]";

/** The command line's choices: {release, entry}; exits 2 on a wrong one. */
function chosen(argv) {
	let release = process.env.TURNSTILE_PI || NEWEST;
	let entry = process.env.TURNSTILE_PI_ENTRY || "run";
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		if (a === "--pi" && i + 1 < argv.length) release = argv[++i];
		else if (a.startsWith("--pi=")) release = a.slice(5);
		else if (a === "--entry" && i + 1 < argv.length) entry = argv[++i];
		else if (a.startsWith("--entry=")) entry = a.slice(8);
		else if (a === "--help" || a === "-h") {
			process.stdout.write(`${USAGE}\nreleases: ${RELEASES.join(", ")} (default ${NEWEST})\nentries: ${ENTRIES.join(", ")} (default run)\n`);
			process.exit(0);
		} else {
			process.stderr.write(`pi adapter: unknown argument ${JSON.stringify(a)} (${USAGE})\n`);
			process.exit(2);
		}
	}
	if (!RELEASES.includes(release)) {
		process.stderr.write(`pi adapter: pi ${release} is not installed here; the releases are ${RELEASES.join(", ")}\n`);
		process.exit(2);
	}
	if (!ENTRIES.includes(entry)) {
		process.stderr.write(`pi adapter: unknown entry ${JSON.stringify(entry)}; the entries are ${ENTRIES.join(", ")}\n`);
		process.exit(2);
	}
	return { release, entry };
}

const { release: RELEASE, entry: ENTRY } = chosen(process.argv.slice(2));
// TURNSTILE_PI_PACKAGE: a copy of pi-agent-core's package folder to run instead (its imports
// resolve through a node_modules beside it): the mutation run (mutation/run.mjs) breaks such a copy.
const PACKAGE_DIR = process.env.TURNSTILE_PI_PACKAGE || "";
const CORE = PACKAGE_DIR
	? pathToFileURL(path.join(PACKAGE_DIR, "dist", "index.js")).href
	: RELEASE === NEWEST ? "@earendil-works/pi-agent-core" : `pi-agent-core-${RELEASE}`;
const corePackage = PACKAGE_DIR ? path.resolve(PACKAGE_DIR, "package.json") : require.resolve(`${CORE}/package.json`);
const PI_VERSION = require(corePackage).version;
/** pi-ai's folder as this pi-agent-core resolves it (Node's lookup from its folder; pi-ai exports no package.json), or "". */
function piAiDir() {
	for (let dir = path.dirname(corePackage); ; dir = path.dirname(dir)) {
		const found = path.join(dir, "node_modules", "@earendil-works", "pi-ai");
		if (fs.existsSync(path.join(found, "package.json"))) return found;
		if (path.dirname(dir) === dir) return "";
	}
}
const piAiVersion = () => (piAiDir() ? require(path.join(piAiDir(), "package.json")).version : "unknown");
let pi = null; // imported after the hello (kit's load): pi-ai's providers take seconds to load

/**
 * Every release serves every optional feature: before 1.4.0 the stream function's options
 * carry `config.identity` as it is (none when unset), which the reference models
 * (docs/VERSIONS.md, request-identity), so the stream-options scenarios check that too.
 */
const LACKS = [];

/** Whether release a (x.y.z) is older than b. */
const olderThan = (a, b) => {
	const [x, y] = [a, b].map((v) => v.split(".").map(Number));
	for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
	return false;
};
/** pi exports runToolCall from 0.99.1 on: before, the hello lacks the feature (§13.7). */
const HAS_RUN_TOOL_CALL = !olderThan(PI_VERSION, "0.99.1");

/**
 * One call of a runToolCall scenario (§13.7) through pi's runToolCall: the setup's tools, the
 * transcript's last message as the assistant message, the transcript and the active tools as
 * the context, the session's signal, the installed tool hooks; built once per session.
 */
function runToolCall(s, toolCall, onUpdate) {
	if (!s.piToolCall) {
		const setup = s.setup;
		const { byName, hooks } = bind(s);
		const messages = [...(setup.messages ?? [])];
		s.piToolCall = {
			tools: byName((setup.tools ?? []).map((t) => t.name)),
			assistantMessage: messages[messages.length - 1],
			context: { messages, tools: byName(setup.activeTools) },
			hooks: { beforeToolCall: hooks.beforeToolCall, afterToolCall: hooks.afterToolCall },
		};
	}
	const { tools, assistantMessage, context, hooks } = s.piToolCall;
	return pi.runToolCall(toolCall, { tools, assistantMessage, context, signal: s.signal, onUpdate, ...hooks });
}

const defaultConvertToLlm = (messages) => messages.filter((m) => ["system", "user", "assistant", "toolResult"].includes(m.role));

/** One loop scenario: pi's loop built from the setup, started; its promise is the run. */
function run(s) {
	const setup = s.setup;
	const { byName, hooks, streamFn } = bind(s);
	const config = {
		model: wireModel(setup.model),
		reasoning: setup.thinkingLevel === "off" || !setup.thinkingLevel ? undefined : setup.thinkingLevel,
		apiKey: setup.apiKey || undefined,
		toolExecution: setup.toolExecution,
		convertToLlm: defaultConvertToLlm,
		sessionId: setup.sessionId, // §13.4: reaches the stream function's options
		identity: setup.identity,
		...hooks,
	};
	const context = { messages: [...(setup.messages ?? [])], tools: byName(setup.activeTools) };
	if (ENTRY === "wrappers") return wrapped(s, context, config, streamFn);
	const emit = async (event) => s.emit(event);
	return setup.entry === "continue"
		? pi.runAgentLoopContinue(context, config, emit, s.signal, streamFn)
		: pi.runAgentLoop(setup.prompts ?? [], context, config, emit, s.signal, streamFn);
}

/**
 * The wrapped run in progress (one at a time): its session, the events the loop pushed into the
 * wrapper's stream, and how to fail it.
 */
let wrappedRun = null;

/**
 * One loop scenario through pi's public wrappers. agentLoopContinue's refusals are thrown
 * synchronously (the kit reports a throw of run as the failed run). Each event is reported when
 * the loop pushes it into the wrapper's stream, so the trace keeps the loop's order of events and
 * calls (a consumer of the stream takes each a few microtasks later, after the call the loop
 * makes next); the adapter consumes the stream meanwhile, and the run ends with the stream's
 * result once the stream has ended, carrying exactly the events pushed, in order (else the run
 * fails with the difference). The wrappers do not catch a failed run (runAgentLoop's promise
 * rejects unhandled, and the stream never ends): that rejection, as the process sees it, is the
 * run's failure; one before the first event is a refusal the wrapper did not throw, and fails
 * with a text saying so.
 */
function wrapped(s, context, config, streamFn) {
	const run = { s, pushed: [], reject: null };
	wrappedRun = run;
	let stream;
	try {
		stream =
			s.setup.entry === "continue"
				? pi.agentLoopContinue(context, config, s.signal, streamFn)
				: pi.agentLoop(s.setup.prompts ?? [], context, config, s.signal, streamFn);
	} catch (err) {
		wrappedRun = null;
		throw err;
	}
	const consumed = (async () => {
		const taken = [];
		for await (const event of stream) taken.push(event);
		const messages = await stream.result();
		const types = (list) => list.map((e) => e?.type).join(" ");
		if (taken.length !== run.pushed.length || taken.some((e, i) => e !== run.pushed[i])) {
			throw new Error(`pi adapter: the wrapper's stream gave [${types(taken)}], the loop pushed [${types(run.pushed)}]`);
		}
		return messages;
	})();
	return new Promise((resolve, reject) => {
		run.reject = reject;
		consumed.then(resolve, reject);
	}).finally(() => {
		if (wrappedRun === run) wrappedRun = null;
	});
}

/**
 * Taps pi-ai's EventStream (the class of the wrappers' stream): an event pushed into a plain
 * EventStream (not a provider's AssistantMessageEventStream) while a wrapped run is in progress
 * is reported then, as runAgentLoop's emit would; an unhandled rejection fails that run.
 */
async function tapWrappers() {
	const { EventStream } = await import(pathToFileURL(path.join(piAiDir(), "dist", "index.js")).href);
	const push = EventStream.prototype.push;
	EventStream.prototype.push = function (event) {
		const run = wrappedRun;
		if (run && this.constructor === EventStream && !this.done) {
			run.pushed.push(event);
			run.s.emit(event);
		}
		return push.call(this, event);
	};
	process.on("unhandledRejection", (err) => {
		const run = wrappedRun;
		if (!run?.reject) return;
		// pi's wrappers refuse a run before it starts by throwing (agentLoopContinue on an empty
		// context or an assistant tail): a wrapper that returned its stream for one did not.
		if (run.pushed.length === 0) {
			const wrapper = run.s.setup.entry === "continue" ? "agentLoopContinue" : "agentLoop";
			run.reject(new Error(`pi adapter: ${wrapper} returned its stream, then the run failed before its first event (not thrown by the wrapper): ${err?.message ?? err}`));
		} else run.reject(err);
	});
}

serve(run, {
	name: "pi-agent-core",
	version: `${PI_VERSION} (pi-ai ${piAiVersion()})${ENTRY === "wrappers" ? ", through agentLoop / agentLoopContinue" : ""}`,
	tracks: PI_VERSION,
	hooks: ALL_HOOKS,
	protocol: 2,
	lacks: LACKS,
	agent: (s) => startAgent(s, pi),
	runToolCall: HAS_RUN_TOOL_CALL ? runToolCall : undefined,
	load: async () => {
		pi = await import(CORE);
		if (ENTRY === "wrappers") await tapWrappers();
	},
});
