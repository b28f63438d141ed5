package conformance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/diagnose"
	suite "github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestWrongExpectationFailsTheScenario: a scenario whose expect: block the reference itself
// does not meet is a failing scenario (a bug in the scenario), even for an implementation
// whose trace is the reference's.
func TestWrongExpectationFailsTheScenario(t *testing.T) {
	f, err := suite.Parse("wrong.yaml", "wrong", []byte("provider: [hello]\nrun: [hi]\nexpect:\n  requests: 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := conformance.Verify(context.Background(), []*sim.Scenario{f.Scenario}, sim.NewReference(),
		conformance.Options{Scenarios: diagnose.FromFiles([]*suite.File{f})})
	if r.Failed != 1 || !strings.Contains(r.Results[0].Reason, "the reference fails the scenario's expect: block") ||
		!strings.Contains(r.Results[0].Reason, "expected 7 requests, the run made 1") {
		t.Fatalf("%s: %q", r.Summary(), r.Results[0].Reason)
	}
	// Two problems are said once each, in the finding's values, not again in its sentence
	// and the verdict line (a stranger's review read them three times).
	f, err = suite.Parse("wrong.yaml", "wrong", []byte("provider: [hello]\nrun: [hi]\nexpect:\n  requests: 7\n  absent: [agent_end]\n"))
	if err != nil {
		t.Fatal(err)
	}
	r = conformance.Verify(context.Background(), []*sim.Scenario{f.Scenario}, sim.NewReference(),
		conformance.Options{Scenarios: diagnose.FromFiles([]*suite.File{f})})
	var p conformance.Progress
	out := p.Text(r.Results[0])
	for _, problem := range []string{"expected 7 requests", `expected no timeline line containing "agent_end"`} {
		if n := strings.Count(out, problem); n != 1 {
			t.Errorf("%q is said %d times:\n%s", problem, n, out)
		}
	}
}
