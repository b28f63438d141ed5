package loop

import "context"

// Context is the state a run starts from: the transcript and the executable tools. The tools
// the model may call are those the transcript declares; the loop declares the difference
// before each request.
type Context struct {
	Messages []Message
	Tools    []*Tool
}

// TurnDecision is finishTurn's answer.
type TurnDecision string

// The finishTurn answers. The zero value keeps normal scheduling.
const (
	DecisionNone TurnDecision = ""
	// DecisionContinue ensures one more request: satisfied by tool results, steering or
	// follow-up when they ask for one, otherwise one extra context-only request.
	DecisionContinue TurnDecision = "continue"
	// DecisionEnd ends the run right after turn_end, polling no queue.
	DecisionEnd TurnDecision = "end"
)

// TurnContext describes a completed turn (pi's AgentTurnContext).
type TurnContext struct {
	Message     *AssistantMessage
	ToolResults []*ToolResultMessage
	// Context is the context after the turn's messages were appended.
	Context Context
	// NewMessages are the messages the run would return if it ended now.
	NewMessages []Message
}

// TurnUpdate is prepareNextTurn's answer; nil fields keep the current values.
type TurnUpdate struct {
	// Context replaces the context.
	Context *Context
	// Messages are appended before the next request, with their events.
	Messages []Message
	Model    *Model
	// ThinkingLevel replaces the level; ThinkingOff clears it; "" keeps it.
	ThinkingLevel ThinkingLevel
}

// RequestState is what prepareRequest sees before a request.
type RequestState struct {
	Context Context
	Model   Model
	// ThinkingLevel is the level, ThinkingOff when none.
	ThinkingLevel ThinkingLevel
}

// RequestUpdate is prepareRequest's answer; nil fields keep the current values. It cannot add
// messages.
type RequestUpdate struct {
	Context       *Context
	Model         *Model
	ThinkingLevel ThinkingLevel
}

// BeforeToolCallContext is what beforeToolCall sees.
type BeforeToolCallContext struct {
	AssistantMessage *AssistantMessage
	ToolCall         ToolCall
	// Args are the validated arguments; changes made to them reach execute unvalidated.
	Args    map[string]any
	Context Context
}

// BeforeToolCallResult is beforeToolCall's answer.
type BeforeToolCallResult struct {
	// Block prevents execution; the call gets an error result with Reason, or
	// "Tool execution was blocked" when Reason is empty.
	Block  bool
	Reason string
	// Terminate, on a blocked call, takes part in the batch's termination vote.
	Terminate bool
}

// AfterToolCallContext is what afterToolCall sees.
type AfterToolCallContext struct {
	AssistantMessage *AssistantMessage
	ToolCall         ToolCall
	Args             map[string]any
	// Result is the executed result before any override.
	Result ToolResult
	// Nothing is set, and Result zero, when execute resolved undefined or null and the loop
	// behaves as pi before 0.99.1, which handed the hook no result (later releases turned it
	// into an error result first).
	Nothing *Nothing
	IsError bool
	Context Context
}

// AfterToolCallResult overrides an executed result field by field; nil keeps the field.
// Content given without StructuredContent drops the structured content.
type AfterToolCallResult struct {
	Content           []Block
	Details           any
	StructuredContent any
	IsError           *bool
	Usage             *Usage
	Terminate         *bool
}

// Config holds everything a run needs besides its context. Stream is required; every hook is
// optional. A hook that returns an error fails the run (Run returns it and no agent_end is
// emitted), as a throwing hook leaves pi's run unfinished — except beforeToolCall and
// afterToolCall, whose errors become the call's error result.
type Config struct {
	Model Model
	// ThinkingLevel is the requested reasoning level; "" or ThinkingOff for none.
	ThinkingLevel ThinkingLevel
	// APIKey is used when GetAPIKey is nil or answers "".
	APIKey string
	// Stream opens each provider request.
	Stream StreamFunc
	// Runtime supplies time and concurrency; nil means RealRuntime.
	Runtime Runtime
	// OnEvent receives every event, synchronously and in order.
	OnEvent func(Event)
	// ToolExecution is Parallel (default) or Sequential.
	ToolExecution ExecutionMode
	// Behaviour selects the pi release the loop behaves as (BehaviourOf); the zero value is
	// the newest.
	Behaviour Behaviour
	// SessionID is passed to every request (pi: config.sessionId, in the stream function's
	// options); "" for none.
	SessionID string
	// Identity is how requests identify the caller (pi: config.identity). Each request gets
	// DefaultIdentity merged field by field with it (pi 1.4.0 and later; before, it as it is).
	Identity *Identity

	// The hooks' ctx is the run's where pi passes a hook the run's abort signal
	// (transformContext, prepareRequest, finishTurn, beforeToolCall, afterToolCall); the
	// others get it without its cancellation (context.WithoutCancel), as pi passes them no
	// signal: a hook that waits for the abort there waits for ever.

	// ConvertToLLM turns the context into what the model understands; nil means
	// DefaultConvertToLLM.
	ConvertToLLM func(ctx context.Context, messages []Message) ([]Message, error)
	// TransformContext rewrites the messages of one request (a view; the context is kept).
	TransformContext func(ctx context.Context, messages []Message) ([]Message, error)
	// GetAPIKey resolves the key for each request.
	GetAPIKey func(ctx context.Context, provider string) (string, error)
	// PrepareRequest runs before every request, the first included.
	PrepareRequest func(ctx context.Context, req RequestState) (*RequestUpdate, error)
	// PrepareNextTurn runs before every turn but the first.
	PrepareNextTurn func(ctx context.Context, turn TurnContext) (*TurnUpdate, error)
	// FinishTurn runs after each turn's tool results, before turn_end.
	FinishTurn func(ctx context.Context, turn TurnContext) (TurnDecision, error)
	// GetSteeringMessages is polled before the first request, after each turn, and before a
	// turn when nothing is pending.
	GetSteeringMessages func(ctx context.Context) ([]Message, error)
	// GetFollowUpMessages is polled once each time the loop would otherwise stop.
	GetFollowUpMessages func(ctx context.Context) ([]Message, error)
	// BeforeToolCall runs after argument validation and may block the call.
	BeforeToolCall func(ctx context.Context, call BeforeToolCallContext) (*BeforeToolCallResult, error)
	// AfterToolCall runs after execution and may override the result.
	AfterToolCall func(ctx context.Context, call AfterToolCallContext) (*AfterToolCallResult, error)
}
