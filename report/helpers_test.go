package report

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/trace"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// noTurnEnd is a deliberately faulty implementation: the reference loop, except that it
// never reports turn_end.
type noTurnEnd struct{ sim.Implementation }

func (f noTurnEnd) Start(setup sim.Setup, world sim.Port) error {
	return f.Implementation.Start(setup, dropPort{world})
}

type dropPort struct{ sim.Port }

func (p dropPort) Notify(n sim.Notification) {
	if ev, ok := n.Value.(loop.Event); ok && ev.Type == loop.TurnEnd {
		return
	}
	var ev struct{ Type string }
	if n.Kind == sim.NotifyEvent && json.Unmarshal(n.Data, &ev) == nil && ev.Type == string(loop.TurnEnd) {
		return
	}
	p.Port.Notify(n)
}

// suiteScenario loads one scenario of the curated suite.
func suiteScenario(t *testing.T, name string) *scenarios.File {
	t.Helper()
	f, err := scenarios.SuiteFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// faultyRun runs a scenario against the reference and the faulty implementation, with the
// faulty trace's broken invariants as findings.
func faultyRun(t *testing.T, name string) Run {
	t.Helper()
	f := suiteScenario(t, name)
	ref, err := sim.Run(f.Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	got, err := sim.Run(f.Scenario, noTurnEnd{sim.NewReference()})
	if err != nil {
		t.Fatal(err)
	}
	r := Run{Title: name, Subtitle: f.Path, Expected: ref, Actual: got, ExpectedLabel: "expected: reference", ActualLabel: "actual: no-turn-end"}
	for _, v := range invariant.CheckAll(got) {
		r.Findings = append(r.Findings, Finding{Entry: v.Entry, Rule: v.Invariant, Msg: v.Msg})
	}
	return r
}

// writePage renders p to file.
func writePage(t *testing.T, file string, p Page) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Write(f, p); err != nil {
		t.Fatal(err)
	}
}

// twoFaults is a faulty implementation with two independent defects: it never reports
// tool_execution_update, and it never asks the world for an API key (it takes none).
type twoFaults struct{ sim.Implementation }

func (f twoFaults) Start(setup sim.Setup, world sim.Port) error {
	return f.Implementation.Start(setup, twoFaultsPort{world})
}

type twoFaultsPort struct{ sim.Port }

func (p twoFaultsPort) Notify(n sim.Notification) {
	if ev, ok := n.Value.(loop.Event); ok && ev.Type == loop.ToolExecutionUpdate {
		return
	}
	var ev struct{ Type string }
	if n.Kind == sim.NotifyEvent && json.Unmarshal(n.Data, &ev) == nil && ev.Type == string(loop.ToolExecutionUpdate) {
		return
	}
	p.Port.Notify(n)
}

func (p twoFaultsPort) Call(c sim.Call) sim.Answer {
	if c.Kind == trace.CallHook && c.Name == "getApiKey" {
		return sim.Answer{Data: []byte(`{}`)}
	}
	return p.Port.Call(c)
}

// faultyConformance verifies the families against twoFaults and returns the report with a
// way to make each scenario's traces again.
func faultyConformance(t *testing.T, families ...string) Conformance {
	t.Helper()
	all, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	var files []*scenarios.File
	var list []*sim.Scenario
	byName := map[string]*sim.Scenario{}
	for _, f := range all {
		for _, fam := range families {
			if strings.HasPrefix(f.Scenario.Name, fam+"/") {
				files = append(files, f)
				list = append(list, f.Scenario)
				byName[f.Scenario.Name] = f.Scenario
			}
		}
	}
	newImpl := func() sim.Implementation { return twoFaults{sim.NewReference()} }
	rep := conformance.VerifyParallel(context.Background(), list, newImpl, 1, conformance.Options{Scenarios: diagnose.FromFiles(files)})
	return Conformance{Report: rep, Traces: func(name string) (*trace.Trace, *trace.Trace, error) {
		want, err := sim.Run(byName[name], sim.NewReference())
		if err != nil {
			return nil, nil, err
		}
		got, err := sim.Run(byName[name], newImpl())
		return want, got, err
	}}
}
