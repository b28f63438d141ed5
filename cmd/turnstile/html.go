package main

import (
	"fmt"
	"os"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/report"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// htmlRuns collects the runs of `run --html` for one page.
type htmlRuns struct {
	impl string
	// behaviour is the pi the reference beside an implementation behaves as.
	behaviour loop.Behaviour
	runs      []report.Run
}

// add records a scenario's run: its trace, beside the reference's when an implementation
// ran it, with the scenario's failed expectations (when they are judged: checkExpect) and
// the invariants the trace breaks, as run's verdict says them.
func (h *htmlRuns) add(f *scenarios.File, tr *trace.Trace, checkExpect bool, broken []invariant.Failure) error {
	r := report.Run{Title: f.Scenario.Name, Subtitle: f.Path, Actual: tr, ActualLabel: "reference"}
	if h.impl != "" {
		ref, err := sim.Run(f.Scenario, sim.NewReferenceWith(h.behaviour))
		if err != nil {
			return err
		}
		r.Expected, r.ExpectedLabel, r.ActualLabel = ref, "expected: the reference", "actual: "+h.impl
	}
	if checkExpect {
		for _, p := range f.Expect.Check(tr) {
			r.Findings = append(r.Findings, report.Finding{Rule: "expectation", Msg: p})
		}
	}
	for _, v := range broken {
		r.Findings = append(r.Findings, report.Finding{Entry: v.Entry, Rule: v.Invariant, Msg: v.Msg})
	}
	h.runs = append(h.runs, r)
	return nil
}

// write writes the page to path.
func (h *htmlRuns) write(path string) error {
	title := "turnstile run"
	if len(h.runs) == 1 {
		title += ": " + h.runs[0].Title
	}
	intro := "Each run against the built-in reference loop, one row an entry of its trace, with the scenario's failed expectations and broken invariants marked."
	if h.impl != "" {
		intro = "Each run of " + h.impl + " beside the reference's, aligned entry by entry; rows that differ are shaded and findings marked."
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := report.Write(f, report.Page{Title: title, Intro: intro, Runs: h.runs}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
