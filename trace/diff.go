package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Divergence is the first difference of two texts (timelines, goldens) aligned line by line
// with Align: the lines one side lacks or has instead, with the shared lines around them.
type Divergence struct {
	// Line is the 1-based number, in the expected text, of the first line that differs.
	Line int
	// Before holds up to the requested number of shared lines before the difference.
	Before []string
	// Want are the expected lines the actual text lacks there; Got the lines it has instead.
	Want, Got []string
	// After holds up to the requested number of shared lines after the difference.
	After []string
}

// FirstDivergence aligns two texts' lines and returns their first difference, with up to
// context shared lines around it; ok is false when they are equal.
func FirstDivergence(want, got []string, context int) (d Divergence, ok bool) {
	steps := Align(want, got)
	k := 0
	for k < len(steps) && steps[k].Op == Same {
		k++
	}
	if k == len(steps) {
		return Divergence{}, false
	}
	d.Line = k + 1 // the steps before k are shared lines, one of each text each
	for j := max(0, k-context); j < k; j++ {
		d.Before = append(d.Before, want[steps[j].Want])
	}
	for ; k < len(steps) && steps[k].Op != Same; k++ {
		if s := steps[k]; s.Op == Missing {
			d.Want = append(d.Want, want[s.Want])
		} else {
			d.Got = append(d.Got, got[s.Got])
		}
	}
	for ; k < len(steps) && steps[k].Op == Same && len(d.After) < context; k++ {
		d.After = append(d.After, want[steps[k].Want])
	}
	return d, true
}

// String renders the divergence for people: context, the expected lines (-) and the actual
// ones (+), then context.
func (d Divergence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d:\n", d.Line)
	for _, l := range d.Before {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	for _, l := range d.Want {
		fmt.Fprintf(&b, "  - %s\n", l)
	}
	for _, l := range d.Got {
		fmt.Fprintf(&b, "  + %s\n", l)
	}
	for _, l := range d.After {
		fmt.Fprintf(&b, "    %s\n", l)
	}
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

// Text renders the comparison's first difference for people: up to context shared entries
// before it, then the differing entries as timeline lines (- expected, + actual) and, for a
// pair whose values differ, each differing field with both values. "" when the traces agree.
func (c *Comparison) Text(context int) string { return c.text(context, 0, 0, false) }

// text is Text with the entries of c.Want and c.Got numbered from wantFrom+1 and gotFrom+1;
// cut says the traces go on past c's entries.
func (c *Comparison) text(context, wantFrom, gotFrom int, cut bool) string {
	k := c.First()
	if k < 0 {
		return ""
	}
	var b strings.Builder
	s := c.Steps[k]
	if s.Op == Missing {
		fmt.Fprintf(&b, "first difference at reference entry %d:\n", wantFrom+s.Want+1)
	} else {
		fmt.Fprintf(&b, "first difference at entry %d:\n", gotFrom+s.Got+1)
	}
	for j := max(0, k-context); j < k; j++ {
		fmt.Fprintf(&b, "    %s\n", TimelineLine(c.Got[c.Steps[j].Got]))
	}
	if s.Op == Same {
		fmt.Fprintf(&b, "  - %s\n  + %s\n", TimelineLine(c.Want[s.Want]), TimelineLine(c.Got[s.Got]))
		for _, f := range s.Fields {
			fmt.Fprintf(&b, "  %s\n", f.Describe())
		}
	} else {
		movedTo, movedFrom := map[int]string{}, map[int]string{}
		for _, m := range c.Moves() {
			later, earlier := "later", "earlier"
			if !m.Later {
				later, earlier = earlier, later
			}
			movedTo[m.Want] = fmt.Sprintf("   (moved: the actual trace has it %s, at entry %d)", later, gotFrom+m.Got+1)
			movedFrom[m.Got] = fmt.Sprintf("   (moved: the reference has it %s, at entry %d)", earlier, wantFrom+m.Want+1)
		}
		for ; k < len(c.Steps) && c.Steps[k].Op != Same; k++ {
			if t := c.Steps[k]; t.Op == Missing {
				fmt.Fprintf(&b, "  - %s%s\n", TimelineLine(c.Want[t.Want]), movedTo[t.Want])
			} else {
				fmt.Fprintf(&b, "  + %s%s\n", TimelineLine(c.Got[t.Got]), movedFrom[t.Got])
			}
		}
		if k == len(c.Steps) && !cut {
			b.WriteString("    (end of both traces)\n")
		}
	}
	b.WriteString("  (- expected, + actual)\n")
	if cut {
		fmt.Fprintf(&b, "  (aligned over %d and %d entries from the difference's context on, the most diff holds at once; the traces go on past them)\n", len(c.Want), len(c.Got))
	}
	return b.String()
}

// Describe says a field difference in one line: its path and both values (long ones around
// where they first differ).
func (f Field) Describe() string {
	path := f.Path
	if path == "" {
		path = "(the whole entry)"
	}
	w, g := ShowJSON(f.Want, f.Shape == Unexpected), ShowJSON(f.Got, f.Shape == Absent)
	sw, sg, from := ShowValues(w, g)
	if from == 0 {
		return fmt.Sprintf("field %s: %s vs %s", path, sw, sg)
	}
	return fmt.Sprintf("field %s, from its character %d on (of %d and %d): %s vs %s", path, from, len(w), len(g), sw, sg)
}

// ShowJSON is a decoded JSON value as JSON, or "(absent)".
func ShowJSON(v any, absent bool) string {
	if absent {
		return "(absent)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// maxValueShown is the length of a JSON value a difference shows whole.
const maxValueShown = 120

// ShowValues is how two differing values are shown to people: whole when both are short;
// else each around where they first differ (from, counted from 1; 0 when shown whole), each
// cut end marked "…". Cut at their start, two values differing late would read the same.
func ShowValues(want, got string) (w, g string, from int) {
	if len(want) <= maxValueShown && len(got) <= maxValueShown {
		return want, got, 0
	}
	k := 0
	for k < len(want) && k < len(got) && want[k] == got[k] {
		k++
	}
	return window(want, k), window(got, k), k + 1
}

// window is s around byte k: some bytes before it and more after it, each cut end marked.
func window(s string, k int) string {
	from, to := max(0, k-30), min(len(s), k+70)
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	out := s[from:to]
	if from > 0 {
		out = "…" + out
	}
	if to < len(s) {
		out += "…"
	}
	return out
}

// ReadJSONL reads a trace's JSON lines (Trace.JSONL, in full or in the linear form) as the
// entries they write, with Reader; an error (a *ReadError) names the first line that is not
// an entry in its place.
func ReadJSONL(data []byte) (*Trace, error) {
	tr := &Trace{}
	r := NewReader(bytes.NewReader(data), len(data)+1)
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return tr, nil
		}
		if err != nil {
			return nil, err
		}
		tr.Entries = append(tr.Entries, e)
	}
}
