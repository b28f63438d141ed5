package sim

import "github.com/turnstile-dev/turnstile/loop"

// Scenario is one situation to simulate: the starting context, the loop's configuration,
// and the script of the world — provider responses, tool behaviour, hook answers, user
// actions. Times are virtual milliseconds.
type Scenario struct {
	Name        string
	Description string
	// Since is the pi version that introduced the behaviour the scenario pins down.
	Since string
	// Rules are the ids of the rules of docs/SEMANTICS.md the scenario pins (R-…). They
	// describe the scenario and never reach its
	Rules []string

	// Messages is the initial transcript.
	Messages []loop.Message
	// Tools is every tool the scenario knows; those not Inactive start in the context.
	Tools []ToolSpec
	Model loop.Model
	// ThinkingLevel is the requested level; "" for off.
	ThinkingLevel loop.ThinkingLevel
	APIKey        string
	// ToolExecution is loop.Parallel (default) or loop.Sequential.
	ToolExecution loop.ExecutionMode
	SteeringMode  loop.QueueMode
	FollowUpMode  loop.QueueMode
	Hooks         Hooks
	// StreamOptions asks the implementation to record, in every stream call, what the stream
	// function got besides the model and the context: SessionID and the request identity
	// (protocol 2; feature streamOptions).
	StreamOptions bool
	// SessionID is the loop's session id (pi: config.sessionId); "" for none.
	SessionID string
	// Identity is the loop's identity (pi: config.identity); nil for none.
	Identity *loop.Identity

	// Responses are the provider's answers, request by request.
	Responses []Response
	// ExtraResponse, when set, answers every request beyond Responses; otherwise such a
	// request fails the run and is recorded ("request N was not scripted").
	ExtraResponse *Response
	// ToolCalls scripts individual calls by tool-call id, over their tool's Behaviour.
	ToolCalls map[string]Behaviour

	// User lists the simulated user's actions.
	User []UserAction

	// Agent, when set, makes the scenario an Agent scenario: the implementation builds a
	// stateful Agent (pi's Agent class) that owns the steering and follow-up queues, starts
	// nothing by itself, and the user acts through operations (UserAction.Op): prompt,
	// continue, steer, followUp, abort, waitForIdle, … Prompts and Continue are unused.
	Agent *AgentScript

	// Continue starts with loop.Continue instead of loop.Run with Prompts.
	Continue bool
	// RunToolCall runs each tool call of the last message of Messages (an assistant
	// message), one after the other, through runToolCall instead of a loop (feature
	// runToolCall); Prompts are unused.
	RunToolCall bool
	Prompts     []loop.Message

	// Budget bounds the run; a zero field takes DefaultBudget's.
	Budget Budget
}

// Budget bounds one run, so that a run that never ends (finishTurn continue on every turn
// with an ExtraResponse) or a hostile implementation is stopped with a verdict naming the
// budget rather than eating time and memory. A zero field means the default.
type Budget struct {
	// Requests is the most provider requests the run may make.
	Requests int
	// Time is the latest virtual time (ms) anything may happen at.
	Time int64
	// Entries is the most trace entries.
	Entries int
	// Bytes is the most bytes of the trace's canonical JSON lines in full: Trace.JSONL of
	// the expanded trace (Trace.Expanded), which is what its consumers hold; the linear form
	// written is smaller.
	Bytes int64
}

// DefaultBudget is the budget of a scenario that sets none: far above any curated scenario
// (the largest makes 201 requests, 4,223 entries, 11.7 MB of JSON lines in full; one reaches
// an hour of virtual time), and reached by an endless run in well under a second.
var DefaultBudget = Budget{Requests: 1000, Time: 24 * 60 * 60 * 1000, Entries: 100_000, Bytes: 16 << 20}

// Or fills b's zero fields from d.
func (b Budget) Or(d Budget) Budget {
	if b.Requests <= 0 {
		b.Requests = d.Requests
	}
	if b.Time <= 0 {
		b.Time = d.Time
	}
	if b.Entries <= 0 {
		b.Entries = d.Entries
	}
	if b.Bytes <= 0 {
		b.Bytes = d.Bytes
	}
	return b
}

// BudgetError is the verdict on a run stopped by its budget; the trace ends with a fail
// entry named "budget" whose target is Budget and whose error is the same text.
type BudgetError struct {
	// Budget is which: "requests", "time", "entries" or "bytes".
	Budget string
	// Text says what was reached, e.g. "the run made 1,000 requests; budget 1,000".
	Text string
}

func (e *BudgetError) Error() string { return e.Text }

// Exceeded is Budget: which budget stopped the run, for packages that judge errors without
// depending on the simulator.
func (e *BudgetError) Exceeded() string { return e.Budget }

// ToolSpec is one tool and its default behaviour.
type ToolSpec struct {
	Name          string
	Description   string
	Parameters    map[string]any
	ExecutionMode loop.ExecutionMode
	// Inactive tools are known but not in the initial context; a hook may bring them in.
	Inactive bool
	// PrepareArguments, when set, installs prepareArguments: it returns a copy of the raw
	// arguments with these keys set, before validation.
	PrepareArguments map[string]any
	Behaviour        Behaviour
}

