package scenarios_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestSuiteExpectations runs every curated scenario against the reference and checks its
// inline expectations.
func TestSuiteExpectations(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f.Rel, func(t *testing.T) {
			tr, err := sim.Run(f.Scenario, sim.NewReference())
			if err != nil {
				t.Fatal(err)
			}
			if problems := f.Expect.Check(tr); len(problems) > 0 {
				t.Errorf("%s:\n  %s\ntimeline:\n%s", f.Path, strings.Join(problems, "\n  "), tr.Timeline())
			}
		})
	}
}

// TestSuiteFilesDocumentTheirRule requires the header comment and since: of every file.
func TestSuiteFilesDocumentTheirRule(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, _ := fs.ReadFile(scenarios.SuiteFS(), f.Path)
		if !strings.HasPrefix(string(data), "# Rule: ") {
			t.Errorf("%s: the file must start with a '# Rule: …' comment naming the rule it pins down", f.Path)
		}
		if f.Scenario.Since == "" {
			t.Errorf("%s: since: is missing", f.Path)
		}
		if f.Expect.Empty() {
			t.Errorf("%s: expect: is missing; say what the scenario shows", f.Path)
		}
	}
}
