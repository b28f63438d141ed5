package loop_test

// Fakes shared by the specs: message builders, a scripted provider (StreamFunc and
// AssistantStream), scripted tools, a fake runtime and an event recorder rendering events as
// short lines. testdata/pi/lib.mjs holds the same helpers for the pi check scripts; both
// render events identically, so the lines a spec expects are the lines pi printed.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

// ---- messages

func text(s string) loop.Block { return loop.TextContent{Text: s} }

func call(id, name string, args map[string]any) loop.Block {
	return loop.ToolCall{ID: id, Name: name, Arguments: args}
}

func user(s string) loop.Message { return &loop.UserMessage{Text: s} }

// reply is a final assistant message with the given stop reason and content.
func reply(stop loop.StopReason, blocks ...loop.Block) *loop.AssistantMessage {
	return &loop.AssistantMessage{Content: blocks, API: "test", Provider: "test", Model: "test-model", StopReason: stop}
}

// says is a text-only answer that stops.
func says(s string) *loop.AssistantMessage { return reply(loop.StopStop, text(s)) }

// calls is a response asking for tools.
func calls(blocks ...loop.Block) *loop.AssistantMessage { return reply(loop.StopToolUse, blocks...) }

var testModel = loop.Model{ID: "test-model", Name: "test-model", API: "test", Provider: "test"}

func roles(messages []loop.Message) []string {
	out := make([]string, len(messages))
	for i, m := range messages {
		out[i] = m.Role()
	}
	return out
}

// textOf is the text of a message's text blocks.
func textOf(m loop.Message) string {
	var blocks []loop.Block
	switch v := m.(type) {
	case *loop.UserMessage:
		if v.Blocks == nil {
			return v.Text
		}
		blocks = v.Blocks
	case *loop.SystemMessage:
		if v.Blocks == nil {
			return v.Text
		}
		blocks = v.Blocks
	case *loop.AssistantMessage:
		blocks = v.Content
	case *loop.ToolResultMessage:
		blocks = v.Content
	}
	return blocksText(blocks)
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

// toolResults are the tool-result messages among messages.
func toolResults(messages []loop.Message) []*loop.ToolResultMessage {
	var out []*loop.ToolResultMessage
	for _, m := range messages {
		if r, ok := m.(*loop.ToolResultMessage); ok {
			out = append(out, r)
		}
	}
	return out
}

// resultTexts are the texts of the tool results among messages, in order.
func resultTexts(messages []loop.Message) []string {
	out := []string{}
	for _, r := range toolResults(messages) {
		out = append(out, textOf(r))
	}
	return out
}

func systemMessages(messages []loop.Message) []*loop.SystemMessage {
	var out []*loop.SystemMessage
	for _, m := range messages {
		if s, ok := m.(*loop.SystemMessage); ok {
			out = append(out, s)
		}
	}
	return out
}

func names(decls []loop.ToolDeclaration) []string {
	out := []string{}
	for _, d := range decls {
		out = append(out, d.Name)
	}
	return out
}

func refNames(refs []loop.ToolReference) []string {
	out := []string{}
	for _, r := range refs {
		out = append(out, r.Name)
	}
	return out
}

// ---- provider

// response is one scripted provider answer: the final message, streamed as start, each
// block's start/delta/end and done — unless noStart drops the start event, or terminal says
// how the stream ends ("done" by default, "error", or "none" for no terminal event). nextErr,
// when set, is returned by Next after the events, resultErr by Result: the stream fails.
type response struct {
	final     *loop.AssistantMessage
	noStart   bool
	terminal  loop.StreamEventType
	nextErr   error
	resultErr error
}

// provider answers requests from a script, one response per request, and records what each
// request sent. An already-aborted request is answered with stopReason "aborted"; a request
// beyond the script fails the run.
type provider struct {
	mu       sync.Mutex
	script   []response
	requests []loop.StreamRequest
	// respond, when set, answers every request instead of the script.
	respond func(n int, req loop.StreamRequest) *loop.AssistantMessage
	// openErr, when set, is returned by the stream function itself.
	openErr error
}

var errUnscripted = errors.New("unscripted provider request")

func (p *provider) answer(messages ...*loop.AssistantMessage) {
	for _, m := range messages {
		p.script = append(p.script, response{final: m})
	}
}

func (p *provider) push(r response) { p.script = append(p.script, r) }

// Requests is the number of requests made so far.
func (p *provider) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}

