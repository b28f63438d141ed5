package bench

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// BenchmarkSimulated runs each shape through the simulator with the reference loop and full
// trace recording, each trace written in the last one's room as explore writes them
// (sim.RunIn); turns/s is the figure compared with pi's in-process loop.
func BenchmarkSimulated(b *testing.B) {
	var room sim.Room
	benchmarkSimulated(b, func(sc *sim.Scenario) (*trace.Trace, error) { return sim.RunIn(&room, sc, sim.NewReference()) })
}

// BenchmarkSimulatedFresh is BenchmarkSimulated with each trace in memory of its own (sim.Run).
func BenchmarkSimulatedFresh(b *testing.B) {
	benchmarkSimulated(b, func(sc *sim.Scenario) (*trace.Trace, error) { return sim.Run(sc, sim.NewReference()) })
}

// benchmarkSimulated runs each shape with run.
func benchmarkSimulated(b *testing.B, run func(*sim.Scenario) (*trace.Trace, error)) {
	for _, s := range Shapes {
		b.Run(s.Name, func(b *testing.B) {
			sc := s.Scenario()
			cpu0 := cpuTime()
			for b.Loop() {
				tr, err := run(sc)
				if err != nil || tr.Failed() {
					b.Fatalf("%v\n%s", err, tr.Timeline())
				}
			}
			b.ReportMetric(float64(s.Turns*b.N)/b.Elapsed().Seconds(), "turns/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestShapesMakeTheirTurns checks the shapes make the number of requests they claim, which
// the turns/s figures rely on.
func TestShapesMakeTheirTurns(t *testing.T) {
	for _, s := range Shapes {
		tr, err := sim.Run(s.Scenario(), sim.NewReference())
		if err != nil || tr.Failed() {
			t.Fatalf("%s: %v", s.Name, err)
		}
		requests := 0
		for _, e := range tr.Entries {
			if e.Kind == trace.KindCall && e.Name == trace.CallStream {
				requests++
			}
		}
		if requests != s.Turns {
			t.Errorf("%s makes %d requests, claims %d", s.Name, requests, s.Turns)
		}
	}
}

// TestRequestsRunsToItsEnd: the longest Requests shape S2 and S3 measure ends as scripted,
// not at a budget.
func TestRequestsRunsToItsEnd(t *testing.T) {
	if tr, err := sim.Run(Requests(1000), sim.NewReference()); err != nil || tr.Failed() {
		t.Fatalf("Requests(1000): %v", err)
	}
}

// BenchmarkDirect runs each shape on the reference loop with trivial mocks: no simulator,
// no trace — the like-for-like counterpart of pi's in-process baseline.
func BenchmarkDirect(b *testing.B) {
	for _, s := range Shapes {
		b.Run(s.Name, func(b *testing.B) {
			sc := s.Scenario()
			cpu0 := cpuTime()
			for b.Loop() {
				if err := Direct(sc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(s.Turns*b.N)/b.Elapsed().Seconds(), "turns/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkPerTurn reports, for runs of 10, 100 and 1,000 requests, the trace's JSON lines
// and the run's allocations per request: constant from one length to the next when nothing
// the simulator or the trace does for a request grows with the run.
func BenchmarkPerTurn(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("%d-requests", n), func(b *testing.B) {
			sc := Requests(n)
			var bytes int
			for b.Loop() {
				tr, err := sim.Run(sc, sim.NewReference())
				if err != nil || tr.Failed() {
					b.Fatalf("%v %v", err, tr.Failure())
				}
				bytes = len(tr.JSONL())
			}
			b.ReportMetric(float64(bytes)/float64(n), "trace-B/request")
			b.ReportMetric(testing.AllocsPerRun(3, func() { _, _ = sim.Run(sc, sim.NewReference()) })/float64(n), "allocs/request")
		})
	}
}

// cpuTime is the CPU time the process has used so far, user and system: on a shared machine
// it holds where wall time does not (the garbage collector's work on other threads included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
