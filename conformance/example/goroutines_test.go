package example_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// goroutinePort is the example loop written the way Go ports are written, not the way the
// kit would like: its stream is fed through a channel by a goroutine of its own, each
// parallel tool call runs on a goroutine of its own, and it stamps messages with the wall
// clock (time.Now) — no env.Parallel, no env.Now.
type goroutinePort struct{}

func (goroutinePort) Hello() porttest.Hello {
	h := example.Port{}.Hello()
	h.Name = "goroutines"
	return h
}

func (goroutinePort) Run(ctx context.Context, env porttest.Env) (any, error) {
	actx, cfg, _ := example.Build(env)
	cfg.Runtime = wallClock{time.Now()}
	opened := cfg.Stream
	cfg.Stream = func(ctx context.Context, req loop.StreamRequest) (loop.AssistantStream, error) {
		st, err := opened(ctx, req)
		if err != nil {
			return nil, err
		}
		ch := make(chan pumped)
		go func() {
			defer close(ch)
			for {
				ev, ok, err := st.Next(ctx)
				ch <- pumped{ev, ok, err}
				if !ok || err != nil || ev.Type == loop.StreamDone || ev.Type == loop.StreamError {
					return
				}
			}
		}()
		return &chanStream{ch: ch, st: st}, nil
	}
	if env.Setup().Entry == "continue" {
		return loop.Continue(ctx, actx, cfg)
	}
	msgs, err := example.Decode(env.Setup().Prompts)
	if err != nil {
		return nil, err
	}
	return loop.Run(ctx, msgs, actx, cfg)
}

// wallClock reads time.Now and runs a goroutine per parallel task.
type wallClock struct{ start time.Time }

func (wallClock) Now() int64                 { return time.Now().UnixMilli() }
func (c wallClock) Monotonic() time.Duration { return time.Since(c.start) }
func (wallClock) Parallel(tasks []func()) {
	var wg sync.WaitGroup
	for _, task := range tasks {
		wg.Go(task)
	}
	wg.Wait()
}

type pumped struct {
	ev  loop.StreamEvent
	ok  bool
	err error
}

// chanStream reads the events a pump goroutine sends.
type chanStream struct {
	ch <-chan pumped
	st loop.AssistantStream
}

func (s *chanStream) Next(context.Context) (loop.StreamEvent, bool, error) {
	p, open := <-s.ch
	if !open {
		return loop.StreamEvent{}, false, nil
	}
	return p.ev, p.ok, p.err
}

func (s *chanStream) Result(ctx context.Context) (*loop.AssistantMessage, error) {
	return s.st.Result(ctx)
}

// TestAPortWithItsOwnGoroutinesGetsTheSameVerdictsServed: goroutinePort passes every loop
// scenario in-process but those whose batch has several tool calls, which it starts in the
// order its goroutines happen to run (pi starts them in source order): those are flaky, run
// again with the kit's goroutines let in the other order, and no cause. Served over the
// protocol it gets the same verdict in every scenario, flaky where it is in-process: the kit
// sees its goroutines, channels and clock both ways, and a run again takes the other order
// on whichever process serves it (here each session goes to the next of two processes, so a
// first run and its run again are the first sessions of two processes).
func TestAPortWithItsOwnGoroutinesGetsTheSameVerdictsServed(t *testing.T) {
	var inProcess porttest.Report
	// The scenarios whose batch runs several calls in parallel.
	orderDependent := []string{"abort-error/abort-in-after-tool-call", "abort-error/abort-parallel-tools", "hook-time/parallel-delayed-hooks",
		"termination/after-tool-call-cancels-terminate", "termination/some-terminate", "tools-parallel/after-hook-at-completion",
		"tools-parallel/completion-order", "tools-parallel/default-is-parallel", "tools-parallel/interleaved-updates",
		"tools-parallel/preflight", "tools-parallel/preparation-before-execution", "tools-parallel/resolves-nothing",
		"tools-parallel/update-after-settle"}
	expected := map[string]bool{}
	for _, name := range orderDependent {
		expected[name] = true
	}
	t.Run("in-process", func(t *testing.T) {
		porttest.Test(t, goroutinePort{}, porttest.Collect(&inProcess), porttest.ExpectFailures(orderDependent...))
	})
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	procs := make([]*protocol.Process, 2)
	for i := range procs {
		procs[i] = &protocol.Process{Command: []string{exe}, Env: []string{serveEnv + "=goroutines"}, Timeout: 2 * time.Minute}
		defer procs[i].Close()
	}
	served := conformance.Verify(context.Background(), scenarios.Scenarios(files), &rotation{procs: procs},
		conformance.Options{Scenarios: diagnose.FromFiles(files), ExpectFail: expected})
	if inProcess.Passed == 0 || inProcess.Failed != 0 || len(inProcess.Causes) != 0 {
		t.Errorf("in-process: %s; %d causes", inProcess.Summary(), len(inProcess.Causes))
	}
	for _, r := range inProcess.Results {
		if r.Status == conformance.ExpectedFail && (!r.Flaky || !strings.Contains(r.Reason, "call tool")) {
			t.Errorf("%s fails, not as flaky in its tool calls' order: %s", r.Scenario, r.Reason)
		}
	}
	verdicts, flaky := map[string]conformance.Status{}, map[string]bool{}
	for _, r := range inProcess.Results {
		verdicts[r.Scenario], flaky[r.Scenario] = r.Status, r.Flaky
	}
	for _, r := range served.Results {
		if verdicts[r.Scenario] != r.Status || flaky[r.Scenario] != r.Flaky {
			t.Errorf("%s: %s (flaky %v) in-process, %s (flaky %v) served: %s", r.Scenario, verdicts[r.Scenario], flaky[r.Scenario], r.Status, r.Flaky, r.Reason)
		}
	}
	t.Logf("in-process %s; served %s", inProcess.Summary(), served.Summary())
}

// rotation serves each session on the next of its processes, as a pool of adapter processes
// may: a scenario's runs land on different processes.
type rotation struct {
	procs []*protocol.Process
	next  int
	cur   *protocol.Process
}

func (r *rotation) Hello() (protocol.Hello, error) { return r.procs[0].Hello() }

func (r *rotation) Start(setup sim.Setup, world sim.Port) error {
	r.cur = r.procs[r.next%len(r.procs)]
	r.next++
	return r.cur.Start(setup, world)
}

func (r *rotation) Deliver(d sim.Delivery) error { return r.cur.Deliver(d) }

func (r *rotation) Stop() error { return r.cur.Stop() }
