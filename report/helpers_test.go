package report

import (
	"encoding/json"
	"os"
	"testing"

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
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Scenario.Name == name {
			return f
		}
	}
	t.Fatalf("no scenario %q in the suite", name)
	return nil
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
