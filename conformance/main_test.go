package conformance_test

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
)

// adapterEnv, when set in the environment, makes the test binary an adapter instead of running
// tests: the re-exec trick. Its value says which one.
const adapterEnv = "TURNSTILE_TEST_ADAPTER"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(adapterEnv); mode {
	case "":
		os.Exit(m.Run())
	case "serve":
		serve()
	case "crash-once":
		// Crashes in its first life (the flag file does not exist yet), serves afterwards.
		flag := os.Getenv(flagEnv)
		if _, err := os.Stat(flag); err != nil {
			_ = os.WriteFile(flag, nil, 0o600)
			in := bufio.NewReader(os.Stdin)
			_, _ = in.ReadString('\n')
			fmt.Println(`{"type":"hello","protocol":1,"name":"crash-once","version":"1","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"]}}`)
			_, _ = in.ReadString('\n')
			fmt.Fprintln(os.Stderr, "first life: crashing")
			os.Exit(7)
		}
		serve()
	default:
		fmt.Fprintf(os.Stderr, "unknown %s=%q\n", adapterEnv, mode)
		os.Exit(2)
	}
}

// flagEnv names the file the crash-once adapter uses to remember its first life.
const flagEnv = "TURNSTILE_TEST_FLAG"

func serve() {
	if err := protocol.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// selfAdapter is a Process running this test binary as the adapter named mode.
func selfAdapter(t testing.TB, mode string, env ...string) *protocol.Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Built with -race, the adapter would sleep a second at its exit (GORACE atexit_sleep_ms,
	// 1000 by default), and the harness waits for that at every Close.
	race := "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
	p := &protocol.Process{Command: []string{exe}, Env: append([]string{adapterEnv + "=" + mode, race}, env...)}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}
