package example_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/internal/gctarget"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// serveEnv, when set, makes the test binary serve the example port over the protocol (the
// re-exec trick): what conformance/example/adapter does.
const serveEnv = "TURNSTILE_EXAMPLE_SERVE"

func TestMain(m *testing.M) {
	// The CLI's GC target: the whole-suite verifications of these tests collect as often as
	// conform's do (a tenth less CPU than at Go's default).
	gctarget.Set()
	if mode := os.Getenv(serveEnv); mode != "" {
		var port porttest.Port = example.Port{}
		switch mode {
		case "agent":
			port = example.AgentPort{}
		case "goroutines":
			port = goroutinePort{}
		case "omit-empty":
			port = omitEmptyPort{}
		}
		if err := porttest.Serve(os.Stdin, os.Stdout, port); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestServePortGivesTheSameVerdicts: the example loop and the example Agent served over
// the protocol pass the curated suite as they do in-process, hooks that take time and
// runToolCall included: the loop every scenario but the Agent ones, the Agent every one.
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
	for _, c := range []struct{ mode, name string }{{"loop", "example"}, {"agent", "example-agent"}} {
		t.Run(c.mode, func(t *testing.T) {
			p := &protocol.Process{Command: []string{exe}, Env: []string{serveEnv + "=" + c.mode}, Timeout: 2 * time.Minute} // no-turn-limit is long under -race
			defer p.Close()
			r := conformance.Verify(context.Background(), suite, p, conformance.Options{Scenarios: diagnose.FromFiles(files)})
			agents, waiting, runToolCalls, defaultModels := 0, 0, 0, 0
			for _, f := range files {
				if f.Scenario.Agent != nil {
					agents++
				}
				if f.Scenario.RunToolCall {
					runToolCalls++
				}
				if slices.Contains(sim.NeededFeatures(f.Scenario), sim.FeatureWaitingHooks) {
					waiting++
				}
				if slices.Contains(sim.NeededFeatures(f.Scenario), sim.FeatureDefaultModel) {
					defaultModels++ // the Go kit lacks it
				}
			}
			if waiting == 0 || runToolCalls == 0 {
				t.Fatalf("the suite has %d scenarios needing waitingHooks and %d runToolCall ones; want some of each", waiting, runToolCalls)
			}
			wantSkipped := agents
			if c.mode == "agent" {
				wantSkipped = defaultModels
			}
			if r.Failed != 0 || r.Skipped != wantSkipped || r.Passed != len(suite)-wantSkipped {
				var b testingWriter
				b.t = t
				_ = r.WriteText(&b)
				t.Fatalf("served over the protocol: %s %s (want %d skipped: the Agent scenarios of a port without an Agent, those giving the Agent no model of one with)", r.StartError, r.Summary(), wantSkipped)
			}
			if want := c.name + " devel (tracks pi 1.6.0)"; r.Implementation != want {
				t.Errorf("implementation %q, want %q", r.Implementation, want)
			}
			t.Logf("%s: %s", r.Implementation, r.Summary())
		})
	}
}

type testingWriter struct{ t *testing.T }

func (w *testingWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
