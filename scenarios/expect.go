package scenarios

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/turnstile-dev/turnstile/trace"
)

// Expect holds a scenario's inline expectations, checked against its trace.
type Expect struct {
	// Requests is the number of provider requests the run makes.
	Requests *int
	// RunFails says the run ends in a failure (a hook, stream or script error) rather than
	// agent_end.
	RunFails *bool
	// Timeline lists texts that must appear in this order, each within one timeline line.
	// A run of spaces matches any run of spaces (see spaced).
	Timeline []string
	// Absent lists texts no timeline line may contain, spaces matched as in Timeline.
	Absent []string
}

func (d *decoder) expect(n ast.Node, ex *Expect) {
	for _, f := range d.mapping(n, "expect", "requests", "runFails", "timeline", "absent") {
		switch f.key {
		case "requests":
			v := int(d.duration(f.value, "expect.requests"))
			ex.Requests = &v
		case "runFails":
			v := d.boolean(f.value, "expect.runFails")
			ex.RunFails = &v
		case "timeline":
			for _, s := range d.sequence(f.value, "expect.timeline", false) {
				ex.Timeline = append(ex.Timeline, d.str(s, "expect.timeline[]"))
			}
		case "absent":
			for _, s := range d.sequence(f.value, "expect.absent", false) {
				ex.Absent = append(ex.Absent, d.str(s, "expect.absent[]"))
			}
		}
	}
}

// Empty reports whether there is nothing to check.
func (ex *Expect) Empty() bool {
	return ex == nil || (ex.Requests == nil && ex.RunFails == nil && len(ex.Timeline) == 0 && len(ex.Absent) == 0)
}

// Check returns one message per expectation the trace does not meet.
func (ex *Expect) Check(tr *trace.Trace) []string {
	if ex.Empty() {
		return nil
	}
	var problems []string
	requests, failed := 0, false
	tr = tr.Expanded()
	// Timeline lines are written when an expectation reads them, each once; texts are looked
	// for in their spaced form, and messages quote the line as printed.
	lines := make([]string, len(tr.Entries))
	flat := make([]string, len(tr.Entries))
	written := make([]bool, len(tr.Entries))
	write := func(i int) {
		if !written[i] {
			lines[i], written[i] = trace.TimelineLine(tr.Entries[i]), true
			flat[i] = spaced(lines[i])
		}
	}
	line := func(i int) string { write(i); return lines[i] }
	has := func(i int, text string) bool { write(i); return strings.Contains(flat[i], text) }
	for _, e := range tr.Entries {
		if e.Kind == trace.KindCall && e.Name == trace.CallStream {
			requests++
		}
		if e.Kind == trace.KindFail || (e.Kind == trace.KindEnd && e.Error != "") {
			failed = true
		}
	}
	if ex.Requests != nil && requests != *ex.Requests {
		problems = append(problems, fmt.Sprintf("expected %d requests, the run made %d", *ex.Requests, requests))
	}
	if ex.RunFails != nil && failed != *ex.RunFails {
		if failed {
			problems = append(problems, "expected the run to end normally, it failed")
		} else {
			problems = append(problems, "expected the run to fail, it ended normally")
		}
	}
	// Each text is looked for after the line the last text found matched; one not found is
	// reported, and the texts after it are looked for from the same line.
	at, prev := 0, -1 // the next line to search; the text whose line that follows
	for k, want := range ex.Timeline {
		found, text := false, spaced(want)
		for i := at; i < len(lines); i++ {
			if has(i, text) {
				found, at, prev = true, i+1, k
				break
			}
		}
		if !found {
			problems = append(problems, timelineMiss(want, prev, ex.Timeline, line, has, len(lines), at))
		}
	}
	for _, bad := range ex.Absent {
		text := spaced(bad)
		for i := range lines {
			if has(i, text) {
				problems = append(problems, fmt.Sprintf("expected no timeline line containing %q, found: %s", bad, strings.TrimSpace(line(i))))
				break
			}
		}
	}
	return problems
}

// timelineMiss says why want was not found in order: it is on no line, or only on lines before
// the one that timeline[prev] (the last text found before it; -1 for none) matched, at index
// after-1, which may be the mistake: a text that matched a later line than meant.
func timelineMiss(want string, prev int, timeline []string, line func(int) string, has func(int, string) bool, n, after int) string {
	msg := fmt.Sprintf("expected a timeline line containing %q (in order)", want)
	first, text := -1, spaced(want)
	for i := range n {
		if has(i, text) {
			first = i
			break
		}
	}
	switch {
	case first < 0:
		return msg + "; no line contains it"
	case prev < 0: // not expected: found anywhere, it is found from the first line
		return msg
	case first == after-1:
		return fmt.Sprintf("%s; it is on entry %d (%s), the line %q, the last text found before it, matched: each text needs a line of its own",
			msg, first+1, strings.TrimSpace(line(first)), timeline[prev])
	}
	// Said as the order it breaks: the text comes before the one listed ahead of it.
	return fmt.Sprintf("expected a timeline line containing %q after the one containing %q (entry %d: %s); it is only earlier, on entry %d (%s)",
		want, timeline[prev], after, strings.TrimSpace(line(after-1)), first+1, strings.TrimSpace(line(first)))
}

// spaced is s with every run of spaces and tabs made one space. The timeline pads its columns
// to widths that depend on the run (the time column grows with the time), so a text copied
// from one line, or typed by hand, should not fail on how many spaces separate two columns.
// The price: a text cannot tell "a  b" inside a quoted string from "a b"; a scenario needing
// that checks it in a golden.
func spaced(s string) string {
	if !strings.Contains(s, "  ") && !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	blank := false
	for _, r := range s {
		if r == ' ' || r == '\t' {
			if !blank {
				b.WriteByte(' ')
			}
			blank = true
			continue
		}
		blank = false
		b.WriteRune(r)
	}
	return b.String()
}
