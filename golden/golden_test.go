package golden_test

import (
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/turnstile-dev/turnstile/golden"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestGoldens runs every curated scenario against the reference and compares its timeline
// with testdata/<family>/<name>.golden. Rewrite with `go test ./golden/ -update` and read
// the diff before committing it.
func TestGoldens(t *testing.T) {
	files, err := scenarios.LoadPath("../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios found under ../scenarios")
	}
	g := goldie.New(t, goldie.WithFixtureDir("testdata"), goldie.WithNameSuffix(golden.Suffix))
	for _, f := range files {
		t.Run(f.Rel, func(t *testing.T) {
			tr, err := sim.Run(f.Scenario, sim.NewReference())
			if err != nil {
				t.Fatal(err)
			}
			g.Assert(t, f.Rel, golden.Render(tr))
		})
	}
}
