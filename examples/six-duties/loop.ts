// An agent loop written from the six duties an agent loop has, and nothing more: it holds a
// transcript that only grows, makes each request from it, consumes a streamed response into one
// complete assistant message, runs the tool calls in that message and appends their results in
// the order they were called, goes on only when there is evidence to (tool calls in the content,
// queued user messages) with error and abort as hard stops, and reports every step as an event.
// It knows nothing of what "done" means: there is no turn limit and no stop tool.

export type Message = { role: string; content?: unknown; timestamp?: number; [field: string]: unknown };
export type ToolCall = { type: "toolCall"; id: string; name: string; arguments: Record<string, unknown>; argumentsError?: string };
export type ToolOutput = { content: unknown[]; details?: unknown; isError?: boolean; terminate?: boolean };
export type Event = { type: string; [field: string]: unknown };
type Schema = { type?: string; properties?: Record<string, Schema>; required?: string[] };

/** A tool the loop can run; its declaration goes to the provider beside the transcript, never into it. */
export interface Tool {
	name: string;
	description: string;
	parameters: Schema;
	sequential?: boolean;
	run(callId: string, args: Record<string, unknown>, progress: (partial: unknown) => void): Promise<ToolOutput>;
}

/** A streamed response: provider events, then the finished message. */
export interface Response extends AsyncIterable<Event> {
	result(): Promise<Message>;
}

export interface LoopOptions {
	tools: Tool[];
	ask(request: { messages: Message[]; tools: Tool[] }): Response;
	emit(event: Event): void | Promise<void>;
	sequential?: boolean;
	steering?(): Message[] | Promise<Message[]>;
	followUps?(): Message[] | Promise<Message[]>;
	signal?: AbortSignal;
}

const PROVIDER_ROLES = new Set(["system", "user", "assistant", "toolResult"]);
const failure = (text: string): ToolOutput => ({ content: [{ type: "text", text }], isError: true });
const aborted = (call: ToolCall) => failure(`Not run: the run was aborted before ${call.name} started.`);

/** Runs the loop from a transcript and new input; resolves to the messages the run added. */
export async function runLoop(transcript: Message[], input: Message[], o: LoopOptions): Promise<Message[]> {
	if (input.length === 0 && transcript.length === 0) throw new Error("runLoop: nothing to answer: the transcript is empty and no input was given");
	if (input.length === 0 && transcript.at(-1)?.role === "assistant") throw new Error("runLoop: nothing to answer: the transcript ends with the model's own message");
	const added: Message[] = [];
	const append = async (m: Message) => {
		await o.emit({ type: "message_start", message: m });
		await o.emit({ type: "message_end", message: m });
		transcript.push(m);
		added.push(m);
	};
	const poll = async (queue?: () => Message[] | Promise<Message[]>) => (queue ? await queue() : []);

	await o.emit({ type: "agent_start" });
	await o.emit({ type: "turn_start" });
	for (const m of input) await append(m);
	let waiting = await poll(o.steering);
	for (;;) {
		for (const m of waiting) await append(m);
		const reply = await respond(transcript, o);
		added.push(reply);
		if (reply.stopReason === "error" || reply.stopReason === "aborted") {
			await o.emit({ type: "turn_end", message: reply, toolResults: [] });
			break;
		}
		const calls = ((reply.content as { type: string }[]) ?? []).filter((b): b is ToolCall => b.type === "toolCall");
		const results = await act(calls, reply.stopReason === "length", o, append);
		await o.emit({ type: "turn_end", message: reply, toolResults: results.map((r) => r.message) });
		const toolsAsk = calls.length > 0 && !results.every((r) => r.output.terminate === true);
		waiting = await poll(o.steering);
		if (!toolsAsk && waiting.length === 0) waiting = await poll(o.followUps);
		if (!toolsAsk && waiting.length === 0) break;
		await o.emit({ type: "turn_start" });
	}
	await o.emit({ type: "agent_end", messages: added });
	return added;
}

/** Makes one request from the transcript and consumes its stream into one assistant message. */
async function respond(transcript: Message[], o: LoopOptions): Promise<Message> {
	const response = o.ask({ messages: transcript.filter((m) => PROVIDER_ROLES.has(m.role)), tools: o.tools });
	let started = false;
	for await (const ev of response) {
		if (ev.type === "start") {
			started = true;
			transcript.push(ev.partial as Message);
			await o.emit({ type: "message_start", message: { ...(ev.partial as Message) } });
		} else if (started && ev.type !== "done" && ev.type !== "error") {
			transcript[transcript.length - 1] = ev.partial as Message;
			await o.emit({ type: "message_update", message: { ...(ev.partial as Message) }, assistantMessageEvent: ev });
		}
	}
	const reply = await response.result();
	if (started) transcript[transcript.length - 1] = reply;
	else {
		transcript.push(reply);
		await o.emit({ type: "message_start", message: reply });
	}
	await o.emit({ type: "message_end", message: reply });
	return reply;
}

