package loop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/turnstile-dev/turnstile/loop/argschema"
)

// TruncatedToolCallText is the error text of every call of a response that hit the output
// token limit (stopReason "length"); such calls never run. The name is written verbatim
// between double quotes, as pi's template string does (no Go quoting or escaping).
func TruncatedToolCallText(toolName string) string {
	return `Tool call "` + toolName + `" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.`
}

// Texts of error results, as pi writes them.
const (
	abortedText = "Operation aborted"
	blockedText = "Tool execution was blocked"
)

// toolBatch is the outcome of one response's tool calls.
type toolBatch struct {
	messages  []*ToolResultMessage
	terminate bool
}

// outcome is one finalised call (pi's AgentToolCallOutcome).
type outcome struct {
	call       ToolCall
	result     ToolResult
	isError    bool
	durationMs *int64
	// nothing is set when the call ended with no result at all (pi before 0.99.1).
	nothing *Nothing
}

// failure is the run failure of an outcome with no result, which pi before 0.99.1 could not
// turn into a tool-result message; nil for any other outcome.
func (o outcome) failure() error {
	if o.nothing == nil {
		return nil
	}
	return fmt.Errorf("tool %s: %w", o.call.ID, errors.New(o.nothing.readError("content")))
}

// preparation is a call ready to execute, or its immediate result when it cannot run.
type preparation struct {
	immediate *outcome
	tool      *Tool
	args      map[string]any
}

// failTruncated gives every call of a length-stopped response the truncation error, in order,
// running nothing.
func (r *run) failTruncated(calls []ToolCall) toolBatch {
	var batch toolBatch
	for _, call := range calls {
		r.emitStart(call)
		o := outcome{call: call, result: errorResult(TruncatedToolCallText(call.Name)), isError: true}
		r.emitEnd(o)
		batch.messages = append(batch.messages, r.emitResultMessage(o))
	}
	return batch
}

// executeToolCalls runs a batch. An error is a run failure: a call ended with no result
// (pi before 0.99.1).
func (r *run) executeToolCalls(ctx context.Context, msg *AssistantMessage, calls []ToolCall) (toolBatch, error) {
	sequential := r.cfg.ToolExecution == Sequential
	for _, call := range calls {
		if t := r.findTool(call.Name); t != nil && t.ExecutionMode == Sequential {
			sequential = true
		}
	}
	var outcomes []outcome
	var batch toolBatch
	var err error
	if sequential {
		outcomes, batch.messages, err = r.executeSequential(ctx, msg, calls)
	} else {
		outcomes, batch.messages, err = r.executeParallel(ctx, msg, calls)
	}
	if err != nil {
		return batch, err
	}
	batch.terminate = len(outcomes) > 0
	for _, o := range outcomes {
		if !o.result.Terminate {
			batch.terminate = false
		}
	}
	return batch, nil
}

// executeSequential prepares, executes and finalises each call before the next one starts.
func (r *run) executeSequential(ctx context.Context, msg *AssistantMessage, calls []ToolCall) ([]outcome, []*ToolResultMessage, error) {
	var outcomes []outcome
	var messages []*ToolResultMessage
	for _, call := range calls {
		r.emitStart(call)
		p := r.prepare(ctx, msg, call)
		var o outcome
		if p.immediate != nil {
			o = *p.immediate
		} else {
			o = r.finalize(ctx, msg, call, p, r.execute(ctx, call, p))
		}
		r.emitEnd(o)
		if err := o.failure(); err != nil {
			return outcomes, messages, err
		}
		messages = append(messages, r.emitResultMessage(o))
		outcomes = append(outcomes, o)
		if ctx.Err() != nil && !r.cfg.Behaviour.Has(AbortCompletesBatch) {
			break
		}
	}
	return outcomes, messages, nil
}

// executeParallel prepares the calls in source order, emitting the end of those that cannot
// run at once, then executes the rest concurrently: ends follow completion order, result
// messages source order.
func (r *run) executeParallel(ctx context.Context, msg *AssistantMessage, calls []ToolCall) ([]outcome, []*ToolResultMessage, error) {
	outcomes := make([]outcome, len(calls))
	var tasks []func()
	for i, call := range calls {
		r.emitStart(call)
		p := r.prepare(ctx, msg, call)
		if p.immediate != nil {
			outcomes[i] = *p.immediate
			r.emitEnd(outcomes[i])
		} else {
			tasks = append(tasks, func() {
				if ctx.Err() != nil {
					outcomes[i] = outcome{call: call, result: errorResult(abortedText), isError: true}
				} else {
					outcomes[i] = r.finalize(ctx, msg, call, p, r.execute(ctx, call, p))
				}
				r.emitEnd(outcomes[i])
			})
		}
		if ctx.Err() != nil && !r.cfg.Behaviour.Has(AbortCompletesBatch) {
			outcomes = outcomes[:i+1] // before 1.6.0 the calls after it never start
			break
		}
	}
	if len(tasks) > 0 {
		r.rt.Parallel(tasks)
	}
	messages := make([]*ToolResultMessage, 0, len(outcomes))
	for _, o := range outcomes {
		if err := o.failure(); err != nil {
			return outcomes, messages, err
		}
		messages = append(messages, r.emitResultMessage(o))
	}
	return outcomes, messages, nil
}

