package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/scenarios"
)

// agentFaults are deliberate bugs of the Agent (agent/), each with the rule its cause must
// name: the id of docs/SEMANTICS.md or the Agent invariant that judges it.
var agentFaults = []struct {
	fault
	rule string
}{
	{one("drains every message in one-at-a-time mode", "agent/run.go",
		"\t\treturn a.steering.Drain(), nil\n",
		"\t\tvar all []loop.Message\n\t\tfor m := a.steering.Drain(); len(m) > 0; m = a.steering.Drain() {\n\t\t\tall = append(all, m...)\n\t\t}\n\t\treturn all, nil\n"),
		"R-AGENT-QUEUES"},
	{one("delivers a follow-up while running", "agent/run.go",
		"\t\treturn a.steering.Drain(), nil\n",
		"\t\tif m := a.steering.Drain(); len(m) > 0 {\n\t\t\treturn m, nil\n\t\t}\n\t\treturn a.followUp.Drain(), nil\n"),
		"R-AGENT-QUEUES"},
}

// TestWrongAgentsFailNamingTheRule: an Agent with a deliberate queue bug, served through the
// protocol, fails the curated Agent scenarios, and the report's first cause names the rule it
// breaks.
func TestWrongAgentsFailNamingTheRule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds one binary per fault")
	}
	files, err := scenarios.SuiteNamed("agent")
	if err != nil {
		t.Fatal(err)
	}
	suite := scenarios.Scenarios(files)
	for _, f := range agentFaults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			bin := buildAll(t, []fault{f.fault}, t.TempDir())
			p := &conformance.Process{Command: []string{bin, "adapter"}, Timeout: 10 * time.Second}
			defer p.Close()
			r := conformance.Verify(context.Background(), suite, p, conformance.Options{Scenarios: diagnose.FromFiles(files)})
			logCauses(t, r)
			if r.Failed == 0 {
				t.Fatalf("no Agent scenario catches %q: %s", f.name, r.Summary())
			}
			if len(r.Causes) == 0 || !namesRule(r.Causes[0].Rule, f.rule) {
				t.Errorf("the first cause does not name %s", f.rule)
			}
		})
	}
}
