package example_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
)

// omitEmptyPort is the example loop with the mistake Go's encoding/json invites: its
// events are written with omitempty, so a turn_end without tool results has no toolResults
// at all, which pi's shape requires (the protocol schema says so).
type omitEmptyPort struct{}

func (omitEmptyPort) Hello() porttest.Hello {
	h := example.Port{}.Hello()
	h.Name = "omit-empty"
	return h
}

func (omitEmptyPort) Run(ctx context.Context, env porttest.Env) (any, error) {
	actx, cfg, _ := example.Build(env)
	cfg.OnEvent = func(e loop.Event) {
		data, _ := json.Marshal(e)
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(data, &fields)
		if string(fields["toolResults"]) == "[]" {
			delete(fields, "toolResults")
		}
		env.Emit(fields)
	}
	if env.Setup().Entry == "continue" {
		return loop.Continue(ctx, actx, cfg)
	}
	msgs, err := example.Decode(env.Setup().Prompts)
	if err != nil {
		return nil, err
	}
	return loop.Run(ctx, msgs, actx, cfg)
}

// TestAFaultyPortGetsTheSameFindingsServedAndInProcess: a missing required field is, both
// ways, the field differences on the entries, named by their rule — served it does not end
// the scenario as a protocol error, and the broken shape the session's end reports is no
// finding of its own.
func TestAFaultyPortGetsTheSameFindingsServedAndInProcess(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	var picked []*scenarios.File
	var names []string
	for _, f := range files {
		if slices.Contains([]string{"events/text-only", "events/tool-turn", "events/several-turns", "tools-parallel/completion-order"}, f.Scenario.Name) {
			picked = append(picked, f)
			names = append(names, f.Scenario.Name)
		}
	}
	if len(picked) != 4 {
		t.Fatalf("picked %v", names)
	}
	var inProcess porttest.Report
	t.Run("in-process", func(t *testing.T) {
		porttest.TestFiles(t, omitEmptyPort{}, picked, porttest.ExpectFailures(names...), porttest.Collect(&inProcess))
	})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &protocol.Process{Command: []string{exe}, Env: []string{serveEnv + "=omit-empty"}, Timeout: time.Minute}
	defer p.Close()
	served := conformance.Verify(context.Background(), scenarios.Scenarios(picked), p,
		conformance.Options{Scenarios: diagnose.FromFiles(picked), ExpectFail: map[string]bool{names[0]: true, names[1]: true, names[2]: true, names[3]: true}})
	findings := func(r conformance.Report) map[string][]string {
		out := map[string][]string{}
		for _, res := range r.Results {
			for _, f := range res.Findings {
				out[res.Scenario] = append(out[res.Scenario], f.Signature)
			}
		}
		return out
	}
	want, got := findings(inProcess), findings(served)
	for _, name := range names {
		if !slices.Equal(want[name], got[name]) {
			t.Errorf("%s: findings in-process\n  %s\nserved\n  %s", name, strings.Join(want[name], "\n  "), strings.Join(got[name], "\n  "))
		}
		if !slices.ContainsFunc(want[name], func(s string) bool { return strings.Contains(s, "toolResults") }) {
			t.Errorf("%s: no finding names toolResults: %v", name, want[name])
		}
	}
	t.Logf("%s: %s", names[0], strings.Join(got[names[0]], "; "))
	// One defect, one cause, named by the rule of the entry it shows on: the session's end
	// that reports the broken shape is not a cause of its own.
	for way, r := range map[string]conformance.Report{"in-process": inProcess, "served": served} {
		for _, res := range r.Results {
			for _, f := range res.Findings {
				if f.Kind == diagnose.Error {
					t.Errorf("%s, %s: an error finding beside the trace's: %s", way, res.Scenario, f.Says)
				}
			}
		}
	}
	for _, res := range served.Results {
		if strings.Contains(res.Reason, "protocol error") {
			t.Errorf("%s: served, a protocol error: %s", res.Scenario, res.Reason)
		}
	}
}
