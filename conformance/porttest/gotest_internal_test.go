package porttest

import (
	"context"
	"os"
	"os/exec"
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
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// badEventPort emits an event that cannot be encoded, then returns.
type badEventPort struct{}

func (badEventPort) Hello() protocol.Hello { return protocol.Hello{Name: "bad", Tracks: "1.6.0"} }

func (badEventPort) Run(_ context.Context, env Env) (any, error) {
	env.Emit(map[string]any{"type": "agent_start", "oops": make(chan int)})
	return []any{}, nil
}

// TestUnencodableEventIsAFinding: in-process, an event a Go port emits that cannot be
// encoded is an error finding, never recorded as a made-up event.
func TestUnencodableEventIsAFinding(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	f := files[0]
	synctest.Test(t, func(t *testing.T) {
		res := conformance.VerifyOne(f.Scenario, sim.NewReference(), runOf(f.Scenario, &inProcess{port: badEventPort{}}), protocol.Hello{}, trace.Strict, levels.Pi, diagnose.FromFile(f), nil)
		if res.Status != conformance.Fail {
			t.Fatalf("status %s", res.Status)
		}
		var errs []diagnose.Finding
		for _, fd := range res.Findings {
			if fd.Kind == diagnose.Error {
				errs = append(errs, fd)
			}
			if strings.Contains(fd.Actual, "unencodable") {
				t.Errorf("a made-up value was recorded: %s", fd.Actual)
			}
		}
		if len(errs) != 1 || !strings.Contains(errs[0].Says, "cannot be encoded as JSON") {
			t.Fatalf("error findings %v", errs)
		}
	})
}

// TestAStreamEndsAfterDone: Next returns ok false after a done event (and after an error
// event), as the kits' iterators and pi's event stream end; a port reading Next until ok is
// false must not wait for a delivery that never comes (a stranger's port hung every
// scenario).
func TestAStreamEndsAfterDone(t *testing.T) {
	for _, last := range []string{`{"type":"done","reason":"stop","message":{"role":"assistant"}}`, `{"type":"error","reason":"error","error":{"role":"assistant"}}`} {
		box := newMailbox(nil)
		box.put(sim.Delivery{Kind: trace.DeliverStreamEvent, Data: []byte(`{"type":"start"}`)})
		box.put(sim.Delivery{Kind: trace.DeliverStreamEvent, Data: []byte(last)})
		closed := make(chan struct{})
		s := &goStream{box: box, closed: closed, blocked: func() { close(closed) }}
		for i := range 2 {
			if _, ok, err := s.Next(); !ok || err != nil {
				t.Fatalf("event %d: ok %v, %v", i+1, ok, err)
			}
		}
		// A third Next would wait on the mailbox, and closing the session fails it.
		if ev, ok, err := s.Next(); ok || err != nil || ev != nil {
			t.Errorf("after %s: %s, ok %v, %v", last, ev, ok, err)
		}
		if final, err := s.Result(); err != nil || !strings.Contains(string(final), "assistant") {
			t.Errorf("result %s, %v", final, err)
		}
	}
}

// panicPort panics in Run, or in a task it gives Env.Parallel.
type panicPort struct{ inTask bool }

func (panicPort) Hello() protocol.Hello { return protocol.Hello{Name: "panics", Tracks: "1.6.0"} }

func (p panicPort) Run(_ context.Context, env Env) (any, error) {
	var m map[string]int
	if p.inTask {
		env.Parallel([]func(){func() { m["x"] = 1 }})
		return []any{}, nil
	}
	m["x"] = 1
	return nil, nil
}

// TestAPanickingPortFailsItsScenario: in-process, a panic in Run or in a task of Parallel is
// the scenario's failure, with the panic's stack in a finding, not the end of the test binary.
func TestAPanickingPortFailsItsScenario(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	f := files[0]
	for _, port := range []panicPort{{}, {inTask: true}} {
		synctest.Test(t, func(t *testing.T) {
			res := conformance.VerifyOne(f.Scenario, sim.NewReference(), runOf(f.Scenario, &inProcess{port: port}), protocol.Hello{}, trace.Strict, levels.Pi, diagnose.FromFile(f), nil)
			if res.Status != conformance.Fail {
				t.Fatalf("in task %v: status %s", port.inTask, res.Status)
			}
			var found bool
			for _, fd := range res.Findings {
				found = found || fd.Kind == diagnose.Error && strings.Contains(fd.Actual, "the port panicked") &&
					strings.Contains(fd.Actual, "assignment to entry in nil map") && strings.Contains(fd.Actual, "gotest_internal_test.go")
			}
			if !found {
				t.Errorf("in task %v: no finding with the panic and its stack: %s", port.inTask, conformance.FindingsText(res.Findings, "", 0))
			}
		})
	}
}

// TestHelloIsCheckedAsTheProtocolChecksIt: a Go port's Hello with a mistyped hook or lacked
// feature, or no pi version, is refused (the served hello's schema refuses it too), naming the
// near name.
func TestHelloIsCheckedAsTheProtocolChecksIt(t *testing.T) {
	err := checkHello(protocol.Hello{Name: "x", Hooks: []string{"getSteeringMessages", "bogusHook"}, Lacks: []string{"continu"}})
	for _, want := range []string{"Tracks is empty", `Hooks: "bogusHook" is not one of`, `Lacks: "continu" is not one of them (did you mean "continue"?)`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: lacks %q", err, want)
		}
	}
	if err := checkHello(protocol.Hello{Tracks: "1.6.0", Hooks: protocol.AllHooks, Lacks: sim.Features}); err != nil {
		t.Errorf("a right hello: %v", err)
	}
}

