// Package example is a Go port verified with porttest.Test in under 100 lines of glue.
// The port here is this project's own loop package, standing in for yours: swap loop.Run
// for your loop and wire your hooks the same way. Its types are pi's wire types
// (conformance/piwire), so no conversion is needed; a port on types of its own maps them to
// piwire's at the same places.
package example

import (
	"context"
	"encoding/json"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/piwire"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/loop"
)

// Port runs package loop with every hook wired through the world.
type Port struct{}

// Hello names the port, the hooks it supports and the protocol it speaks (2: stream options,
// tools resolving nothing, aborts during a hook, hooks that take time); it lacks no optional
// feature.
func (Port) Hello() porttest.Hello {
	return porttest.Hello{Name: "example", Tracks: "1.6.0", Protocol: 2, Hooks: porttest.AllHooks}
}

// Run builds the loop from the scenario's setup, every part reaching the world through env.
func (Port) Run(ctx context.Context, env porttest.Env) (any, error) {
	actx, cfg, _ := Build(env)
	s := env.Setup()
	if s.Entry == "continue" {
		return loop.Continue(ctx, actx, cfg)
	}
	return loop.Run(ctx, decode(s.Prompts), actx, cfg)
}

// Decode reads messages of pi's JSON into the loop's.
func Decode(raw []json.RawMessage) ([]loop.Message, error) { return piwire.DecodeMessages(raw) }

// Build makes the loop's context and config from env.Setup(), hooks included, and tools,
// which gives the setup's tools by name.
func Build(env porttest.Env) (actx loop.Context, cfg loop.Config, tools func(names []string) []*loop.Tool) {
	s := env.Setup()
	pool := map[string]*loop.Tool{}
	for _, ts := range s.Tools {
		t := &loop.Tool{Name: ts.Name, Description: ts.Description, Parameters: ts.Parameters,
			ExecutionMode: loop.ExecutionMode(ts.ExecutionMode), Execute: piwire.Execute(env, ts.Name)}
		if ts.PrepareArguments != nil {
			t.PrepareArguments = func(args map[string]any) map[string]any { return ts.Prepare(args) }
		}
		pool[ts.Name] = t
	}
	tools = func(names []string) (out []*loop.Tool) {
		for _, n := range names {
			if t := pool[n]; t != nil {
				out = append(out, t)
			}
		}
		return out
	}
	h := piwire.Hooks{Env: env, Tools: tools}
	cfg = loop.Config{
		Model: loop.Model{ID: s.Model.ID, API: s.Model.API, Provider: s.Model.Provider}, ThinkingLevel: loop.ThinkingLevel(s.ThinkingLevel),
		APIKey: s.APIKey, ToolExecution: loop.ExecutionMode(s.ToolExecution), Runtime: runtime{env},
		SessionID: s.SessionID, Identity: s.Identity, OnEvent: func(e loop.Event) { env.Emit(e) },
		ConvertToLLM:        porttest.Installed(env, "convertToLlm", h.ConvertToLLM),
		TransformContext:    porttest.Installed(env, "transformContext", h.TransformContext),
		GetAPIKey:           porttest.Installed(env, "getApiKey", h.GetAPIKey),
		PrepareRequest:      porttest.Installed(env, "prepareRequest", h.PrepareRequest),
		PrepareNextTurn:     porttest.Installed(env, "prepareNextTurn", h.PrepareNextTurn),
		FinishTurn:          porttest.Installed(env, "finishTurn", h.FinishTurn),
		GetSteeringMessages: porttest.Installed(env, "getSteeringMessages", h.GetSteeringMessages),
		GetFollowUpMessages: porttest.Installed(env, "getFollowUpMessages", h.GetFollowUpMessages),
		BeforeToolCall:      porttest.Installed(env, "beforeToolCall", h.BeforeToolCall),
		AfterToolCall:       porttest.Installed(env, "afterToolCall", h.AfterToolCall),
		Stream: func(_ context.Context, req loop.StreamRequest) (loop.AssistantStream, error) {
			data := piwire.StreamRequest{Model: piwire.WireModel(req.Model), Messages: req.Messages, ThinkingLevel: req.ThinkingLevel, APIKey: req.APIKey}
			if s.StreamOptions {
				data.Options = &piwire.StreamOptions{SessionID: req.SessionID, Identity: req.Identity}
			}
			st, err := env.Stream(data)
			return piwire.Stream(st), err
		},
	}
	return loop.Context{Messages: decode(s.Messages), Tools: tools(s.ActiveTools)}, cfg, tools
}

func decode(raw []json.RawMessage) []loop.Message {
	msgs, _ := piwire.DecodeMessages(raw)
	return msgs
}

// runtime takes time and parallel execution from the world.
type runtime struct{ env porttest.Env }

func (r runtime) Now() int64               { return r.env.Now() }
func (r runtime) Monotonic() time.Duration { return r.env.Monotonic() }
func (r runtime) Parallel(tasks []func())  { r.env.Parallel(tasks) }
