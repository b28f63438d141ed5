package example

import (
	"context"
	"encoding/json"

	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/loop"
)

// RunToolCall is pi's runToolCall (PROTOCOL.md §13.7): one tool call through loop.RunToolCall,
// against the setup's tools, with the tool hooks and context Build wires; the call's assistant
// message is the transcript's last. A port without this method lacks the feature.
func (Port) RunToolCall(ctx context.Context, env porttest.Env, raw json.RawMessage, onUpdate func(partial any)) (any, error) {
	actx, cfg, tools := Build(env)
	var call loop.ToolCall
	if err := json.Unmarshal(raw, &call); err != nil {
		return nil, err
	}
	var names []string
	for _, t := range env.Setup().Tools {
		names = append(names, t.Name)
	}
	var msg *loop.AssistantMessage
	if n := len(actx.Messages); n > 0 {
		msg, _ = actx.Messages[n-1].(*loop.AssistantMessage)
	}
	o := loop.RunToolCall(ctx, call, loop.RunToolCallOptions{
		Tools: tools(names), AssistantMessage: msg, Context: actx,
		BeforeToolCall: cfg.BeforeToolCall, AfterToolCall: cfg.AfterToolCall,
		OnUpdate: func(p loop.ToolResult) { onUpdate(p) }, Runtime: cfg.Runtime,
	})
	// pi's AgentToolCallOutcome in its JSON shape.
	return struct {
		ToolCall   loop.ToolCall   `json:"toolCall"`
		Result     loop.ToolResult `json:"result"`
		IsError    bool            `json:"isError"`
		DurationMs *int64          `json:"durationMs,omitempty"`
	}{o.ToolCall, o.Result, o.IsError, o.DurationMs}, nil
}
