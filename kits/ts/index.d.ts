// Types of turnstile-kit (index.mjs). The wire shapes are conformance/PROTOCOL.md's; messages,
// events and answers are pi's JSON, typed loosely here (your loop has its own types).

/** Any JSON value the harness sends or the adapter writes. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A hook by pi's name (PROTOCOL.md §5.3). */
export type HookName =
	| "convertToLlm"
	| "transformContext"
	| "getApiKey"
	| "prepareRequest"
	| "prepareNextTurn"
	| "finishTurn"
	| "getSteeringMessages"
	| "getFollowUpMessages"
	| "beforeToolCall"
	| "afterToolCall";

/** An optional feature a loop may lack (docs/SEMANTICS.md, "Optional features"). */
export type Feature =
	| "continue"
	| "severalPrompts"
	| "customMessages"
	| "prepareArguments"
	| "argumentMutation"
	| "throwingHooks"
	| "throwingStreams"
	| "argumentsError"
	| "structuredContent"
	| "agent"
	| "runToolCall"
	| "defaultModel"
	| "toolResolvesNothing"
	| "streamOptions"
	| "abortInHook"
	| "waitingHooks";

/** A tool as the setup describes it. */
export interface ToolSpec {
	name: string;
	description?: string;
	parameters?: Json;
	executionMode?: "sequential" | "parallel";
	/** When present, the tool's prepareArguments returns a copy of the raw arguments with these keys set. */
	prepareArguments?: Record<string, Json>;
}

/** The model, as the wire carries it. */
export interface Model {
	id: string;
	api: string;
	provider: string;
}

/** A scenario's setup (PROTOCOL.md §4). */
export interface Setup {
	scenario?: string;
	messages?: any[];
	tools?: ToolSpec[];
	activeTools?: string[];
	/** Absent only in an Agent setup whose Agent takes its own default model (feature defaultModel, PROTOCOL.md §13.8). */
	model?: Model;
	thinkingLevel?: string;
	apiKey?: string;
	toolExecution?: "parallel" | "sequential";
	hooks?: HookName[];
	entry?: "run" | "continue" | "agent" | "runToolCall";
	prompts?: any[];
	/** Version 2, `entry: "agent"` (PROTOCOL.md §13.2). */
	agent?: AgentSetup;
	/** Version 2: record the stream function's options in `stream` calls (§13.4). */
	streamOptions?: boolean;
	/** Version 2: the loop config's session id (§13.4). */
	sessionId?: string;
	/** Version 2: the loop config's identity (§13.4). */
	identity?: { userAgent?: Json; attribution?: Json; version?: string };
}

/** An Agent scenario's `agent` object (PROTOCOL.md §13.2). */
export interface AgentSetup {
	steeringMode: "one-at-a-time" | "all";
	followUpMode: "one-at-a-time" | "all";
	systemPrompt?: string;
	sessionId?: string;
	/** The listener holds the `nth` (default 1) event of this type until the barrier's release. */
	barriers?: { id: string; event: string; nth?: number }[];
}

/** One user operation of an Agent scenario: the `agent` delivery's data, with its id (the target). */
export interface AgentOperation {
	/** The operation's id ("u1", …, "final"). */
	id: string;
	op: "prompt" | "continue" | "waitForIdle" | "steer" | "followUp" | "abort" | "reset" | "setSteeringMode" | "setFollowUpMode" | "clearQueues" | "setTools" | "state" | string;
	messages?: any[];
	text?: string;
	message?: any;
	mode?: string;
	queue?: "steering" | "followUp" | "all";
	tools?: string[];
	[key: string]: any;
}

/** What `options.agent(session)` returns: the kit hands it every operation but `release`. */
export interface AgentHandler {
	/** Applies one operation and reports its outcome (now, or with session.track when a promise settles). Throw DeliveryError for one it cannot apply. */
	operate(op: AgentOperation): void;
	/** The Agent's own abort (pi: agent.abort()): an answer's `abort: true`, and the stop. */
	abort?(): void;
}

/** An operation's outcome. */
export type Outcome = "accepted" | "resolved" | "refused";

