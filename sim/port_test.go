package sim_test

import (
	"bytes"
	"testing"

	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// jsonPort hides the world behind a plain Port, so the reference talks to it in JSON, the
// way it does over the protocol.
type jsonPort struct{ sim.Port }

// viaJSON is the reference reached through a jsonPort.
type viaJSON struct{ *sim.Reference }

func (v viaJSON) Start(setup sim.Setup, port sim.Port) error {
	return v.Reference.Start(setup, jsonPort{port})
}

// TestValuesAndJSONGiveTheSameTrace checks that the in-process shortcut (payloads passed as
// Go values and encoded by the world) records exactly what JSON payloads record, in the
// curated suite and generated runs (hooks rewriting contexts, steering, aborts, errors).
func TestValuesAndJSONGiveTheSameTrace(t *testing.T) {
	list := concurrencyScenarios()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		list = append(list, f.Scenario)
	}
	for i := range 300 {
		list = append(list, explore.GenerateScenario(explore.RunSeed(11, i)))
	}
	for _, sc := range list {
		direct, err := sim.Run(sc, sim.NewReference())
		if err != nil {
			t.Fatal(err)
		}
		viaWire, err := sim.Run(sc, viaJSON{sim.NewReference()})
		if err != nil {
			t.Fatal(err)
		}
		a, b := direct.JSONL(), viaWire.JSONL()
		if !bytes.Equal(a, b) {
			t.Errorf("%s: values and JSON differ (- JSON, + values):\n%s", sc.Name, trace.Compare(viaWire, direct, trace.Strict).Text(2))
		}
	}
}
