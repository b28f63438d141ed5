package agent_test

// The cases of testdata/pi/agent.mjs, run on the reference Agent. testdata/pi/agent.out is what
// pi 1.6.0's Agent printed for them; every line must match (as JSON values).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/agent"
	"github.com/turnstile-dev/turnstile/loop"
)

// observations collect the "name: value" lines of a run of the cases.
type observations struct {
	names  []string
	values map[string]any
}

func (o *observations) show(name string, value any) {
	if o.values == nil {
		o.values = map[string]any{}
	}
	data, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		panic(err)
	}
	o.names = append(o.names, name)
	o.values[name] = v
}

func readPiOutput(t *testing.T) *observations {
	t.Helper()
	f, err := os.Open("testdata/pi/agent.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := &observations{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			t.Fatalf("agent.out: no name in %q", sc.Text())
		}
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			t.Fatalf("agent.out %s: %v", name, err)
		}
		o.names = append(o.names, name)
		if o.values == nil {
			o.values = map[string]any{}
		}
		o.values[name] = v
	}
	return o
}

func TestMatchesPi(t *testing.T) {
	for _, f := range findings(t, newAgent) {
		t.Error(f)
	}
}

// findings runs the cases on the subjects build makes and returns one text per case whose
// observation differs from pi's, naming the rules the case pins.
func findings(t *testing.T, build builder) []string {
	t.Helper()
	want := readPiOutput(t)
	got := &observations{}
	runCases(t, got.show, build)
	if !reflect.DeepEqual(got.names, want.names) {
		t.Fatalf("cases differ from pi's:\n got %q\nwant %q", got.names, want.names)
	}
	var out []string
	for _, name := range want.names {
		if !reflect.DeepEqual(got.values[name], want.values[name]) {
			g, _ := json.Marshal(got.values[name])
			w, _ := json.Marshal(want.values[name])
			out = append(out, fmt.Sprintf("%s: case %q differs from pi's Agent:\n got %s\npi   %s", ruleNames(t, name), name, g, w))
		}
	}
	return out
}

func throws(text string) answer {
	return func(int) (*loop.AssistantMessage, error) { return nil, errors.New(text) }
}

