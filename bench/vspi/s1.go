package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/turnstile-dev/turnstile/bench"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// s1Batches is how many short batches of each side S1 alternates per shape and round, and
// s1Batch the CPU time of each.
const (
	s1Batches = 40
	s1Batch   = 20 * time.Millisecond
)

// s1Figure is S1 for one shape: the loop alone's cost a run over the simulated run's, by wall
// time (turns/s, the target's measure) and by the process's CPU time, the median of the
// rounds with their range; fresh is the same (wall, CPU) for a run whose trace is written in
// memory of its own (sim.Run) rather than in the last trace's (sim.RunIn, as explore runs).
type s1Figure struct {
	wall, cpu           float64
	wallRange, cpuRange [2]float64
	fresh               [2]float64
	rounds              int
}

// measureS1 measures S1 for every shape: the loop alone, the simulated run in a room and the
// simulated run in fresh memory alternate in short batches, each timed by wall and by the
// process's CPU time a run. A batch that other work on a shared machine slowed (a busy
// core's cache, time stolen from the virtual machine) costs more, never less, so each side's
// figure in a round is the lower quartile of its batches; the sides meet the same
// disturbances, unlike windows measured at different moments. verbose prints a line per shape
// and round.
func measureS1(rounds int, verbose bool) (map[string]s1Figure, error) {
	const direct, inRoom, fresh = 0, 1, 2
	type ratios struct{ wall, cpu, freshWall, freshCPU []float64 }
	all := map[string]*ratios{}
	for r := range max(rounds, 1) {
		for _, s := range bench.Shapes {
			sc := s.Scenario()
			var room sim.Room // each trace dropped once judged, as explore does
			sides := [3]func() error{
				func() error { return bench.Direct(sc) },
				func() error { return judged(sim.RunIn(&room, sc, sim.NewReference())) },
				func() error { return judged(sim.Run(sc, sim.NewReference())) },
			}
			var wall, cpu [3][]float64 // seconds a run, one a batch
			for range s1Batches {
				for i, f := range sides {
					w, c, err := perRun(f)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", s.Name, err)
					}
					wall[i], cpu[i] = append(wall[i], w), append(cpu[i], c)
				}
			}
			ratio := func(measures [3][]float64, side int) float64 {
				return lowerQuartile(measures[direct]) / lowerQuartile(measures[side])
			}
			if all[s.Name] == nil {
				all[s.Name] = &ratios{}
			}
			a := all[s.Name]
			a.wall, a.cpu = append(a.wall, ratio(wall, inRoom)), append(a.cpu, ratio(cpu, inRoom))
			a.freshWall, a.freshCPU = append(a.freshWall, ratio(wall, fresh)), append(a.freshCPU, ratio(cpu, fresh))
			if verbose {
				fmt.Printf("round %d %-20s loop %8.0f  simulated %8.0f turns/s  ratio %.3f (by CPU %.3f; fresh memory %.3f, by CPU %.3f)\n",
					r+1, s.Name, float64(s.Turns)/lowerQuartile(wall[direct]), float64(s.Turns)/lowerQuartile(wall[inRoom]),
					ratio(wall, inRoom), ratio(cpu, inRoom), ratio(wall, fresh), ratio(cpu, fresh))
			}
		}
	}
	out := map[string]s1Figure{}
	for _, s := range bench.Shapes {
		a := all[s.Name]
		w, c := slices.Sorted(slices.Values(a.wall)), slices.Sorted(slices.Values(a.cpu))
		out[s.Name] = s1Figure{wall: w[len(w)/2], cpu: c[len(c)/2], wallRange: [2]float64{w[0], w[len(w)-1]},
			cpuRange: [2]float64{c[0], c[len(c)-1]}, fresh: [2]float64{median(a.freshWall), median(a.freshCPU)}, rounds: len(w)}
	}
	return out, nil
}

// judged is the error of a simulated run of a bench shape, or its failure.
func judged(tr *trace.Trace, err error) error {
	if err == nil && tr.Failed() {
		err = fmt.Errorf("the run failed: %s", tr.Failure().Error)
	}
	return err
}

// median is the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// onlyS1 measures S1 alone (-s1) and prints each round's figures, then the medians.
func onlyS1(rounds int) error {
	figures, err := measureS1(rounds, true)
	if err != nil {
		return err
	}
	for _, s := range bench.Shapes {
		f := figures[s.Name]
		fmt.Printf("simulated/loop %s: %.3f (median of %d rounds; %.3f–%.3f; by CPU %.3f, %.3f–%.3f; fresh memory %.3f, by CPU %.3f)\n", s.Name,
			f.wall, f.rounds, f.wallRange[0], f.wallRange[1], f.cpu, f.cpuRange[0], f.cpuRange[1], f.fresh[0], f.fresh[1])
	}
	return nil
}

// lowerQuartile is the lower quartile of xs, which it sorts.
func lowerQuartile(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/4]
}

// perRun runs f for about s1Batch of the process's CPU time and returns the wall and CPU
// seconds a run took.
func perRun(f func() error) (wall, cpu float64, err error) {
	began, cpu0 := time.Now(), cpuTime()
	n := 0
	for cpuTime()-cpu0 < s1Batch {
		if err := f(); err != nil {
			return 0, 0, err
		}
		n++
	}
	return time.Since(began).Seconds() / float64(n), (cpuTime() - cpu0).Seconds() / float64(n), nil
}
