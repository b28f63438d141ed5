package scenarios_test

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// tb is what roundTrip needs of a *testing.T or *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// roundTrip writes sc, reads it back and requires the same trace.
func roundTrip(t tb, sc *sim.Scenario) {
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
		d, _ := trace.FirstDivergence(trace.Lines(want.Timeline()), trace.Lines(got.Timeline()), 3)
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

// TestWriteGenerated round-trips generated scenarios: Parse(Write(sc)) runs to the same trace
// (more of them with -rapid.checks).
func TestWriteGenerated(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { roundTrip(t, explore.Scenario().Draw(t, "scenario")) })
}
