package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/turnstile-dev/turnstile/bench"
	"github.com/turnstile-dev/turnstile/sim"
)

// s1Batches is how many short batches of each side S1 alternates per shape and round, and
// s1Batch the CPU time of each.
const (
	s1Batches = 40
	s1Batch   = 20 * time.Millisecond
)

// s1Figure is S1 for one shape: the loop alone's cost a run over the simulated run's, by wall
// time (turns/s, the target's measure) and by the process's CPU time, the median of the
// rounds with their range.
type s1Figure struct {
	wall, cpu           float64
	wallRange, cpuRange [2]float64
	rounds              int
}

// measureS1 measures S1 for every shape: the loop alone and the simulated run alternate in
// short batches, each timed by wall and by the process's CPU time a run. A batch that other
// work on a shared machine slowed (a busy core's cache, time stolen from the virtual machine)
// costs more, never less, so each side's figure in a round is the lower quartile of its
// batches; the two sides meet the same disturbances, unlike windows measured at different
// moments. verbose prints a line per shape and round.
func measureS1(rounds int, verbose bool) (map[string]s1Figure, error) {
	walls, cpus := map[string][]float64{}, map[string][]float64{}
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
			var dWall, dCPU, mWall, mCPU []float64 // seconds a run, one a batch
			for range s1Batches {
				w, c, err := perRun(direct)
				if err != nil {
					return nil, err
				}
				dWall, dCPU = append(dWall, w), append(dCPU, c)
				if w, c, err = perRun(simulated); err != nil {
					return nil, err
				}
				mWall, mCPU = append(mWall, w), append(mCPU, c)
			}
			wall, cpu := lowerQuartile(dWall)/lowerQuartile(mWall), lowerQuartile(dCPU)/lowerQuartile(mCPU)
			walls[s.Name], cpus[s.Name] = append(walls[s.Name], wall), append(cpus[s.Name], cpu)
			if verbose {
				fmt.Printf("round %d %-20s loop %8.0f  simulated %8.0f turns/s  ratio %.3f (by CPU %.3f)\n",
					r+1, s.Name, float64(s.Turns)/lowerQuartile(dWall), float64(s.Turns)/lowerQuartile(mWall), wall, cpu)
			}
		}
	}
	out := map[string]s1Figure{}
	for _, s := range bench.Shapes {
		w, c := slices.Sorted(slices.Values(walls[s.Name])), slices.Sorted(slices.Values(cpus[s.Name]))
		out[s.Name] = s1Figure{wall: w[len(w)/2], cpu: c[len(c)/2], wallRange: [2]float64{w[0], w[len(w)-1]},
			cpuRange: [2]float64{c[0], c[len(c)-1]}, rounds: len(w)}
	}
	return out, nil
}

// onlyS1 measures S1 alone (-s1) and prints each round's figures, then the medians.
func onlyS1(rounds int) error {
	figures, err := measureS1(rounds, true)
	if err != nil {
		return err
	}
	for _, s := range bench.Shapes {
		f := figures[s.Name]
		fmt.Printf("simulated/loop %s: %.3f (median of %d rounds; %.3f–%.3f; by CPU %.3f, %.3f–%.3f)\n", s.Name,
			f.wall, f.rounds, f.wallRange[0], f.wallRange[1], f.cpu, f.cpuRange[0], f.cpuRange[1])
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