// request is the n-th request (0-based).
func (p *provider) request(n int) loop.StreamRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests[n]
}

// sentRoles are the roles of the messages the n-th request sent.
func (p *provider) sentRoles(n int) []string { return roles(p.request(n).Messages) }

func (p *provider) Stream(ctx context.Context, req loop.StreamRequest) (loop.AssistantStream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, req)
	if p.openErr != nil {
		return nil, p.openErr
	}
	var r response
	switch {
	case p.respond != nil:
		r = response{final: p.respond(len(p.requests), req)}
	case len(p.script) > 0:
		r, p.script = p.script[0], p.script[1:]
	default:
		return nil, errUnscripted
	}
	if ctx.Err() != nil {
		aborted := reply(loop.StopAborted)
		aborted.ErrorMessage = "Request was aborted"
		r = response{final: aborted}
	}
	return newScriptedStream(r), nil
}

// scriptedStream is an AssistantStream replaying fixed events.
type scriptedStream struct {
	events    []loop.StreamEvent
	final     *loop.AssistantMessage
	err       error
	resultErr error
}

func newScriptedStream(r response) *scriptedStream {
	final := r.final
	partial := func(n int) *loop.AssistantMessage {
		p := *final
		p.Content = slices.Clone(final.Content[:n])
		return &p
	}
	var evs []loop.StreamEvent
	if !r.noStart {
		evs = append(evs, loop.StreamEvent{Type: loop.StreamStart, Partial: partial(0)})
	}
	for i, b := range final.Content {
		p := partial(i + 1)
		switch b := b.(type) {
		case loop.TextContent:
			evs = append(evs,
				loop.StreamEvent{Type: loop.StreamTextStart, ContentIndex: i, Partial: p},
				loop.StreamEvent{Type: loop.StreamTextDelta, ContentIndex: i, Delta: b.Text, Partial: p},
				loop.StreamEvent{Type: loop.StreamTextEnd, ContentIndex: i, Content: b.Text, Partial: p})
		case loop.ThinkingContent:
			evs = append(evs,
				loop.StreamEvent{Type: loop.StreamThinkingStart, ContentIndex: i, Partial: p},
				loop.StreamEvent{Type: loop.StreamThinkingDelta, ContentIndex: i, Delta: b.Thinking, Partial: p},
				loop.StreamEvent{Type: loop.StreamThinkingEnd, ContentIndex: i, Content: b.Thinking, Partial: p})
		case loop.ToolCall:
			evs = append(evs,
				loop.StreamEvent{Type: loop.StreamToolCallStart, ContentIndex: i, Partial: p},
				loop.StreamEvent{Type: loop.StreamToolCallEnd, ContentIndex: i, ToolCall: &b, Partial: p})
		}
	}
	switch r.terminal {
	case "", loop.StreamDone:
		evs = append(evs, loop.StreamEvent{Type: loop.StreamDone, Reason: final.StopReason, Message: final})
	case loop.StreamError:
		evs = append(evs, loop.StreamEvent{Type: loop.StreamError, Reason: final.StopReason, Message: final})
	}
	return &scriptedStream{events: evs, final: final, err: r.nextErr, resultErr: r.resultErr}
}

