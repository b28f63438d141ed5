package conformance_test

import (
	"bytes"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/sim"
)

func TestServeRoundTrip(t *testing.T) {
	p := selfadapter.Process(t, "serve")
	for _, sc := range allScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			want, err := sim.Run(sc, sim.NewReference())
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			got, err := sim.Run(sc, p)
			if err != nil {
				t.Fatalf("through the protocol: %v", err)
			}
			if !bytes.Equal(got.JSONL(), want.JSONL()) {
				t.Fatalf("traces differ\nwant:\n%s\ngot:\n%s", want.Timeline(), got.Timeline())
			}
		})
	}
}
