package sim

import (
	"fmt"
	"strings"
)

// Divergence is the first place two renderings of a trace differ.
type Divergence struct {
	// Line is the 1-based line number of the first difference.
	Line int
	// Want and Got are the differing lines ("" past the end of one side, with AtEnd set).
	Want, Got       string
	WantEnd, GotEnd bool
	// Before holds up to the requested number of equal lines before the difference.
	Before []string
	// WantAfter and GotAfter hold the lines that follow on each side.
	WantAfter, GotAfter []string
}

// FirstDivergence compares two renderings line by line and returns where they first differ,
// with context lines around it; ok is false when they are equal.
func FirstDivergence(want, got []string, context int) (d Divergence, ok bool) {
	n := min(len(want), len(got))
	i := 0
	for i < n && want[i] == got[i] {
		i++
	}
	if i == len(want) && i == len(got) {
		return Divergence{}, false
	}
	d.Line = i + 1
	d.Before = want[max(0, i-context):i]
	if i < len(want) {
		d.Want = want[i]
		d.WantAfter = want[i+1 : min(len(want), i+1+context)]
	} else {
		d.WantEnd = true
	}
	if i < len(got) {
		d.Got = got[i]
		d.GotAfter = got[i+1 : min(len(got), i+1+context)]
	} else {
		d.GotEnd = true
	}
	return d, true
}

// String renders the divergence for people: context, then the expected and actual lines.
func (d Divergence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d:\n", d.Line)
	for _, l := range d.Before {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	side := func(mark, line string, end bool, after []string) {
		if end {
			fmt.Fprintf(&b, "  %s (end: no more lines)\n", mark)
			return
		}
		fmt.Fprintf(&b, "  %s %s\n", mark, line)
		for _, l := range after {
			fmt.Fprintf(&b, "  %s %s\n", mark, l)
		}
	}
	side("-", d.Want, d.WantEnd, d.WantAfter)
	side("+", d.Got, d.GotEnd, d.GotAfter)
	b.WriteString("  (- expected, + actual)\n")
	return b.String()
}

// Lines splits a rendering into lines, without a trailing empty one.
func Lines(text []byte) []string {
	s := strings.TrimSuffix(string(text), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