func (s *scriptedStream) Next(context.Context) (loop.StreamEvent, bool, error) {
	if len(s.events) == 0 {
		return loop.StreamEvent{}, false, s.err
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, true, nil
}

func (s *scriptedStream) Result(context.Context) (*loop.AssistantMessage, error) {
	return s.final, s.resultErr
}

// ---- events

// recorder keeps every event and renders it as a short line: the type, then the message role
// or the tool call id, and "ok"/"err" on tool_execution_end.
type recorder struct {
	mu     sync.Mutex
	events []loop.Event
}

func (r *recorder) OnEvent(e loop.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func render(e loop.Event) string {
	switch e.Type {
	case loop.MessageStart, loop.MessageEnd:
		return fmt.Sprintf("%s %s", e.Type, e.Message.Role())
	case loop.ToolExecutionStart, loop.ToolExecutionUpdate:
		return fmt.Sprintf("%s %s", e.Type, e.ToolCallID)
	case loop.ToolExecutionEnd:
		status := "ok"
		if e.IsError {
			status = "err"
		}
		return fmt.Sprintf("%s %s %s", e.Type, e.ToolCallID, status)
	}
	return string(e.Type)
}

// All renders every event.
func (r *recorder) All() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{}
	for _, e := range r.events {
		out = append(out, render(e))
	}
	return out
}

// Lines renders every event but message_update.
func (r *recorder) Lines() []string {
	out := []string{}
	for _, l := range r.All() {
		if l != string(loop.MessageUpdate) {
			out = append(out, l)
		}
	}
	return out
}

// Of returns the events of one type, or every event for "".
func (r *recorder) Of(t loop.EventType) []loop.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []loop.Event
	for _, e := range r.events {
		if t == "" || e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

// toolEnd is the tool_execution_end event of a call.
func (r *recorder) toolEnd(id string) loop.Event {
	for _, e := range r.Of(loop.ToolExecutionEnd) {
		if e.ToolCallID == id {
			return e
		}
	}
	Fail("no tool_execution_end for " + id)
	return loop.Event{}
}

// ---- tools

type execFunc = func(ctx context.Context, id string, args map[string]any, onUpdate func(loop.ToolResult)) (loop.ToolResult, error)

func okResult(s string) loop.ToolResult {
	return loop.ToolResult{Content: loop.Text(s), Details: map[string]any{}}
}

// answers is a tool behaviour returning a fixed result.
func answers(res loop.ToolResult) execFunc {
	return func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
		return res, nil
	}
}

var emptySchema = map[string]any{"type": "object", "properties": map[string]any{}}

// gates holds tool executions until the spec opens them, to fix the order in which parallel
// executions complete without sleeping.
type gates struct {
	started chan string
	release map[string]chan struct{}
}

func newGates(ids ...string) *gates {
	g := &gates{started: make(chan string, len(ids)), release: map[string]chan struct{}{}}
	for _, id := range ids {
		g.release[id] = make(chan struct{})
	}
	return g
}

// exec reports the call as started and waits for its gate (or the abort).
func (g *gates) exec(ctx context.Context, id string, _ map[string]any, _ func(loop.ToolResult)) (loop.ToolResult, error) {
	g.started <- id
	select {
	case <-g.release[id]:
		return okResult(id + " done"), nil
	case <-ctx.Done():
		return loop.ToolResult{}, errors.New(id + " saw the abort")
	}
}

// awaitStarted waits until n gated executions are running and returns their ids.
func (g *gates) awaitStarted(n int) []string {
	var ids []string
	for range n {
		select {
		case id := <-g.started:
			ids = append(ids, id)
		case <-time.After(5 * time.Second):
			Fail("gated tools did not start")
		}
	}
	return ids
}

func (g *gates) open(id string) { close(g.release[id]) }

// ---- runtime

// fakeRuntime has a fixed wall clock and a monotonic clock that only tools advance, so
// durationMs is exact. Its Parallel runs the tasks one after another in source order — what
// pi does with tools that settle at once, and deterministic — unless concurrent is set, when
// it is RealRuntime's (the tasks at once, for specs that hold tools on gates).
type fakeRuntime struct {
	concurrent bool
	mu         sync.Mutex
	mono       time.Duration
}

func (*fakeRuntime) Now() int64 { return 1000 }

func (f *fakeRuntime) Monotonic() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mono
}

func (f *fakeRuntime) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mono += d
}

func (f *fakeRuntime) Parallel(tasks []func()) {
	if f.concurrent {
		loop.RealRuntime{}.Parallel(tasks)
		return
	}
	for _, task := range tasks {
		task()
	}
}

// ---- harness

