package porttest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// Port is an agent loop written in Go, verified in-process by Test the way
// testing/fstest.TestFS checks a file system: no protocol, no adapter process.
//
// A Port may also have pi's runToolCall (PROTOCOL.md §13.7, feature runToolCall), as a method
//
//	RunToolCall(ctx context.Context, env Env, toolCall json.RawMessage, onUpdate func(partial any)) (outcome any, err error)
//
// which runs one tool call (pi's JSON) through the port's lookup, validation, beforeToolCall,
// execute and afterToolCall, built from env.Setup() as Run builds them (the setup's tools, the
// transcript's last message as the hooks' assistant message, the transcript and the active
// tools as their context), reports each partial result to onUpdate, and returns pi's
// AgentToolCallOutcome in its JSON shape ({toolCall, result, isError, durationMs}); an error
// is runToolCall rejecting. ctx is cancelled at the scenario's abort. Test and Serve call it
// for each call of a runToolCall scenario; without it, the hello lacks runToolCall.
type Port interface {
	// Hello names the port and lists the hooks it supports (Hello.Hooks); scenarios that
	// install others, or need an optional feature it lacks (Hello.Lacks), are skipped.
	Hello() protocol.Hello
	// Run runs the port's loop for one scenario. It builds its configuration from
	// env.Setup(), reaches the simulated world only through env (model, tools, hooks, clock),
	// reports every event with env.Emit, and returns the run's new messages, or the error that
	// failed the run (its innermost error's text is compared with what the hook or stream
	// threw). ctx is cancelled when the scenario aborts the run.
	Run(ctx context.Context, env Env) (newMessages any, err error)
}

// Env is the simulated world as a Go port sees it. Calls answer at once; Stream.Next and
// Tool block until the world delivers what they wait for, in virtual time. The port runs in
// a testing/synctest bubble: it may wait on its own goroutines, channels and timers, but not
// on what the bubble cannot see (a sync.Mutex held across a wait, real I/O). The bubble's
// clock is the world's (time.Now is synctest's epoch plus the virtual time, mapped back in
// what the port sends), as are Now and Monotonic.
type Env interface {
	Setup() sim.Setup
	// Now is the virtual wall clock in Unix milliseconds (message timestamps).
	Now() int64
	// Monotonic is the virtual monotonic clock (durationMs).
	Monotonic() time.Duration
	// Hook calls an installed hook with its argument in pi's JSON shape
	// (conformance/PROTOCOL.md) and decodes the answer into out; an error means the hook threw.
	// It is HookContext for a hook given no abort signal.
	Hook(name string, data any, out any) error
	// HookContext is Hook for a hook given ctx as its abort signal (pi passes the run's to
	// transformContext, prepareRequest, finishTurn, beforeToolCall and afterToolCall, and its
	// Agent to prepareNextTurn). An answer that takes time (PROTOCOL.md §13.6, feature
	// waitingHooks) blocks until its hookReturn delivery, or, one waiting until the abort,
	// until ctx is done (at once when it is already).
	HookContext(ctx context.Context, name string, data any, out any) error
	// Stream opens a provider request: data is {model, messages, thinkingLevel, apiKey}.
	Stream(data any) (Stream, error)
	// Tool runs a tool's execute; each partial result goes to onUpdate (on the calling
	// goroutine) before Tool returns the result, or the error the tool threw. An execute
	// resolving nothing (protocol 2) returns nil for undefined and JSON null for null.
	Tool(toolCallID, toolName string, args any, onUpdate func(partial json.RawMessage)) (json.RawMessage, error)
	// Emit reports one event, in pi's JSON shape.
	Emit(event any)
	// Parallel runs tasks concurrently and returns when all have returned, starting each
	// only once the one before waits on the world (or has returned), so that their calls come
	// in source order as in JavaScript. A goroutine per task started in order does the same
	// in a bubble (the kit lets the one started first reach the world first).
	Parallel(tasks []func())
}

// Stream is an open provider request.
type Stream interface {
	// Next returns the next pi-ai stream event, ok=false at the end (after the done or error
	// event, or when the stream ends without one), or the error the stream threw.
	Next() (event json.RawMessage, ok bool, err error)
	// Result is the final assistant message, from the done/error event or the end of the
	// stream.
	Result() (json.RawMessage, error)
}

// Option tunes Test and TestFiles.
type Option func(*testConfig)

type testConfig struct {
	profile    trace.Profile
	expectFail []string
	tracks     string
	stall      time.Duration
	collect    *Report
}

// defaultStallLimit is how long in real time Test lets one scenario go without progress (a
// delivery of the world or an event of the port) before it ends the test binary as stuck
// (StallLimit); a step of the curated suite takes microseconds.
const defaultStallLimit = 60 * time.Second

