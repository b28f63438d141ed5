package piwire_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/piwire"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/loop"
)

// ownTypesPort is the example loop with every hook called through PortHooks on types a port
// might have of its own: messages kept as their JSON, tools as pointers, a model of its own.
// It passes what the example passes only if PortHooks writes pi's payloads and reads its
// answers as piwire.Hooks does.
type ownTypesPort struct{}

type (
	rawCtx    = piwire.PortContext[json.RawMessage, *loop.Tool]
	rawTurn   = piwire.PortTurn[json.RawMessage, *loop.Tool]
	rawUpdate = piwire.PortUpdate[json.RawMessage, *loop.Tool, Model]
)

func (ownTypesPort) Hello() porttest.Hello {
	h := example.Port{}.Hello()
	h.Name = "port-hooks"
	return h
}

func (ownTypesPort) Run(ctx context.Context, env porttest.Env) (any, error) {
	actx, cfg, tools := example.Build(env)
	s := env.Setup()
	var names []string
	for _, ts := range s.Tools {
		names = append(names, ts.Name)
	}
	h := piwire.PortHooks[json.RawMessage, *loop.Tool, Model]{Env: env, Tools: tools(names), Name: func(t *loop.Tool) string { return t.Name }}
	raws := func(msgs []loop.Message) (out []json.RawMessage) {
		for _, m := range msgs {
			raw, _ := json.Marshal(m)
			out = append(out, raw)
		}
		return out
	}
	wire := func(c loop.Context) rawCtx { return rawCtx{Messages: raws(c.Messages), Tools: c.Tools} }
	turn := func(t loop.TurnContext) rawTurn {
		return rawTurn{Message: t.Message, ToolResults: t.ToolResults, Context: wire(t.Context), NewMessages: raws(t.NewMessages)}
	}
	messages := func(raw []json.RawMessage, err error) ([]loop.Message, error) {
		if err != nil {
			return nil, err
		}
		return piwire.DecodeMessages(raw)
	}
	unwire := func(u rawUpdate) (c *loop.Context, m *loop.Model, level loop.ThinkingLevel, err error) {
		if u.Context != nil {
			msgs, err := piwire.DecodeMessages(u.Context.Messages)
			c = &loop.Context{Messages: msgs, Tools: u.Context.Tools}
			if err != nil {
				return nil, nil, "", err
			}
		}
		if u.Model != nil {
			m = &loop.Model{ID: u.Model.ID, API: u.Model.API, Provider: u.Model.Provider}
		}
		if u.ThinkingLevel != nil {
			level = loop.ThinkingLevel(*u.ThinkingLevel)
		}
		return c, m, level, nil
	}
	cfg.ConvertToLLM = porttest.Installed(env, "convertToLlm", func(ctx context.Context, msgs []loop.Message) ([]loop.Message, error) {
		return messages(h.ConvertToLLM(ctx, raws(msgs)))
	})
	cfg.TransformContext = porttest.Installed(env, "transformContext", func(ctx context.Context, msgs []loop.Message) ([]loop.Message, error) {
		return messages(h.TransformContext(ctx, raws(msgs)))
	})
	cfg.GetSteeringMessages = porttest.Installed(env, "getSteeringMessages", func(ctx context.Context) ([]loop.Message, error) {
		return messages(h.GetSteeringMessages(ctx))
	})
	cfg.GetFollowUpMessages = porttest.Installed(env, "getFollowUpMessages", func(ctx context.Context) ([]loop.Message, error) {
		return messages(h.GetFollowUpMessages(ctx))
	})
	cfg.GetAPIKey = porttest.Installed(env, "getApiKey", h.GetAPIKey)
	cfg.PrepareRequest = porttest.Installed(env, "prepareRequest", func(ctx context.Context, r loop.RequestState) (*loop.RequestUpdate, error) {
		u, err := h.PrepareRequest(ctx, wire(r.Context), r.Model, string(r.ThinkingLevel))
		if err != nil {
			return nil, err
		}
		c, m, level, err := unwire(u)
		return &loop.RequestUpdate{Context: c, Model: m, ThinkingLevel: level}, err
	})
	cfg.PrepareNextTurn = porttest.Installed(env, "prepareNextTurn", func(ctx context.Context, t loop.TurnContext) (*loop.TurnUpdate, error) {
		u, err := h.PrepareNextTurn(ctx, turn(t))
		if err != nil {
			return nil, err
		}
		c, m, level, err := unwire(u)
		add, err2 := piwire.DecodeMessages(u.Messages)
		if err == nil {
			err = err2
		}
		return &loop.TurnUpdate{Context: c, Messages: add, Model: m, ThinkingLevel: level}, err
	})
	cfg.FinishTurn = porttest.Installed(env, "finishTurn", func(ctx context.Context, t loop.TurnContext) (loop.TurnDecision, error) {
		action, err := h.FinishTurn(ctx, turn(t))
		return loop.TurnDecision(action), err
	})
	cfg.BeforeToolCall = porttest.Installed(env, "beforeToolCall", func(ctx context.Context, c loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
		if c.Args == nil {
			c.Args = map[string]any{}
		}
		var a piwire.BeforeToolCallAnswer
		err := h.BeforeToolCall(ctx, piwire.PortToolCall[json.RawMessage, *loop.Tool]{AssistantMessage: c.AssistantMessage,
			ToolCall: c.ToolCall, Args: c.Args, Context: wire(c.Context)}, &a)
		return &loop.BeforeToolCallResult{Block: a.Block, Reason: a.Reason, Terminate: a.Terminate}, err
	})
	cfg.AfterToolCall = porttest.Installed(env, "afterToolCall", func(ctx context.Context, c loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
		call := piwire.PortToolCall[json.RawMessage, *loop.Tool]{AssistantMessage: c.AssistantMessage, ToolCall: c.ToolCall,
			Args: c.Args, Result: c.Result, IsError: c.IsError, Context: wire(c.Context)}
		if c.Args == nil {
			call.Args = map[string]any{}
		}
		if c.Nothing != nil {
			call.Result = nil
			if c.Nothing.Null {
				call.Result = json.RawMessage("null")
			}
		}
		var a piwire.AfterToolCallAnswer
		if err := h.AfterToolCall(ctx, call, &a); err != nil {
			return nil, err
		}
		return &loop.AfterToolCallResult{Content: a.Content, Details: value(a.Details), StructuredContent: value(a.StructuredContent),
			IsError: a.IsError, Terminate: a.Terminate, Usage: a.Usage}, nil
	})
	if s.Entry == "continue" {
		return loop.Continue(ctx, actx, cfg)
	}
	prompts, err := piwire.DecodeMessages(s.Prompts)
	if err != nil {
		return nil, err
	}
	return loop.Run(ctx, prompts, actx, cfg)
}

// value is raw JSON decoded; absent and null are nil.
func value(raw json.RawMessage) any {
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

func TestPortHooksPassTheSuiteOnAPortsOwnTypes(t *testing.T) {
	var r porttest.Report
	t.Run("suite", func(t *testing.T) { porttest.Test(t, ownTypesPort{}, porttest.Collect(&r)) })
	if r.Passed == 0 || r.Failed != 0 {
		t.Errorf("the example loop with its hooks through PortHooks: %d passed, %d failed; want all passing", r.Passed, r.Failed)
	}
}