func runCases(t *testing.T, show func(string, any), build builder) {
	{
		p := newProvider(says("hello"))
		a := build(p, agent.Options{})
		must(t, a.PromptText("hi"))
		show("prompt text lines", a.Lines())
		show("prompt text state", a.messages())
		show("prompt text requests", p.Requests())
		s := a.State()
		show("prompt text idle", []any{s.IsStreaming, s.ErrorMessage, a.HasQueuedMessages()})
	}
	{
		p := newProvider(says("one"), says("two"))
		a := build(p, agent.Options{})
		hold := make(chan struct{})
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.AgentStart {
				<-hold // the run goes on once the refusals are made, as pi's waits for its first await
			}
		})
		run, err := a.StartPrompt(user("first"))
		must(t, err)
		refusals := []string{errText(a.PromptText("again")), errText(a.Continue()), errText(a.Reset())}
		a.FollowUp(user("queued"))
		close(hold)
		run.Wait()
		show("busy refusals", refusals)
		show("busy lines", a.Lines())
		show("busy requests", p.Requests())
	}
	{
		a := build(newProvider(), agent.Options{})
		show("continue empty", errText(a.Continue()))
		b := build(newProvider(), agent.Options{SystemPrompt: "sys"})
		show("continue system only", []any{errText(b.Continue()), b.messages(), b.Lines()})
	}
	{
		p := newProvider()
		a := build(p, agent.Options{Messages: []loop.Message{user("hi"), says("hello")}})
		show("continue assistant empty queues", []any{errText(a.Continue()), a.Lines(), len(p.Requests())})
	}
	for _, mode := range []loop.QueueMode{loop.OneAtATime, loop.All} {
		p := newProvider(says("r1"), says("r2"), says("r3"))
		a := build(p, agent.Options{Messages: []loop.Message{user("hi"), says("hello")}, SteeringMode: mode})
		a.Steer(user("s1"))
		a.Steer(user("s2"))
		a.FollowUp(user("f1"))
		out := errText(a.Continue())
		show(fmt.Sprintf("continue assistant steering %s", mode), []any{out, p.Requests()})
		show(fmt.Sprintf("continue assistant steering %s lines", mode), a.Lines())
		show(fmt.Sprintf("continue assistant steering %s queued", mode), a.HasQueuedMessages())
	}
	for _, mode := range []loop.QueueMode{loop.OneAtATime, loop.All} {
		p := newProvider(says("r1"), says("r2"), says("r3"))
		a := build(p, agent.Options{Messages: []loop.Message{user("hi"), says("hello")}, FollowUpMode: mode})
		a.FollowUp(user("f1"))
		a.FollowUp(user("f2"))
		show(fmt.Sprintf("continue assistant follow-ups %s", mode), []any{errText(a.Continue()), p.Requests()})
	}
	{
		p := newProvider(says("again"))
		a := build(p, agent.Options{Messages: []loop.Message{user("hi")}})
		a.Steer(user("s1"))
		show("continue user tail", []any{errText(a.Continue()), p.Requests(), a.Lines()})
	}
	{
		p := newProvider(says("r1"), says("r2"))
		a := build(p, agent.Options{})
		a.FollowUp(user("f1"))
		a.Steer(user("s1"))
		must(t, a.PromptText("p"))
		show("queued before prompt", p.Requests())
		show("queued before prompt lines", a.Lines())
	}
	for _, mode := range []loop.QueueMode{loop.OneAtATime, loop.All} {
		p := newProvider(calls(call("t1", "echo")), says("r2"), says("r3"), says("r4"))
		a := build(p, agent.Options{Tools: []*loop.Tool{tool("echo", nil)}, SteeringMode: mode})
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.ToolExecutionEnd {
				a.Steer(user("s1"))
				a.Steer(user("s2"))
			}
		})
		must(t, a.PromptText("p"))
		show(fmt.Sprintf("steer during run %s", mode), p.Requests())
	}
	{
		p := newProvider(says("r1"), says("r2"), says("r3"), says("r4"))
		a := build(p, agent.Options{})
		for _, s := range []string{"s1", "s2", "s3"} {
			a.Steer(user(s))
		}
		switched := false
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.TurnEnd && !switched {
				switched = true
				a.SetSteeringMode(loop.All)
			}
		})
		must(t, a.PromptText("p"))
		show("switch steering mode", []any{p.Requests(), a.SteeringMode()})
	}
	{
		p := newProvider(says("r1"), says("r2"), says("r3"))
		a := build(p, agent.Options{FollowUpMode: loop.All})
		a.FollowUp(user("f1"))
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.TurnEnd && len(p.Requests()) == 1 {
				a.SetFollowUpMode(loop.OneAtATime)
				a.FollowUp(user("f2"))
			}
		})
		must(t, a.PromptText("p"))
		show("switch follow-up mode", []any{p.Requests(), a.FollowUpMode()})
	}
	{
		p := newProvider(throws("provider down"))
		a := build(p, agent.Options{Model: loop.Model{ID: "faux-1", Name: "test-model", API: "faux-api", Provider: "faux"}})
		var end loop.Message
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.AgentEnd {
				end = e.Messages[0]
			}
		})
		out := errText(a.PromptText("hi"))
		show("error turn", []any{out, a.Lines()})
		s := a.State()
		show("error turn state", []any{a.messages(), s.ErrorMessage, s.IsStreaming})
		var fields map[string]any
		data, _ := json.Marshal(end)
		must(t, json.Unmarshal(data, &fields))
		delete(fields, "timestamp")
		show("error turn message", fields)
		show("error turn continue", errText(a.Continue()))
	}
	{
		n := 0
		p := newProvider(says("fine"))
		a := build(p, agent.Options{Loop: loop.Config{PrepareRequest: func(context.Context, loop.RequestState) (*loop.RequestUpdate, error) {
			if n++; n == 1 {
				return nil, errors.New("boom")
			}
			return nil, nil
		}}})
		show("hook failure", []any{errText(a.PromptText("hi")), a.Lines(), a.State().ErrorMessage})
		a.Steer(user("retry"))
		show("continue after error with steering", []any{errText(a.Continue()), p.Requests(), a.messages(), a.State().ErrorMessage})
	}
	{
		p := newProvider(calls(call("t1", "echo")), says("never"))
		a := build(p, agent.Options{Tools: []*loop.Tool{tool("echo", nil)}})
		a.FollowUp(user("f1"))
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.TurnEnd {
				a.Abort()
			}
		})
		a.Steer(user("s1"))
		must(t, a.PromptText("p"))
		show("abort between turns", []any{a.Lines(), a.State().ErrorMessage, a.HasQueuedMessages(), summaries(a.PeekQueuedMessages())})
		show("abort between turns requests", p.Requests())
	}
	{
		n := 0
		p := newProvider(calls(call("t1", "echo")), says("never"))
		var a subject
		a = build(p, agent.Options{Tools: []*loop.Tool{tool("echo", nil)}, Loop: loop.Config{PrepareRequest: func(context.Context, loop.RequestState) (*loop.RequestUpdate, error) {
			if n++; n == 2 {
				a.Abort()
				return nil, errors.New("hook saw abort")
			}
			return nil, nil
		}}})
		a.FollowUp(user("f1"))
		must(t, a.PromptText("p"))
		show("abort during hook", []any{a.Lines(), a.State().ErrorMessage, a.HasQueuedMessages()})
	}
	{
		p := newProvider(says("hello"))
		a := build(p, agent.Options{})
		var log []string
		gate, entered := make(chan struct{}), make(chan struct{})
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.AgentEnd {
				log = append(log, fmt.Sprintf("listener holds, streaming=%v", a.State().IsStreaming))
				close(entered)
				<-gate
				log = append(log, "listener released")
			}
		})
		run, err := a.StartPrompt(agent.UserText("hi", 0))
		must(t, err)
		idle := make(chan struct{})
		go func() {
			_ = a.WaitForIdle(context.Background())
			close(idle)
		}()
		<-entered
		time.Sleep(10 * time.Millisecond) // a run that wrongly ended would close done by now
		log = append(log, fmt.Sprintf("held: prompt=%v idle=%v refusal=%s", closed(run.Done()), closed(idle), errText(a.PromptText("x"))))
		close(gate)
		run.Wait()
		<-idle
		log = append(log, fmt.Sprintf("after: prompt=%v idle=%v streaming=%v", closed(run.Done()), closed(idle), a.State().IsStreaming))
		show("listener barrier", log)
	}
	{
		p := newProvider(says("hello"))
		a := build(p, agent.Options{})
		var log []string
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.MessageEnd {
				log = append(log, "A start "+summary(e.Message))
				time.Sleep(time.Millisecond)
				log = append(log, "A end "+summary(e.Message))
			}
		})
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.MessageEnd {
				log = append(log, "B "+summary(e.Message))
			}
		})
		must(t, a.PromptText("hi"))
		show("listeners in order", log)
	}
	{
		p := newProvider(calls(call("t1", "echo")), says("r1"), says("r2"), says("r3"))
		a := build(p, agent.Options{SystemPrompt: "sys", Tools: []*loop.Tool{tool("echo", nil)}})
		show("initial state", a.messages())
		must(t, a.PromptText("one"))
		a.SetTools([]*loop.Tool{tool("grep", nil)})
		must(t, a.PromptText("two"))
		a.SetTools(nil)
		must(t, a.PromptText("three"))
		show("tools change between prompts", a.messages())
		show("tools change between prompts requests", p.Requests())
		a.Steer(user("s1"))
		a.FollowUp(user("f1"))
		show("reset", []any{errText(a.Reset()), a.messages(), a.HasQueuedMessages(), a.State().SystemPrompt})
	}
	{
		p := newProvider(calls(call("t1", "probe")), says("done"))
		var a subject
		var seen []string
		probe := tool("probe", func() loop.ToolResult {
			s := a.State()
			seen = append(seen, fmt.Sprintf("in execute: pending=%s streaming=%v", strings.Join(s.PendingToolCalls, ","), s.IsStreaming))
			return loop.ToolResult{Content: loop.Text("probed"), Details: map[string]any{}}
		})
		a = build(p, agent.Options{Tools: []*loop.Tool{probe}})
		a.Subscribe(func(_ context.Context, e loop.Event) {
			switch e.Type {
			case loop.AgentStart, loop.MessageStart, loop.MessageEnd, loop.ToolExecutionEnd, loop.AgentEnd:
				s := a.State()
				sm := "-"
				if s.StreamingMessage != nil {
					sm = s.StreamingMessage.Role()
				}
				seen = append(seen, fmt.Sprintf("%s: streaming=%v streamingMessage=%s pending=%s messages=%d",
					e.Type, s.IsStreaming, sm, strings.Join(s.PendingToolCalls, ","), len(s.Messages)))
			}
		})
		must(t, a.PromptText("hi"))
		show("state during run", seen)
	}
	{
		p := newProvider(throws("down"), says("ok"))
		a := build(p, agent.Options{})
		must(t, a.PromptText("hi"))
		before := a.State().ErrorMessage
		var atStart string
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.AgentStart {
				atStart = a.State().ErrorMessage
			}
		})
		must(t, a.PromptText("again"))
		show("error cleared by next run", []any{before, atStart, a.State().ErrorMessage})
	}
	{
		p := newProvider(calls(call("t1", "echo")), says("r2"), says("r3"))
		a := build(p, agent.Options{Tools: []*loop.Tool{tool("echo", nil)}})
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.ToolExecutionEnd {
				a.FollowUp(user("f1"))
			}
		})
		must(t, a.PromptText("p"))
		show("follow-up during run", p.Requests())
	}
	{
		a := build(newProvider(), agent.Options{})
		a.Abort()
		resolved := a.WaitForIdle(context.Background()) == nil
		show("idle calls", []any{resolved, a.State().IsStreaming, a.Lines()})
	}
	{
		p := newProvider(says("r1"))
		a := build(p, agent.Options{})
		must(t, a.Prompt(user("a"), user("b")))
		show("prompt messages", []any{p.Requests(), a.Lines()})
	}
	{
		a := build(newProvider(), agent.Options{})
		a.Steer(user("s1"))
		a.Steer(user("s2"))
		a.FollowUp(user("f1"))
		a.FollowUp(user("f2"))
		peeks := []any{summaries(a.PeekQueuedMessages())}
		a.SetSteeringMode(loop.All)
		peeks = append(peeks, summaries(a.PeekQueuedMessages()))
		a.ClearSteeringQueue()
		peeks = append(peeks, summaries(a.PeekQueuedMessages()))
		a.SetFollowUpMode(loop.All)
		peeks = append(peeks, summaries(a.PeekQueuedMessages()))
		a.ClearFollowUpQueue()
		peeks = append(peeks, summaries(a.PeekQueuedMessages()), a.HasQueuedMessages())
		a.Steer(user("s3"))
		a.FollowUp(user("f3"))
		a.ClearAllQueues()
		peeks = append(peeks, a.HasQueuedMessages())
		show("peek and clear", peeks)
	}
	{
		p := newProvider(says("hello"))
		a := build(p, agent.Options{})
		var log []string
		var unsubscribeB func()
		added := false
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.MessageEnd && !added {
				added = true
				log = append(log, "A "+summary(e.Message))
				unsubscribeB()
				a.Subscribe(func(_ context.Context, e2 loop.Event) {
					if e2.Type == loop.MessageEnd {
						log = append(log, "C "+summary(e2.Message))
					}
				})
			}
		})
		unsubscribeB = a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.MessageEnd {
				log = append(log, "B "+summary(e.Message))
			}
		})
		must(t, a.PromptText("hi"))
		show("listener set changes during an event", log)
	}
	{
		p := newProvider(says("r1"), says("r2"))
		a := build(p, agent.Options{ThinkingLevel: "low"})
		must(t, a.PromptText("one"))
		a.SetModel(loop.Model{ID: "other-model", Name: "test-model", API: "test", Provider: "test"})
		a.SetThinkingLevel(loop.ThinkingOff)
		must(t, a.PromptText("two"))
		show("model and thinking level between prompts", []any{p.meta, a.messages()})
	}
	{
		p := newProvider(says("r1"), says("r2"))
		history := []loop.Message{user("hi"), calls(call("t1", "echo")), &loop.ToolResultMessage{ToolCallID: "t1", ToolName: "echo", Content: loop.Text("echo ok")}}
		a := build(p, agent.Options{Messages: history})
		a.FollowUp(user("f1"))
		show("continue tool-result tail", []any{errText(a.Continue()), p.Requests()})
	}
	{
		p := newProvider(says("r1"))
		a := build(p, agent.Options{})
		a.SetMessages([]loop.Message{user("replaced")})
		show("transcript replaced then continued", []any{errText(a.Continue()), p.Requests(), a.messages()})
	}
	{
		p := newProvider(says("r1"), says("r2"))
		a := build(p, agent.Options{})
		a.Steer(user("s1"))
		a.FollowUp(user("f1"))
		hold := make(chan struct{})
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.AgentStart {
				<-hold
			}
		})
		run, err := a.StartPrompt(agent.UserText("p", 0))
		must(t, err)
		refusals := []string{errText(a.PromptText("x")), errText(a.Continue())}
		peek := summaries(a.PeekQueuedMessages())
		close(hold)
		run.Wait()
		show("refusals keep the queues", []any{refusals, peek, p.Requests()})
	}
	{
		p := newProvider(calls(call("t1", "echo")), throws("down on turn 2"))
		a := build(p, agent.Options{Tools: []*loop.Tool{tool("echo", nil)}})
		must(t, a.PromptText("p"))
		lines := a.Lines()
		show("error after a tool turn", []any{lines[len(lines)-4:], a.messages(), a.State().ErrorMessage})
	}
	{
		p := newProvider(throws("no model"))
		a := agent.New(agent.Options{Loop: loop.Config{Stream: p.Stream}})
		var end *loop.AssistantMessage
		a.Subscribe(func(_ context.Context, e loop.Event) {
			if e.Type == loop.AgentEnd {
				end = e.Messages[0].(*loop.AssistantMessage)
			}
		})
		must(t, a.PromptText("hi"))
		show("default model", []any{end.API, end.Provider, end.Model, a.State().ThinkingLevel})
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