// Behaviour is how one tool execution goes.
type Behaviour struct {
	// Duration is when the execution settles, after its start.
	Duration int64
	// Updates are partial results at given times after the start. One after Duration is
	// delivered after the result, to an execution that has settled (pi emits nothing for it).
	Updates []Update
	// Result is what execute returns.
	Result loop.ToolResult
	// Throw, when set, makes execute fail with this text instead.
	Throw string
	// Resolves, when "undefined" or "null", makes execute resolve that instead of a result
	// (feature toolResolvesNothing).
	Resolves string
	// OnAbort, when set, makes the tool honour abort: when the run is aborted while it runs, it
	// settles at once with this reaction. Nil ignores abort.
	OnAbort *AbortReaction
}

// Update is one partial result.
type Update struct {
	At     int64
	Result loop.ToolResult
}

// AbortReaction is how an abort-honouring tool settles: Throw, or else Result.
type AbortReaction struct {
	Result loop.ToolResult
	Throw  string
}

// Response is one provider response, streamed the way pi-ai's faux provider streams: a start
// event, then for each content block its start, deltas and end, then done — or error when the
// stop reason is error or aborted.
type Response struct {
	Content []loop.Block
	// StopReason defaults to toolUse when Content has a tool call, else stop.
	StopReason   loop.StopReason
	ErrorMessage string
	Usage        *loop.Usage
	// Delay is the time to the first event; ChunkDelay the time between later events.
	Delay      int64
	ChunkDelay int64
	// DeltaSize splits text, thinking and tool-call arguments into deltas of this many
	// characters; 0 sends each block as one delta.
	DeltaSize int
	// NoStart omits the start event (a provider that fails before streaming).
	NoStart bool
	// NoDone ends the stream without done or error; the final message is its result.
	NoDone bool
	// OpenError makes the stream function itself fail (pi: it throws), failing the run.
	OpenError string
	// StreamError makes the iteration fail after the scripted events (pi: the provider
	// stream throws), failing the run.
	StreamError string
	// IgnoresAbort keeps streaming after an abort; by default the stream ends at once with
	// stopReason aborted.
	IgnoresAbort bool
	// ErrorEvent ends the stream with an error event whatever the stop reason (pi: the hard
	// exit follows the final message's stopReason, not the event type).
	ErrorEvent bool
}

// Hooks says which hooks are installed and what they answer. Steering and follow-up polls are
// installed unless NoSteering / NoFollowUp.
type Hooks struct {
	NoSteering bool
	NoFollowUp bool
	// ConvertToLLM installs convertToLlm answering with the default filter (custom roles
	// dropped); with KeepCustomAsUser, custom messages with text content become user messages.
	ConvertToLLM *ConvertScript
	// TransformContext installs transformContext keeping the last KeepLast messages (0: all).
	TransformContext *TransformScript
	// GetAPIKey installs getApiKey answering Key.
	GetAPIKey       *KeyScript
	PrepareRequest  *Script[PrepareAnswer]
	PrepareNextTurn *Script[PrepareAnswer]
	FinishTurn      *Script[FinishAnswer]
	BeforeToolCall  *ToolScript[BeforeAnswer]
	AfterToolCall   *ToolScript[AfterAnswer]
}

// Script holds a hook's answers by call number (1-based), with a default for the others.
type Script[T any] struct {
	Default T
	ByCall  map[int]T
}

// answer returns the answer for call n.
func (s *Script[T]) answer(n int) T {
	if a, ok := s.ByCall[n]; ok {
		return a
	}
	return s.Default
}

// ToolScript holds a tool hook's answers by tool-call id, with a default.
type ToolScript[T any] struct {
	Default    T
	ByToolCall map[string]T
}

func (s *ToolScript[T]) answer(id string) T {
	if a, ok := s.ByToolCall[id]; ok {
		return a
	}
	return s.Default
}

// ConvertScript scripts convertToLlm.
type ConvertScript struct {
	KeepCustomAsUser bool
	Throw            string
	// Abort aborts the run before each call returns (feature abortInHook).
	Abort bool
	// Wait is how long each call takes to return (feature waitingHooks).
	Wait
}

// TransformScript scripts transformContext.
type TransformScript struct {
	KeepLast int
	Throw    string
	// Abort aborts the run before each call returns (feature abortInHook).
	Abort bool
	// Wait is how long each call takes to return (feature waitingHooks).
	Wait
}

// KeyScript scripts getApiKey.
type KeyScript struct {
	Key string
	// Abort aborts the run before each call returns (feature abortInHook).
	Abort bool
	// Wait is how long each call takes to return (feature waitingHooks).
	Wait
}

// ContextChange replaces parts of the context from a hook.
type ContextChange struct {
	// Tools, when non-nil, replaces the context's tools by these names.
	Tools []string
	// KeepLast, when > 0, replaces the messages by the last KeepLast of them.
	KeepLast int
}

