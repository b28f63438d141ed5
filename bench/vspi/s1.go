package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/turnstile-dev/turnstile/bench"
	"github.com/turnstile-dev/turnstile/sim"
)

// s1Batches is how many short batches of each side -s1 alternates per shape and round, and
// s1Batch the CPU time of each.
const (
	s1Batches = 40
	s1Batch   = 20 * time.Millisecond
)

// onlyS1 measures S1 alone (-s1): for each shape, the loop alone and the simulated run in short
// batches, alternating, by the CPU time of the process per run. A batch that other work on a
// shared machine slowed down (a busy core's cache, time stolen from the virtual machine) costs
// more, never less, so each side's figure is the lower quartile of its batches; the ratio of
// the medians is printed beside it. Each round prints a line per shape, then the median of the
// rounds.
func onlyS1(rounds int) error {
	ratios := map[string][]float64{}
	for r := range max(rounds, 1) {
		for _, s := range bench.Shapes {
			sc := s.Scenario()
			direct := func() error { return bench.Direct(sc) }
			simulated := func() error {
				tr, err := sim.Run(sc, sim.NewReference())
				if err == nil && tr.Failed() {
					err = fmt.Errorf("%s failed", s.Name)
				}
				return err
			}
			var d, m []float64 // CPU seconds a run, one a batch
			for range s1Batches {
				x, err := cpuPerRun(direct)
				if err != nil {
					return err
				}
				y, err := cpuPerRun(simulated)
				if err != nil {
					return err
				}
				d, m = append(d, x), append(m, y)
			}
			slices.Sort(d)
			slices.Sort(m)
			q, med := len(d)/4, len(d)/2
			ratio := d[q] / m[q]
			ratios[s.Name] = append(ratios[s.Name], ratio)
			fmt.Printf("round %d %-20s loop %8.0f  simulated %8.0f turns/CPU-s  ratio %.3f (of medians %.3f)\n",
				r+1, s.Name, float64(s.Turns)/d[q], float64(s.Turns)/m[q], ratio, d[med]/m[med])
		}
	}
	for _, s := range bench.Shapes {
		rs := slices.Sorted(slices.Values(ratios[s.Name]))
		fmt.Printf("simulated/loop CPU %s: %.3f (median of %d rounds; %.3f–%.3f)\n", s.Name, rs[len(rs)/2], len(rs), rs[0], rs[len(rs)-1])
	}
	return nil
}

// cpuPerRun runs f for about s1Batch of the process's CPU time and returns the CPU seconds a
// run took.
func cpuPerRun(f func() error) (float64, error) {
	began := cpuTime()
	n := 0
	for cpuTime()-began < s1Batch {
		if err := f(); err != nil {
			return 0, err
		}
		n++
	}
	return (cpuTime() - began).Seconds() / float64(n), nil
}
