package invariant_test

import (
	"testing"

	"github.com/turnstile-dev/turnstile/loop"

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

// TestCuratedSuiteAtEveryRelease: the reference behaving as each pi release keeps every
// invariant judged at that release (no durationMs before 1.3.0, no thinkingLevel stamp before
// 0.99.1, a batch cut short by an abort before 1.6.0), and the invariants of the newest pi
// catch the older traces where they differ.
func TestCuratedSuiteAtEveryRelease(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range loop.Releases {
		b, err := loop.BehaviourOf(v)
		if err != nil {
			t.Fatal(err)
		}
		invs := invariant.AllAt(b)
		newestBroken := 0
		for _, f := range files {
			tr, err := sim.Run(f.Scenario, sim.NewReferenceWith(b))
			if err != nil {
				t.Fatalf("%s at %s: %v", f.Scenario.Name, v, err)
			}
			for _, fl := range invariant.CheckAll(tr, invs...) {
				t.Errorf("%s at pi %s: %s", f.Scenario.Name, v, fl)
			}
			// Only a release before durationMs must break the newest invariants somewhere;
			// one trace that does is enough.
			if !b.Has(loop.DurationMs) && newestBroken == 0 && len(invariant.CheckAll(tr)) > 0 {
				newestBroken++
			}
		}
		if !b.Has(loop.DurationMs) && newestBroken == 0 {
			t.Errorf("pi %s: the newest pi's invariants accept every trace of the older release", v)
		}
	}
}
