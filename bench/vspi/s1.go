package main

import (
	"fmt"
	"slices"

	"github.com/turnstile-dev/turnstile/bench"
	"github.com/turnstile-dev/turnstile/sim"
)

// onlyS1 measures S1 alone (-s1): for each shape, the loop alone and the simulated run one
// after the other, by turns per CPU second of the process, rounds times; it prints each
// round's ratio and their median. On a shared machine CPU time holds where wall time does not,
// and alternating the two sides puts both under the same load.
func onlyS1(rounds int) error {
	ratios := map[string][]float64{}
	for r := range max(rounds, 1) {
		for _, s := range bench.Shapes {
			sc := s.Scenario()
			direct, err := turnsPerCPUSec(s.Turns, func() error { return bench.Direct(sc) })
			if err != nil {
				return err
			}
			simulated, err := turnsPerCPUSec(s.Turns, func() error {
				tr, err := sim.Run(sc, sim.NewReference())
				if err == nil && tr.Failed() {
					err = fmt.Errorf("%s failed", s.Name)
				}
				return err
			})
			if err != nil {
				return err
			}
			ratios[s.Name] = append(ratios[s.Name], simulated/direct)
			fmt.Printf("round %d %-20s loop %8.0f  simulated %8.0f turns/CPU-s  ratio %.3f\n", r+1, s.Name, direct, simulated, simulated/direct)
		}
	}
	for _, s := range bench.Shapes {
		rs := slices.Sorted(slices.Values(ratios[s.Name]))
		fmt.Printf("simulated/loop CPU %s: %.3f (median of %d; %.3f–%.3f)\n", s.Name, rs[len(rs)/2], len(rs), rs[0], rs[len(rs)-1])
	}
	return nil
}