// PrepareAnswer is the scripted answer of prepareRequest and prepareNextTurn; the zero value
// answers nothing.
type PrepareAnswer struct {
	Context       *ContextChange
	Model         *loop.Model
	ThinkingLevel loop.ThinkingLevel
	// Messages are prepared messages for prepareNextTurn. prepareRequest cannot add
	// messages: answered there, a loop must ignore them.
	Messages []loop.Message
	Throw    string
	// Abort aborts the run before the hook returns (feature abortInHook).
	Abort bool
	// Wait is how long each call takes to return (feature waitingHooks).
	Wait
}

// FinishAnswer is finishTurn's scripted answer.
type FinishAnswer struct {
	Action loop.TurnDecision
	Throw  string
	// Abort aborts the run before the hook returns (feature abortInHook).
	Abort bool
	// Wait is how long each call takes to return (feature waitingHooks).
	Wait
}

// BeforeAnswer is beforeToolCall's scripted answer.
type BeforeAnswer struct {
	Block     bool
	Reason    string
	Terminate bool
	// SetArgs sets these keys on the validated arguments (they reach execute unvalidated).
	SetArgs map[string]any
	Throw   string
	// Abort aborts the run before the hook returns (feature abortInHook).
	Abort bool
	// Wait is how long each call takes to return (feature waitingHooks).
	Wait
}

// AfterAnswer is afterToolCall's scripted answer; nil fields keep the executed result's.
type AfterAnswer struct {
	Content           []loop.Block
	Details           any
	StructuredContent any
	IsError           *bool
	Terminate         *bool
	Usage             *loop.Usage
	Throw             string
	// Abort aborts the run before the hook returns (feature abortInHook).
	Abort bool
	// Wait is how long each call takes to return (feature waitingHooks).
	Wait
}

// Wait is how long a hook takes to return its answer (feature waitingHooks). The zero value
// returns at once.
type Wait struct {
	// Delay makes the hook return its answer this many virtual ms after the call, whatever
	// happens meanwhile (it ignores the abort signal), unless UntilAbort.
	Delay int64
	// UntilAbort makes the hook return its answer once the abort signal it was given fires
	// (at once when it has fired already), or after Delay when that comes first (never, with
	// no Delay, when it was given no signal).
	UntilAbort bool
}

// waits reports whether the hook does not return at once.
func (w Wait) waits() bool { return w.Delay > 0 || w.UntilAbort }

// UserAction is something the simulated user does: at a time, or when a trigger fires.
type UserAction struct {
	At *int64
	On *Trigger
	// Steer and FollowUp enqueue messages on those queues.
	Steer    []loop.Message
	FollowUp []loop.Message
	// Abort aborts the run (delivered once the implementation is idle).
	Abort bool
	// Op is an operation on the Agent (Agent scenarios only); in an Agent scenario Steer,
	// FollowUp and Abort are operations too, one per message.
	Op *AgentOp
}

// AgentScript configures the Agent of an Agent scenario (the queue modes are the
// scenario's SteeringMode and FollowUpMode).
type AgentScript struct {
	// SystemPrompt is the Agent's initial system prompt (pi: initialState.systemPrompt).
	SystemPrompt string
	// DefaultModel gives the Agent no model: the setup leaves it out and the Agent takes its
	// own default, pi's DEFAULT_MODEL (feature defaultModel). The scenario's Model is unused.
	DefaultModel bool
	// Barriers hold the implementation's event listener until released.
	Barriers []Barrier
}

// Barrier holds the Agent's listener at the Nth (default 1) event of type Event until an
// AgentOp with Op "release" names it (or, with UntilAbort, its signal fires): pi awaits
// listeners, so the run is held there.
type Barrier struct {
	ID    string
	Event loop.EventType
	Nth   int
	// UntilAbort also releases the listener once the abort signal it was given fires (pi: a
	// listener's second argument; feature waitingHooks).
	UntilAbort bool
}

// AgentOp is one operation of the simulated user on the Agent. Which fields count depends on
// Op: Messages or Text for prompt, Message for steer and followUp, Mode for the mode setters,
// Queue ("steering", "followUp", "all") for clearQueues, Tools for setTools, Barrier for
// release.
type AgentOp struct {
	Op       string
	Messages []loop.Message
	Text     string
	Message  loop.Message
	Mode     loop.QueueMode
	Queue    string
	Tools    []string
	Barrier  string
}

// Trigger fires the first time (or the Nth time) something happens.
type Trigger struct {
	// Event is a loop event type; with ToolCallID it must concern that call.
	Event      loop.EventType
	ToolCallID string
	// Request fires when provider request number Request opens.
	Request int
	// Hook fires when that hook is called.
	Hook string
	// Nth is the occurrence to fire on (default 1).
	Nth int
}

// DefaultModel is the model of a scenario that names none.
var DefaultModel = loop.Model{ID: "faux-1", API: "faux", Provider: "faux"}
