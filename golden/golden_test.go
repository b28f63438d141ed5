package golden_test

import (
	"flag"
	"io/fs"
	"os"
	"testing"

	"github.com/turnstile-dev/turnstile/golden"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files beside the curated scenarios (golden.Update, as turnstile test --update)")

// TestGoldens runs every curated scenario against the reference and compares its timeline
// with the golden beside it, scenarios/<family>/<name>.golden. Rewrite with
// `go test ./golden -update` and read the diff before committing it.
func TestGoldens(t *testing.T) {
	files, err := scenarios.LoadPath("../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios found under ../scenarios")
	}
	for _, f := range files {
		t.Run(f.Rel, func(t *testing.T) {
			tr, err := sim.Run(f.Scenario, sim.NewReference())
			if err != nil {
				t.Fatal(err)
			}
			got, file := golden.Render(tr), golden.Beside(f.Path)
			if *update {
				if wrote, err := golden.Update(file, got); err != nil {
					t.Fatal(err)
				} else if wrote {
					t.Logf("updated %s", file)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (go test ./golden -update creates it)", err)
			}
			if d := golden.Compare(want, got); d != "" {
				t.Errorf("%s: the timeline differs from its golden (go test ./golden -update rewrites it):\n%s", file, d)
			}
		})
	}
}

// TestEmbeddedWithTheSuite: every curated scenario's golden is embedded beside it, so that
// turnstile test checks the suite from any directory; and every golden file has its
// scenario, so that a renamed scenario leaves no stale golden behind.
func TestEmbeddedWithTheSuite(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		have[golden.Name(f.Rel)] = true
		if _, err := fs.Stat(scenarios.SuiteFS(), golden.Name(f.Rel)); err != nil {
			t.Errorf("%s: its golden is not embedded: %v", f.Rel, err)
		}
	}
	stale, _ := fs.Glob(os.DirFS("../scenarios"), "*/*"+golden.Suffix)
	for _, g := range stale {
		if !have[g] {
			t.Errorf("scenarios/%s has no scenario beside it", g)
		}
	}
	if _, err := os.Stat("testdata"); err == nil {
		t.Error("golden/testdata exists: goldens live beside their scenarios (git mv golden/testdata/F/N.golden scenarios/F/N.golden)")
	}
}
