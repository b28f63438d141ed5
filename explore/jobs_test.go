package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/sim"
)

// counting is a faulty implementation that counts the runs going on at once.
type counting struct {
	faulty
	active *activeRuns
}

type activeRuns struct {
	mu          sync.Mutex
	now, most   int
	started     int
	stoppedLate bool
}

func (c *counting) Start(setup sim.Setup, world sim.Port) error {
	c.active.mu.Lock()
	c.active.now++
	c.active.started++
	c.active.most = max(c.active.most, c.active.now)
	c.active.mu.Unlock()
	return c.faulty.Start(setup, world)
}

func (c *counting) Stop() error {
	c.active.mu.Lock()
	c.active.now--
	c.active.mu.Unlock()
	return c.faulty.Stop()
}

// failureFacts is what of a failure must not depend on the number of jobs.
func failureFacts(t *testing.T, f *Failure) string {
	t.Helper()
	minimal, err := json.Marshal(f.Minimal)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s run %d (seed %d) count %d runs %v aliases %v flaky %v hash %s minimal %s",
		f.Signature(), f.Run, f.RunSeed, f.Count, f.Runs, f.Aliases, f.Flaky, f.Hash, minimal)
}

// TestJobsFindWhatOneJobFinds: three planted faults explored with 1, 2 and 4 jobs give the
// same result: the same runs counted, the same causes in the same order, first seen in the
// same runs, counted for the same runs, shrunk to the same minimal scenarios. With more than
// one job the runs do go on at once, and Run returns only once every run it started has
// stopped.
func TestJobsFindWhatOneJobFinds(t *testing.T) {
	t.Parallel()
	all := allPlanted(t)
	explore := func(jobs int) (Result, *activeRuns) {
		active := &activeRuns{}
		res := Run(context.Background(), Options{
			Impl: func() sim.Implementation { return &counting{faulty: faulty{fault: all}, active: active} },
			Seed: 5, Runs: 150, Jobs: jobs,
		})
		return res, active
	}
	one, _ := explore(1)
	if len(one.Failures) < 3 {
		t.Fatalf("one job: %d causes, want 3 or more", len(one.Failures))
	}
	for _, jobs := range []int{2, 4} {
		res, active := explore(jobs)
		if res.Runs != one.Runs || res.Failing != one.Failing || res.Ignored != one.Ignored {
			t.Errorf("%d jobs: %d runs, %d failing, %d ignored; one job: %d, %d, %d", jobs,
				res.Runs, res.Failing, res.Ignored, one.Runs, one.Failing, one.Ignored)
		}
		if len(res.Failures) != len(one.Failures) {
			t.Fatalf("%d jobs: %d causes, one job %d", jobs, len(res.Failures), len(one.Failures))
		}
		for k := range one.Failures {
			if got, want := failureFacts(t, res.Failures[k]), failureFacts(t, one.Failures[k]); got != want {
				t.Errorf("%d jobs, cause %d:\n got %s\nwant %s", jobs, k+1, got, want)
			}
		}
		if active.most < 2 {
			t.Errorf("%d jobs: at most %d runs at once", jobs, active.most)
		}
		if active.now != 0 {
			t.Errorf("%d jobs: Run returned with %d runs still going", jobs, active.now)
		}
	}
}

// TestJobsStopWhereOneJobStops: with jobs, an exploration still stops at --max-causes and at
// its duration, counts only the runs it took (not those the jobs checked ahead), and leaves
// no run going.
func TestJobsStopWhereOneJobStops(t *testing.T) {
	t.Parallel()
	flaw := faultNamed(t, planted[1])
	for _, opts := range []Options{
		{Seed: 5, Runs: 150, MaxFailures: 1, ShrinkTime: -1},
		{Seed: 5, Duration: 300 * time.Millisecond, ShrinkTime: -1},
	} {
		var results []Result
		for _, jobs := range []int{1, 3} {
			active := &activeRuns{}
			o := opts
			o.Jobs = jobs
			o.Impl = func() sim.Implementation { return &counting{faulty: faulty{fault: flaw}, active: active} }
			res := Run(context.Background(), o)
			if active.now != 0 {
				t.Errorf("%d jobs: Run returned with %d runs still going", jobs, active.now)
			}
			if res.Runs == 0 || res.Runs > active.started {
				t.Errorf("%d jobs: %d runs counted, %d started", jobs, res.Runs, active.started)
			}
			results = append(results, res)
		}
		one, more := results[0], results[1]
		if opts.MaxFailures > 0 {
			if len(one.Failures) != 1 || len(more.Failures) != 1 || one.Runs != more.Runs ||
				failureFacts(t, one.Failures[0]) != failureFacts(t, more.Failures[0]) {
				t.Errorf("max 1 cause: one job %d runs %d causes, 3 jobs %d runs %d causes", one.Runs, len(one.Failures), more.Runs, len(more.Failures))
			}
			continue
		}
		// Within the duration, the runs counted are the first ones, in order.
		sigs := func(r Result) []string {
			var out []string
			for _, f := range r.Failures {
				out = append(out, fmt.Sprintf("%s@%d", f.Signature(), f.Run))
			}
			return out
		}
		if len(one.Failures) > 0 && len(more.Failures) > 0 && !slices.Equal(sigs(one)[:1], sigs(more)[:1]) {
			t.Errorf("duration: the first cause differs: %v vs %v", sigs(one), sigs(more))
		}
	}
}
