package porttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// toolCallRunner is a Port with pi's runToolCall (PROTOCOL.md §13.7, feature runToolCall), as
// Port's doc describes it. It is checked, not exported, so that go doc stays one screen.
type toolCallRunner interface {
	RunToolCall(ctx context.Context, env Env, toolCall json.RawMessage, onUpdate func(partial any)) (outcome any, err error)
}

// toolCallOutcome is the data of a runToolCall outcome notification (sim.ToolCallOutcome on
// the wire): pi's AgentToolCallOutcome as the port wrote it, and the updates onUpdate got.
type toolCallOutcome struct {
	ID         string            `json:"id"`
	Op         string            `json:"op"`
	Outcome    string            `json:"outcome"`
	Error      string            `json:"error,omitempty"`
	ToolCall   json.RawMessage   `json:"toolCall,omitempty"`
	Result     json.RawMessage   `json:"result,omitempty"`
	IsError    *bool             `json:"isError,omitempty"`
	DurationMs json.RawMessage   `json:"durationMs,omitempty"`
	Updates    []json.RawMessage `json:"updates,omitempty"`
}

// runToolCallCalls are the tool calls a runToolCall session runs, as the setup writes them:
// those of the transcript's last message, an assistant message.
func runToolCallCalls(messages []json.RawMessage) ([]json.RawMessage, error) {
	if len(messages) == 0 {
		return nil, errors.New("a runToolCall session runs the tool calls of the transcript's last message, and the transcript is empty")
	}
	var last struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(messages[len(messages)-1], &last); err != nil || last.Role != "assistant" {
		return nil, errors.New("a runToolCall session runs the tool calls of the transcript's last message, which is not an assistant message")
	}
	var calls []json.RawMessage
	for _, b := range last.Content {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &head) == nil && head.Type == "toolCall" {
			calls = append(calls, b)
		}
	}
	if len(calls) == 0 {
		return nil, errors.New("a runToolCall session runs the tool calls of the transcript's last message, which has none")
	}
	return calls, nil
}

// startRunToolCall starts a runToolCall session: each call through the port's RunToolCall,
// one after the other, each outcome notified, then the end with no new messages.
func (p *inProcess) startRunToolCall(ctx context.Context) error {
	runner, ok := p.port.(toolCallRunner)
	if !ok {
		return errors.New("a runToolCall session, but the port has no RunToolCall method (its hello lacks runToolCall)")
	}
	calls, err := runToolCallCalls(p.setup.Messages)
	if err != nil {
		return err
	}
	p.idle.add(1)
	go func() {
		defer p.idle.add(-1)
		for _, call := range calls {
			o := p.runToolCall(ctx, runner, call)
			p.gate.enter()
			p.notify(sim.NotifyOutcome, o)
		}
		p.gate.enter()
		p.notify(sim.NotifyEnd, map[string]any{"messages": []any{}})
	}()
	return nil
}

// runToolCall runs one call through the port and returns its outcome: resolved with the
// port's outcome, or refused with its error (or panic, also a problem of the scenario).
func (p *inProcess) runToolCall(ctx context.Context, runner toolCallRunner, call json.RawMessage) (o toolCallOutcome) {
	var head struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(call, &head)
	o = toolCallOutcome{ID: head.ID, Op: trace.OpRunToolCall, Outcome: trace.OutcomeResolved}
	refuse := func(err error) toolCallOutcome {
		return toolCallOutcome{ID: o.ID, Op: o.Op, Outcome: trace.OutcomeRefused, Error: err.Error()}
	}
	defer func() {
		if r := recover(); r != nil {
			p.problem(fmt.Sprintf("the port panicked in RunToolCall: %v\n%s", r, debug.Stack()))
			o = refuse(fmt.Errorf("panic: %v", r))
		}
	}()
	out, err := runner.RunToolCall(ctx, p, call, func(partial any) {
		data, err := json.Marshal(partial)
		if err != nil {
			p.problem(fmt.Sprintf("the port's RunToolCall reported an update that cannot be encoded as JSON (%T): %v", partial, err))
			return
		}
		o.Updates = append(o.Updates, data)
	})
	if err != nil {
		for errors.Unwrap(err) != nil {
			err = errors.Unwrap(err) // as a run's error: what is compared is the innermost
		}
		return refuse(err)
	}
	data, err := json.Marshal(out)
	if err == nil {
		var fields struct {
			ToolCall   json.RawMessage `json:"toolCall"`
			Result     json.RawMessage `json:"result"`
			IsError    *bool           `json:"isError"`
			DurationMs json.RawMessage `json:"durationMs"`
		}
		if err = json.Unmarshal(data, &fields); err == nil {
			o.ToolCall, o.Result, o.IsError = fields.ToolCall, fields.Result, fields.IsError
			if string(fields.DurationMs) != "null" {
				o.DurationMs = fields.DurationMs
			}
		}
	}
	if err != nil {
		p.problem(fmt.Sprintf("the port's RunToolCall returned an outcome that is not pi's AgentToolCallOutcome in JSON (%T): %v", out, err))
	}
	return o
}
