package protocol_test

import (
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

func TestMain(m *testing.M) {
	selfadapter.Main(m, map[string]func() int{"serve": selfadapter.Serve})
}

// curatedSuite loads the curated scenarios, skipping the test in -short mode.
func curatedSuite(t *testing.T) []*sim.Scenario {
	t.Helper()
	if testing.Short() {
		t.Skip("the curated suite is long; skipped in -short mode")
	}
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatalf("the curated suite does not load: %v", err)
	}
	var out []*sim.Scenario
	for _, f := range files {
		out = append(out, f.Scenario)
	}
	return out
}