/** The data of a `stream` call. */
export interface StreamRequest {
	model: Model;
	messages: any[];
	/** The requested level, "off" when none. */
	thinkingLevel: string;
	/** The resolved key, "" when none. */
	apiKey: string;
}

/** What the stream function received besides the model and the context (§13.4). */
export interface StreamOptions {
	sessionId?: string;
	identity?: Json;
	[key: string]: any;
}

/** Every hook of the protocol, by pi's names. */
export const ALL_HOOKS: readonly HookName[];
/** Every optional feature name. */
export const FEATURES: readonly Feature[];
/** The newest protocol version the kit speaks (2). */
export const PROTOCOL: 2;
/** Every protocol version the kit speaks. */
export const PROTOCOLS: readonly (1 | 2)[];
/** The optional features protocol version 2 adds; a version-1 hello never lists them. */
export const V2_FEATURES: readonly Feature[];
/** "the simulation session was stopped" */
export const STOPPED: string;

/** The harness answered a call with an error: the hook, stream function or execute throws it. */
export class CallError extends Error {}
/** A delivery (or an Agent operation) the adapter cannot apply: reported as an error for the session. */
export class DeliveryError extends Error {}
/** A provider stream failed (`streamFail`): iterating it throws this. */
export class StreamError extends Error {}
/** A tool's execution failed in the world (`toolResult` with an error). */
export class ToolError extends Error {}
/** The session was stopped: every wait and call throws it from then on. */
export class SessionStopped extends Error {}
/** The harness broke the protocol (reported, exit status 1). */
export class ProtocolError extends Error {}
/** The adapter or loop did something the kit cannot serve (reported, exit status 1). */
export class AdapterError extends Error {}
/** The harness said shutdown, or closed stdin (exit status 0). */
export class Shutdown extends Error {}

/** A provider response fed by deliveries: pi-ai AssistantMessageEvents, then result(). */
export class Stream implements AsyncIterable<any> {
	/** The harness's stream id. */
	readonly id: string;
	[Symbol.asyncIterator](): AsyncIterator<any>;
	/** The final message: of done / error, or the one streamEnd carried. */
	result(): Promise<any>;
}

/** One scenario; everything the loop asks of the world goes through it. */
export class Session {
	/** The session number. */
	readonly id: number;
	/** The scenario's setup. */
	readonly setup: Setup;
	/** The run's abort signal: the `abort` delivery fires it. */
	readonly signal: AbortSignal;
	/** True once `stop` arrived. */
	readonly stopping: boolean;
	/** The protocol version negotiated at the hello. */
	readonly protocol: 1 | 2;
	/** The virtual time in milliseconds. */
	now(): number;
	/** Whether the scenario installs this hook. */
	installed(hook: HookName | string): boolean;
	/** A synchronous call: its answer's data; throws CallError with the answer's error. */
	call(kind: "hook" | "stream" | "tool" | string, data: Json | any, name?: string): any;
	/** An installed hook's answer ({} when none); throws CallError. An answer that waits (v2 waitingHooks) needs hookThen. */
	hook(name: HookName | string, data: any): Record<string, any>;
	/** A hook call given the signal the loop passed the hook: then(answer) at once, or a promise of it when the answer waits (a hookReturn delivery, or the signal's abort: PROTOCOL.md §13.6). */
	hookThen<T>(name: HookName | string, data: any, signal: AbortSignal | undefined, then: (answer: Record<string, any>) => T): T | Promise<T>;
	/** call, for a call whose answer may wait: its data, or a promise of it (PROTOCOL.md §13.6). */
	callAsync(kind: "hook" | string, data: Json | any, name: string, signal?: AbortSignal): any;
	/** Writes a notification now (nothing after a stop). */
	notify(kind: "event" | "end" | "outcome", data: any): void;
	/** Reports one loop event, serialised now. */
	emit(event: { type: string; [key: string]: any }): void;
	/** The `stream` call; its Stream. Throws CallError when refused. `options` go into the call's data only when the setup says streamOptions (v2). */
	openStream(data: StreamRequest, options?: StreamOptions): Stream;
	/** Whether the setup asks for stream options (v2, `streamOptions: true`). */
	wantsStreamOptions(): boolean;
	/** Fires the run's abort: the handler's abort() in an Agent scenario, else `signal`. */
	abortRun(): void;
	/** Agent scenarios: notifies the event; returns the promise a barrier's release (or, for an untilAbort barrier, the abort of `signal`, the listener's second argument) resolves when the event is held, else undefined. Return it from the listener. */
	agentEvent(event: { type: string; [key: string]: any }, signal?: AbortSignal): Promise<void> | undefined;
	/** Agent scenarios: writes an operation's outcome now. */
	outcome(op: { id: string; op: string }, outcome: Outcome, extra?: { error?: string; state?: any }): void;
	/** Agent scenarios: reports `resolved` / `refused` (with the message) when the promise settles. */
	track(op: { id: string; op: string }, promise: Promise<unknown>): void;
	/** Agent scenarios: the ids of the barriers held now. */
	heldBarriers(): string[];
	/** The `tool` call; a promise the deliveries settle (ToolError on failure). Throws CallError when refused. */
	runTool(toolCallId: string, toolName: string, args: any, onUpdate?: (partial: any) => void): Promise<any>;
}

