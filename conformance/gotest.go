package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// GoPort is an agent loop written in Go, verified in-process by Test the way
// testing/fstest.TestFS checks a file system: no protocol, no adapter process.
type GoPort interface {
	// Hello names the port and lists the hooks it supports (Hello.Hooks); scenarios that
	// install others, or need an optional feature it lacks (Hello.Lacks), are skipped.
	Hello() Hello
	// Run runs the port's loop for one scenario. It builds its configuration from
	// env.Setup(), reaches the simulated world only through env (model, tools, hooks, clock),
	// reports every event with env.Emit, and returns the run's new messages, or the error that
	// failed the run (its innermost error's text is compared with what the hook or stream
	// threw). ctx is cancelled when the scenario aborts the run.
	Run(ctx context.Context, env Env) (newMessages any, err error)
}

// Env is the simulated world as a Go port sees it. Calls answer at once; Stream.Next and
// Tool block until the world delivers what they wait for, in virtual time. The port must not
// block on anything else (no sleeps, no real I/O): Test detects that the port is idle with
// testing/synctest, and the bubble's fake clock is not the world's — use Now and Monotonic.
type Env interface {
	Setup() sim.Setup
	// Now is the virtual wall clock in Unix milliseconds (message timestamps).
	Now() int64
	// Monotonic is the virtual monotonic clock (durationMs).
	Monotonic() time.Duration
	// Hook calls an installed hook with its argument in pi's JSON shape
	// (conformance/PROTOCOL.md) and decodes the answer into out; an error means the hook threw.
	Hook(name string, data any, out any) error
	// Stream opens a provider request: data is {model, messages, thinkingLevel, apiKey}.
	Stream(data any) (Stream, error)
	// Tool runs a tool's execute; each partial result goes to onUpdate (on the calling
	// goroutine) before Tool returns the result, or the error the tool threw.
	Tool(toolCallID, toolName string, args any, onUpdate func(partial json.RawMessage)) (json.RawMessage, error)
	// Emit reports one event, in pi's JSON shape.
	Emit(event any)
	// Parallel runs tasks concurrently and returns when all have returned, starting each
	// only once the one before waits on the world (or has returned), so that their calls come
	// in source order as in JavaScript. Use it as your loop's executor for parallel tool calls.
	Parallel(tasks []func())
}

// Stream is an open provider request.
type Stream interface {
	// Next returns the next pi-ai stream event, ok=false at the end, or the error the stream
	// threw.
	Next() (event json.RawMessage, ok bool, err error)
	// Result is the final assistant message, from the done/error event or the end of the
	// stream.
	Result() (json.RawMessage, error)
}

// Test runs the embedded curated suite against port, one subtest per scenario, each in a
// synctest bubble, and fails a subtest with the first divergence from the reference.
func Test(t *testing.T, port GoPort) {
	t.Helper()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	list := make([]*sim.Scenario, 0, len(files))
	for _, f := range files {
		list = append(list, f.Scenario)
	}
	TestSuite(t, port, list)
}

// TestSuite is Test with a suite of one's own.
func TestSuite(t *testing.T, port GoPort, suite []*sim.Scenario) {
	t.Helper()
	hello := port.Hello()
	behaviour, err := loop.BehaviourOf(hello.Tracks)
	if err != nil {
		t.Fatalf("the port's hello: the reference cannot behave as the pi version it tracks: %v", err)
	}
	supported := map[string]bool{}
	for _, h := range hello.Hooks {
		supported[h] = true
	}
	for _, sc := range suite {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.Since != "" && hello.Tracks != "" && VersionLess(hello.Tracks, sc.Since) {
				t.Skipf("pins behaviour of pi %s; the port tracks pi %s", sc.Since, hello.Tracks)
			}
			for _, h := range sc.Hooks.Installed() {
				if !supported[h] {
					t.Skipf("installs hook %s, which the port does not support", h)
				}
			}
			if reason := lacksReason(hello.Lacks, sc); reason != "" {
				t.Skip(reason)
			}
			synctest.Test(t, func(t *testing.T) {
				res := verifyOne(sc, sim.NewReferenceWith(behaviour), &inProcess{port: port}, Strict, 3)
				if res.Status == Fail {
					msg := res.Reason
					if res.Divergence != nil {
						msg += "\n" + res.Divergence.Text("  ")
					}
					t.Error(msg)
				}
			})
		})
	}
}

