package sim

import (
	"encoding/json"
	"maps"

	"github.com/turnstile-dev/turnstile/loop"
)

// The port is how an implementation under test and the simulated world talk. The same
// messages flow in-process (Reference) and, as JSON lines, over the conformance protocol, so
// an implementation behaves the same whichever way it is reached.
//
// The implementation makes calls (answered at once, in zero virtual time) and sends
// notifications (its events and the end of its run); the world releases deliveries (stream
// events, tool updates and results, aborts) one at a time in virtual-time order, waiting after
// each until the implementation is idle.

// Implementation is a loop under test, reached through the port.
type Implementation interface {
	// Start sets up a session for one scenario and starts its run; it returns once the
	// implementation is idle (waiting for a delivery) or its run has ended.
	Start(setup Setup, world Port) error
	// Deliver releases one delivery and returns once the implementation is idle again.
	Deliver(d Delivery) error
	// Stop ends the session. Whatever still runs is abandoned: the world answers every
	// further call with an error, and the implementation must wind down.
	Stop() error
}

// Port is the world as an implementation reaches it.
type Port interface {
	// Call asks the world something and returns its answer. An Answer with Error set means the
	// call fails (pi: the hook, stream function or tool throws).
	Call(c Call) Answer
	// Notify reports an event or the end of the run.
	Notify(n Notification)
}

// Setup is what an implementation needs to build its loop for one scenario.
type Setup struct {
	Scenario string `json:"scenario"`
	// Messages is the initial transcript.
	Messages []json.RawMessage `json:"messages"`
	// Tools is every tool the scenario knows; the initial context holds those in ActiveTools.
	// Hooks may later replace the context's tools by other names from this list.
	Tools       []ToolSetup `json:"tools"`
	ActiveTools []string    `json:"activeTools"`
	// Model is the model of the run's requests; zero (left out) in an Agent scenario whose
	// Agent takes its own default (feature defaultModel).
	Model ModelSetup `json:"model,omitzero"`
	// ThinkingLevel is the requested level, "off" for none.
	ThinkingLevel string `json:"thinkingLevel"`
	APIKey        string `json:"apiKey,omitempty"`
	// ToolExecution is "parallel" or "sequential".
	ToolExecution string `json:"toolExecution"`
	// Hooks lists the installed hooks by pi's names (convertToLlm, transformContext,
	// getApiKey, prepareRequest, prepareNextTurn, finishTurn, getSteeringMessages,
	// getFollowUpMessages, beforeToolCall, afterToolCall). A hook not listed is not set.
	Hooks []string `json:"hooks"`
	// Entry is "run" (with Prompts), "continue", or "agent" (with Agent).
	Entry   string            `json:"entry"`
	Prompts []json.RawMessage `json:"prompts,omitempty"`
	// StreamOptions asks for an options object, {sessionId?, identity?}, in every stream
	// call's data: what the stream function got besides the model and the context (protocol 2).
	StreamOptions bool `json:"streamOptions,omitempty"`
	// SessionID is the loop's session id (pi: config.sessionId).
	SessionID string `json:"sessionId,omitempty"`
	// Identity is the loop's identity (pi: config.identity).
	Identity *loop.Identity `json:"identity,omitempty"`
	// Agent configures the Agent of an Agent scenario (protocol §13.2).
	Agent *AgentSetup `json:"agent,omitempty"`
	// Attempt is which run of the scenario this session is when the harness runs it again
	// to tell a flaky implementation (2, 3, …); 0, omitted, on the first. An implementation
	// may vary by it what it is free to choose (the Go kit's order among goroutines).
	Attempt int `json:"attempt,omitempty"`
}

// AgentSetup is the Agent of an Agent scenario: its queue modes, its initial system prompt
// and the barriers of its event listener.
type AgentSetup struct {
	SteeringMode string         `json:"steeringMode"`
	FollowUpMode string         `json:"followUpMode"`
	SystemPrompt string         `json:"systemPrompt,omitempty"`
	Barriers     []BarrierSetup `json:"barriers,omitempty"`
}

