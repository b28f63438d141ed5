package scenarios

import (
	"embed"
	"fmt"
	"io/fs"

	"github.com/turnstile-dev/turnstile/sim"
)

// suiteFS holds the curated suite: every scenario file in the family folders, each with
// its golden timeline beside it (package golden).
//
//go:embed */*.yaml */*.golden
var suiteFS embed.FS

// SuiteFS is the curated suite as a file system, rooted at the family folders: the
// scenario files and their goldens (<family>/<name>.golden).
func SuiteFS() fs.FS { return suiteFS }

// Suite loads the embedded curated suite, sorted by path.
func Suite() ([]*File, error) {
	files, err := LoadFS(suiteFS, ".")
	for _, f := range files {
		f.Embedded = true
	}
	return files, err
}

// SuiteFile loads the embedded curated suite and returns its scenario of that name
// ("family/name").
func SuiteFile(name string) (*File, error) {
	files, err := Suite()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.Scenario.Name == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("no scenario %q in the curated suite", name)
}

// Scenarios returns the simulator scenarios of files, in order.
func Scenarios(files []*File) []*sim.Scenario {
	out := make([]*sim.Scenario, 0, len(files))
	for _, f := range files {
		out = append(out, f.Scenario)
	}
	return out
}
