package main

import (
	"fmt"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/report"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// writeConformReport writes conform --report DIR: the index and a page per failing scenario,
// whose two traces are made again (runs are deterministic) with the reference and a fresh
// implementation.
func writeConformReport(dir string, rep conformance.Report, files []*scenarios.File, newImpl func() sim.Implementation) error {
	byName := map[string]*sim.Scenario{}
	for _, f := range files {
		byName[f.Scenario.Name] = f.Scenario
	}
	traces := func(name string) (*trace.Trace, *trace.Trace, error) {
		sc := byName[name]
		if sc == nil {
			return nil, nil, fmt.Errorf("no scenario %q", name)
		}
		// The reference as conform ran it: at the pi the implementation is held to.
		behaviour, err := loop.BehaviourOf(rep.HeldTo)
		if err != nil {
			return nil, nil, err
		}
		want, err := sim.Run(sc, sim.NewReferenceWith(behaviour))
		if err != nil {
			return nil, nil, err
		}
		impl := newImpl()
		defer closeImpl(impl)
		got, err := sim.Run(sc, impl)
		return want, got, err
	}
	if err := report.WriteConformance(dir, report.Conformance{Report: rep, Traces: traces}); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}
