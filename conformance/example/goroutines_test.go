package example_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
)

// goroutinePort is the example loop written the way Go ports are written, not the way the
// kit would like: its stream is fed through a channel by a goroutine of its own, each
// parallel tool call runs on a goroutine of its own, and it stamps messages with the wall
// clock (time.Now) — no env.Parallel, no env.Now.
type goroutinePort struct{}

func (goroutinePort) Hello() conformance.Hello {
	h := example.Port{}.Hello()
	h.Name = "goroutines"
	return h
}

func (goroutinePort) Run(ctx context.Context, env conformance.Env) (any, error) {
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
// scenario in-process, and served over the protocol gets the same verdict in every
// scenario: the kit sees its goroutines, channels and clock both ways.
func TestAPortWithItsOwnGoroutinesGetsTheSameVerdictsServed(t *testing.T) {
	var inProcess conformance.Report
	t.Run("in-process", func(t *testing.T) { conformance.Test(t, goroutinePort{}, conformance.Collect(&inProcess)) })
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &conformance.Process{Command: []string{exe}, Env: []string{serveEnv + "=goroutines"}, Timeout: 2 * time.Minute}
	defer p.Close()
	served := conformance.Verify(context.Background(), scenarios.Scenarios(files), p, conformance.Options{Scenarios: diagnose.FromFiles(files)})
	if inProcess.Failed != 0 || inProcess.Passed == 0 {
		t.Errorf("in-process: %s", inProcess.Summary())
	}
	verdicts := map[string]conformance.Status{}
	for _, r := range inProcess.Results {
		verdicts[r.Scenario] = r.Status
	}
	for _, r := range served.Results {
		if verdicts[r.Scenario] != r.Status {
			t.Errorf("%s: %s in-process, %s served: %s", r.Scenario, verdicts[r.Scenario], r.Status, r.Reason)
		}
	}
	t.Logf("in-process %s; served %s", inProcess.Summary(), served.Summary())
}
