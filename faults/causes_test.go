package faults_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/scenarios"
)

func faultNamed(t *testing.T, name string) fault {
	t.Helper()
	for _, f := range faults {
		if f.name == name {
			return f
		}
	}
	t.Fatalf("no fault %q", name)
	return fault{}
}

// conformFaulty runs the curated suite's loop scenarios against a loop carrying fs, through
// the protocol. The Agent scenarios are left out: they see a loop fault through the Agent,
// where the queue polls are not in the trace, so the same fault shows there with another
// signature (a second cause); agent_test.go judges the Agent's own faults on them.
func conformFaulty(t *testing.T, fs []fault) conformance.Report {
	t.Helper()
	all, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	files := slices.DeleteFunc(all, func(f *scenarios.File) bool { return strings.HasPrefix(f.Scenario.Name, "agent/") })
	suite := scenarios.Scenarios(files)
	// Budgets stop a faulty loop that never ends; the timeout only guards against a hang, and
	// is generous because -race on a loaded machine slows the reference's longest scenarios.
	p := faultyProcess(faultyBinary(t), roleReference, 60*time.Second, fs...)
	defer p.Close()
	return conformance.Verify(context.Background(), suite, p, conformance.Options{Scenarios: diagnose.FromFiles(files)})
}

func logCauses(t *testing.T, r conformance.Report) {
	t.Helper()
	for i, c := range r.Causes {
		t.Logf("cause %d: %s — %d scenarios (explains %d: %s) — rule: %s", i+1, c.Title, len(c.Scenarios), len(c.Explains), strings.Join(c.Explains, " "), c.Rule)
	}
}

// The three independent faults the acceptance test combines, each with the rule its cause
// must name. Each alone gives one cause.
var threeFaults = []struct{ fault, rule string }{
	{"runs a truncated batch", "R-TRUNC-FAIL"},
	{"trusts stopReason", "R-CONTENT-DECIDES"},
	{"turn cap of 2", "R-NO-TURN-LIMIT"},
}

// faultRules is every fault of faults_test.go with the rule its one cause must name.
var faultRules = []struct{ fault, rule string }{
	{"runs a truncated batch", "R-TRUNC-FAIL"},
	{"trusts stopReason", "R-CONTENT-DECIDES"},
	{"turn cap of 2", "R-NO-TURN-LIMIT"},
	{"follow-up polled too early", "R-POLL-FOLLOW-UP"},
	{"terminate when any result asks", "R-TERM-UNANIMOUS"},
	{"extra continuation request", "R-FINISH-CONTINUE"},
	{"steering re-polled although messages are pending", "R-POLL-B"},
	{"finishTurn end ignored", "R-FINISH-END"},
}

// fiveFaults are five independent faults that change different things (none hides another
// in every scenario it fails).
var fiveFaults = []string{"runs a truncated batch", "trusts stopReason", "turn cap of 2", "follow-up polled too early", "finishTurn end ignored"}

// TestOneFaultIsOneCause: a loop with one fault fails the curated suite (its loop scenarios),
// and gets one cause in the summary, naming the rule the fault breaks, whatever number of
// scenarios it fails. Every fault of faults_test.go is judged here.
func TestOneFaultIsOneCause(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty binary")
	}
	for _, f := range faults {
		if !slices.ContainsFunc(faultRules, func(x struct{ fault, rule string }) bool { return x.fault == f.name }) {
			t.Errorf("fault %q has no rule in faultRules: the curated suite is not held to catch it", f.name)
		}
	}
	for _, x := range faultRules {
		t.Run(x.fault, func(t *testing.T) {
			t.Parallel()
			r := conformFaulty(t, []fault{faultNamed(t, x.fault)})
			logCauses(t, r)
			if r.Failed == 0 {
				t.Fatalf("nothing failed: %s", r.Summary())
			}
			if len(r.Causes) != 1 {
				t.Fatalf("%d causes for one fault, want 1", len(r.Causes))
			}
			c := r.Causes[0]
			if !namesRule(c.Rule, x.rule) || len(c.Explains) != r.Failed {
				t.Errorf("the cause names rule %q and explains %d of %d failures", c.Rule, len(c.Explains), r.Failed)
			}
		})
	}
}