// StallLimit sets how long in real time one scenario may go without progress
// (defaultStallLimit; 0: no limit); a slow port's long scenario is not stuck. A port that
// waits on something other than Env (a mutex, a channel or goroutine of its own, real I/O) or
// spins is never idle, and nothing inside the synctest bubble can stop it: at the limit Test
// ends the test binary with the scenario's name, what such a port does, and every goroutine's
// stack, instead of leaving it to go test's -timeout.
func StallLimit(d time.Duration) Option { return func(c *testConfig) { c.stall = d } }

// Collect stores the report of the run in r once every scenario has run: verdicts,
// findings and causes, as turnstile conform's JSON report has them.
func Collect(r *Report) Option { return func(c *testConfig) { c.collect = r } }

// WithProfile compares under profile (Strict by default).
func WithProfile(p trace.Profile) Option { return func(c *testConfig) { c.profile = p } }

// ExpectFailures names scenarios known to fail: their failure is reported (and the subtest
// skipped) as expected; such a scenario passing fails its subtest ("unexpected pass"), so
// the list shrinks as the port improves. A name not in the suite fails the test at once.
func ExpectFailures(names ...string) Option {
	return func(c *testConfig) { c.expectFail = append(c.expectFail, names...) }
}

// Tracking says which pi version the port tracks, overriding Hello().Tracks: scenarios
// pinning behaviour of a later pi are skipped.
func Tracking(version string) Option { return func(c *testConfig) { c.tracks = version } }

// Test runs the embedded curated suite against port, one subtest per scenario, each in a
// synctest bubble. A failing subtest lists every finding (package diagnose): each region
// and field where the port's trace differs from the reference's, each broken invariant,
// each unmet expectation of the scenario. Once all have run, Test logs the causes ranked
// by the number of scenarios they explain, the profile by family and invariant, and the
// line "N passed, M failed, K skipped", as turnstile conform does.
func Test(t *testing.T, port Port, opts ...Option) {
	t.Helper()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	testFiles(t, port, files, opts)
}

// TestFiles is Test with loaded scenario files (scenarios.Load).
func TestFiles(t *testing.T, port Port, files []*scenarios.File, opts ...Option) {
	t.Helper()
	testFiles(t, port, files, opts)
}

func testFiles(t *testing.T, port Port, files []*scenarios.File, options []Option) {
	t.Helper()
	s := newPortSuite(t, port, files, options)
	report := Report{Implementation: conformance.DescribeHello(protocol.Hello{Name: s.hello.Name, Version: s.hello.Version, Tracks: s.tracks}, ""), Profile: s.cfg.profile}
	began := time.Now()
	for _, f := range files {
		sc := f.Scenario
		desc := s.opts.Scenarios[sc.Name]
		// A subtest go test -run leaves out never runs its function: it stays skipped so.
		res := conformance.Result{Scenario: sc.Name, Family: desc.Family, Status: conformance.Skip, Reason: "left out by go test -run"}
		t.Run(sc.Name, func(t *testing.T) { s.test(t, sc, desc, &res) })
		report.Count(res)
		report.Results = append(report.Results, res)
	}
	report.Duration = time.Since(began)
	report.Finish(s.opts)
	var b strings.Builder
	_ = report.WriteSummary(&b)
	t.Log("\n" + b.String())
	if s.cfg.collect != nil {
		*s.cfg.collect = report
	}
}

// portSuite is a Go port tested against a suite, as its options and hello set it up.
type portSuite struct {
	port      Port
	cfg       testConfig
	expect    map[string]bool // the scenarios expected to fail
	hello     protocol.Hello
	tracks    string          // the pi the port is held to
	behaviour loop.Behaviour  // the reference's, as that pi
	supported map[string]bool // the hooks the port supports
	opts      conformance.Options
}

// newPortSuite applies the options and reads the port's hello; it fails t on a bad
// ExpectFailures list or hello.
func newPortSuite(t *testing.T, port Port, files []*scenarios.File, options []Option) *portSuite {
	t.Helper()
	s := &portSuite{port: port, cfg: testConfig{profile: trace.Strict, stall: defaultStallLimit}, supported: map[string]bool{}}
	for _, o := range options {
		o(&s.cfg)
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, f.Scenario.Name)
	}
	var err error
	if s.expect, err = conformance.CheckNames(s.cfg.expectFail, names); err != nil {
		t.Fatalf("ExpectFailures: %v", err)
	}
	s.hello = portHello(port, true)
	if err := checkHello(s.hello); err != nil {
		t.Fatalf("the port's Hello(): %v", err)
	}
	s.tracks = cmp.Or(s.cfg.tracks, s.hello.Tracks)
	if s.behaviour, err = loop.BehaviourOf(s.tracks); err != nil {
		t.Fatalf("the port's hello: the reference cannot behave as the pi version it tracks: %v", err)
	}
	for _, h := range s.hello.Hooks {
		s.supported[h] = true
	}
	s.opts = conformance.Options{Profile: s.cfg.profile, ExpectFail: s.expect, Scenarios: diagnose.FromFiles(files)}
	return s
}

