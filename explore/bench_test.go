package explore

import (
	"context"
	"runtime"
	"testing"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// BenchmarkGenerated measures generated scenarios per second, in-process: generate, run
// against the reference, check every invariant.
func BenchmarkGenerated(b *testing.B) {
	invs := invariant.All()
	entries := 0
	i := 0
	for b.Loop() {
		sc := GenerateScenario(RunSeed(1, i))
		i++
		tr, err := sim.Run(sc, sim.NewReference())
		if err != nil {
			b.Fatal(err)
		}
		entries += len(tr.Entries)
		if fl := invariant.CheckAll(tr, invs...); len(fl) > 0 {
			b.Fatal(fl[0])
		}
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "scenarios/s")
	b.ReportMetric(float64(entries)/float64(i), "entries/scenario")
}

// BenchmarkGenerate measures the generator alone.
func BenchmarkGenerate(b *testing.B) {
	i := 0
	for b.Loop() {
		GenerateScenario(RunSeed(1, i))
		i++
	}
}

// BenchmarkInvariants measures the invariants alone, over pre-run traces.
func BenchmarkInvariants(b *testing.B) {
	var traces []*trace.Trace
	for i := range 200 {
		tr, _ := sim.Run(GenerateScenario(RunSeed(1, i)), sim.NewReference())
		traces = append(traces, tr)
	}
	i := 0
	for b.Loop() {
		invariant.CheckAll(traces[i%len(traces)])
		i++
	}
}

// BenchmarkExploreAgent measures in-process exploration of Agent sessions with the default
// jobs (one per CPU, as `turnstile explore --entry agent` takes them): generate, run against
// the reference, check every invariant, 1,000 sessions an iteration. The target is 1,000
// sessions/s.
func BenchmarkExploreAgent(b *testing.B) {
	sessions, seed := 0, uint64(1)
	for b.Loop() {
		res := Run(context.Background(), Options{Seed: seed, Runs: 1000, Entry: EntryAgent, Jobs: runtime.GOMAXPROCS(0)})
		if res.Err != nil || len(res.Failures) > 0 {
			b.Fatalf("%v: %s", res.Err, Summary(res))
		}
		sessions += res.Runs
		seed++
	}
	b.ReportMetric(float64(sessions)/b.Elapsed().Seconds(), "sessions/s")
}

// BenchmarkExplore measures in-process exploration of loop runs as `turnstile explore` takes
// them (P3 of BENCHMARKS.md): generate, run the implementation (the reference) and the
// reference, compare, check every invariant, 1,000 runs an iteration, one job.
func BenchmarkExplore(b *testing.B) {
	runs, seed := 0, uint64(1)
	for b.Loop() {
		res := Run(context.Background(), Options{Seed: seed, Runs: 1000, Jobs: 1})
		if res.Err != nil || len(res.Failures) > 0 {
			b.Fatalf("%v: %s", res.Err, Summary(res))
		}
		runs += res.Runs
		seed++
	}
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
}