// TestThreeFaultsAreThreeCauses: a loop with three independent faults at once gets exactly
// three causes, each naming its rule, with its scenario count.
func TestThreeFaultsAreThreeCauses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty binary")
	}
	t.Parallel()
	var fs []fault
	for _, x := range threeFaults {
		fs = append(fs, faultNamed(t, x.fault))
	}
	r := conformFaulty(t, fs)
	logCauses(t, r)
	checkThreeCauses(t, r.Causes)
	var text strings.Builder
	if err := r.WriteSummary(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "3 causes of failure") {
		t.Errorf("the summary does not count three causes:\n%s", text.String())
	}
	t.Log("\n" + text.String())
}

// TestFiveFaultsAreFiveCauses: a loop with five independent faults at once gets one cause
// per fault, each named by the rule its fault breaks.
func TestFiveFaultsAreFiveCauses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty binary")
	}
	t.Parallel()
	var fs []fault
	want := map[string]bool{}
	for _, name := range fiveFaults {
		fs = append(fs, faultNamed(t, name))
		for _, x := range faultRules {
			if x.fault == name {
				want[x.rule] = true
			}
		}
	}
	r := conformFaulty(t, fs)
	logCauses(t, r)
	got := map[string]bool{}
	for _, c := range r.Causes {
		id, _, _ := strings.Cut(c.Rule, " ")
		got[id] = true
	}
	if len(r.Causes) != len(fs) || len(got) != len(want) {
		t.Errorf("%d causes for %d faults", len(r.Causes), len(fs))
	}
	for id := range want {
		if !got[id] {
			t.Errorf("no cause names %s", id)
		}
	}
}

// threeFaultsAtOnce is the three faults of threeFaults.
func threeFaultsAtOnce(t *testing.T) []fault {
	var fs []fault
	for _, x := range threeFaults {
		fs = append(fs, faultNamed(t, x.fault))
	}
	return fs
}

// TestThreeFaultsThroughTheGoPortServer: the example Go port (conformance/example, whose
// loop is package loop) carrying the three faults, served by porttest.Serve through
// conformance/example/adapter, gets three causes, each naming its rule.
func TestThreeFaultsThroughTheGoPortServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty binary")
	}
	t.Parallel()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	suite := scenarios.Scenarios(files)
	p := faultyProcess(faultyBinary(t), roleExample, 60*time.Second, threeFaultsAtOnce(t)...)
	defer p.Close()
	r := conformance.Verify(context.Background(), suite, p, conformance.Options{Scenarios: diagnose.FromFiles(files)})
	logCauses(t, r)
	checkThreeCauses(t, r.Causes)
}

// TestThreeFaultsThroughConformanceTest: a Go port carrying the three faults, checked by
// its own go test with porttest.Test, logs three causes, each naming its rule. In-process
// the reference is package loop too, so the port is faultyport: a copy of the example port
// over a copy of loop/ with its own switches (see buildFaulty).
func TestThreeFaultsThroughConformanceTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty binary")
	}
	t.Parallel()
	cmd := exec.Command(faultyBinary(t), "-test.run", "^TestConformance$", "-test.v")
	cmd.Env = append(os.Environ(), portFaultsEnv+"="+names(threeFaultsAtOnce(t)))
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err == nil || !strings.Contains(text, "--- FAIL: TestConformance") {
		t.Fatalf("the faulty port passed its conformance test (%v):\n%s", err, text)
	}
	if !strings.Contains(text, "3 causes of failure") {
		t.Fatalf("the test output does not count three causes:\n%s", text)
	}
	for _, x := range threeFaults {
		if !strings.Contains(text, "rule: "+x.rule+" (") {
			t.Errorf("no cause names rule %s", x.rule)
		}
	}
	i := strings.Index(text, "3 causes of failure")
	t.Log(text[i:min(len(text), i+2500)])
}

// namesRule reports whether a cause's rule is the rule id, with its title.
func namesRule(rule, id string) bool { return strings.HasPrefix(rule, id+" (") }

// checkThreeCauses requires exactly the three causes of threeFaults, by rule.
func checkThreeCauses(t *testing.T, causes []diagnose.Cause) {
	t.Helper()
	if len(causes) != 3 {
		t.Fatalf("%d causes for three faults, want 3", len(causes))
	}
	for _, x := range threeFaults {
		found := false
		for _, c := range causes {
			if namesRule(c.Rule, x.rule) && len(c.Scenarios) > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("no cause names rule %s", x.rule)
		}
	}
}
