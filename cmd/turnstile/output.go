package main

import (
	"fmt"
	"io"
	"os"

	"github.com/turnstile-dev/turnstile/conformance"
)

// styler colours output only on a terminal, and never when NO_COLOR is set.
type styler struct{ on bool }

func newStyler(w io.Writer) styler {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return styler{}
	}
	info, err := f.Stat()
	return styler{on: err == nil && info.Mode()&os.ModeCharDevice != 0}
}

func (s styler) wrap(code, text string) string {
	if !s.on {
		return text
	}
	return fmt.Sprintf("\x1b[%sm%s\x1b[0m", code, text)
}

func (s styler) bold(t string) string  { return s.wrap("1", t) }
func (s styler) red(t string) string   { return s.wrap("31", t) }
func (s styler) green(t string) string { return s.wrap("32", t) }

// status is a conformance verdict word, coloured.
func (s styler) status(st conformance.Status) string {
	switch st {
	case conformance.Pass:
		return s.green("PASS")
	case conformance.Fail:
		return s.red("FAIL")
	case conformance.ExpectedFail:
		return "XFAIL"
	}
	return "SKIP"
}
