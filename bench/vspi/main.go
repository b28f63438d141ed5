// Command vspi measures turnstile and pi side by side in one run and prints ratios, one per
// line (make bench-vs-pi). It runs pi's in-process baseline (bench/pi-baseline.mjs, which
// needs `npm ci --prefix bench`) and the Go benchmarks of the same shapes.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/turnstile-dev/turnstile/bench"
	"github.com/turnstile-dev/turnstile/sim"
)

type piResult struct {
	Shape       string  `json:"shape"`
	TurnsPerSec float64 `json:"turnsPerSec"`
}

func main() {
	pi, err := runPi()
	if err != nil {
		fmt.Fprintln(os.Stderr, "vspi:", err)
		os.Exit(1)
	}
	for _, s := range bench.Shapes {
		sc := s.Scenario()
		direct := turnsPerSec(s.Turns, func() error { return bench.Direct(sc) })
		simulated := turnsPerSec(s.Turns, func() error {
			tr, err := sim.Run(sc, sim.NewReference())
			if err == nil && tr.Failed() {
				err = fmt.Errorf("%s failed", s.Name)
			}
			return err
		})
		p := pi[s.Name]
		fmt.Printf("%-20s pi %9.0f turns/s   reference %9.0f   reference+sim+trace %9.0f\n", s.Name, p, direct, simulated)
		fmt.Printf("reference/pi turns/s %s: %.2fx\n", s.Name, direct/p)
		fmt.Printf("reference+sim+trace/pi turns/s %s: %.2fx\n", s.Name, simulated/p)
	}
}

// turnsPerSec benchmarks f, which makes turns provider requests per call.
func turnsPerSec(turns int, f func() error) float64 {
	var failure error
	r := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			if err := f(); err != nil {
				failure = err
				b.FailNow()
			}
		}
	})
	if failure != nil || r.N == 0 {
		fmt.Fprintln(os.Stderr, "vspi: benchmark failed:", failure)
		os.Exit(1)
	}
	return float64(turns) * float64(r.N) / r.T.Seconds()
}

func runPi() (map[string]float64, error) {
	cmd := exec.Command("node", "bench/pi-baseline.mjs")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("pi baseline (did you run npm ci --prefix bench?): %w", err)
	}
	res := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r piResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("pi baseline printed %q: %w", sc.Text(), err)
		}
		res[r.Shape] = r.TurnsPerSec
	}
	return res, nil
}
