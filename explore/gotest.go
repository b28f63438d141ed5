package explore

import (
	"cmp"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// Test explores a Go port in-process, each run in a synctest bubble as porttest.Test
// runs a scenario: random scenarios the port supports (its Hello fills opts.Target), judged
// against the reference at the pi it tracks (unless opts.Reference is set), each
// failure shrunk to a small scenario. It logs the summary turnstile explore prints and fails
// t when a run failed. opts.Impl is set here; with neither Runs nor Duration, 100 runs.
// (It lives in package explore, which builds on package conformance.)
func Test(t *testing.T, port porttest.Port, opts Options) Result {
	t.Helper()
	opts.Impl = porttest.InProcess(t, port)
	opts = heldTo(opts, port.Hello().Tracks)
	if opts.Command == "" {
		opts.Command = "explore.Test"
	}
	res := Run(t.Context(), opts)
	t.Log("\n" + Summary(res))
	if res.Failed() {
		t.Errorf("explore found %d distinct failures (seed %#x)", len(res.Failures), res.Seed)
	}
	return res
}

// heldTo holds an exploration to the pi a port tracks (opts.Target.Tracks, else tracks), as
// turnstile explore holds a served port: the reference and the invariants of that pi, unless
// opts sets them.
func heldTo(opts Options, tracks string) Options {
	b, err := loop.BehaviourOf(cmp.Or(opts.Target.Tracks, tracks))
	if opts.Reference != nil || err != nil || b == (loop.Behaviour{}) {
		return opts
	}
	opts.Reference = func() sim.Implementation { return sim.NewReferenceWith(b) }
	if opts.Invariants == nil {
		opts.Invariants = invariant.AllAt(b)
	}
	return opts
}
