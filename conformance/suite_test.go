package conformance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	curated "github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// curatedSuite loads the curated scenario files (package scenarios), skipping the test when
// they do not load (the suite is being written alongside).
func curatedSuite(t *testing.T) []*sim.Scenario {
	t.Helper()
	if testing.Short() {
		t.Skip("the curated suite is long; skipped in -short mode")
	}
	files, err := curated.Suite()
	if err != nil {
		t.Skipf("the curated suite does not load: %v", err)
	}
	var out []*sim.Scenario
	for _, f := range files {
		out = append(out, f.Scenario)
	}
	if len(out) == 0 {
		t.Skip("the curated suite is empty")
	}
	return out
}

// TestCuratedSuiteThroughServe: the reference served over the protocol reproduces every
// curated scenario byte for byte.
func TestCuratedSuiteThroughServe(t *testing.T) {
	suite := curatedSuite(t)
	report := conformance.Verify(context.Background(), suite, selfadapter.Process(t, "serve"), conformance.Options{})
	for _, res := range report.Results {
		if res.Status != conformance.Pass {
			t.Errorf("%s: %s\n%s", res.Scenario, res.Reason, divergenceText(res))
		}
	}
	t.Log(report.Summary())
}

// TestPiPassesCuratedSuite: pi must pass every curated scenario (that is how the reference and
// the goldens are proved right); differences are reported, not hidden.
func TestPiPassesCuratedSuite(t *testing.T) {
	suite := curatedSuite(t)
	p := piAdapter(t)
	checkPi(t, conformance.Verify(context.Background(), suite, p, conformance.Options{}), p)
}

func divergenceText(res conformance.Result) string {
	return strings.TrimRight(conformance.FindingsText(res.Findings, "  ", 0), "\n")
}