// BarrierSetup is a Barrier on the wire.
type BarrierSetup struct {
	ID    string `json:"id"`
	Event string `json:"event"`
	Nth   int    `json:"nth,omitempty"`
	// UntilAbort also releases the listener once the signal it was given fires (protocol 2,
	// feature waitingHooks).
	UntilAbort bool `json:"untilAbort,omitempty"`
}

// Entry values of a Setup.
const (
	EntryRun      = "run"
	EntryContinue = "continue"
	EntryAgent    = "agent"
)

// ToolSetup describes one tool. Its behaviour lives in the world: execute is a "tool" call
// followed by deliveries. PrepareArguments, when present, installs prepareArguments, which
// sets these keys on the raw arguments; it runs inside the implementation because pi calls
// prepareArguments synchronously, leaving no room for a call.
type ToolSetup struct {
	Name             string         `json:"name"`
	Description      string         `json:"description"`
	Parameters       map[string]any `json:"parameters"`
	ExecutionMode    string         `json:"executionMode,omitempty"`
	PrepareArguments map[string]any `json:"prepareArguments,omitempty"`
}

// Prepare is the tool's prepareArguments applied to args: a copy with PrepareArguments' keys
// set (args that are not an object count as {}).
func (t ToolSetup) Prepare(args any) map[string]any {
	out := map[string]any{}
	if m, ok := args.(map[string]any); ok {
		maps.Copy(out, m)
	}
	maps.Copy(out, t.PrepareArguments)
	return out
}

// ModelSetup is the model of the run's requests.
type ModelSetup struct {
	ID       string `json:"id"`
	API      string `json:"api"`
	Provider string `json:"provider"`
}

// Call is one call of the implementation into the world.
type Call struct {
	Kind string          `json:"kind"`
	Name string          `json:"name,omitempty"`
	Data json.RawMessage `json:"data"`
	// Value may stand in for Data in-process: the same payload as a Go value, encoded by
	// the world only as far as it needs. It never crosses the wire.
	Value any `json:"-"`
}

// Answer is the world's answer to a call: Data, or Error when the call fails.
type Answer struct {
	Data  json.RawMessage `json:"data,omitempty"`
	Error string          `json:"error,omitempty"`
	// Abort asks the implementation to fire the run's abort signal before the hook returns
	// Data (or throws Error): an abort while a hook runs (protocol 2, feature abortInHook).
	Abort bool `json:"abort,omitempty"`
	// Wait, when set, makes the hook return Data (or throw Error) only at the hookReturn
	// delivery whose target it is: a hook that takes virtual time (protocol 2, feature
	// waitingHooks).
	Wait string `json:"wait,omitempty"`
	// UntilAbort makes the hook return Data (or throw Error) once the abort signal the loop
	// gave it fires, at once when it has fired already; with Wait too, at the delivery if it
	// comes first; never when it was given none and has no Wait (protocol 2, feature
	// waitingHooks). A hookReturn for a wait that returned already changes nothing.
	UntilAbort bool `json:"untilAbort,omitempty"`
}

// Notification kinds.
const (
	// NotifyEvent reports one loop event; Data is the event in pi's JSON shape.
	NotifyEvent = "event"
	// NotifyEnd reports that the run returned; Data is {messages} (its new messages) or
	// {error} when the run failed.
	NotifyEnd = "end"
	// NotifyOutcome reports the outcome of an Agent operation: Data is {id, op, outcome,
	// error?, state?} (protocol §13.2).
	NotifyOutcome = "outcome"
)

// Notification is something the implementation reports.
type Notification struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
	// Value may stand in for Data in-process (a loop.Event for events). It never crosses
	// the wire.
	Value any `json:"-"`
}

// Delivery is one scheduled happening released to the implementation at virtual time Now (ms).
type Delivery struct {
	Kind   string          `json:"kind"`
	Now    int64           `json:"now"`
	Target string          `json:"target,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	// Value is Data already decoded (a loop.StreamEvent, or a loop.ToolResult for updates and results),
	// set by the world for in-process implementations so they can skip decoding. It never
	// crosses the wire.
	Value any `json:"-"`
}
