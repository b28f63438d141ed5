package example_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/scenarios"
)

// serveEnv, when set, makes the test binary serve the example port over the protocol (the
// re-exec trick): what conformance/example/adapter does.
const serveEnv = "TURNSTILE_EXAMPLE_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		if err := conformance.ServePort(os.Stdin, os.Stdout, example.Port{}); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestServePortGivesTheSameVerdicts: the port served over the protocol passes the curated
// suite as it does in-process, skipping the scenarios that need hooks it lacks.
func TestServePortGivesTheSameVerdicts(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	suite := scenarios.Scenarios(files)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &conformance.Process{Command: []string{exe}, Env: []string{serveEnv + "=1"}, Timeout: 2 * time.Minute} // no-turn-limit is long under -race
	defer p.Close()
	r := conformance.Verify(context.Background(), suite, p, conformance.Options{Scenarios: diagnose.FromFiles(files)})
	if r.Failed != 0 || r.Passed == 0 {
		var b testingWriter
		b.t = t
		_ = r.WriteText(&b)
		t.Fatalf("served over the protocol: %s %s", r.StartError, r.Summary())
	}
	if r.Implementation != "example devel (tracks pi 1.6.0)" {
		t.Errorf("implementation %q", r.Implementation)
	}
	t.Logf("%s: %s", r.Implementation, r.Summary())
}

type testingWriter struct{ t *testing.T }

func (w *testingWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
