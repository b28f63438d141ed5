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
// tracks the pi-agent-core one. The kit does the protocol (version 2, or 1 with a version-1
// harness), virtual time and idle; this file maps pi's runAgentLoop / runAgentLoopContinue onto a
// session: emit is an event, the stream function a stream call, each tool's execute a tool call,
// each installed hook a hook call with the payload shapes of sim/bind.go (bind.mjs),
// prepareArguments applied locally from the setup. Agent scenarios (entry "agent") run pi's
// Agent class instead (agent.mjs).

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import { ALL_HOOKS, serve } from "turnstile-kit";
import { startAgent } from "./agent.mjs";
import { bind, wireModel } from "./bind.mjs";

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
// TURNSTILE_PI_PACKAGE: a copy of pi-agent-core's package folder to run instead (its imports
// resolve through a node_modules beside it): the mutation run (mutation/run.mjs) breaks such a copy.
const PACKAGE_DIR = process.env.TURNSTILE_PI_PACKAGE || "";
const CORE = PACKAGE_DIR
	? pathToFileURL(path.join(PACKAGE_DIR, "dist", "index.js")).href
	: RELEASE === NEWEST ? "@earendil-works/pi-agent-core" : `pi-agent-core-${RELEASE}`;
const corePackage = PACKAGE_DIR ? path.resolve(PACKAGE_DIR, "package.json") : require.resolve(`${CORE}/package.json`);
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

/**
 * Every release serves every optional feature: before 1.4.0 the stream function's options
 * carry `config.identity` as it is (none when unset), which the reference models
 * (docs/VERSIONS.md, request-identity), so the stream-options scenarios check that too.
 */
const LACKS = [];

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
	const emit = async (event) => s.emit(event);
	return setup.entry === "continue"
		? pi.runAgentLoopContinue(context, config, emit, s.signal, streamFn)
		: pi.runAgentLoop(setup.prompts ?? [], context, config, emit, s.signal, streamFn);
}

serve(run, {
	name: "pi-agent-core",
	version: `${PI_VERSION} (pi-ai ${piAiVersion()})`,
	tracks: PI_VERSION,
	hooks: ALL_HOOKS,
	protocol: 2,
	lacks: LACKS,
	agent: (s) => startAgent(s, pi),
	load: async () => {
		pi = await import(CORE);
	},
});
