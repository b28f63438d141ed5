package example_test

import (
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/explore"
)

// TestExplore explores the example loop in-process: random scenarios, none failing.
func TestExplore(t *testing.T) {
	res := explore.Test(t, example.Port{}, explore.Options{Runs: 200, Seed: 1})
	if res.Runs != 200 {
		t.Errorf("%d runs, want 200", res.Runs)
	}
}

// TestExploreFindsAFaultyPortsDefect: explored in-process, the port that drops an empty
// toolResults fails, with one cause.
func TestExploreFindsAFaultyPortsDefect(t *testing.T) {
	res := explore.Run(t.Context(), explore.Options{Impl: porttest.InProcess(t, omitEmptyPort{}), Runs: 40, Seed: 1, ShrinkTime: -1})
	if len(res.Failures) != 1 {
		t.Fatalf("%d distinct failures, want 1:\n%s", len(res.Failures), explore.Summary(res))
	}
	t.Log(explore.Summary(res))
}
