// Package selfadapter lets a test binary stand in for the adapter its tests start: run again
// with Env naming a mode, the binary runs that mode instead of its tests (the re-exec trick).
// It is for tests only.
package selfadapter

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
)

// Env, when set in a test binary's environment, names the mode it runs instead of its tests.
const Env = "TURNSTILE_TEST_ADAPTER"

// Main is a test package's TestMain: with Env unset it runs the tests; set, it runs the mode
// Env names and exits with the code the mode returns (2 for a mode not in modes).
func Main(m *testing.M, modes map[string]func() int) {
	mode := os.Getenv(Env)
	if mode == "" {
		os.Exit(m.Run())
	}
	run, ok := modes[mode]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown %s=%q\n", Env, mode)
		os.Exit(2)
	}
	os.Exit(run())
}

// Serve is the mode serving the reference on stdin and stdout, as `turnstile adapter` does.
func Serve() int {
	if err := protocol.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// Process is a protocol.Process running this test binary as the adapter named mode, with env
// added to its environment; it is closed when t ends, an error closing it failing t.
func Process(t testing.TB, mode string, env ...string) *protocol.Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Built with -race, the adapter would sleep a second at its exit (GORACE atexit_sleep_ms,
	// 1000 by default), and the harness waits for that at every Close.
	race := "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
	p := &protocol.Process{Command: []string{exe}, Env: append([]string{Env + "=" + mode, race}, env...)}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}