func (r *run) findTool(name string) *Tool {
	tools := r.context.Tools
	if r.single != nil {
		tools = r.single.tools
	}
	for _, t := range tools {
		if t != nil && t.Name == name {
			return t
		}
	}
	return nil
}

// prepare is pi's prepareToolCall: abort check, lookup, prepareArguments, validation and
// beforeToolCall.
func (r *run) prepare(ctx context.Context, msg *AssistantMessage, call ToolCall) preparation {
	immediate := func(text string, terminate bool) preparation {
		res := errorResult(text)
		res.Terminate = terminate
		return preparation{immediate: &outcome{call: call, result: res, isError: true}}
	}
	if ctx.Err() != nil && r.cfg.Behaviour.Has(AbortFirst) {
		return immediate(abortedText, false)
	}
	tool := r.findTool(call.Name)
	if tool == nil {
		return immediate(fmt.Sprintf("Tool %s not found", call.Name), false)
	}
	args, err := r.validate(tool, call)
	if err != nil {
		return immediate(err.Error(), false)
	}
	if r.cfg.BeforeToolCall != nil {
		res, err := callHook(func() (*BeforeToolCallResult, error) {
			return r.cfg.BeforeToolCall(ctx, BeforeToolCallContext{AssistantMessage: msg, ToolCall: call, Args: args, Context: r.snapshot()})
		})
		if err != nil {
			return immediate(err.Error(), false)
		}
		if ctx.Err() != nil {
			return immediate(abortedText, false)
		}
		if res != nil && res.Block {
			reason := res.Reason
			if reason == "" {
				reason = blockedText
			}
			return immediate(reason, res.Terminate)
		}
	}
	if ctx.Err() != nil && !r.cfg.Behaviour.Has(AbortFirst) {
		return immediate(abortedText, false) // before 1.6.0 the abort was checked last
	}
	return preparation{tool: tool, args: args}
}

// validate runs prepareArguments and schema validation, returning the coerced arguments.
func (r *run) validate(tool *Tool, call ToolCall) (map[string]any, error) {
	raw := call.Arguments
	if tool.PrepareArguments != nil {
		prepared, err := callHook(func() (map[string]any, error) { return tool.PrepareArguments(raw), nil })
		if err != nil {
			return nil, err
		}
		raw = prepared
	}
	if call.ArgumentsError != "" && r.cfg.Behaviour.Has(ArgumentsError) {
		return nil, fmt.Errorf(`Invalid arguments for tool "%s": %s`, call.Name, call.ArgumentsError)
	}
	v, err := r.validators.get(tool)
	if err != nil {
		return nil, err
	}
	value, errs := v.Parse(nonNilArgs(raw))
	if len(errs) > 0 {
		return nil, errors.New(argschema.Message(call.Name, errs, nonNilArgs(raw)))
	}
	args, ok := value.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`Validation failed for tool "%s": arguments are not an object`, call.Name)
	}
	return args, nil
}

// execution is what execute produced, before afterToolCall.
type execution struct {
	result     ToolResult
	isError    bool
	durationMs int64
	nothing    *Nothing
}

// execute is pi's executePreparedToolCall: updates are emitted until execute returns and
// dropped after.
func (r *run) execute(ctx context.Context, call ToolCall, p preparation) execution {
	var mu sync.Mutex
	accepting := true
	onUpdate := func(partial ToolResult) {
		mu.Lock()
		defer mu.Unlock()
		if !accepting {
			return
		}
		if r.single != nil {
			if r.single.onUpdate != nil {
				r.single.onUpdate(partial)
			}
			return
		}
		r.emit(Event{Type: ToolExecutionUpdate, ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, PartialResult: &partial})
	}
	started := r.rt.Monotonic()
	var (
		res ToolResult
		err error
	)
	if p.tool.Execute == nil {
		err = fmt.Errorf("tool %s has no Execute function", p.tool.Name)
	} else {
		res, err = callHook(func() (ToolResult, error) { return p.tool.Execute(ctx, call.ID, p.args, onUpdate) })
	}
	elapsed := r.rt.Monotonic() - started
	durationMs := int64(math.Round(float64(elapsed.Nanoseconds()) / 1e6))
	mu.Lock()
	accepting = false
	mu.Unlock()
	var nothing Nothing
	switch {
	case errors.As(err, &nothing) && r.cfg.Behaviour.Has(ToolResultNothing):
		// pi reads result.isError inside execute's try: the TypeError is the call's error.
		return execution{result: errorResult(nothing.readError("isError")), isError: true, durationMs: durationMs}
	case errors.As(err, &nothing):
		return execution{nothing: &nothing, durationMs: durationMs}
	case err != nil:
		return execution{result: errorResult(err.Error()), isError: true, durationMs: durationMs}
	}
	return execution{result: res, isError: res.IsError && r.cfg.Behaviour.Has(ToolResultIsError), durationMs: durationMs}
}