// inProcess drives a GoPort as a sim.Implementation inside a synctest bubble.
type inProcess struct {
	port    GoPort
	world   sim.Port
	setup   sim.Setup
	cancel  context.CancelFunc
	mu      sync.Mutex
	now     int64
	streams map[string]*mailbox
	tools   map[string]*mailbox
	closed  chan struct{}
	// starting is closed once the task Parallel just started waits on the world.
	starting chan struct{}
}

// mailbox holds deliveries for one stream or tool call until its goroutine takes them.
type mailbox struct {
	mu     sync.Mutex
	queue  []sim.Delivery
	signal chan struct{}
}

func newMailbox() *mailbox { return &mailbox{signal: make(chan struct{}, 1)} }

func (m *mailbox) put(d sim.Delivery) {
	m.mu.Lock()
	m.queue = append(m.queue, d)
	m.mu.Unlock()
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

// take waits for the next delivery, or fails once the session is closed; waiting is
// reported to blocked first.
func (m *mailbox) take(closed <-chan struct{}, blocked func()) (sim.Delivery, error) {
	for {
		m.mu.Lock()
		if len(m.queue) > 0 {
			d := m.queue[0]
			m.queue = m.queue[1:]
			m.mu.Unlock()
			return d, nil
		}
		m.mu.Unlock()
		blocked()
		select {
		case <-m.signal:
		case <-closed:
			return sim.Delivery{}, errors.New("the simulation session was stopped")
		}
	}
}

func (p *inProcess) Start(setup sim.Setup, world sim.Port) error {
	p.world, p.setup = world, setup
	p.streams, p.tools, p.closed = map[string]*mailbox{}, map[string]*mailbox{}, make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		msgs, err := p.port.Run(ctx, p)
		end := map[string]any{"messages": msgs}
		if err != nil {
			// Go wraps errors with context; what is compared is what the hook, stream or
			// refusal said, the innermost error.
			for errors.Unwrap(err) != nil {
				err = errors.Unwrap(err)
			}
			end = map[string]any{"error": err.Error()}
		}
		data, jerr := json.Marshal(end)
		if jerr != nil {
			data, _ = json.Marshal(map[string]string{"error": "unencodable new messages: " + jerr.Error()})
		}
		p.world.Notify(sim.Notification{Kind: sim.NotifyEnd, Data: data})
	}()
	synctest.Wait()
	return nil
}

func (p *inProcess) Deliver(d sim.Delivery) error {
	p.mu.Lock()
	p.now = d.Now
	var box *mailbox
	switch d.Kind {
	case sim.DeliverAbort:
		p.cancel()
	case sim.DeliverToolUpdate, sim.DeliverToolResult:
		box = p.tools[d.Target]
	default:
		box = p.streams[d.Target]
	}
	p.mu.Unlock()
	if d.Kind != sim.DeliverAbort {
		if box == nil {
			return fmt.Errorf("delivery %s for unknown target %q", d.Kind, d.Target)
		}
		box.put(d)
	}
	synctest.Wait()
	return nil
}

func (p *inProcess) Stop() error {
	close(p.closed)
	p.cancel()
	synctest.Wait()
	return nil
}

func (p *inProcess) Setup() sim.Setup { return p.setup }

func (p *inProcess) Now() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now
}

func (p *inProcess) Monotonic() time.Duration { return time.Duration(p.Now()) * time.Millisecond }

