package agent_test

// Fakes of the pi check: the same messages, provider, tools and renderings as
// testdata/pi/agent.mjs, so that a case run on the reference Agent prints what pi printed.

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/turnstile-dev/turnstile/agent"
	"github.com/turnstile-dev/turnstile/loop"
)

var testModel = loop.Model{ID: "test-model", Name: "test-model", API: "test", Provider: "test"}

func user(s string) loop.Message { return &loop.UserMessage{Text: s} }

func reply(stop loop.StopReason, blocks ...loop.Block) *loop.AssistantMessage {
	return &loop.AssistantMessage{Content: blocks, API: "test", Provider: "test", Model: "test-model", StopReason: stop}
}

func says(s string) *loop.AssistantMessage { return reply(loop.StopStop, loop.TextContent{Text: s}) }

func calls(blocks ...loop.Block) *loop.AssistantMessage { return reply(loop.StopToolUse, blocks...) }

func call(id, name string) loop.Block {
	return loop.ToolCall{ID: id, Name: name, Arguments: map[string]any{}}
}

func blocksText(blocks []loop.Block) string {
	var b strings.Builder
	for _, block := range blocks {
		if t, ok := block.(loop.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// summary is agent.mjs's summary: one message as a short line.
func summary(m loop.Message) string {
	switch v := m.(type) {
	case *loop.SystemMessage:
		s := "system:" + v.Text
		if v.Blocks != nil {
			s = "system:" + blocksText(v.Blocks)
		}
		if len(v.ToolsAdded) > 0 {
			var names []string
			for _, d := range v.ToolsAdded {
				names = append(names, d.Name)
			}
			s += " +" + strings.Join(names, ",")
		}
		if len(v.ToolsRemoved) > 0 {
			var names []string
			for _, r := range v.ToolsRemoved {
				names = append(names, r.Name)
			}
			s += " -" + strings.Join(names, ",")
		}
		return s
	case *loop.UserMessage:
		if v.Blocks == nil {
			return "user:" + v.Text
		}
		return "user[blocks]:" + blocksText(v.Blocks)
	case *loop.AssistantMessage:
		s := "assistant:" + string(v.StopReason) + ":" + blocksText(v.Content)
		if v.ErrorMessage != "" {
			s += " !" + v.ErrorMessage
		}
		return s
	case *loop.ToolResultMessage:
		return "toolResult:" + v.ToolCallID + ":" + blocksText(v.Content)
	}
	return m.Role()
}

func summaries(messages []loop.Message) []string {
	out := []string{}
	for _, m := range messages {
		out = append(out, summary(m))
	}
	return out
}

// line is agent.mjs's line: one event as a short line.
func line(e loop.Event) string {
	switch e.Type {
	case loop.MessageStart, loop.MessageEnd:
		return string(e.Type) + " " + summary(e.Message)
	case loop.ToolExecutionStart:
		return string(e.Type) + " " + e.ToolCallID
	case loop.ToolExecutionEnd:
		status := "ok"
		if e.IsError {
			status = "err"
		}
		return string(e.Type) + " " + e.ToolCallID + " " + status
	case loop.TurnEnd:
		return "turn_end " + summary(e.Message) + " results=" + itoa(len(e.ToolResults))
	case loop.AgentEnd:
		return "agent_end " + strings.Join(summaries(e.Messages), " | ")
	}
	return string(e.Type)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// answer is one scripted reply: a message, or a function of the request's number returning
// one or failing the stream function.
type answer = func(n int) (*loop.AssistantMessage, error)

func msg(m *loop.AssistantMessage) answer {
	return func(int) (*loop.AssistantMessage, error) { return m, nil }
}

// provider is agent.mjs's provider: each request takes the next answer; an aborted request is
// answered "aborted"; requests records the summaries of what each request sent.
type provider struct {
	mu       sync.Mutex
	answers  []answer
	requests [][]string
	// meta records "model:thinkingLevel" per request.
	meta []string
}

func newProvider(answers ...any) *provider {
	p := &provider{}
	for _, a := range answers {
		switch a := a.(type) {
		case *loop.AssistantMessage:
			p.answers = append(p.answers, msg(a))
		case answer:
			p.answers = append(p.answers, a)
		}
	}
	return p
}

func (p *provider) Requests() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

func (p *provider) Stream(ctx context.Context, req loop.StreamRequest) (loop.AssistantStream, error) {
	p.mu.Lock()
	p.requests = append(p.requests, summaries(req.Messages))
	p.meta = append(p.meta, req.Model.ID+":"+string(req.ThinkingLevel))
	n := len(p.requests)
	next := msg(says("(unscripted)"))
	if len(p.answers) > 0 {
		next, p.answers = p.answers[0], p.answers[1:]
	}
	p.mu.Unlock()
	final, err := next(n)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		final = reply(loop.StopAborted)
		final.ErrorMessage = "Request was aborted"
	}
	return newStream(final), nil
}

// stream replays start, each block's start/delta/end, and done.
type stream struct {
	events []loop.StreamEvent
	final  *loop.AssistantMessage
}

func newStream(final *loop.AssistantMessage) *stream {
	partial := func(n int) *loop.AssistantMessage {
		p := *final
		p.Content = slices.Clone(final.Content[:n])
		return &p
	}
	evs := []loop.StreamEvent{{Type: loop.StreamStart, Partial: partial(0)}}
	for i, b := range final.Content {
		p := partial(i + 1)
		switch b := b.(type) {
		case loop.TextContent:
			evs = append(evs,
				loop.StreamEvent{Type: loop.StreamTextStart, ContentIndex: i, Partial: p},
				loop.StreamEvent{Type: loop.StreamTextDelta, ContentIndex: i, Delta: b.Text, Partial: p},
				loop.StreamEvent{Type: loop.StreamTextEnd, ContentIndex: i, Content: b.Text, Partial: p})
		case loop.ToolCall:
			evs = append(evs,
				loop.StreamEvent{Type: loop.StreamToolCallStart, ContentIndex: i, Partial: p},
				loop.StreamEvent{Type: loop.StreamToolCallEnd, ContentIndex: i, ToolCall: &b, Partial: p})
		}
	}
	evs = append(evs, loop.StreamEvent{Type: loop.StreamDone, Reason: final.StopReason, Message: final})
	return &stream{events: evs, final: final}
}

func (s *stream) Next(context.Context) (loop.StreamEvent, bool, error) {
	if len(s.events) == 0 {
		return loop.StreamEvent{}, false, nil
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, true, nil
}

func (s *stream) Result(context.Context) (*loop.AssistantMessage, error) { return s.final, nil }

var emptySchema = map[string]any{"type": "object", "properties": map[string]any{}}

// tool answers "<name> ok", or what execute answers.
func tool(name string, execute func() loop.ToolResult) *loop.Tool {
	return &loop.Tool{
		Name: name, Label: name, Description: name + " tool", Parameters: emptySchema,
		Execute: func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			if execute != nil {
				return execute(), nil
			}
			return loop.ToolResult{Content: loop.Text(name + " ok"), Details: map[string]any{}}, nil
		},
	}
}

// recorded is an Agent recording its event lines, as agent.mjs's agent().
type recorded struct {
	*agent.Agent
	mu    sync.Mutex
	lines []string
}

func newRecorded(p *provider, opts agent.Options) *recorded {
	if opts.Model == (loop.Model{}) {
		opts.Model = testModel
	}
	opts.Loop.Stream = p.Stream
	r := &recorded{Agent: agent.New(opts)}
	r.Subscribe(func(_ context.Context, e loop.Event) {
		if e.Type != loop.MessageUpdate {
			r.mu.Lock()
			r.lines = append(r.lines, line(e))
			r.mu.Unlock()
		}
	})
	return r
}

func (r *recorded) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.lines...)
}

func (r *recorded) messages() []string { return summaries(r.State().Messages) }

// errText is agent.mjs's err: "ok" or the refusal's text.
func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// subject is what the cases use of an Agent: the reference, or a deliberately wrong one.
type subject interface {
	Subscribe(agent.Listener) func()
	State() agent.State
	SetTools([]*loop.Tool)
	SetMessages([]loop.Message)
	SetModel(loop.Model)
	SetThinkingLevel(loop.ThinkingLevel)
	SteeringMode() loop.QueueMode
	SetSteeringMode(loop.QueueMode)
	FollowUpMode() loop.QueueMode
	SetFollowUpMode(loop.QueueMode)
	Steer(loop.Message)
	FollowUp(loop.Message)
	HasQueuedMessages() bool
	PeekQueuedMessages() []loop.Message
	ClearSteeringQueue()
	ClearFollowUpQueue()
	ClearAllQueues()
	Prompt(...loop.Message) error
	Abort()
	WaitForIdle(context.Context) error
	Reset() error
	PromptText(string) error
	StartPrompt(...loop.Message) (*agent.Run, error)
	Continue() error
	Lines() []string
	messages() []string
}

// builder makes the subject of a case.
type builder func(p *provider, opts agent.Options) subject

func newAgent(p *provider, opts agent.Options) subject { return newRecorded(p, opts) }
