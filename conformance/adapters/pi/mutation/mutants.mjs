// Breaks of pi 1.6.0's dist, one per upstream test case (docs/UPSTREAM.md): each changes what the
// case asserts, and the curated suite must fail on it (run.mjs). `file` is under dist/, `find`
// must occur exactly `count` times (1 unless given): a find that no longer matches pi's dist is
// an error of this list, not a survived mutant. `adapterArgs` runs the adapter so (a break of
// pi's public wrappers shows only through them: --entry wrappers).

/** @type {{case: string, file: string, find: string, replace: string, count?: number, adapterArgs?: string[]}[]} */
export const MUTANTS = [
	{
		case: "should not execute tool calls from a length-truncated assistant message",
		file: "agent-loop.js",
		find: `message.stopReason === "length"`,
		replace: `message.stopReason === "length-never"`,
	},
	{
		case: "should emit tool_execution_end in completion order but persist tool results in source order",
		file: "agent-loop.js",
		find: "for (const finalized of orderedFinalizedCalls) {",
		replace: "for (const finalized of [...orderedFinalizedCalls].reverse()) {",
	},
	{
		case: "should force sequential execution when a tool has executionMode=sequential even with default parallel config",
		file: "agent-loop.js",
		find: `?.executionMode === "sequential"`,
		replace: `?.executionMode === "sequential-never"`,
	},
	{
		case: "should allow parallel execution when all tools have executionMode=parallel",
		file: "agent-loop.js",
		find: "return executeToolCallsParallel(currentContext,",
		replace: "return executeToolCallsSequential(currentContext,",
	},
	{
		case: "should execute mutated beforeToolCall args without revalidation",
		file: "agent-loop.js",
		find: "            tool,\n            args: validatedArgs,\n",
		replace: "            tool,\n            args: validateToolArguments(tool, { ...preparedToolCall, arguments: validatedArgs }),\n",
	},
	{
		case: "should prepare tool arguments for validation",
		file: "agent-loop.js",
		find: "const preparedToolCall = prepareToolCallArguments(tool, toolCall);",
		replace: "const preparedToolCall = toolCall;",
	},
	{
		case: "runs finishTurn after tool-result messages and before turn_end",
		file: "agent-loop.js",
		find: "const decision = await config.finishTurn?.(lastCompletedTurn, signal);\n            await emit({ type: \"turn_end\", message, toolResults });",
		replace: "await emit({ type: \"turn_end\", message, toolResults });\n            const decision = await config.finishTurn?.(lastCompletedTurn, signal);",
	},
	{
		case: "action:end skips queue polling and next-turn preparation",
		file: "agent-loop.js",
		find: `if (decision?.action === "end") {`,
		replace: `if (decision?.action === "end-never") {`,
	},
	{
		case: "makes exactly one context-only request when no natural request satisfies continuation",
		file: "agent-loop.js",
		find: "        if (explicitContinuation) {",
		replace: "        if (false && explicitContinuation) {",
	},
	{
		case: "lets a natural tool-result request satisfy continuation",
		file: "agent-loop.js",
		// The reset alone is dead code (every later turn assigns the flag again): the break keeps
		// a continue answer pending past the natural request that should satisfy it.
		find: 'explicitContinuation = decision?.action === "continue";\n            pendingMessages = (await config.getSteeringMessages?.()) || [];\n            if (hasMoreToolCalls || pendingMessages.length > 0) {',
		replace: 'explicitContinuation = explicitContinuation || decision?.action === "continue";\n            pendingMessages = (await config.getSteeringMessages?.()) || [];\n            if (false) {',
	},
	{
		case: "picks up steering queued during prepareNextTurn before the next request",
		file: "agent-loop.js",
		find: "                if (pendingMessages.length === 0) {",
		replace: "                if (false) {",
	},
	{
		case: "should use prepareNextTurn snapshot before continuing",
		file: "agent-loop.js",
		find: "preparedMessages = nextTurnSnapshot.messages ?? [];",
		replace: "preparedMessages = [];",
	},
	{
		case: "prepares the initial request after pending messages and can replace request state",
		file: "agent-loop.js",
		find: "currentContext = requestUpdate.context ?? currentContext;",
		replace: "",
	},
	{
		case: "should stop after a tool batch when every tool result sets terminate=true",
		file: "agent-loop.js",
		find: "finalized.result.terminate === true",
		replace: `finalized.result.terminate === "never"`,
	},
	{
		case: "should stop after a blocked tool call when beforeToolCall sets terminate=true",
		file: "agent-loop.js",
		find: "if (beforeResult.terminate === true) {",
		replace: "if (false) {",
	},
	{
		case: "should continue after parallel tool calls when not all tool results terminate",
		file: "agent-loop.js",
		find: "finalizedCalls.every((finalized) =>",
		replace: "finalizedCalls.some((finalized) =>",
	},
	{
		case: "should allow afterToolCall to mark a tool batch as terminating",
		file: "agent-loop.js",
		find: "terminate: afterResult.terminate ?? result.terminate,",
		replace: "terminate: result.terminate,",
	},
	{
		case: "should throw when context has no messages",
		file: "agent-loop.js",
		find: "if (context.messages.length === 0) {",
		replace: "if (false) {",
		count: 2,
	},
	{
		case: "should throw when context has no messages",
		file: "agent-loop.js",
		find: "export function agentLoopContinue(context, config, signal, streamFn) {\n    if (context.messages.length === 0) {",
		replace: "export function agentLoopContinue(context, config, signal, streamFn) {\n    if (false) {",
		adapterArgs: ["--entry", "wrappers"],
	},
	{
		case: "should ignore a settled parallel tool update while another tool is still running",
		file: "agent-loop.js",
		find: "if (!acceptingUpdates)\n                return;",
		replace: "",
	},
	{
		case: "emits full lifecycle events for thrown run failures",
		file: "agent.js",
		find: `await this.processEvents({ type: "turn_end", message: failureMessage, toolResults: [] });`,
		replace: "",
	},
	{
		case: "should reject reset while processing without corrupting the transcript",
		file: "agent.js",
		find: `if (this.activeRun) {\n            throw new Error("Agent is already processing. Wait for completion before resetting.");`,
		replace: `if (false) {\n            throw new Error("Agent is already processing. Wait for completion before resetting.");`,
	},
	{
		case: "rejects a queued continuation from empty context without draining queues",
		file: "agent.js",
		find: `if (!lastMessage || this._state.messages.every((message) => message.role === "system")) {`,
		replace: `if (this.steeringQueue.drain().length < 0 || !lastMessage || this._state.messages.every((message) => message.role === "system")) {`,
	},
	{
		case: "continue() keeps one-at-a-time steering semantics for assistant-tail fallback",
		file: "agent.js",
		find: "await this.runPromptMessages(queuedSteering, { skipInitialSteeringPoll: true });",
		replace: "await this.runPromptMessages(queuedSteering);",
	},
	{
		case: "polls one-at-a-time steering at continuation startup",
		file: "agent.js",
		find: "runAgentLoopContinue(this.createContextSnapshot(), this.createLoopConfig(),",
		replace: "runAgentLoopContinue(this.createContextSnapshot(), this.createLoopConfig({ skipInitialSteeringPoll: true }),",
	},
	{
		case: "keeps queues on a aborted response even when finishTurn requests continuation",
		file: "agent-loop.js",
		find: `if (message.stopReason === "error" || message.stopReason === "aborted") {`,
		replace: `if (message.stopReason === "error" || message.stopReason === "aborted-never") {`,
	},
	{
		case: "previews the next selected queued messages without consuming them",
		file: "agent.js",
		find: "return steering.length > 0 ? steering : this.followUpQueue.peek();",
		replace: "return [...steering, ...this.followUpQueue.peek()];",
	},
	{
		case: "should create an agent instance with default state",
		file: "agent.js",
		find: 'thinkingLevel: initialState?.thinkingLevel ?? "off",',
		replace: 'thinkingLevel: initialState?.thinkingLevel ?? "medium",',
	},
	{
		case: "should create an agent instance with default state",
		file: "agent.js",
		find: "model: initialState?.model ?? DEFAULT_MODEL,",
		replace: "model: initialState?.model,",
	},
	{
		case: "forwards sessionId to streamFunction options",
		file: "agent.js",
		find: "sessionId: this.sessionId,",
		replace: "sessionId: undefined,",
	},
	{
		case: "validates, runs the hooks, and reports failures as error outcomes",
		file: "agent-loop.js",
		find: "return { toolCall, result: preparation.result, isError: preparation.isError };",
		replace: "return { toolCall, result: preparation.result, isError: false };",
	},
	{
		case: "lets afterToolCall replace structured content and drops it when only content is replaced",
		file: "agent-loop.js",
		find: "return finalizeExecutedToolCall(context, assistantMessage, preparation, executed, options, signal);",
		replace:
			"const finalized = await finalizeExecutedToolCall(context, assistantMessage, preparation, executed, options, signal);\n    return { ...finalized, result: { ...finalized.result, structuredContent: executed.result.structuredContent } };",
	},
];
