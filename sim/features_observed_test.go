package sim_test

import (
	"slices"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestObservedFeaturesOfTheSuite: the features a curated scenario's reference run shows it
// needs that its file does not (a request beyond the script throws from the stream) are
// found, and none is made up.
func TestObservedFeaturesOfTheSuite(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	for _, f := range files {
		tr, _ := sim.Run(f.Scenario, sim.NewReference())
		for _, feat := range sim.ObservedFeatures(tr) {
			if !slices.Contains(sim.NeededFeatures(f.Scenario), feat) {
				found[f.Scenario.Name] = append(found[f.Scenario.Name], feat)
			}
		}
	}
	t.Logf("observed beyond the files: %v", found)
	if got := found["abort-error/unscripted-request-fails-run"]; !slices.Contains(got, sim.FeatureThrowingStreams) {
		t.Errorf("an unscripted request's throw is not observed: %v", found)
	}
}