// finalize is pi's finalizeExecutedToolCall: afterToolCall overrides field by field.
func (r *run) finalize(ctx context.Context, msg *AssistantMessage, call ToolCall, p preparation, ex execution) outcome {
	res, isError, nothing := ex.result, ex.isError, ex.nothing
	if r.cfg.AfterToolCall != nil {
		after, err := callHook(func() (*AfterToolCallResult, error) {
			return r.cfg.AfterToolCall(ctx, AfterToolCallContext{AssistantMessage: msg, ToolCall: call, Args: p.args, Result: res, Nothing: nothing, IsError: isError, Context: r.snapshot()})
		})
		switch {
		case err != nil:
			res, isError, nothing = errorResult(err.Error()), true, nil
		case after != nil && nothing != nil && missingOverride(after) != "":
			// pi before 0.99.1 spread the missing result: reading a field the answer leaves
			// out throws, and the throw is the call's error.
			res, isError, nothing = errorResult(nothing.readError(missingOverride(after))), true, nil
		case after != nil:
			nothing = nil
			structured := after.StructuredContent
			if structured == nil && after.Content == nil || !r.cfg.Behaviour.Has(AfterToolCallStructuredContent) {
				structured = res.StructuredContent
			}
			if after.Content != nil {
				res.Content = after.Content
			}
			if after.Details != nil {
				res.Details = after.Details
			}
			if after.Usage != nil {
				res.Usage = after.Usage
			}
			if after.Terminate != nil {
				res.Terminate, res.TerminateSet = *after.Terminate, true
			}
			res.StructuredContent = structured
			if after.IsError != nil {
				isError = *after.IsError
			}
		}
	}
	o := outcome{call: call, result: res, isError: isError, nothing: nothing}
	if r.cfg.Behaviour.Has(DurationMs) {
		d := ex.durationMs
		o.durationMs = &d
	}
	return o
}

// missingOverride is the first result field an afterToolCall answer leaves out, in the order
// pi reads them (content, details, usage, terminate); "" when it gives all four.
func missingOverride(a *AfterToolCallResult) string {
	switch {
	case a.Content == nil:
		return "content"
	case a.Details == nil:
		return "details"
	case a.Usage == nil:
		return "usage"
	case a.Terminate == nil:
		return "terminate"
	}
	return ""
}

// callHook calls f, turning a panic into an error the way a throw becomes a rejected promise.
func callHook[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	return f()
}

func (r *run) emitStart(call ToolCall) {
	r.emit(Event{Type: ToolExecutionStart, ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments})
}

func (r *run) emitEnd(o outcome) {
	res := &o.result
	if o.nothing != nil {
		res = nil
	}
	r.emit(Event{Type: ToolExecutionEnd, ToolCallID: o.call.ID, ToolName: o.call.Name, Result: res,
		ResultUndefined: o.nothing != nil && !o.nothing.Null, IsError: o.isError, DurationMs: o.durationMs})
}

// emitResultMessage builds the call's tool-result message, stamped now, and emits it.
func (r *run) emitResultMessage(o outcome) *ToolResultMessage {
	m := toolResultMessage(o, r.rt.Now())
	r.emit(Event{Type: MessageStart, Message: m})
	r.emit(Event{Type: MessageEnd, Message: m})
	return m
}

func toolResultMessage(o outcome, now int64) *ToolResultMessage {
	content := o.result.Content
	if content == nil {
		content = []Block{}
	}
	return &ToolResultMessage{
		ToolCallID: o.call.ID,
		ToolName:   o.call.Name,
		Content:    content,
		Details:    o.result.Details,
		Usage:      o.result.Usage,
		IsError:    o.isError,
		DurationMs: o.durationMs,
		Timestamp:  now,
	}
}

// validatorCache compiles each tool's schema once per run.
type validatorCache struct {
	mu    sync.Mutex
	byKey map[*Tool]*argschema.Validator
}

func (c *validatorCache) get(t *Tool) (*argschema.Validator, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.byKey[t]; ok {
		return v, nil
	}
	var schema any = t.Parameters
	if t.Parameters == nil {
		schema = map[string]any{}
	}
	v, err := argschema.Compile(schema)
	if err != nil {
		return nil, err
	}
	if c.byKey == nil {
		c.byKey = map[*Tool]*argschema.Validator{}
	}
	c.byKey[t] = v
	return v, nil
}
