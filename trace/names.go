package trace

import "errors"

// Call kinds: a call's kind, and the name of its entry (a hook call's entry is named by the
// hook).
const (
	// CallStream opens a provider request. Data: {model, messages, thinkingLevel, apiKey}, and
	// options: {sessionId?, identity?} when the setup asks for streamOptions. Answer: {stream: N}.
	CallStream = "stream"
	// CallTool starts a tool execution. Data: {toolCallId, toolName, args}. Answer: {}.
	CallTool = "tool"
	// CallHook calls a hook; Name is the hook's name, Data its argument, the answer its result.
	CallHook = "hook"
)

// Hook names, as pi spells them: the names of hook call entries.
const (
	HookConvertToLLM     = "convertToLlm"
	HookTransformContext = "transformContext"
	HookGetAPIKey        = "getApiKey"
	HookPrepareRequest   = "prepareRequest"
	HookPrepareNextTurn  = "prepareNextTurn"
	HookFinishTurn       = "finishTurn"
	HookSteering         = "getSteeringMessages"
	HookFollowUp         = "getFollowUpMessages"
	HookBeforeToolCall   = "beforeToolCall"
	HookAfterToolCall    = "afterToolCall"
)

// Delivery kinds: the names of delivery entries.
const (
	// DeliverStreamEvent releases the next event of stream Target (Data: the event).
	DeliverStreamEvent = "streamEvent"
	// DeliverStreamEnd ends stream Target without done/error (Data: {message}, its result).
	DeliverStreamEnd = "streamEnd"
	// DeliverStreamFail makes stream Target's iteration fail (Data: {error}).
	DeliverStreamFail = "streamFail"
	// DeliverToolUpdate reports a partial result of tool call Target (Data: the result).
	DeliverToolUpdate = "toolUpdate"
	// DeliverToolResult settles tool call Target: Data is {result}, {error}, or {nothing:
	// "undefined"} / {nothing: "null"} for an execute resolving that (protocol 2).
	DeliverToolResult = "toolResult"
	// DeliverAbort aborts the run's signal.
	DeliverAbort = "abort"
	// DeliverAgent is an operation of the user on the Agent (Agent scenarios): Target is the
	// operation's id, Data {op, …} (protocol §13.2).
	DeliverAgent = "agent"
	// DeliverHookReturn lets the hook call whose answer named Target as its wait return that
	// answer: a hook that takes virtual time (protocol 2, feature waitingHooks).
	DeliverHookReturn = "hookReturn"
)

// Agent operations (the name of an outcome entry), pi's Agent methods.
const (
	OpPrompt          = "prompt"
	OpContinue        = "continue"
	OpWaitForIdle     = "waitForIdle"
	OpSteer           = "steer"
	OpFollowUp        = "followUp"
	OpAbort           = "abort"
	OpReset           = "reset"
	OpSetSteeringMode = "setSteeringMode"
	OpSetFollowUpMode = "setFollowUpMode"
	OpClearQueues     = "clearQueues"
	OpSetTools        = "setTools"
	OpState           = "state"
	OpRelease         = "release"
)

// OpRunToolCall is the name of the outcome entry of one call of a runToolCall session
// (protocol §13.7), its target the tool call's id.
const OpRunToolCall = "runToolCall"

// IsRunToolCallTrace reports whether entries are a runToolCall session's: it runs tool calls,
// not a loop, so the loop's invariants do not describe it.
func IsRunToolCallTrace(entries []Entry) bool {
	for _, e := range entries {
		if e.Kind == KindOutcome && e.Name == OpRunToolCall {
			return true
		}
	}
	return false
}

// Outcomes of an Agent operation (an outcome entry's data.outcome).
const (
	// OutcomeAccepted: a synchronous operation was carried out.
	OutcomeAccepted = "accepted"
	// OutcomeResolved: the promise of prompt, continue or waitForIdle resolved.
	OutcomeResolved = "resolved"
	// OutcomeRefused: the operation threw, or its promise rejected; the outcome has error.
	OutcomeRefused = "refused"
)

// SettlesLater reports whether an operation's outcome may come after later deliveries: prompt,
// continue and waitForIdle return promises; every other operation settles at its delivery.
func SettlesLater(op string) bool {
	return op == OpPrompt || op == OpContinue || op == OpWaitForIdle
}

// ErrTimeout is wrapped by the error of an implementation that did not answer within its time
// limit (a protocol timeout): it hangs, or is too slow for the limit. Its message
// begins "timeout after".
var ErrTimeout = errors.New("timeout")
