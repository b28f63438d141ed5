// Package example is a Go port verified with conformance.Test in under 100 lines of glue.
// The port here is this project's own loop package, standing in for yours: swap loop.Run
// for your loop and wire your hooks the same way.
package example

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/loop"
)

// Port runs package loop with the hooks it wires: the two queues. Every other hook is
// wired the same way (env.Hook with pi's payload, PROTOCOL.md); scenarios installing one
// this port lacks are skipped, which is how a port adopts the suite step by step.
type Port struct{}

// Hello names the port, the hooks it supports and the optional features it lacks (it does not
// wire the tools' prepareArguments); scenarios needing others are skipped, in conform and in
// explore.
func (Port) Hello() conformance.Hello {
	return conformance.Hello{Name: "example", Tracks: "1.6.0", Hooks: []string{"getSteeringMessages", "getFollowUpMessages"},
		Lacks: []string{"prepareArguments"}}
}

// Run builds the loop from the scenario's setup, every part reaching the world through env.
func (Port) Run(ctx context.Context, env conformance.Env) (any, error) {
	s := env.Setup()
	var tools []*loop.Tool
	for _, ts := range s.Tools {
		if slices.Contains(s.ActiveTools, ts.Name) { // the others are known but not in the context
			tools = append(tools, &loop.Tool{Name: ts.Name, Description: ts.Description, Parameters: ts.Parameters,
				ExecutionMode: loop.ExecutionMode(ts.ExecutionMode), Execute: execute(env, ts.Name)})
		}
	}
	queue := func(name string) func(context.Context) ([]loop.Message, error) {
		if !slices.Contains(s.Hooks, name) {
			return nil
		}
		return func(context.Context) ([]loop.Message, error) {
			var out struct{ Messages []json.RawMessage }
			err := env.Hook(name, map[string]any{}, &out)
			return decode(out.Messages), err
		}
	}
	cfg := loop.Config{
		Model:         loop.Model{ID: s.Model.ID, API: s.Model.API, Provider: s.Model.Provider},
		ThinkingLevel: loop.ThinkingLevel(s.ThinkingLevel), APIKey: s.APIKey,
		ToolExecution: loop.ExecutionMode(s.ToolExecution), Runtime: runtime{env},
		OnEvent:             func(e loop.Event) { env.Emit(e) },
		GetSteeringMessages: queue("getSteeringMessages"), GetFollowUpMessages: queue("getFollowUpMessages"),
		Stream: func(_ context.Context, req loop.StreamRequest) (loop.AssistantStream, error) {
			st, err := env.Stream(map[string]any{"model": s.Model, "messages": req.Messages, "thinkingLevel": req.ThinkingLevel, "apiKey": req.APIKey})
			return stream{st}, err
		},
	}
	actx := loop.Context{Messages: decode(s.Messages), Tools: tools}
	if s.Entry == "continue" {
		return loop.Continue(ctx, actx, cfg)
	}
	return loop.Run(ctx, decode(s.Prompts), actx, cfg)
}

func execute(env conformance.Env, name string) func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
	return func(_ context.Context, id string, args map[string]any, onUpdate func(loop.ToolResult)) (res loop.ToolResult, err error) {
		raw, err := env.Tool(id, name, args, func(p json.RawMessage) {
			var u loop.ToolResult
			_ = json.Unmarshal(p, &u)
			onUpdate(u)
		})
		if err == nil {
			err = json.Unmarshal(raw, &res)
		}
		return res, err
	}
}

func decode(raw []json.RawMessage) []loop.Message {
	out := []loop.Message{}
	for _, r := range raw {
		if m, err := loop.DecodeMessage(r); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// runtime takes time and parallel execution from the world.
type runtime struct{ env conformance.Env }

func (r runtime) Now() int64               { return r.env.Now() }
func (r runtime) Monotonic() time.Duration { return r.env.Monotonic() }
func (r runtime) Parallel(tasks []func())  { r.env.Parallel(tasks) }

// stream adapts a conformance.Stream to the loop's.
type stream struct{ s conformance.Stream }

func (s stream) Next(context.Context) (ev loop.StreamEvent, ok bool, err error) {
	raw, ok, err := s.s.Next()
	if ok {
		err = json.Unmarshal(raw, &ev)
	}
	return ev, ok, err
}

func (s stream) Result(context.Context) (m *loop.AssistantMessage, err error) {
	raw, err := s.s.Result()
	m = &loop.AssistantMessage{}
	if err == nil {
		err = json.Unmarshal(raw, m)
	}
	return m, err
}