// harness is one spec's world: a provider, tools, a recorder, a fake runtime and the config
// the run gets (Stream, OnEvent, Model and Runtime are filled in at run time).
type harness struct {
	provider *provider
	rec      *recorder
	rt       *fakeRuntime
	tools    []*loop.Tool
	history  []loop.Message
	cfg      loop.Config
	// listen, when set, sees every event after the recorder, synchronously (as a slow or
	// acting listener would).
	listen func(loop.Event)

	mu       sync.Mutex
	executed []string
}

func newHarness() *harness {
	return &harness{provider: &provider{}, rec: &recorder{}, rt: &fakeRuntime{}}
}

// addTool adds an executable tool whose executions the harness logs by call id.
func (h *harness) addTool(name string, exec execFunc) *loop.Tool {
	t := &loop.Tool{Name: name, Label: name, Description: name + " tool", Parameters: emptySchema}
	t.Execute = func(ctx context.Context, id string, args map[string]any, onUpdate func(loop.ToolResult)) (loop.ToolResult, error) {
		h.mu.Lock()
		h.executed = append(h.executed, id)
		h.mu.Unlock()
		if exec == nil {
			return okResult(name + " ok"), nil
		}
		return exec(ctx, id, args, onUpdate)
	}
	h.tools = append(h.tools, t)
	return t
}

// Executed lists the call ids whose tool ran, in the order they started.
func (h *harness) Executed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.executed)
}

func (h *harness) context() loop.Context {
	return loop.Context{Messages: slices.Clone(h.history), Tools: h.tools}
}

func (h *harness) config() loop.Config {
	cfg := h.cfg
	cfg.Stream = h.provider.Stream
	cfg.OnEvent = func(e loop.Event) {
		h.rec.OnEvent(e)
		if h.listen != nil {
			h.listen(e)
		}
	}
	cfg.Model = testModel
	cfg.Runtime = h.rt
	return cfg
}

// run runs the loop with one user prompt per text.
func (h *harness) run(prompts ...string) ([]loop.Message, error) {
	return h.runCtx(context.Background(), prompts...)
}

func (h *harness) runCtx(ctx context.Context, prompts ...string) ([]loop.Message, error) {
	msgs := make([]loop.Message, len(prompts))
	for i, p := range prompts {
		msgs[i] = user(p)
	}
	return loop.Run(ctx, msgs, h.context(), h.config())
}

// mustRun runs the loop and fails the spec if the run fails.
func (h *harness) mustRun(prompts ...string) []loop.Message {
	msgs, err := h.run(prompts...)
	Expect(err).NotTo(HaveOccurred())
	return msgs
}

func (h *harness) resume() ([]loop.Message, error) {
	return loop.Continue(context.Background(), h.context(), h.config())
}

// ---- queues

// countingQueue wraps a Queue and counts its polls.
type countingQueue struct {
	*loop.Queue
	mu    sync.Mutex
	polls int
}

func newCountingQueue(mode loop.QueueMode, messages ...loop.Message) *countingQueue {
	q := &countingQueue{Queue: loop.NewQueue(mode)}
	q.Enqueue(messages...)
	return q
}

func (q *countingQueue) Poll(ctx context.Context) ([]loop.Message, error) {
	q.mu.Lock()
	q.polls++
	q.mu.Unlock()
	return q.Queue.Poll(ctx)
}

func (q *countingQueue) Polls() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.polls
}

// ---- concurrency

// runAsync starts the run in a goroutine; the returned function waits for its messages.
func (h *harness) runAsync(ctx context.Context, prompts ...string) func() []loop.Message {
	done := make(chan []loop.Message, 1)
	go func() {
		defer GinkgoRecover()
		msgs, err := h.runCtx(ctx, prompts...)
		Expect(err).NotTo(HaveOccurred())
		done <- msgs
	}()
	return func() []loop.Message {
		var msgs []loop.Message
		Eventually(done, 5*time.Second).Should(Receive(&msgs))
		return msgs
	}
}

// completeInOrder opens the gates one by one, each after the previous call's
// tool_execution_end has been emitted.
func (h *harness) completeInOrder(g *gates, ids ...string) {
	for _, id := range ids {
		g.open(id)
		Eventually(h.rec.Lines, 5*time.Second).Should(ContainElement(HavePrefix("tool_execution_end " + id + " ")))
	}
}
