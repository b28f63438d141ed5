package porttest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// loopOnlyPort is a protocol-2 port with no RunToolCall method.
type loopOnlyPort struct{}

func (loopOnlyPort) Hello() protocol.Hello {
	return protocol.Hello{Name: "loop-only", Tracks: "1.6.0", Protocol: 2}
}
func (loopOnlyPort) Run(context.Context, Env) (any, error) { return []any{}, nil }

// badRunnerPort has a RunToolCall that rejects every call, or panics.
type badRunnerPort struct {
	loopOnlyPort
	panics bool
}

func (p badRunnerPort) RunToolCall(context.Context, Env, json.RawMessage, func(any)) (any, error) {
	if p.panics {
		var m map[string]int
		m["x"] = 1
	}
	return nil, errors.New("runToolCall refused here")
}

// TestRunToolCallIsLackedWithoutTheMethod: a port lacks runToolCall, in Test and served,
// unless it has the RunToolCall method; one that has it is asked for the scenarios.
func TestRunToolCallIsLackedWithoutTheMethod(t *testing.T) {
	sc := suiteScenario(t, "tools-sequential/run-tool-call").Scenario
	for _, bubbles := range []bool{true, false} {
		h := portHello(loopOnlyPort{}, bubbles)
		if !slices.Contains(h.Lacks, sim.FeatureRunToolCall) || !strings.Contains(conformance.LacksReason(h, sc), sim.FeatureRunToolCall) {
			t.Errorf("bubbles %v: a port without RunToolCall: lacks %v, reason %q", bubbles, h.Lacks, conformance.LacksReason(h, sc))
		}
		if h := portHello(badRunnerPort{}, bubbles); slices.Contains(h.Lacks, sim.FeatureRunToolCall) || conformance.LacksReason(h, sc) != "" {
			t.Errorf("bubbles %v: a port with RunToolCall lacks %v", bubbles, h.Lacks)
		}
	}
	if err := (&inProcess{port: loopOnlyPort{}, idle: newIdleTracker()}).Start(sim.Setup{Entry: sim.EntryRunToolCall}, nil); err == nil || !strings.Contains(err.Error(), "no RunToolCall method") {
		t.Errorf("a runToolCall session started on a port without the method: %v", err)
	}
}

// TestRunToolCallOutcomesAreCompared: a RunToolCall that rejects fails the scenario with its
// refusal in the trace; one that panics fails it with the panic's stack.
func TestRunToolCallOutcomesAreCompared(t *testing.T) {
	f := suiteScenario(t, "tools-sequential/run-tool-call")
	for _, c := range []struct {
		port badRunnerPort
		want string
	}{{badRunnerPort{}, "runToolCall refused here"}, {badRunnerPort{panics: true}, "the port panicked in RunToolCall"}} {
		synctest.Test(t, func(t *testing.T) {
			res := conformance.VerifyOne(f.Scenario, sim.NewReference(), runOf(f.Scenario, &inProcess{port: c.port}), portHello(c.port, true), trace.Strict, levels.Pi, diagnose.FromFile(f), nil)
			text := conformance.FindingsText(res.Findings, "", 0)
			if res.Status != conformance.Fail || !strings.Contains(text, c.want) {
				t.Errorf("panics %v: status %s, findings without %q:\n%s", c.port.panics, res.Status, c.want, text)
			}
		})
	}
}

// suiteScenario is the curated suite's scenario name.
func suiteScenario(t *testing.T, name string) *scenarios.File {
	t.Helper()
	f, err := scenarios.SuiteFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