func (p *inProcess) call(kind, name string, data any) (json.RawMessage, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	a := p.world.Call(sim.Call{Kind: kind, Name: name, Data: raw})
	if a.Error != "" {
		return nil, errors.New(a.Error)
	}
	return a.Data, nil
}

func (p *inProcess) Hook(name string, data any, out any) error {
	raw, err := p.call(sim.CallHook, name, data)
	if err != nil || out == nil || len(raw) == 0 {
		return err
	}
	return json.Unmarshal(raw, out)
}

func (p *inProcess) Emit(event any) {
	data, err := json.Marshal(event)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"type": "unencodable event: " + err.Error()})
	}
	p.world.Notify(sim.Notification{Kind: sim.NotifyEvent, Data: data})
}

func (p *inProcess) Stream(data any) (Stream, error) {
	raw, err := p.call(sim.CallStream, "", data)
	if err != nil {
		return nil, err
	}
	var out struct {
		Stream string `json:"stream"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	box := newMailbox()
	p.mu.Lock()
	p.streams[out.Stream] = box
	p.mu.Unlock()
	return &goStream{box: box, closed: p.closed, blocked: p.blocked}, nil
}

func (p *inProcess) Parallel(tasks []func()) {
	var wg sync.WaitGroup
	for _, task := range tasks {
		started := make(chan struct{})
		p.mu.Lock()
		p.starting = started
		p.mu.Unlock()
		wg.Go(func() {
			defer p.release(started)
			task()
		})
		<-started
	}
	wg.Wait()
}

// blocked notes that a goroutine waits on the world: the task Parallel started may go on.
func (p *inProcess) blocked() {
	p.mu.Lock()
	started := p.starting
	p.mu.Unlock()
	if started != nil {
		p.release(started)
	}
}

func (p *inProcess) release(started chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.starting == started {
		close(started)
		p.starting = nil
	}
}

func (p *inProcess) Tool(id, name string, args any, onUpdate func(json.RawMessage)) (json.RawMessage, error) {
	box := newMailbox()
	p.mu.Lock()
	p.tools[id] = box
	p.mu.Unlock()
	if _, err := p.call(sim.CallTool, "", map[string]any{"toolCallId": id, "toolName": name, "args": args}); err != nil {
		return nil, err
	}
	for {
		d, err := box.take(p.closed, p.blocked)
		if err != nil {
			return nil, err
		}
		if d.Kind == sim.DeliverToolUpdate {
			onUpdate(d.Data)
			continue
		}
		var out struct {
			Result json.RawMessage `json:"result"`
			Error  *string         `json:"error"`
		}
		if err := json.Unmarshal(d.Data, &out); err != nil {
			return nil, err
		}
		if out.Error != nil {
			return nil, errors.New(*out.Error)
		}
		return out.Result, nil
	}
}

// goStream is a Stream fed by deliveries.
type goStream struct {
	box     *mailbox
	closed  <-chan struct{}
	blocked func()
	final   json.RawMessage
	ended   bool
}

func (s *goStream) Next() (json.RawMessage, bool, error) {
	if s.ended {
		return nil, false, nil
	}
	d, err := s.box.take(s.closed, s.blocked)
	if err != nil {
		return nil, false, err
	}
	switch d.Kind {
	case sim.DeliverStreamEnd:
		var end struct {
			Message json.RawMessage `json:"message"`
		}
		_ = json.Unmarshal(d.Data, &end)
		s.final, s.ended = end.Message, true
		return nil, false, nil
	case sim.DeliverStreamFail:
		var f struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(d.Data, &f)
		return nil, false, errors.New(f.Error)
	}
	var head struct {
		Type    string          `json:"type"`
		Message json.RawMessage `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(d.Data, &head)
	switch head.Type {
	case "done":
		s.final = head.Message
	case "error":
		s.final = head.Error
	}
	return d.Data, true, nil
}

func (s *goStream) Result() (json.RawMessage, error) {
	if s.final == nil {
		return nil, errors.New("the stream ended without a final message")
	}
	return s.final, nil
}
