#!/usr/bin/env node
// A starter turnstile adapter for a JavaScript / TypeScript agent loop. Copy it next to your
// loop, fill the places marked FILL (search for it), then:
//
//	go run ./cmd/turnstile conform --impl "node my-adapter.mjs"
//
// Everything protocol-side (hello, sessions, calls, deliveries, virtual time, idle, stop) is
// the kit's; this file only maps your loop's hooks, tools, stream function and events onto a
// Session. The wire shapes are conformance/PROTOCOL.md §5; an answer field that is absent
// means "leave pi's value as it is". conformance/adapters/pi/adapter.mjs is a filled copy
// (pi's own loop). A TypeScript adapter is the same file with types: import type { Session }
// from "turnstile-kit", and run it with tsx as Node's import hook (Node 20.6 and later):
//	turnstile conform --impl "node --import tsx my-adapter.ts"

import { ALL_HOOKS, serve } from "turnstile-kit";

// FILL 1: import your loop.
// import { runLoop, continueLoop } from "./my-loop.js";

const NAME = "my-loop"; // FILL 2: your loop's name and version
const VERSION = "0.1.0";
const TRACKS = "1.6.0"; // the pi release whose behaviour you claim

// FILL 3: the hooks your loop can install (pi's names); scenarios needing others are skipped.
const HOOKS = ALL_HOOKS;
// and the optional features it lacks (docs/SEMANTICS.md, "Optional features"), e.g.
// ["continue", "customMessages", "throwingHooks"]: their scenarios are skipped, with the reason.
const LACKS = [];

const wireModel = (m) => ({ id: m.id, api: m.api, provider: m.provider });
/** A context as the harness sees it: the messages and the names of the tools. */
const wireContext = (messages, tools) => ({ messages, tools: tools.map((t) => t.name) });

/** Every installed hook as an async function in pi's shapes; each is one synchronous call. */
function hooksFor(s, pool) {
	// A context in an answer names tools: map them back to yours (unknown names are dropped).
	const contextOf = (raw) => raw && { messages: raw.messages ?? [], tools: (raw.tools ?? []).map((n) => pool.get(n)).filter(Boolean) };
	const table = {
		convertToLlm: (messages) => s.hook("convertToLlm", { messages }).messages ?? [],
		transformContext: (messages) => s.hook("transformContext", { messages }).messages ?? [],
		getApiKey: (provider) => s.hook("getApiKey", { provider }).apiKey, // "" / undefined: use the setup's key
		// data: {context: wireContext(..), model: wireModel(..), thinkingLevel}; ignore a "messages" field
		prepareRequest: (data) => {
			const { context, model, thinkingLevel } = s.hook("prepareRequest", data);
			return { context: contextOf(context), model, thinkingLevel }; // thinkingLevel "off" clears it
		},
		// data: {turn: {message, toolResults, context: wireContext(..), newMessages}}
		prepareNextTurn: (data) => {
			const a = s.hook("prepareNextTurn", data);
			return { ...a, context: contextOf(a.context) };
		},
		finishTurn: (data) => s.hook("finishTurn", data).action, // "continue" / "end" / undefined
		getSteeringMessages: () => s.hook("getSteeringMessages", {}).messages ?? [],
		getFollowUpMessages: () => s.hook("getFollowUpMessages", {}).messages ?? [],
		// data: {assistantMessage, toolCall, args, context}; answer {block?, reason?, terminate?, setArgs?}:
		// assign setArgs onto your args object in place (they reach execute unvalidated)
		beforeToolCall: (data) => s.hook("beforeToolCall", data),
		// data: {assistantMessage, toolCall, args, result, isError, context}; answer: the fields to override
		afterToolCall: (data) => s.hook("afterToolCall", data),
	};
	// A hook that throws (CallError, the answer's error text) must be your loop's hook throwing.
	return Object.fromEntries(Object.entries(table).filter(([name]) => s.installed(name)).map(([name, f]) => [name, async (...a) => f(...a)]));
}

/** One scenario: build the loop from s.setup (PROTOCOL.md §4), start it, return its promise. */
function run(s) {
	const setup = s.setup;
	const pool = new Map();
	for (const ts of setup.tools ?? []) {
		// the world runs the tool: a toolUpdate delivery calls onUpdate, toolResult settles it
		// (a ToolError with the failure's text when it failed)
		// (pi's signature: the signal is the world's to fire, through s.signal)
		const execute = async (toolCallId, args, signal, onUpdate) => s.runTool(toolCallId, ts.name, args, onUpdate);
		const prepare = ts.prepareArguments && ((args) => ({ ...(args ?? {}), ...ts.prepareArguments })); // pi's prepareArguments, local
		// FILL 4: your tool object from ts.name, ts.description, ts.parameters (JSON Schema),
		// ts.executionMode ("sequential" / "parallel" / undefined), prepare and execute.
		pool.set(ts.name, { name: ts.name, description: ts.description, parameters: ts.parameters, executionMode: ts.executionMode, prepare, execute });
	}
	const hooks = hooksFor(s, pool);
	// messages: exactly what goes to the provider (after transformContext, convertToLlm and
	// pi-ai's normalizeContext); "off" when no thinking level; "" when no key. Iterate the
	// returned Stream with for await (pi-ai AssistantMessageEvents), then await stream.result().
	const streamFn = async (model, messages, thinkingLevel, apiKey) =>
		s.openStream({ model: wireModel(model), messages, thinkingLevel: thinkingLevel ?? "off", apiKey: apiKey ?? "" });
	const emit = (event) => s.emit(event); // every loop event, when it happens (serialised at once)
	const messages = [...(setup.messages ?? [])];
	const tools = (setup.activeTools ?? []).map((n) => pool.get(n)).filter(Boolean);
	const { model, thinkingLevel, apiKey, toolExecution } = setup;
	// Time: Date.now() / performance.now() are virtual already (timestamps, durationMs); timers
	// too. Abort: s.signal, a real AbortSignal.
	// FILL 5: start your loop and return its promise of the run's new messages (reject to fail
	// the run); do not await anything real before returning. For example:
	// return setup.entry === "continue"
	// 	? continueLoop({ messages, tools, model, thinkingLevel, apiKey, toolExecution, hooks, streamFn, emit, signal: s.signal })
	// 	: runLoop(setup.prompts ?? [], { messages, tools, model, thinkingLevel, apiKey, toolExecution, hooks, streamFn, emit, signal: s.signal });
	void [hooks, streamFn, emit, messages, tools, model, thinkingLevel, apiKey, toolExecution];
	throw new Error("starter-adapter.mjs: fill the places marked FILL");
}

serve(run, { name: NAME, version: VERSION, tracks: TRACKS, hooks: HOOKS, lacks: LACKS });
