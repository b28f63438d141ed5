package protocol_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// adapterEnv, when set in the environment, makes the test binary serve the reference
// instead of running tests: the re-exec trick.
const adapterEnv = "TURNSTILE_TEST_ADAPTER"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(adapterEnv); mode {
	case "":
		os.Exit(m.Run())
	case "serve":
		if err := protocol.Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		os.Exit(0)
	default:
		fmt.Fprintf(os.Stderr, "unknown %s=%q\n", adapterEnv, mode)
		os.Exit(2)
	}
}

// selfAdapter is a Process running this test binary as the adapter named mode.
func selfAdapter(t testing.TB, mode string) *protocol.Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Built with -race, the adapter would sleep a second at its exit (GORACE atexit_sleep_ms).
	race := "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
	p := &protocol.Process{Command: []string{exe}, Env: []string{adapterEnv + "=" + mode, race}}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
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
