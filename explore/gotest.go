package explore

import (
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
)

// Test explores a Go port in-process, each run in a synctest bubble as porttest.Test
// runs a scenario: random scenarios the port supports (its Hello fills opts.Target), each
// failure shrunk to a small scenario. It logs the summary turnstile explore prints and fails
// t when a run failed. opts.Impl is set here; with neither Runs nor Duration, 100 runs.
// (It lives in package explore, which builds on package conformance.)
func Test(t *testing.T, port porttest.Port, opts Options) Result {
	t.Helper()
	opts.Impl = conformance.InProcess(t, port)
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