// stuckPort waits on a mutex it never unlocks: a wait the synctest bubble does not see, so
// the port is never idle.
type stuckPort struct{}

func (stuckPort) Hello() protocol.Hello { return protocol.Hello{Name: "stuck", Tracks: "1.6.0"} }

func (stuckPort) Run(context.Context, Env) (any, error) {
	var mu sync.Mutex
	mu.Lock()
	mu.Lock()
	return nil, nil
}

// stuckEnv makes TestAStuckPortEndsTheBinaryNamingItsScenario's child run the stuck port.
const stuckEnv = "TURNSTILE_TEST_STUCK_PORT"

// TestAStuckPortEndsTheBinaryNamingItsScenario: a port that waits on a mutex ends the test
// binary at the stall limit, naming the scenario, what such a port does, and its stack,
// instead of at go test's -timeout (ten minutes by default). The port runs in a child
// process, this test binary again, since the end is the process's.
func TestAStuckPortEndsTheBinaryNamingItsScenario(t *testing.T) {
	if os.Getenv(stuckEnv) != "" {
		TestFiles(t, stuckPort{}, []*scenarios.File{firstRunnable(t, stuckPort{}.Hello())}, StallLimit(time.Second))
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^TestAStuckPortEndsTheBinaryNamingItsScenario$", "-test.timeout", "5m")
	cmd.Env = append(os.Environ(), stuckEnv+"=1")
	began := time.Now()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child passed:\n%s", out)
	}
	for _, want := range []string{"scenario " + firstRunnable(t, stuckPort{}.Hello()).Scenario.Name + " has made no progress for 1s of real time and is not idle", "sync.Mutex", "stuckPort.Run"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
	if took := time.Since(began); took > 2*time.Minute {
		t.Errorf("the child took %v: the stall limit did not end it", took)
	}
}

// firstRunnable is the curated suite's first scenario a port saying hello h runs: no hook
// it does not support, no feature it lacks.
func firstRunnable(t *testing.T, h protocol.Hello) *scenarios.File {
	t.Helper()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if len(f.Scenario.Hooks.Installed()) == 0 && conformance.LacksReason(h, f.Scenario) == "" {
			return f
		}
	}
	t.Fatal("no scenario of the suite runs without hooks")
	return nil
}

// runOf runs sc against impl, for VerifyOne.
func runOf(sc *sim.Scenario, impl sim.Implementation) func() (*trace.Trace, error) {
	return func() (*trace.Trace, error) { return sim.Run(sc, impl) }
}

// TestTheStallWatchCountsProgressNotRunTime: a scenario that keeps making progress is never
// stalled however long it runs; one that stops is, at the first check that sees no progress.
func TestTheStallWatchCountsProgressNotRunTime(t *testing.T) {
	const moves = 6 // progress moves at each of the first checks, then stops
	var checks atomic.Int64
	progress := func() int64 { return min(checks.Add(1), moves) }
	stalledAt := make(chan int64, 1)
	stop := watchStall(20*time.Millisecond, progress, func() { stalledAt <- checks.Load() })
	defer stop()
	select {
	case at := <-stalledAt:
		if at != moves+1 {
			t.Errorf("stalled at check %d, want the first check after progress stopped (%d)", at, moves+1)
		}
	case <-time.After(time.Minute):
		t.Fatal("no stall a minute after progress stopped")
	}
}
