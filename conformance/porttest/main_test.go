package porttest_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
)

// adapterEnv, when set in the environment, makes the test binary serve a port instead of
// running tests: the re-exec trick.
const adapterEnv = "TURNSTILE_TEST_ADAPTER"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(adapterEnv); mode {
	case "":
		os.Exit(m.Run())
	case "stuck-port":
		porttest.SetServedStallLimit(time.Second)
		if err := porttest.Serve(os.Stdin, os.Stdout, stuckGoPort{}); err != nil {
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
