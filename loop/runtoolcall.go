package loop

import "context"

// RunToolCallOptions is what RunToolCall needs besides the call (pi's RunToolCallOptions).
type RunToolCallOptions struct {
	// Tools are the tools the call resolves against (not Context's).
	Tools []*Tool
	// AssistantMessage is passed to the hooks as the message that issued the call.
	AssistantMessage *AssistantMessage
	// Context is passed to the hooks as the agent's context.
	Context Context
	// BeforeToolCall and AfterToolCall are the hooks, as in Config; nil for none.
	BeforeToolCall func(ctx context.Context, call BeforeToolCallContext) (*BeforeToolCallResult, error)
	AfterToolCall  func(ctx context.Context, call AfterToolCallContext) (*AfterToolCallResult, error)
	// OnUpdate receives the partial results execute reports before it returns; nil drops them.
	OnUpdate func(partial ToolResult)
	// Runtime supplies the monotonic clock of durationMs; nil means RealRuntime.
	Runtime Runtime
	// Behaviour selects the pi release the call behaves as (BehaviourOf); zero is the newest.
	Behaviour Behaviour
}

// ToolCallOutcome is one finalised tool call (pi's AgentToolCallOutcome).
type ToolCallOutcome struct {
	ToolCall ToolCall
	Result   ToolResult
	IsError  bool
	// DurationMs is execute's duration, for a call that executed (pi 1.3.0 and later).
	DurationMs *int64
}

// singleCall is what a run made by RunToolCall does differently from a loop's run.
type singleCall struct {
	tools    []*Tool
	onUpdate func(ToolResult)
}

// RunToolCall is pi's runToolCall (exported from 0.99.1): one tool call through the steps of a
// model-issued call — abort check, lookup, prepareArguments, validation, beforeToolCall,
// execution, afterToolCall — with no events and no messages. It never fails: an aborted ctx
// (pi: signal), an unknown tool, invalid arguments, a block and a throw come back as an error
// outcome.
func RunToolCall(ctx context.Context, call ToolCall, opts RunToolCallOptions) ToolCallOutcome {
	r := newRun(opts.Context, Config{
		Runtime: opts.Runtime, Behaviour: opts.Behaviour,
		BeforeToolCall: opts.BeforeToolCall, AfterToolCall: opts.AfterToolCall,
	})
	r.single = &singleCall{tools: opts.Tools, onUpdate: opts.OnUpdate}
	var o outcome
	if p := r.prepare(ctx, opts.AssistantMessage, call); p.immediate != nil {
		o = *p.immediate
	} else {
		o = r.finalize(ctx, opts.AssistantMessage, call, p, r.execute(ctx, call, p))
	}
	return ToolCallOutcome{ToolCall: o.call, Result: o.result, IsError: o.isError, DurationMs: o.durationMs}
}
