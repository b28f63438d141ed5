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
	| "structuredContent";

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
	model: Model;
	thinkingLevel?: string;
	apiKey?: string;
	toolExecution?: "parallel" | "sequential";
	hooks?: HookName[];
	entry?: "run" | "continue";
	prompts?: any[];
}

/** The data of a `stream` call. */
export interface StreamRequest {
	model: Model;
	messages: any[];
	/** The requested level, "off" when none. */
	thinkingLevel: string;
	/** The resolved key, "" when none. */
	apiKey: string;
}

/** Every hook of the protocol, by pi's names. */
export const ALL_HOOKS: readonly HookName[];
/** Every optional feature name. */
export const FEATURES: readonly Feature[];
/** The protocol version the kit speaks (1). */
export const PROTOCOL: 1;
/** "the simulation session was stopped" */
export const STOPPED: string;

/** The harness answered a call with an error: the hook, stream function or execute throws it. */
export class CallError extends Error {}
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
	/** The virtual time in milliseconds. */
	now(): number;
	/** Whether the scenario installs this hook. */
	installed(hook: HookName | string): boolean;
	/** A synchronous call: its answer's data; throws CallError with the answer's error. */
	call(kind: "hook" | "stream" | "tool" | string, data: Json | any, name?: string): any;
	/** An installed hook's answer ({} when none); throws CallError. */
	hook(name: HookName | string, data: any): Record<string, any>;
	/** Writes a notification now (nothing after a stop). */
	notify(kind: "event" | "end", data: any): void;
	/** Reports one loop event, serialised now. */
	emit(event: { type: string; [key: string]: any }): void;
	/** The `stream` call; its Stream. Throws CallError when refused. */
	openStream(data: StreamRequest): Stream;
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
	/** Other capabilities keys. */
	capabilities?: Record<string, Json>;
	/** Awaited once after the hello, before the first session (slow imports). */
	load?: () => Promise<void> | void;
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