/** What serve() and Kit take. */
export interface Options {
	/** Your loop's name (hello). */
	name?: string;
	/** Your loop's version (hello). */
	version?: string;
	/** The pi release whose behaviour you claim, e.g. "1.6.0". */
	tracks?: string;
	/** The hooks you can install; scenarios needing others are skipped. */
	hooks?: readonly (HookName | string)[];
	/** The optional features your loop lacks; their scenarios are skipped. */
	lacks?: readonly (Feature | string)[];
	/** Other capabilities keys. The kit says `deliveriesAhead: true` (PROTOCOL.md §14) and `standingAnswers: true` (§15) itself; `{deliveriesAhead: false}` here has the harness send one delivery at a time, `{standingAnswers: false}` has every hook call wait for its answer. */
	capabilities?: Record<string, Json>;
	/** Awaited once after the hello, before the first session (slow imports). */
	load?: () => Promise<void> | void;
	/** The newest protocol version you speak (default 1). With 2, list in `lacks` the v2 features you do not have. */
	protocol?: 1 | 2;
	/** Version 2: builds an Agent scenario's Agent, subscribes its listener, returns its handler. Without it, the hello lacks `agent`. An Agent setup may carry no model (feature defaultModel, §13.8): give the Agent none, or list `defaultModel` in `lacks`. */
	agent?: (session: Session) => AgentHandler;
	/**
	 * Version 2: runs one tool call through the loop's runToolCall (PROTOCOL.md §13.7), built from
	 * the session's setup, and returns its outcome `{toolCall, result, isError, durationMs?}`;
	 * `onUpdate` is the call's update sink. Without it, the hello lacks `runToolCall`.
	 */
	runToolCall?: (session: Session, toolCall: any, onUpdate: (partialResult: any) => void) => Promise<ToolCallOutcome>;
}

/** A runToolCall outcome (pi's AgentToolCallOutcome). */
export interface ToolCallOutcome {
	toolCall: any;
	result: any;
	isError: boolean;
	durationMs?: number;
}

/** What a run returns: the run's new messages (the `end` notification). */
export type RunFn = (session: Session) => Promise<any[] | undefined | void> | any[] | undefined | void;

/** Serves the protocol on stdin/stdout, then exits the process (0 at shutdown, 1 after an error). */
export function serve(run: RunFn, options?: Options): Promise<never>;

/** The kit on explicit file descriptors, for tests: serve() resolves to the exit status. */
export class Kit {
	constructor(run: RunFn, options?: Options & { input?: number; output?: number; log?: (line: string) => void });
	serve(): Promise<0 | 1>;
}

/** The text a failed run reports: the error's message. */
export function errorText(err: unknown): string;
/** The virtual time in milliseconds. */
export function now(): number;
/** The virtual clock. */
export const clock: { ms: number };
/** Makes clocks and timers virtual (serve() does it; idempotent). */
export function installVirtualTime(): void;