// test is the subtest of scenario sc: it skips what the port cannot run, else verifies the
// port in a bubble and reports the verdict in res and t.
func (s *portSuite) test(t *testing.T, sc *sim.Scenario, desc diagnose.Scenario, res *conformance.Result) {
	res.Reason = ""
	if sc.Since != "" && s.tracks != "" && conformance.VersionLess(s.tracks, sc.Since) {
		res.Reason = fmt.Sprintf("pins behaviour of pi %s; the port tracks pi %s", sc.Since, s.tracks)
		t.Skip(res.Reason)
	}
	for _, h := range sc.Hooks.Installed() {
		if !s.supported[h] {
			res.Reason = fmt.Sprintf("installs hook %s, which the port does not support", h)
			t.Skip(res.Reason)
		}
	}
	if reason := conformance.LacksReason(s.hello, sc); reason != "" {
		res.Reason = reason
		t.Skip(reason)
	}
	impl := &inProcess{port: s.port, checkShapes: true}
	if s.cfg.stall > 0 {
		defer watchStall(s.cfg.stall, impl.progress.Load, func() { stalled(sc.Name, s.cfg.stall) })()
	}
	attempts := 0
	run := func() (*trace.Trace, error) {
		attempts++
		return inBubble(t, sc, impl, attempts)
	}
	*res = conformance.VerifyOne(sc, sim.NewReferenceWith(s.behaviour), run, s.hello, s.cfg.profile, levels.Pi, desc, nil)
	res.Family = desc.Family
	if note := impl.leakNote(); note != "" {
		t.Log(note)
	}
	switch {
	case res.Status == conformance.Fail && s.expect[sc.Name]:
		res.Status, res.Reason = conformance.ExpectedFail, "expected failure: "+res.Reason
		t.Skip(res.Reason + "\n" + conformance.FindingsText(res.Findings, "  ", 0))
	case res.Status == conformance.Fail:
		t.Error(res.Reason + "\n" + conformance.FindingsText(res.Findings, "  ", 0))
	case res.Status == conformance.Pass && s.expect[sc.Name]:
		res.Status, res.Reason = conformance.Fail, conformance.UnexpectedPassReason
		t.Error(res.Reason)
	}
}

// inBubble runs sc against impl in a synctest bubble of its own, each run (a scenario run
// again too) in a new one: a bubble's clock and goroutines do not carry over. A port that
// leaves goroutines waiting after the scenario (impl.leaked) would make synctest end the
// binary as deadlocked: that bubble is abandoned instead, waiting outside its sight. attempt
// says which run of sc it is (sim.Setup.Attempt).
func inBubble(t *testing.T, sc *sim.Scenario, impl *inProcess, attempt int) (*trace.Trace, error) {
	var tr *trace.Trace
	var err error
	ran, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		synctest.Test(t, func(*testing.T) {
			tr, err = sim.Run(sc, conformance.Attempt(impl, attempt))
			close(ran)
			if len(impl.leaked) > 0 {
				<-forever
			}
		})
	}()
	select {
	case <-ran:
	case <-ended:
		select {
		case <-ran: // both were closed by the time this goroutine looked
		default: // the bubble ended without a result (a panic in the harness, reported by testing)
			t.FailNow()
		}
	}
	if len(impl.leaked) == 0 {
		<-ended
	}
	return tr, err
}

