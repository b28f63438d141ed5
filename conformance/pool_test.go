package conformance_test

import (
	"bytes"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestPoolLendsAProcessToEachRunAtOnce: runs made at the same time through a Pool each get a
// process of their own (three at once start three), later runs reuse the idle ones (no fourth
// start), every run's trace is the reference's, and once closed the pool starts nothing.
func TestPoolLendsAProcessToEachRunAtOnce(t *testing.T) {
	scs := scenarios()
	if len(scs) < 9 {
		t.Fatalf("%d scenarios; the test needs 9", len(scs))
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var made atomic.Int32
	pool := &protocol.Pool{New: func() *protocol.Process {
		made.Add(1)
		return &protocol.Process{Command: []string{exe}, Env: []string{selfadapter.Env + "=serve"}}
	}}
	hello, err := pool.Hello()
	if err != nil || hello.Name == "" {
		t.Fatalf("hello %+v, %v", hello, err)
	}
	runAll := func(scs []*sim.Scenario) {
		var wg sync.WaitGroup
		for _, sc := range scs {
			wg.Go(func() {
				want, err := sim.Run(sc, sim.NewReference())
				if err != nil {
					t.Errorf("%s: the reference: %v", sc.Name, err)
					return
				}
				got, err := sim.Run(sc, pool.Impl())
				if err != nil {
					t.Errorf("%s: through the pool: %v", sc.Name, err)
					return
				}
				if !bytes.Equal(got.JSONL(), want.JSONL()) {
					t.Errorf("%s: the trace differs from the reference's", sc.Name)
				}
			})
		}
		wg.Wait()
	}
	// Three runs at once: each holds its process until all three have started.
	var started sync.WaitGroup
	started.Add(3)
	var wg sync.WaitGroup
	for _, sc := range scs[:3] {
		impl := &heldAtStart{Implementation: pool.Impl(), all: &started}
		wg.Go(func() {
			if _, err := sim.Run(sc, impl); err != nil {
				t.Errorf("%s: %v", sc.Name, err)
			}
		})
	}
	wg.Wait()
	if n := made.Load(); n != 3 {
		t.Fatalf("three runs at once started %d processes", n)
	}
	rest := scs[3:9]
	runAll(rest[:3])
	runAll(rest[3:])
	if n := made.Load(); n != 3 {
		t.Errorf("later runs, three at a time, started %d processes in all; want the 3 idle ones reused", n)
	}
	if err := pool.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := sim.Run(scs[0], pool.Impl()); err == nil || made.Load() != 3 {
		t.Errorf("a run after Close: %v, %d processes", err, made.Load())
	}
	if _, err := pool.Hello(); err == nil {
		t.Error("hello after Close: no error")
	}
}

// heldAtStart returns from Start once every run of all has started: the runs hold their
// processes at the same time.
type heldAtStart struct {
	sim.Implementation
	all *sync.WaitGroup
}

func (h *heldAtStart) Start(setup sim.Setup, world sim.Port) error {
	err := h.Implementation.Start(setup, world)
	h.all.Done()
	h.all.Wait()
	return err
}
