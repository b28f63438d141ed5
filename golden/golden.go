// Package golden keeps the golden traces of the curated suite: one text-timeline file per
// scenario, at testdata/<family>/<name>.golden, mirroring the scenario's path. go test
// compares them all; `go test ./golden/... -update` (goldie's flag) or
// `turnstile test --update` rewrites them. Read the diff before committing a rewrite: a
// golden that pi disagrees with is a bug in the reference.
package golden

import (
	"embed"
	"io/fs"
	"path"

	"github.com/turnstile-dev/turnstile/trace"
)

// Suffix is the extension of golden files.
const Suffix = ".golden"

// files holds the committed goldens.
//
//go:embed testdata
var files embed.FS

// Embedded is the committed goldens, rooted at the family folders.
func Embedded() fs.FS {
	sub, err := fs.Sub(files, "testdata")
	if err != nil {
		panic(err)
	}
	return sub
}

// Name is the golden file name of a scenario, from its path relative to the suite root
// (without extension).
func Name(rel string) string { return path.Clean(rel) + Suffix }

// Render is a trace's golden text: its timeline.
func Render(tr *trace.Trace) []byte { return tr.Timeline() }
