package scenarios_test

import (
	"bytes"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// roundTrip writes sc, reads it back and requires the same trace.
func roundTrip(t *testing.T, sc *sim.Scenario) {
	t.Helper()
	data, err := scenarios.Write(sc)
	if err != nil {
		t.Fatalf("%s: write: %v", sc.Name, err)
	}
	f, err := scenarios.Parse("written.yaml", "written", data)
	if err != nil {
		t.Fatalf("%s: parse: %v\n%s", sc.Name, err, data)
	}
	want, err := sim.Run(sc, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	got, err := sim.Run(f.Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want.JSONL(), got.JSONL()) {
		d, _ := sim.FirstDivergence(sim.Lines(want.Timeline()), sim.Lines(got.Timeline()), 3)
		t.Fatalf("%s: the written scenario runs differently:\n%s\nfile:\n%s", sc.Name, d, data)
	}
}

// TestWriteCuratedSuite round-trips every curated scenario.
func TestWriteCuratedSuite(t *testing.T) {
	files, _ := scenarios.Suite()
	if len(files) == 0 {
		t.Fatal("no curated scenarios")
	}
	for _, f := range files {
		t.Run(f.Rel, func(t *testing.T) { roundTrip(t, f.Scenario) })
	}
}
