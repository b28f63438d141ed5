package explore

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

func TestParseSeed(t *testing.T) {
	for in, want := range map[string]uint64{
		"0":                    0,
		"42":                   42,
		"18446744073709551615": 18446744073709551615,
		"64a07e5b2d1c0f9e8d7c6b5a4f3e2d1c0b9a8f7e": 0x4f3e2d1c0b9a8f7e,
	} {
		got, err := ParseSeed(in)
		if err != nil || got != want {
			t.Errorf("ParseSeed(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "abc", "64a07e5", "0x10", "18446744073709551616"} {
		if _, err := ParseSeed(bad); err == nil {
			t.Errorf("ParseSeed(%q) accepted", bad)
		}
	}
}

func TestRunSeed(t *testing.T) {
	if RunSeed(7, 0) != 7 {
		t.Fatal("run 0 must use the base seed, so that --seed <run seed> --runs 1 reproduces a run")
	}
	seen := map[uint64]bool{}
	for i := range 1000 {
		s := RunSeed(7, i)
		if seen[s] {
			t.Fatalf("run seeds repeat at %d", i)
		}
		seen[s] = true
	}
}

func TestParseShard(t *testing.T) {
	s, err := ParseShard("3/5")
	if err != nil || s != (Shard{2, 5}) || s.String() != "3/5" {
		t.Fatalf("%v %v", s, err)
	}
	for _, bad := range []string{"6/5", "0/5", "1", "a/b", "-1/3", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

// TestShardsSplitRuns: the shards of an exploration make its runs exactly once between them.
func TestShardsSplitRuns(t *testing.T) {
	var seen []uint64
	gen := func(seed uint64) *sim.Scenario {
		seen = append(seen, seed)
		return GenerateScenario(seed)
	}
	for k := range 3 {
		Run(context.Background(), Options{Seed: 9, Runs: 10, Shard: Shard{k, 3}, Generate: gen})
	}
	if len(seen) != 10 {
		t.Fatalf("%d runs over 3 shards, want 10", len(seen))
	}
	count := map[uint64]int{}
	for _, s := range seen {
		count[s]++
	}
	for i := range 10 {
		if count[RunSeed(9, i)] != 1 {
			t.Errorf("run %d made %d times", i, count[RunSeed(9, i)])
		}
	}
}

// TestGenerationIsDeterministic: a run seed always makes the same scenario file.
func TestGenerationIsDeterministic(t *testing.T) {
	for i := range 50 {
		seed := RunSeed(123, i)
		a, err := scenarios.Write(GenerateScenario(seed))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := scenarios.Write(GenerateScenario(seed))
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d generated two different scenarios", seed)
		}
	}
}

// TestReferenceExplores: the reference alone breaks no invariant, and the summary is printed.
func TestReferenceExplores(t *testing.T) {
	var out bytes.Buffer
	res := Run(context.Background(), Options{Seed: 2026, Runs: 300, Progress: &out})
	if len(res.Failures) > 0 {
		t.Fatalf("the reference fails: %s", res.Failures[0].Message)
	}
	if res.Runs != 300 || !strings.HasPrefix(out.String(), "seed=2026\n") || !strings.HasPrefix(Summary(res), "seed 2026: 300 runs in") {
		t.Fatalf("runs %d, output %q", res.Runs, out.String())
	}
}

// TestDurationBoundsExploration: a duration alone stops the exploration.
func TestDurationBoundsExploration(t *testing.T) {
	start := time.Now()
	res := Run(context.Background(), Options{Seed: 1, Duration: 200 * time.Millisecond})
	if time.Since(start) > 2*time.Second || res.Runs == 0 {
		t.Fatalf("%d runs in %s", res.Runs, time.Since(start))
	}
}

// TestFlakyIsNotABug: an implementation whose trace changes from run to run is reported
// flaky, and not shrunk.
func TestFlakyIsNotABug(t *testing.T) {
	n := 0
	res := Run(context.Background(), Options{
		Seed: 1, Runs: 50, NoDiff: true,
		Impl: func() sim.Implementation { n++; return &faulty{fault: fault{notify: flipEvery(n)}} },
		// Any trace that differs from the previous one fails: a custom invariant.
		Invariants: []invariant.Invariant{{Name: "odd-runs-fail", Check: func(tr *trace.Trace) []invariant.Violation {
			if n%2 == 1 {
				return []invariant.Violation{{Msg: "odd"}}
			}
			return nil
		}}},
	})
	if len(res.Failures) != 1 || !res.Failures[0].Flaky || res.Failed() {
		t.Fatalf("%+v", res.Failures)
	}
}

// flipEvery makes every other implementation emit an extra, harmless-looking event.
func flipEvery(n int) func(f *faulty, n sim.Notification, ev map[string]any) bool {
	odd := n%2 == 1
	return func(f *faulty, note sim.Notification, ev map[string]any) bool {
		if odd && ev["type"] == "agent_start" {
			f.world.Notify(note)
		}
		return true
	}
}

// stuck never finishes its first delivery; panicky panics in it; goexits ends its goroutine
// there, as t.FailNow in a test's tool would.
type stuck struct{ sim.Implementation }

func (s stuck) Deliver(sim.Delivery) error { select {} }

type panicky struct{ sim.Implementation }

func (panicky) Deliver(sim.Delivery) error { panic("boom") }

type goexits struct{ sim.Implementation }

func (goexits) Deliver(sim.Delivery) error { runtime.Goexit(); return nil }

// TestHangAndPanicAreReported: an implementation that hangs, panics or exits its goroutine is
// a failure of its own kind, never a hung or crashed exploration (and an exit is not taken for
// a hang).
func TestHangAndPanicAreReported(t *testing.T) {
	for _, c := range []struct {
		kind, message string
		impl          func() sim.Implementation
	}{
		{kindHang, "", func() sim.Implementation { return stuck{sim.NewReference()} }},
		{kindPanic, "boom", func() sim.Implementation { return panicky{sim.NewReference()} }},
		{kindPanic, "runtime.Goexit", func() sim.Implementation { return goexits{sim.NewReference()} }},
	} {
		res := Run(context.Background(), Options{Seed: 1, Runs: 20, Impl: c.impl, RunTimeout: 300 * time.Millisecond, ShrinkTime: 2 * time.Second})
		if len(res.Failures) != 1 || res.Failures[0].Kind != c.kind || !strings.Contains(res.Failures[0].Message, c.message) {
			t.Fatalf("%s (%s): %+v", c.kind, c.message, res.Failures)
		}
		t.Logf("%s: %s; shrunk %s", c.kind, res.Failures[0].Message, res.Failures[0].Shrink)
	}
}

// timesOut fails its first delivery as an adapter process past its time limit does
// (trace.ErrTimeout), counting the runs it starts.
type timesOut struct {
	sim.Implementation
	starts *atomic.Int32
}

func (s timesOut) Start(setup sim.Setup, world sim.Port) error {
	s.starts.Add(1)
	return s.Implementation.Start(setup, world)
}

func (timesOut) Deliver(sim.Delivery) error {
	return fmt.Errorf("delivery streamEvent at 0ms: %w after 1m0s: the implementation did not report idle", trace.ErrTimeout)
}

// TestATimeoutIsAHangNotShrunk: an implementation past its time limit is a hang, and each of
// its runs would take the whole limit: it is run once more to tell a bug from flakiness, and
// not again (no shrinking, no run for its size or its trace), so that --duration is not
// overrun by a timeout for every candidate (a stranger's review: 20 runs took 1 min 21 s
// against --duration 20s).
func TestATimeoutIsAHangNotShrunk(t *testing.T) {
	var starts atomic.Int32
	impl := func() sim.Implementation { return timesOut{sim.NewReference(), &starts} }
	res := Run(context.Background(), Options{Seed: 1, Runs: 1, Impl: impl, ShrinkTime: 10 * time.Second})
	if len(res.Failures) != 1 {
		t.Fatalf("failures: %+v", res.Failures)
	}
	f := res.Failures[0]
	if f.Kind != kindHang || f.Flaky || f.Shrink.Tried != 0 || f.ImplTrace == nil {
		t.Errorf("kind %s, flaky %v, shrink %+v, trace kept %v", f.Kind, f.Flaky, f.Shrink, f.ImplTrace != nil)
	}
	if n := starts.Load(); n != 2 {
		t.Errorf("the implementation ran %d times; want 2 (the run and its confirmation)", n)
	}
}

// TestExploringStopsAfterMaxHangs: once MaxHangs runs hung, exploring stops and the summary
// says why (a stranger's port hanging on a common shape made --runs 300 take hours, each run
// waiting out the limit); without the limit every run is made.
func TestExploringStopsAfterMaxHangs(t *testing.T) {
	var starts atomic.Int32
	impl := func() sim.Implementation { return timesOut{sim.NewReference(), &starts} }
	res := Run(context.Background(), Options{Seed: 1, Runs: 50, Impl: impl, MaxHangs: 3, Jobs: 1})
	if res.Runs != 3 || res.Hangs != 3 || !res.HangStop || !strings.Contains(Summary(res), "stopped after 3 runs that hung") {
		t.Errorf("%d runs, %d hangs, stop %v:\n%s", res.Runs, res.Hangs, res.HangStop, Summary(res))
	}
	res = Run(context.Background(), Options{Seed: 1, Runs: 20, Impl: impl, Jobs: 1})
	if res.Runs != 20 || res.HangStop || strings.Contains(Summary(res), "stopped after") {
		t.Errorf("no limit: %d runs, stop %v", res.Runs, res.HangStop)
	}
}
