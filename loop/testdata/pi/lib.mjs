// Shared helpers of the pi check scripts. Each <family>.mjs script replays, with pi's own loop
// (@earendil-works/pi-agent-core@1.6.0), the situations its Go spec file sets up, and prints what
// the Go specs assert. Run a script from a directory where pi is installed, e.g. bench/:
//
//	npm ci --prefix bench && cd bench && node ../loop/testdata/pi/<family>.mjs
//
// Bare package names are resolved from the working directory (not from this file's directory),
// so the scripts import pi by package name and hold no absolute paths.
import { register } from "node:module";
import { pathToFileURL } from "node:url";

const cwd = JSON.stringify(pathToFileURL(process.cwd() + "/").href);
register(
	"data:text/javascript," +
		encodeURIComponent(`
export async function resolve(specifier, context, next) {
	try {
		return await next(specifier, context);
	} catch (err) {
		if (err?.code !== "ERR_MODULE_NOT_FOUND" || /^[./]|^[a-z]+:/.test(specifier)) throw err;
		return next(specifier, { ...context, parentURL: ${cwd} });
	}
}`),
);

export const core = await import("@earendil-works/pi-agent-core");
export const ai = await import("@earendil-works/pi-ai");

// ---- messages

export const text = (t) => ({ type: "text", text: t });
export const call = (id, name, args = {}, extra = {}) => ({ type: "toolCall", id, name, arguments: args, ...extra });
export const user = (t) => ({ role: "user", content: t, timestamp: 0 });
export const usage = () => ({
	input: 0,
	output: 0,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 0,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
export const reply = (stopReason, ...content) => ({
	role: "assistant",
	content,
	api: "test",
	provider: "test",
	model: "test-model",
	usage: usage(),
	stopReason,
	timestamp: 0,
});
export const says = (t) => reply("stop", text(t));
export const calls = (...blocks) => reply("toolUse", ...blocks);
export const model = { id: "test-model", name: "test-model", api: "test", provider: "test" };

// ---- tools

export const ok = (t) => ({ content: [text(t)], details: {} });
export const emptySchema = { type: "object", properties: {} };
/** A tool answering `${name} ok` unless execute is given; executed call ids go to log. */
export function tool(name, execute, extra = {}, log) {
	return {
		name,
		label: name,
		description: `${name} tool`,
		parameters: emptySchema,
		async execute(id, args, signal, onUpdate) {
			log?.push(id);
			return execute ? execute(id, args, signal, onUpdate) : ok(`${name} ok`);
		},
		...extra,
	};
}

// ---- provider

/**
 * The events a scripted response streams: start, per block its start/delta/end, then done.
 * opts.start=false leaves out start; opts.terminal "error" ends with an error event, "none" with
 * nothing.
 */
export function responseEvents(final, opts = {}) {
	const { start = true, terminal = "done" } = opts;
	const events = [];
	const partial = (n) => ({ ...final, content: final.content.slice(0, n) });
	if (start) events.push({ type: "start", partial: partial(0) });
	final.content.forEach((b, i) => {
		const p = partial(i + 1);
		if (b.type === "text") {
			events.push({ type: "text_start", contentIndex: i, partial: p });
			events.push({ type: "text_delta", contentIndex: i, delta: b.text, partial: p });
			events.push({ type: "text_end", contentIndex: i, content: b.text, partial: p });
		} else if (b.type === "thinking") {
			events.push({ type: "thinking_start", contentIndex: i, partial: p });
			events.push({ type: "thinking_delta", contentIndex: i, delta: b.thinking, partial: p });
			events.push({ type: "thinking_end", contentIndex: i, content: b.thinking, partial: p });
		} else if (b.type === "toolCall") {
			events.push({ type: "toolcall_start", contentIndex: i, partial: p });
			events.push({ type: "toolcall_end", contentIndex: i, toolCall: b, partial: p });
		}
	});
	if (terminal === "done") events.push({ type: "done", reason: final.stopReason, message: final });
	if (terminal === "error") events.push({ type: "error", reason: final.stopReason, error: final });
	return events;
}

/**
 * A scripted provider: each request takes the next reply (a message, a function of the request
 * returning one, or {message, opts}); an already-aborted request is answered `aborted`.
 * requests records, per request, the roles of the context as sent, its model and reasoning.
 */
export function provider(...replies) {
	const p = {
		requests: [],
		streamFn(m, llmContext, options) {
			const req = {
				roles: llmContext.messages.map((x) => x.role),
				messages: llmContext.messages,
				model: m.id,
				reasoning: options.reasoning ?? "off",
				apiKey: options.apiKey,
			};
			p.requests.push(req);
			let next = replies.shift() ?? says("(unscripted)");
			if (typeof next === "function") next = next(req);
			const { message, opts } = next.role ? { message: next, opts: {} } : next;
			const final = options.signal?.aborted ? { ...reply("aborted"), errorMessage: "Request was aborted" } : structuredClone(message);
			const events = responseEvents(final, opts);
			return {
				async *[Symbol.asyncIterator]() {
					yield* events;
				},
				result: async () => final,
			};
		},
	};
	return p;
}

// ---- events

/** One event as a short line, as the Go recorder renders it. */
export function render(e) {
	switch (e.type) {
		case "message_start":
		case "message_end":
			return `${e.type} ${e.message.role}`;
		case "tool_execution_start":
		case "tool_execution_update":
			return `${e.type} ${e.toolCallId}`;
		case "tool_execution_end":
			return `${e.type} ${e.toolCallId} ${e.isError ? "err" : "ok"}`;
		default:
			return e.type;
	}
}

export const defaultConvert = (messages) => messages.filter((m) => ["system", "user", "assistant", "toolResult"].includes(m.role));

/**
 * Runs pi's loop (runAgentLoop, or runAgentLoopContinue when prompts is null) and returns
 * { lines (no message_update), all (every line), events, messages, roles, error }.
 * A run that throws (pi leaves it unfinished) gives error = the thrown message.
 */
export async function run({ prompts = [user("hi")], messages = [], tools = [], config = {}, provider: p, signal, onEvent }) {
	const events = [];
	const all = [];
	const emit = async (e) => {
		events.push(e);
		all.push(render(e));
		await onEvent?.(e);
	};
	const context = { systemPrompt: "", messages: [...messages], tools };
	const cfg = { model, convertToLlm: defaultConvert, ...config };
	const out = { events, all, get lines() { return all.filter((l) => l !== "message_update"); } };
	try {
		out.messages =
			prompts === null
				? await core.runAgentLoopContinue(context, cfg, emit, signal, p.streamFn)
				: await core.runAgentLoop(prompts, context, cfg, emit, signal, p.streamFn);
		out.roles = out.messages.map((m) => m.role);
	} catch (err) {
		out.error = err.message;
	}
	return out;
}

/** The text of a tool result (or any message with text content blocks). */
export const textOf = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join(""));

/** The tool-result texts of a run's new messages. */
export const resultTexts = (messages) => messages.filter((m) => m.role === "toolResult").map(textOf);

/** Prints one checked case: its name and a value, as JSON. */
export function show(name, value) {
	console.log(`${name}: ${JSON.stringify(value)}`);
}

/** A counting queue poll, as Agent's PendingMessageQueue drains (mode "one-at-a-time" or "all"). */
export function queue(mode = "one-at-a-time", ...items) {
	const q = {
		items: [...items],
		polls: 0,
		poll: async () => {
			q.polls++;
			const n = mode === "all" ? q.items.length : Math.min(1, q.items.length);
			return q.items.splice(0, n);
		},
	};
	return q;
}
