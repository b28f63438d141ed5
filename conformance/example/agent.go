package example

import (
	"context"
	"encoding/json"

	"github.com/turnstile-dev/turnstile/agent"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/loop"
)

// AgentPort is the example Go loop with an Agent on top (package agent, pi's Agent in Go,
// standing in for yours): Run serves the loop scenarios, NewAgent the Agent scenarios.
type AgentPort struct{ Port }

// Hello is the loop's, named for the Agent.
func (AgentPort) Hello() porttest.Hello {
	h := Port{}.Hello()
	h.Name = "example-agent"
	return h
}

// NewAgent builds the Agent on the loop Build wires: pi's Agent has no static API key.
func (AgentPort) NewAgent(env porttest.Env) (porttest.Agent, error) {
	actx, cfg, tools := Build(env)
	s := env.Setup()
	cfg.APIKey = ""
	a := agent.New(agent.Options{SystemPrompt: s.Agent.SystemPrompt, Tools: actx.Tools, Messages: actx.Messages,
		Model: cfg.Model, ThinkingLevel: cfg.ThinkingLevel, Loop: cfg,
		SteeringMode: loop.QueueMode(s.Agent.SteeringMode), FollowUpMode: loop.QueueMode(s.Agent.FollowUpMode)})
	return &agentGlue{a, tools}, nil
}

// agentGlue maps porttest.Agent's methods to package agent's.
type agentGlue struct {
	a     *agent.Agent
	tools func([]string) []*loop.Tool
}

func (g *agentGlue) Subscribe(l func(any)) {
	g.a.Subscribe(func(_ context.Context, e loop.Event) { l(e) })
}
func (g *agentGlue) SubscribeContext(l func(context.Context, any)) {
	g.a.Subscribe(func(ctx context.Context, e loop.Event) { l(ctx, e) })
}
func (g *agentGlue) Prompt(msgs []json.RawMessage) error { return g.a.Prompt(decode(msgs)...) }
func (g *agentGlue) PromptText(text string) error        { return g.a.PromptText(text) }
func (g *agentGlue) Continue() error                     { return g.a.Continue() }
func (g *agentGlue) WaitForIdle()                        { _ = g.a.WaitForIdle(context.Background()) }
func (g *agentGlue) Steer(m json.RawMessage)             { g.a.Steer(decode([]json.RawMessage{m})[0]) }
func (g *agentGlue) FollowUp(m json.RawMessage)          { g.a.FollowUp(decode([]json.RawMessage{m})[0]) }
func (g *agentGlue) Abort()                              { g.a.Abort() }
func (g *agentGlue) Reset() error                        { return g.a.Reset() }
func (g *agentGlue) SetSteeringMode(mode string)         { g.a.SetSteeringMode(loop.QueueMode(mode)) }
func (g *agentGlue) SetFollowUpMode(mode string)         { g.a.SetFollowUpMode(loop.QueueMode(mode)) }
func (g *agentGlue) SetTools(names []string)             { g.a.SetTools(g.tools(names)) }

func (g *agentGlue) ClearQueues(queue string) {
	switch queue {
	case "steering":
		g.a.ClearSteeringQueue()
	case "followUp":
		g.a.ClearFollowUpQueue()
	default:
		g.a.ClearAllQueues()
	}
}

func (g *agentGlue) State() porttest.AgentState {
	st := g.a.State()
	return porttest.AgentState{IsStreaming: st.IsStreaming, Messages: st.Messages, ErrorMessage: st.ErrorMessage,
		PendingToolCalls: st.PendingToolCalls, StreamingMessage: st.StreamingMessage,
		Queued: g.a.PeekQueuedMessages(), HasQueuedMessages: g.a.HasQueuedMessages()}
}