type Settled = { call: ToolCall; output: ToolOutput; message: Message };

/** Runs one response's tool calls and appends their results in call order. */
async function act(calls: ToolCall[], truncated: boolean, o: LoopOptions, append: (m: Message) => Promise<void>): Promise<Settled[]> {
	const settle = async (call: ToolCall, output: ToolOutput): Promise<Settled> => {
		await o.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: output, isError: output.isError === true });
		const message = { role: "toolResult", toolCallId: call.id, toolName: call.name, content: output.content ?? [], ...(output.details === undefined ? {} : { details: output.details }), isError: output.isError === true, timestamp: Date.now() };
		return { call, output, message };
	};
	const start = (call: ToolCall) => o.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
	const settled: Settled[] = [];
	if (truncated) {
		// The arguments of a response cut off at the token limit may be cut off too: run none.
		for (const call of calls) {
			await start(call);
			settled.push(await settle(call, failure(`Not run: the response was cut off at the output limit, so the arguments of ${call.name} may be incomplete. Call it again.`)));
			await append(settled.at(-1)!.message);
		}
		return settled;
	}
	const sequential = o.sequential || calls.some((c) => o.tools.find((t) => t.name === c.name)?.sequential);
	// Checks a call before it runs: the tool exists, its arguments parsed and fit its schema.
	const check = (call: ToolCall): { tool: Tool; args: Record<string, unknown> } | ToolOutput => {
		if (o.signal?.aborted) return aborted(call);
		const tool = o.tools.find((t) => t.name === call.name);
		if (!tool) return failure(`There is no tool named ${call.name}. Available: ${o.tools.map((t) => t.name).join(", ") || "none"}.`);
		if (call.argumentsError) return failure(`The arguments of ${call.name} are not valid JSON: ${call.argumentsError}`);
		const args = structuredClone(call.arguments ?? {});
		const problems = validate(args, tool.parameters);
		return problems.length ? failure(`Bad arguments for ${call.name}: ${problems.join("; ")}.`) : { tool, args };
	};
	const execute = async (call: ToolCall, ready: { tool: Tool; args: Record<string, unknown> }): Promise<ToolOutput> => {
		let running = true;
		const progress = (partial: unknown) => {
			if (running) void o.emit({ type: "tool_execution_update", toolCallId: call.id, toolName: call.name, args: call.arguments, partialResult: partial });
		};
		try {
			return await ready.tool.run(call.id, ready.args, progress);
		} catch (err) {
			return failure(err instanceof Error ? err.message : String(err));
		} finally {
			running = false;
		}
	};
	if (sequential) {
		for (const call of calls) {
			await start(call);
			const ready = check(call);
			settled.push(await settle(call, "tool" in ready ? await execute(call, ready) : ready));
			await append(settled.at(-1)!.message);
		}
		return settled;
	}
	// In parallel: check every call in order (one refused ends at once), then run the others
	// together, each ending when it settles; the results join the transcript in call order.
	const checked: ({ tool: Tool; args: Record<string, unknown> } | Settled)[] = [];
	for (const call of calls) {
		await start(call);
		const ready = check(call);
		checked.push("tool" in ready ? ready : await settle(call, ready));
	}
	const done = await Promise.all(calls.map(async (call, i) => {
		const c = checked[i];
		if (!("tool" in c)) return c;
		if (o.signal?.aborted) return settle(call, aborted(call));
		return settle(call, await execute(call, c));
	}));
	for (const s of done) await append(s.message);
	return done;
}

/** The problems of args against a JSON Schema's top level: missing and mistyped properties. */
function validate(args: Record<string, unknown>, schema: Schema): string[] {
	const problems = (schema.required ?? []).filter((k) => !(k in args)).map((k) => `${k} is required`);
	for (const [key, prop] of Object.entries(schema.properties ?? {})) {
		const v = args[key];
		if (v === undefined || !prop.type) continue;
		if ((prop.type === "number" || prop.type === "integer") && typeof v === "string" && v.trim() !== "" && !isNaN(Number(v))) args[key] = Number(v);
		const got = Array.isArray(args[key]) ? "array" : args[key] === null ? "null" : typeof args[key];
		const fits = got === prop.type || (prop.type === "integer" && Number.isInteger(args[key])) || (prop.type === "number" && got === "number");
		if (!fits) problems.push(`${key} should be ${prop.type}, not ${got}`);
	}
	return problems;
}
