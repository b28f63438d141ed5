#!/usr/bin/env node
// The turnstile conformance adapter for pi's agent loop (@earendil-works/pi-agent-core, any
// release from 0.87.1 to 1.6.0), on the TypeScript/JavaScript kit (kits/ts, "turnstile-kit").
//
//	npm ci --prefix conformance/adapters/pi
//	node conformance/adapters/pi/adapter.mjs              # pi 1.6.0
//	node conformance/adapters/pi/adapter.mjs --pi 1.3.0   # an older release (or TURNSTILE_PI)
//
// Each release is installed under an npm alias (package.json: "pi-agent-core-1.3.0") with the
// pi-ai it was released with. The hello reports the pi-agent-core and pi-ai versions and
// tracks the pi-agent-core one. The kit does the protocol, virtual time and idle; this file
// maps pi's runAgentLoop / runAgentLoopContinue onto a session: emit is an event, the stream
// function a stream call, each tool's execute a tool call, each installed hook a hook call
// with the payload shapes of sim/bind.go, prepareArguments applied locally from the setup.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { ALL_HOOKS, serve } from "turnstile-kit";

const require = createRequire(import.meta.url);
/** The releases installed (package.json), newest last; the newest is the plain package. */
const RELEASES = ["0.87.1", "0.99.1", "1.0.3", "1.3.0", "1.4.0", "1.5.2", "1.6.0"];
const NEWEST = RELEASES[RELEASES.length - 1];
const USAGE = "usage: node adapter.mjs [--pi VERSION]";

function chosenRelease(argv) {
	let release = process.env.TURNSTILE_PI || NEWEST;
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		if (a === "--pi" && i + 1 < argv.length) release = argv[++i];
		else if (a.startsWith("--pi=")) release = a.slice(5);
		else if (a === "--help" || a === "-h") {
			process.stdout.write(`${USAGE}\nreleases: ${RELEASES.join(", ")} (default ${NEWEST})\n`);
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
	return release;
}

const RELEASE = chosenRelease(process.argv.slice(2));
const CORE = RELEASE === NEWEST ? "@earendil-works/pi-agent-core" : `pi-agent-core-${RELEASE}`;
const corePackage = require.resolve(`${CORE}/package.json`);
const PI_VERSION = require(corePackage).version;
/** pi-ai as this pi-agent-core resolves it (Node's lookup from its folder; pi-ai exports no package.json). */
function piAiVersion() {
	for (let dir = path.dirname(corePackage); ; dir = path.dirname(dir)) {
		const file = path.join(dir, "node_modules", "@earendil-works", "pi-ai", "package.json");
		if (fs.existsSync(file)) return require(file).version;
		if (path.dirname(dir) === dir) return "unknown";
	}
}
let pi = null; // imported after the hello (kit's load): pi-ai's providers take seconds to load

const defaultConvertToLlm = (messages) => messages.filter((m) => ["system", "user", "assistant", "toolResult"].includes(m.role));
const levelOf = (level) => (level === undefined || level === null || level === "" ? undefined : level);
const wireModel = (m) => ({ id: m.id, api: m.api, provider: m.provider });
const wireContext = (c) => ({ messages: c.messages, tools: (c.tools ?? []).map((t) => t.name) });

/** One scenario: pi's loop built from the setup, started; its promise is the run. */
function run(s) {
	const setup = s.setup;
	const pool = new Map((setup.tools ?? []).map((ts) => [ts.name, makeTool(s, ts)]));
	const byName = (names) => (names ?? []).map((n) => pool.get(n)).filter(Boolean);
	const contextOf = (raw) => (raw ? { messages: raw.messages ?? [], tools: byName(raw.tools) } : undefined);
	const turnOf = (t) => ({ message: t.message, toolResults: t.toolResults, context: wireContext(t.context), newMessages: t.newMessages });
	const hooks = {
		convertToLlm: async (messages) => s.hook("convertToLlm", { messages }).messages ?? [],
		transformContext: async (messages) => s.hook("transformContext", { messages }).messages ?? [],
		getApiKey: async (provider) => s.hook("getApiKey", { provider }).apiKey,
		prepareRequest: async (req) => {
			const a = s.hook("prepareRequest", { context: wireContext(req.context), model: wireModel(req.model), thinkingLevel: req.thinkingLevel });
			return { context: contextOf(a.context), model: a.model ?? undefined, thinkingLevel: levelOf(a.thinkingLevel) };
		},
		prepareNextTurn: async (turn) => {
			const a = s.hook("prepareNextTurn", { turn: turnOf(turn) });
			return { context: contextOf(a.context), messages: a.messages ?? undefined, model: a.model ?? undefined, thinkingLevel: levelOf(a.thinkingLevel) };
		},
		finishTurn: async (turn) => {
			const a = s.hook("finishTurn", { turn: turnOf(turn) });
			return a.action ? { action: a.action } : undefined;
		},
		getSteeringMessages: async () => s.hook("getSteeringMessages", {}).messages ?? [],
		getFollowUpMessages: async () => s.hook("getFollowUpMessages", {}).messages ?? [],
		beforeToolCall: async (c) => {
			const a = s.hook("beforeToolCall", { assistantMessage: c.assistantMessage, toolCall: c.toolCall, args: c.args, context: wireContext(c.context) });
			if (a.setArgs) Object.assign(c.args, a.setArgs); // in place: they reach execute unvalidated
			return { block: a.block === true, reason: a.reason, terminate: a.terminate === true };
		},
		afterToolCall: async (c) => {
			const { assistantMessage, toolCall, args, result, isError } = c;
			const a = s.hook("afterToolCall", { assistantMessage, toolCall, args, result, isError, context: wireContext(c.context) });
			const keys = ["content", "details", "structuredContent", "isError", "terminate", "usage"];
			return Object.fromEntries(keys.map((k) => [k, a[k] ?? undefined]));
		},
	};
	const config = {
		model: wireModel(setup.model),
		reasoning: setup.thinkingLevel === "off" || !setup.thinkingLevel ? undefined : setup.thinkingLevel,
		apiKey: setup.apiKey || undefined,
		toolExecution: setup.toolExecution,
		convertToLlm: defaultConvertToLlm,
	};
	for (const name of ALL_HOOKS) if (s.installed(name)) config[name] = hooks[name];

	const streamFn = async (model, llmContext, options) =>
		s.openStream({ model: wireModel(model), messages: llmContext.messages, thinkingLevel: options.reasoning ?? "off", apiKey: options.apiKey ?? "" });
	const context = { messages: [...(setup.messages ?? [])], tools: byName(setup.activeTools) };
	const emit = async (event) => s.emit(event);
	return setup.entry === "continue"
		? pi.runAgentLoopContinue(context, config, emit, s.signal, streamFn)
		: pi.runAgentLoop(setup.prompts ?? [], context, config, emit, s.signal, streamFn);
}

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

serve(run, {
	name: "pi-agent-core",
	version: `${PI_VERSION} (pi-ai ${piAiVersion()})`,
	tracks: PI_VERSION,
	hooks: ALL_HOOKS,
	load: async () => {
		pi = await import(CORE);
	},
});