// portHello is port's Hello as the kit serves it: a port of protocol 2 that is not a
// AgentPort, or served without bubbles, lacks the Agent; served without bubbles it lacks
// waitingHooks too (a hook that waits would be a goroutine the kit cannot count); one without
// a RunToolCall method lacks runToolCall (§13.7). Every port lacks defaultModel (§13.8): the
// kit has no way to learn whether a port's Agent has a default model.
func portHello(port Port, bubbles bool) protocol.Hello {
	h := port.Hello()
	_, agent := port.(AgentPort)
	_, runner := port.(toolCallRunner)
	if h.Protocol >= 2 && (!agent || !bubbles) && !slices.Contains(h.Lacks, sim.FeatureAgent) {
		h.Lacks = append(slices.Clone(h.Lacks), sim.FeatureAgent)
	}
	if h.Protocol >= 2 && !bubbles && !slices.Contains(h.Lacks, sim.FeatureWaitingHooks) {
		h.Lacks = append(slices.Clone(h.Lacks), sim.FeatureWaitingHooks)
	}
	if h.Protocol >= 2 && !runner && !slices.Contains(h.Lacks, sim.FeatureRunToolCall) {
		h.Lacks = append(slices.Clone(h.Lacks), sim.FeatureRunToolCall)
	}
	if h.Protocol >= 2 && !slices.Contains(h.Lacks, sim.FeatureDefaultModel) {
		h.Lacks = append(slices.Clone(h.Lacks), sim.FeatureDefaultModel)
	}
	return h
}

