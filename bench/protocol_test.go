package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/sim"
)

// BenchmarkProtocol runs the shapes through the conformance protocol: against the pi adapter
// (node, pi 1.6.0) and against the reference served by `turnstile adapter` (this test binary
// re-executed as the adapter). One process serves every run, as in a suite.
func BenchmarkProtocol(b *testing.B) {
	impls := map[string][]string{"reference-adapter": {os.Args[0], "-test.run=^$", "-test.bench=^$"}}
	if node, err := exec.LookPath("node"); err == nil {
		adapter := filepath.Join("..", "conformance", "adapters", "pi", "adapter.mjs")
		if _, err := os.Stat(filepath.Join(filepath.Dir(adapter), "node_modules")); err == nil {
			impls["pi-adapter"] = []string{node, adapter}
		}
	}
	for name, argv := range impls {
		p := &protocol.Process{Command: argv, Env: []string{serveEnv + "=1"}, Stderr: os.Stderr}
		b.Cleanup(func() { _ = p.Close() })
		for _, s := range Shapes {
			b.Run(name+"/"+s.Name, func(b *testing.B) {
				sc := s.Scenario()
				for b.Loop() {
					tr, err := sim.Run(sc, p)
					if err != nil || tr.Failed() {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(s.Turns*b.N)/b.Elapsed().Seconds(), "turns/s")
			})
		}
	}
}

// serveEnv makes the test binary serve the reference over the protocol instead of testing.
const serveEnv = "TURNSTILE_BENCH_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		if err := protocol.Serve(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
