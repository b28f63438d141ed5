package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
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

// TraceDivergence is the first entry at which two traces' JSON lines differ.
type TraceDivergence struct {
	// Entry is the 1-based number of the first differing line.
	Entry int
	// Want and Got are that entry as timeline lines, or the raw line when it is not an
	// entry; "" with WantEnd or GotEnd past the end of a trace.
	Want, Got       string
	WantEnd, GotEnd bool
	// Before holds up to the requested number of timeline lines both traces share before it.
	Before []string
	// Field says what differs inside the entry: "field PATH: WANT vs GOT" (JSON path and
	// both values), or why two lines with equal values still differ.
	Field string
}

// FirstTraceDivergence compares two traces given as JSON lines, byte for byte, and returns
// the first differing entry with context; ok is false exactly when the bytes are equal. The
// entries are shown, and their differing field named, in full: the linear form's links are
// expanded (when both sides are traces), so a field is named by its place in the whole entry.
func FirstTraceDivergence(want, got []byte, context int) (d TraceDivergence, ok bool) {
	if bytes.Equal(want, got) {
		return TraceDivergence{}, false
	}
	wl, gl := bytes.SplitAfter(want, []byte("\n")), bytes.SplitAfter(got, []byte("\n"))
	i := 0
	for i < len(wl) && i < len(gl) && bytes.Equal(wl[i], gl[i]) {
		i++
	}
	// The last piece of SplitAfter is what follows the final newline ("" normally).
	wEnd := i >= len(wl) || len(wl[i]) == 0
	gEnd := i >= len(gl) || len(gl[i]) == 0
	d = TraceDivergence{Entry: i + 1, WantEnd: wEnd, GotEnd: gEnd}
	wFull, wOK := expandedLines(wl, i)
	gFull, gOK := expandedLines(gl, i)
	text := func(full []Entry, ok bool, lines [][]byte, j int) string {
		if ok {
			return TimelineLine(full[j])
		}
		return lineText(lines[j])
	}
	for j := max(0, i-context); j < i; j++ {
		d.Before = append(d.Before, text(wFull, wOK, wl, j))
	}
	if !wEnd {
		d.Want = text(wFull, wOK, wl, i)
	}
	if !gEnd {
		d.Got = text(gFull, gOK, gl, i)
	}
	switch {
	case wEnd || gEnd:
	case wOK && gOK && (wFull[i].Link != nil || gFull[i].Link != nil || !bytes.Equal(entryLine(&wFull[i]), wl[i]) || !bytes.Equal(entryLine(&gFull[i]), gl[i])):
		// A linked entry: what differs is said of the entries in full.
		wf, gf := entryLine(&wFull[i]), entryLine(&gFull[i])
		if bytes.Equal(wf, gf) {
			d.Field = "the entries are equal in full but written differently: " + fieldDifference(wl[i], gl[i])
		} else {
			d.Field = fieldDifference(wf, gf)
		}
	default:
		d.Field = fieldDifference(wl[i], gl[i])
	}
	return d, true
}

// expandedLines reads lines[0..i] as trace entries and expands them; ok is false when one is
// not an entry or a link does not resolve.
func expandedLines(lines [][]byte, i int) ([]Entry, bool) {
	tr := &Trace{}
	for j := 0; j <= i && j < len(lines); j++ {
		line := bytes.TrimSuffix(lines[j], []byte("\n"))
		if len(line) == 0 {
			break
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, false
		}
		tr.Entries = append(tr.Entries, e)
	}
	full, err := tr.Expand()
	if err != nil || len(full.Entries) <= i {
		return nil, false
	}
	return full.Entries, true
}

// entryLine is an entry's JSON line, newline included.
func entryLine(e *Entry) []byte { return append(e.appendJSON(nil), '\n') }

// ReadJSONL reads a trace's JSON lines (Trace.JSONL, in full or in the linear form) as the
// entries they write; an error names the first line that is not an entry.
func ReadJSONL(data []byte) (*Trace, error) {
	tr := &Trace{}
	for i, line := range Lines(data) {
		var e Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, fmt.Errorf("line %d: not a trace entry: %v", i+1, err)
		}
		tr.Entries = append(tr.Entries, e)
	}
	return tr, nil
}

// lineText renders one JSON line as a timeline line, or quotes it when it is not an entry.
func lineText(line []byte) string {
	line = bytes.TrimSuffix(line, []byte("\n"))
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Sprintf("(not a trace entry: %v) %s", err, abbreviate(string(line), 160))
	}
	return TimelineLine(e)
}

// fieldDifference says where two differing JSON lines differ.
func fieldDifference(want, got []byte) string {
	want, got = bytes.TrimSuffix(want, []byte("\n")), bytes.TrimSuffix(got, []byte("\n"))
	if bytes.Equal(bytes.TrimSuffix(want, []byte("\r")), bytes.TrimSuffix(got, []byte("\r"))) || bytes.Equal(want, got) {
		return "the lines differ only in their line ending"
	}
	wv, werr := decodeNumbers(want)
	gv, gerr := decodeNumbers(got)
	if werr != nil || gerr != nil {
		k := 0
		for k < len(want) && k < len(got) && want[k] == got[k] {
			k++
		}
		return fmt.Sprintf("the lines differ at byte %d: %s vs %s", k+1, abbreviate(string(want[k:]), 40), abbreviate(string(got[k:]), 40))
	}
	diff, differ := FirstDifference(wv, gv, nil)
	if !differ {
		return "the lines hold equal JSON values but differ in their bytes (a canonical line has sorted keys, no spaces)"
	}
	path := diff.Path
	if path == "" {
		path = "(the whole entry)"
	}
	value := func(v any, absent bool) string {
		if absent {
			return "(absent)"
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
	w, g := value(diff.Want, diff.WantAbsent), value(diff.Got, diff.GotAbsent)
	sw, sg, from := ShowValues(w, g)
	if from == 0 {
		return fmt.Sprintf("field %s: %s vs %s", path, sw, sg)
	}
	return fmt.Sprintf("field %s, from its character %d on (of %d and %d): %s vs %s", path, from, len(w), len(g), sw, sg)
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

// decodeNumbers decodes JSON keeping numbers as their text (json.Number), so 1 and 1.0
// differ.
func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// String renders the divergence for people: context, the two entries, the differing field.
func (d TraceDivergence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at entry %d:\n", d.Entry)
	for _, l := range d.Before {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	side := func(mark, line string, end bool) {
		if end {
			fmt.Fprintf(&b, "  %s (end: no more entries)\n", mark)
			return
		}
		fmt.Fprintf(&b, "  %s %s\n", mark, line)
	}
	side("-", d.Want, d.WantEnd)
	side("+", d.Got, d.GotEnd)
	if d.Field != "" {
		fmt.Fprintf(&b, "  %s\n", d.Field)
	}
	b.WriteString("  (- expected, + actual)\n")
	return b.String()
}
