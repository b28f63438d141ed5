package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// The runToolCall entry (PROTOCOL.md §13.7, feature runToolCall): the implementation runs
// each tool call of the transcript's last message, one after the other, through its
// runToolCall (pi 0.99.1 and later), reports each outcome and ends with no new messages.

// EntryRunToolCall is the Setup's entry of a runToolCall scenario.
const EntryRunToolCall = "runToolCall"

// OpRunToolCall is the op of a runToolCall outcome; its id is the tool call's.
const OpRunToolCall = trace.OpRunToolCall

// ToolCallOutcome is the data of a runToolCall outcome notification: pi's
// AgentToolCallOutcome, and the partial results onUpdate received during the call.
type ToolCallOutcome struct {
	ID      string `json:"id"`
	Op      string `json:"op"`
	Outcome string `json:"outcome"`
	// Error is why runToolCall rejected (outcome "refused"; pi never does).
	Error      string            `json:"error,omitempty"`
	ToolCall   *loop.ToolCall    `json:"toolCall,omitempty"`
	Result     *loop.ToolResult  `json:"result,omitempty"`
	IsError    *bool             `json:"isError,omitempty"`
	DurationMs *int64            `json:"durationMs,omitempty"`
	Updates    []loop.ToolResult `json:"updates,omitempty"`
}

// RunToolCallCalls are the tool calls a runToolCall scenario runs: those of the last message
// of its transcript, an assistant message; an error when there are none.
func RunToolCallCalls(messages []loop.Message) (*loop.AssistantMessage, []loop.ToolCall, error) {
	if len(messages) == 0 {
		return nil, nil, errors.New("a runToolCall scenario runs the tool calls of the transcript's last message, and the transcript is empty")
	}
	msg, ok := messages[len(messages)-1].(*loop.AssistantMessage)
	if !ok {
		return nil, nil, fmt.Errorf("a runToolCall scenario runs the tool calls of the transcript's last message, an assistant message; it is a %s message", messages[len(messages)-1].Role())
	}
	calls := loop.ToolCalls(msg.Content)
	if len(calls) == 0 {
		return nil, nil, errors.New("a runToolCall scenario runs the tool calls of the transcript's last message, which has none")
	}
	return msg, calls, nil
}

// startRunToolCall starts a runToolCall session: loop.RunToolCall on each call in order.
func (r *Reference) startRunToolCall(setup Setup) error {
	actx, cfg, _, err := r.build(setup)
	if err != nil {
		return err
	}
	msg, calls, err := RunToolCallCalls(actx.Messages)
	if err != nil {
		return err
	}
	var all []*loop.Tool
	for _, ts := range setup.Tools {
		all = append(all, r.tool(ts))
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.sched.Go(func() {
		for _, call := range calls {
			updates := []loop.ToolResult{}
			o := loop.RunToolCall(ctx, call, loop.RunToolCallOptions{
				Tools: all, AssistantMessage: msg, Context: actx,
				BeforeToolCall: cfg.BeforeToolCall, AfterToolCall: cfg.AfterToolCall,
				OnUpdate: func(p loop.ToolResult) { updates = append(updates, p) },
				Runtime:  r, Behaviour: r.behaviour,
			})
			r.notify(NotifyOutcome, ToolCallOutcome{ID: call.ID, Op: OpRunToolCall, Outcome: trace.OutcomeResolved,
				ToolCall: &o.ToolCall, Result: &o.Result, IsError: &o.IsError, DurationMs: o.DurationMs, Updates: updates})
		}
		r.notify(NotifyEnd, map[string]any{"messages": []loop.Message{}})
	})
	r.sched.RunUntilIdle()
	return nil
}

// toolCallOutcome records the outcome of a runToolCall scenario's call: one per call, in the
// order of the calls, each before the end.
func (w *world) toolCallOutcome(id string) {
	if !w.sc.RunToolCall {
		w.fail("protocol", fmt.Sprintf("a runToolCall outcome (of tool call %q) in a scenario that is not a runToolCall scenario", id))
		return
	}
	_, calls, _ := RunToolCallCalls(w.sc.Messages)
	n := w.toolCallOutcomes
	w.toolCallOutcomes++
	switch {
	case w.ended:
		w.fail("protocol", fmt.Sprintf("a runToolCall outcome (of tool call %q) after the end", id))
	case n >= len(calls):
		w.fail("protocol", fmt.Sprintf("a runToolCall outcome (of tool call %q) beyond the %d calls", id, len(calls)))
	case calls[n].ID != id:
		w.fail("protocol", fmt.Sprintf("runToolCall outcome %d names tool call %q; the call is %q", n+1, id, calls[n].ID))
	}
}
