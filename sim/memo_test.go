package sim_test

import (
	"bytes"
	"testing"

	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestGeneratedRunsGiveTheSameTraceFromValuesAndJSON extends
// TestValuesAndJSONGiveTheSameTrace to generated scenarios (hooks that rewrite contexts,
// steering, aborts, errors): the in-process encoding, which writes each transcript message
// once and reuses it in later contexts, must record what encoding each payload afresh from
// JSON records.
func TestGeneratedRunsGiveTheSameTraceFromValuesAndJSON(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 40
	}
	for i := range n {
		sc := explore.GenerateScenario(explore.RunSeed(7, i))
		direct, err := sim.Run(sc, sim.NewReference())
		if err != nil {
			t.Fatal(err)
		}
		viaWire, err := sim.Run(sc, viaJSON{sim.NewReference()})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := direct.JSONL(), viaWire.JSONL(); !bytes.Equal(a, b) {
			d, _ := trace.FirstDivergence(trace.Lines(b), trace.Lines(a), 2)
			t.Fatalf("generated scenario %d (%s): values and JSON differ (- JSON, + values):\n%s", i, sc.Name, d)
		}
	}
}