// checkHello holds a Go port's Hello to what the protocol's schema asks of a hello (which
// Serve's clients check): a pi version it tracks, hooks and lacked features by their
// names. A name mistyped would otherwise skip scenarios silently, or run ones the port
// cannot serve.
func checkHello(h protocol.Hello) error {
	var bad []string
	if strings.TrimSpace(h.Tracks) == "" {
		bad = append(bad, `Tracks is empty: say which pi release the port follows ("1.6.0")`)
	}
	unknown := func(field, name string, known []string) {
		msg := fmt.Sprintf("%s: %q is not one of %s", field, name, strings.Join(known, ", "))
		if near := conformance.Nearest(name, known); near != "" {
			msg = fmt.Sprintf("%s: %q is not one of them (did you mean %q?): %s", field, name, near, strings.Join(known, ", "))
		}
		bad = append(bad, msg)
	}
	for _, name := range h.Hooks {
		if !slices.Contains(protocol.AllHooks, name) {
			unknown("Hooks", name, protocol.AllHooks)
		}
	}
	for _, name := range h.Lacks {
		if !slices.Contains(sim.Features, name) {
			unknown("Lacks", name, sim.Features)
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// watchStall calls onStall once progress has not moved for limit in real time; the function
// it returns stops the watch.
func watchStall(limit time.Duration, progress func() int64, onStall func()) (stop func()) {
	var mu sync.Mutex
	var timer *time.Timer
	done, seen := false, progress()
	var check func()
	check = func() {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		if now := progress(); now != seen {
			seen = now
			timer = time.AfterFunc(limit, check)
			return
		}
		done = true
		onStall()
	}
	mu.Lock()
	timer = time.AfterFunc(limit, check)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		done = true
		timer.Stop()
	}
}

// stalled ends the test binary when scenario has made no progress for limit in real time: its
// port can make none the bubble sees, and no verdict of this scenario or a later one can come.
// It panics as go test's -timeout does, with every goroutine's stack.
func stalled(scenario string, limit time.Duration) {
	debug.SetTraceback("all")
	panic(fmt.Sprintf("porttest.Test: scenario %s has made no progress for %v of real time and is not idle: "+
		"the port waits on something other than Env (a sync.Mutex, a channel or goroutine of its own, "+
		"time.Sleep, real I/O) or spins, so no delivery can come; look in the stacks below for the "+
		"port's goroutine and what it waits on (porttest.StallLimit sets the limit; porttest.Serve "+
		"and turnstile conform --timeout end only the scenario and go on)", scenario, limit))
}

// inProcess drives a Port as a sim.Implementation inside a synctest bubble (or, served
// where there are no bubbles, counting the port's goroutines waiting in Env).
type inProcess struct {
	port  Port
	world sim.Port
	// progress counts the world's deliveries and the port's events, for the stall watch.
	progress atomic.Int64
	setup    sim.Setup
	cancel   context.CancelFunc
	mu       sync.Mutex
	now      int64
	streams  map[string]*mailbox
	tools    map[string]*mailbox
	// settled holds the tool calls whose execute has returned: an update delivered to one of
	// them is accepted and dropped, as pi drops updates after a tool settles.
	settled map[string]bool
	// returns are the hook answers that wait for a hookReturn delivery, by its target.
	returns map[string]*hookWait
	closed  chan struct{}
	// bubble is the synctest bubble the session runs in, 0 for none; gate orders the port's
	// goroutines' calls and events in it.
	bubble int
	gate   *gate
	// idle tells when the port is idle outside a synctest bubble; nil inside.
	idle *idleTracker
	// agent is the Agent of an Agent scenario.
	agent *agentSession
	// problems are what the port did that no trace entry can show; Stop returns them.
	problems []string
	// checkShapes holds what the port sends to the protocol schema, as the harness does with
	// a served port's lines (Test); shapes are what broke pi's shape.
	checkShapes bool
	shapes      protocol.ShapeProblems
	// leaked are the port's goroutines still there after Stop.
	leaked []goroutineStack
	// starting is closed once the task Parallel just started waits on the world.
	starting chan struct{}
}

// mailbox holds deliveries for one stream or tool call until its goroutine takes them.
type mailbox struct {
	mu     sync.Mutex
	queue  []sim.Delivery
	signal chan struct{}
	// idle, outside a synctest bubble, counts the port's running goroutines: a delivery
	// put here carries a token for the goroutine it wakes.
	idle *idleTracker
}

func newMailbox(idle *idleTracker) *mailbox {
	return &mailbox{signal: make(chan struct{}, 1), idle: idle}
}

func (m *mailbox) put(d sim.Delivery) {
	m.idle.add(1)
	m.mu.Lock()
	m.queue = append(m.queue, d)
	m.mu.Unlock()
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

// take waits for the next delivery, or fails once the session is closed; waiting is
// reported to blocked first. The goroutine gives up its token while it waits and takes the
// delivery's when it wakes.
func (m *mailbox) take(closed <-chan struct{}, blocked func()) (sim.Delivery, error) {
	waited := false
	for {
		m.mu.Lock()
		if len(m.queue) > 0 {
			d := m.queue[0]
			m.queue = m.queue[1:]
			m.mu.Unlock()
			if !waited {
				m.idle.add(-1) // it still holds its own token: the delivery's is not needed
			}
			return d, nil
		}
		m.mu.Unlock()
		blocked()
		if !waited {
			waited = true
			m.idle.add(-1)
		}
		select {
		case <-m.signal:
		case <-closed:
			m.idle.add(1)
			return sim.Delivery{}, errors.New("the simulation session was stopped")
		}
	}
}

// idleTracker tells when a Go port served outside a synctest bubble is idle: it counts the
// port's goroutines that are running — the run itself and Parallel's tasks — each holding a
// token it gives up while it waits for the world in a mailbox. Zero tokens is idle. A nil
// tracker does nothing (inside a bubble, synctest.Wait tells).
type idleTracker struct {
	mu     sync.Mutex
	cond   *sync.Cond
	active int
}

func newIdleTracker() *idleTracker {
	t := &idleTracker{}
	t.cond = sync.NewCond(&t.mu)
	return t
}

func (t *idleTracker) add(n int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.active += n
	if t.active <= 0 {
		t.cond.Broadcast()
	}
	t.mu.Unlock()
}

// wait returns once no goroutine of the port runs.
func (t *idleTracker) wait() {
	t.mu.Lock()
	for t.active > 0 {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

// settle waits until the port waits on the world or has returned: in a bubble, until every
// goroutine of it waits and none waits at the gate; then it reports the Agent operations
// whose calls returned.
func (p *inProcess) settle() {
	if p.idle != nil {
		p.idle.wait()
		return
	}
	for {
		synctest.Wait()
		if !p.gate.grant() {
			break
		}
	}
	p.reportSettled()
}

// synctestEpoch is the time a synctest bubble's clock starts at, in Unix milliseconds.
const synctestEpoch = 946684800000

// syncClock moves the bubble's clock to the world's time now: a port reading time.Now()
// reads synctestEpoch plus the world's virtual time, and its timers fire as virtual time
// passes.
func (p *inProcess) syncClock(now int64) {
	if p.bubble == 0 {
		return
	}
	if d := time.UnixMilli(synctestEpoch + now).Sub(time.Now()); d > 0 {
		time.Sleep(d)
	}
}

// worldTimes maps the bubble's clock back to the world's in what the port sends: a
// "timestamp" between synctestEpoch and ten years after it is a reading of time.Now() in
// the bubble, synctestEpoch plus the world's time.
func worldTimes(data []byte) []byte {
	const key = `"timestamp":`
	if !bytes.Contains(data, []byte(key+"94")) && !bytes.Contains(data, []byte(key+"95")) && !bytes.Contains(data, []byte(key+"126")) {
		return data
	}
	var out []byte
	rest := data
	for {
		i := bytes.Index(rest, []byte(key))
		if i < 0 {
			break
		}
		start := i + len(key)
		end := start
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		n, err := strconv.ParseInt(string(rest[start:end]), 10, 64)
		integer := end == len(rest) || (rest[end] != '.' && rest[end] != 'e' && rest[end] != 'E')
		if err == nil && integer && (i == 0 || rest[i-1] != '\\') && n >= synctestEpoch && n < synctestEpoch+10*365*86_400_000 {
			out = append(out, rest[:start]...)
			out = strconv.AppendInt(out, n-synctestEpoch, 10)
		} else {
			out = append(out, rest[:end]...)
		}
		rest = rest[end:]
	}
	return append(out, rest...)
}

func (p *inProcess) Start(setup sim.Setup, world sim.Port) error {
	p.world, p.setup = world, setup
	p.streams, p.tools, p.closed = map[string]*mailbox{}, map[string]*mailbox{}, make(chan struct{})
	p.settled, p.returns = map[string]bool{}, map[string]*hookWait{}
	// A session of its own: Verify runs a failing scenario again on the same implementation.
	p.problems, p.shapes, p.agent, p.leaked, p.starting = nil, protocol.ShapeProblems{}, nil, nil, nil
	p.now = 0 // the world's clock starts again
	if p.idle == nil {
		// A scenario's first run takes the oldest goroutine first, and its runs again
		// alternate, wherever they are served: a run again can show a scheduler's order.
		p.bubble, p.gate = bubbleOfCaller(), &gate{newestFirst: setup.Attempt > 1 && setup.Attempt%2 == 0}
		p.syncClock(0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	if setup.Entry == sim.EntryRunToolCall {
		err := p.startRunToolCall(ctx)
		p.settle()
		return err
	}
	if setup.Entry == sim.EntryAgent {
		err := p.startAgent(setup)
		p.settle()
		return err
	}
	p.idle.add(1)
	go func() {
		defer p.idle.add(-1)
		msgs, err := p.run(ctx)
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
			p.problem("the port returned new messages that cannot be encoded as JSON: " + jerr.Error())
			data, _ = json.Marshal(map[string]any{"messages": nil})
		}
		p.gate.enter()
		n := sim.Notification{Kind: sim.NotifyEnd, Data: p.fromBubble(data)}
		p.checkShape(protocol.Message{Type: protocol.TypeNotify, Notification: &n})
		p.world.Notify(n)
	}()
	p.settle()
	return nil
}

// fromBubble is data with the bubble's clock readings mapped to the world's.
func (p *inProcess) fromBubble(data []byte) []byte {
	if p.bubble == 0 {
		return data
	}
	return worldTimes(data)
}

// run runs the port; a panic fails the run with its value, and the scenario with its stack
// (a finding), instead of ending the test binary.
func (p *inProcess) run(ctx context.Context) (msgs any, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.problem(fmt.Sprintf("the port panicked in Run: %v\n%s", r, debug.Stack()))
			msgs, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return p.port.Run(ctx, p)
}

// safely calls one of the port's methods; a panic is a problem of the scenario, and the
// call's error.
func (p *inProcess) safely(what string, call func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			p.problem(fmt.Sprintf("the port panicked in %s: %v\n%s", what, r, debug.Stack()))
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return call()
}

func (p *inProcess) Deliver(d sim.Delivery) error {
	p.progress.Add(1)
	p.syncClock(d.Now)
	p.mu.Lock()
	p.now = d.Now
	var box *mailbox
	switch d.Kind {
	case trace.DeliverAbort:
		p.cancel()
	case trace.DeliverAgent, trace.DeliverHookReturn:
	case trace.DeliverToolUpdate, trace.DeliverToolResult:
		box = p.tools[d.Target]
	default:
		box = p.streams[d.Target]
	}
	late := d.Kind == trace.DeliverToolUpdate && p.settled[d.Target]
	p.mu.Unlock()
	switch {
	case d.Kind == trace.DeliverAgent:
		if err := p.operate(d); err != nil {
			return err
		}
	case d.Kind == trace.DeliverHookReturn:
		if err := p.hookReturn(d.Target); err != nil {
			return err
		}
	case d.Kind != trace.DeliverAbort && !late:
		if box == nil {
			return fmt.Errorf("delivery %s for unknown target %q", d.Kind, d.Target)
		}
		box.put(d)
	}
	p.settle()
	return nil
}

// Stop ends the session; its error lists what the port did that the trace cannot show
// (values that cannot be encoded). A port's goroutine still there once everything it could
// wait on has failed is noted in leaked.
func (p *inProcess) Stop() error {
	close(p.closed)
	p.cancel()
	if p.agent != nil {
		p.agent.a.Abort()
	}
	p.settle()
	if p.bubble != 0 {
		p.leaked = portGoroutines(p.bubble)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	problems := p.problems
	if p.shapes.String() != "" {
		if len(problems) == 0 {
			return &protocol.ShapeError{Problems: p.shapes.String()}
		}
		problems = append(problems, p.shapes.String())
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// checkShape notes what of m's data breaks pi's shape, as the harness would reading m.
func (p *inProcess) checkShape(m protocol.Message) {
	if !p.checkShapes {
		return
	}
	m.Session = 1
	if problem := m.ShapeProblem(); problem != "" {
		p.mu.Lock()
		p.shapes.Add(problem)
		p.mu.Unlock()
	}
}

// leakNote says which goroutines of the port outlived its session, or "".
func (p *inProcess) leakNote() string {
	if len(p.leaked) == 0 {
		return ""
	}
	return fmt.Sprintf("the Go port left %d goroutine(s) waiting after the scenario stopped (Run's ctx cancelled, every "+
		"Env call failing): the kit's rule is that a port's goroutines return then; they are abandoned, and the "+
		"verdict stands:%s", len(p.leaked), describeGoroutines(p.leaked))
}

func (p *inProcess) Setup() sim.Setup { return p.setup }

func (p *inProcess) Now() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now
}

func (p *inProcess) Monotonic() time.Duration { return time.Duration(p.Now()) * time.Millisecond }

func (p *inProcess) call(kind, name string, data any) (json.RawMessage, error) {
	a, err := p.ask(kind, name, data)
	if err != nil {
		return nil, err
	}
	if a.Error != "" {
		return nil, errors.New(a.Error)
	}
	return a.Data, nil
}

// ask makes a call and returns the world's answer; an error is data that cannot be encoded.
func (p *inProcess) ask(kind, name string, data any) (sim.Answer, error) {
	raw, err := payloadJSON(data)
	if err != nil {
		return sim.Answer{}, err
	}
	p.gate.enter()
	c := sim.Call{Kind: kind, Name: name, Data: p.fromBubble(raw)}
	p.checkShape(protocol.Message{Type: protocol.TypeCall, ID: 1, Call: &c})
	a := p.world.Call(c)
	if a.Abort {
		// An abort while the hook runs, before it returns (PROTOCOL.md §13.5).
		if p.agent != nil {
			p.agent.a.Abort()
		} else {
			p.cancel()
		}
	}
	return a, nil
}

func (p *inProcess) Hook(name string, data any, out any) error {
	return p.HookContext(context.Background(), name, data, out)
}

func (p *inProcess) HookContext(ctx context.Context, name string, data any, out any) error {
	a, err := p.ask(trace.CallHook, name, data)
	if err != nil {
		return err
	}
	if a.Wait != "" || a.UntilAbort {
		if err := p.awaitReturn(ctx, a); err != nil {
			return err
		}
	}
	if a.Error != "" {
		return errors.New(a.Error)
	}
	if out == nil || len(a.Data) == 0 {
		return nil
	}
	return json.Unmarshal(a.Data, out)
}

// hookWait is a hook answer waiting for its hookReturn delivery; returned is set (under
// inProcess.mu) once the hook returned, by the delivery or by the abort.
type hookWait struct {
	done     chan struct{}
	returned bool
}

// awaitReturn blocks the calling goroutine until answer a may be returned: at its hookReturn
// delivery (a.Wait), or once ctx is done (a.UntilAbort), whichever comes first.
func (p *inProcess) awaitReturn(ctx context.Context, a sim.Answer) error {
	if p.idle != nil {
		return errors.New("a hook answer that waits, served without synctest bubbles (the kit lacks waitingHooks there)")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// Returned at once when the signal has fired: its hookReturn, if it has one, still comes
	// and changes nothing.
	w := &hookWait{done: make(chan struct{}), returned: a.UntilAbort && ctx.Err() != nil}
	if a.Wait != "" {
		p.mu.Lock()
		p.returns[a.Wait] = w
		p.mu.Unlock()
	}
	if w.returned {
		return nil
	}
	var aborted, returned <-chan struct{}
	if a.UntilAbort {
		aborted = ctx.Done()
	}
	if a.Wait != "" {
		returned = w.done
	}
	p.blocked()
	select {
	case <-returned:
	case <-aborted:
		p.mu.Lock()
		w.returned = true
		p.mu.Unlock()
	case <-p.closed:
		return errors.New("the simulation session was stopped")
	}
	return nil
}

// hookReturn lets the hook whose answer waits for target return; a hook that returned
// already (by the abort) is left as it is.
func (p *inProcess) hookReturn(target string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.returns[target]
	if w == nil {
		return fmt.Errorf("hookReturn for unknown hook wait %q", target)
	}
	if !w.returned {
		w.returned = true
		close(w.done)
	}
	return nil
}

// Emit reports an event. One that cannot be encoded as JSON is not recorded (there is no
// honest event to record): it is a problem of the run, which Stop reports as its error, and
// so a finding of the scenario.
func (p *inProcess) Emit(event any) { p.emit(event) }

// emit is Emit, returning the event's type.
func (p *inProcess) emit(event any) string {
	p.progress.Add(1)
	data, err := payloadJSON(event)
	if err != nil {
		p.problem(fmt.Sprintf("the port emitted an event that cannot be encoded as JSON (%T): %v", event, err))
		return ""
	}
	typ := eventType(event, data)
	p.gate.enter()
	n := sim.Notification{Kind: sim.NotifyEvent, Data: p.fromBubble(data)}
	p.checkShape(protocol.Message{Type: protocol.TypeNotify, Notification: &n})
	p.world.Notify(n)
	return typ
}

// notify sends one of the kit's own notifications (an operation's outcome).
func (p *inProcess) notify(kind string, v any) {
	data, err := payloadJSON(v)
	if err != nil {
		p.problem(fmt.Sprintf("the port's %s cannot be encoded as JSON: %v", kind, err))
		return
	}
	n := sim.Notification{Kind: kind, Data: p.fromBubble(data)}
	p.checkShape(protocol.Message{Type: protocol.TypeNotify, Notification: &n})
	p.world.Notify(n)
}

// problem notes something the port did that no trace entry can show.
func (p *inProcess) problem(msg string) {
	p.mu.Lock()
	p.problems = append(p.problems, msg)
	p.mu.Unlock()
}

func (p *inProcess) Stream(data any) (Stream, error) {
	raw, err := p.call(trace.CallStream, "", data)
	if err != nil {
		return nil, err
	}
	var out struct {
		Stream string `json:"stream"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	box := newMailbox(p.idle)
	p.mu.Lock()
	p.streams[out.Stream] = box
	p.mu.Unlock()
	return &goStream{box: box, closed: p.closed, blocked: p.blocked}, nil
}

func (p *inProcess) Parallel(tasks []func()) {
	var wg sync.WaitGroup
	// Outside a bubble, each task holds a token while it runs; the last to return hands
	// its token to this goroutine, which gives its own up while it waits for them.
	var left sync.Mutex
	remaining := len(tasks)
	for _, task := range tasks {
		started := make(chan struct{})
		p.mu.Lock()
		p.starting = started
		p.mu.Unlock()
		p.idle.add(1)
		wg.Go(func() {
			defer func() {
				left.Lock()
				remaining--
				last := remaining == 0
				left.Unlock()
				if !last {
					p.idle.add(-1)
				}
			}()
			defer p.release(started)
			defer func() {
				if r := recover(); r != nil {
					p.problem(fmt.Sprintf("the port panicked in a task of Parallel: %v\n%s", r, debug.Stack()))
				}
			}()
			task()
		})
		<-started
	}
	if len(tasks) > 0 {
		p.idle.add(-1)
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
	box := newMailbox(p.idle)
	p.mu.Lock()
	p.tools[id] = box
	delete(p.settled, id) // a later call may reuse a settled call's id (a model repeats ids)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.tools, id)
		p.settled[id] = true
		p.mu.Unlock()
	}()
	if _, err := p.call(trace.CallTool, "", map[string]any{"toolCallId": id, "toolName": name, "args": args}); err != nil {
		return nil, err
	}
	for {
		d, err := box.take(p.closed, p.blocked)
		if err != nil {
			return nil, err
		}
		if d.Kind == trace.DeliverToolUpdate {
			onUpdate(d.Data)
			continue
		}
		var out struct {
			Result  json.RawMessage `json:"result"`
			Error   *string         `json:"error"`
			Nothing string          `json:"nothing"`
		}
		if err := json.Unmarshal(d.Data, &out); err != nil {
			return nil, err
		}
		switch {
		case out.Error != nil:
			return nil, errors.New(*out.Error)
		case out.Nothing == "null":
			return json.RawMessage("null"), nil
		case out.Nothing != "":
			return nil, nil
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
	case trace.DeliverStreamEnd:
		var end struct {
			Message json.RawMessage `json:"message"`
		}
		_ = json.Unmarshal(d.Data, &end)
		s.final, s.ended = end.Message, true
		return nil, false, nil
	case trace.DeliverStreamFail:
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
	// done and error end the iteration, as pi's event stream does: the Next after them
	// returns ok false (as the TypeScript and Python kits' iterators end).
	switch head.Type {
	case "done":
		s.final, s.ended = head.Message, true
	case "error":
		s.final, s.ended = head.Error, true
	}
	return d.Data, true, nil
}

func (s *goStream) Result() (json.RawMessage, error) {
	if s.final == nil {
		return nil, errors.New("the stream ended without a final message")
	}
	return s.final, nil
}
