// Package golden keeps golden traces: one text-timeline file per scenario, beside it with
// the extension .golden (scenarios/<family>/<name>.golden for the curated suite, embedded
// with it), or under a directory of one's own (DIR/<family>/<name>.golden). Compare checks
// a run against its golden; Update is the one way a golden is rewritten, used by both
// `go test ./golden -update` and `turnstile test --update`. Read the diff before committing
// a rewrite: a golden that pi disagrees with is a bug in the reference.
package golden

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

// Suffix is the extension of golden files.
const Suffix = ".golden"

// Beside is the golden file of a scenario file: the same path with Suffix for its extension.
func Beside(scenarioPath string) string {
	return strings.TrimSuffix(scenarioPath, path.Ext(scenarioPath)) + Suffix
}

// Name is a scenario's golden file name under a directory of goldens, from the scenario's
// path relative to its suite root without extension ("truncation/basic").
func Name(rel string) string { return path.Clean(rel) + Suffix }

// Render is a trace's golden text: its timeline.
func Render(tr *trace.Trace) []byte { return tr.Timeline() }

// Compare says how got differs from the golden want: "" when they are equal, else their
// first difference with three lines of context.
func Compare(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	d, _ := trace.FirstDivergence(trace.Lines(want), trace.Lines(got), 3)
	return d.String()
}

// Update writes got as the golden file at file (an operating-system path) when the file is
// missing or differs, creating its folder; it reports whether it wrote.
func Update(file string, got []byte) (bool, error) {
	if want, err := os.ReadFile(file); err == nil && bytes.Equal(want, got) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return false, fmt.Errorf("update golden: %w", err)
	}
	if err := os.WriteFile(file, got, 0o644); err != nil {
		return false, fmt.Errorf("update golden: %w", err)
	}
	return true, nil
}
