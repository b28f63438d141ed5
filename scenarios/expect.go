package scenarios

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/turnstile-dev/turnstile/sim"
)

// Expect holds a scenario's inline expectations, checked against its trace.
type Expect struct {
	// Requests is the number of provider requests the run makes.
	Requests *int
	// RunFails says the run ends in a failure (a hook, stream or script error) rather than
	// agent_end.
	RunFails *bool
	// Timeline lists texts that must appear in this order, each within one timeline line.
	Timeline []string
	// Absent lists texts no timeline line may contain.
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
func (ex *Expect) Check(tr *sim.Trace) []string {
	if ex.Empty() {
		return nil
	}
	var problems []string
	requests, failed := 0, false
	tr = tr.Expanded()
	// Timeline lines are written when an expectation reads them, each once.
	lines := make([]string, len(tr.Entries))
	written := make([]bool, len(tr.Entries))
	line := func(i int) string {
		if !written[i] {
			lines[i], written[i] = sim.TimelineLine(tr.Entries[i]), true
		}
		return lines[i]
	}
	for _, e := range tr.Entries {
		if e.Kind == sim.KindCall && e.Name == sim.CallStream {
			requests++
		}
		if e.Kind == sim.KindFail || (e.Kind == sim.KindEnd && e.Error != "") {
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
	at := 0
	for k, want := range ex.Timeline {
		found := false
		for at < len(lines) {
			at++
			if strings.Contains(line(at-1), want) {
				found = true
				break
			}
		}
		if !found {
			problems = append(problems, timelineMiss(want, k, ex.Timeline, line, len(lines), at))
			break
		}
	}
	for _, bad := range ex.Absent {
		for i := range lines {
			if l := line(i); strings.Contains(l, bad) {
				problems = append(problems, fmt.Sprintf("expected no timeline line containing %q, found: %s", bad, strings.TrimSpace(l)))
				break
			}
		}
	}
	return problems
}

// timelineMiss says why timeline[k], want, was not found in order: it is on no line, or only
// on lines before the one the text before it matched (which may be the mistake: a text that
// matched a later line than meant). matchedUpTo is one past the lines searched so far.
func timelineMiss(want string, k int, timeline []string, line func(int) string, n, matchedUpTo int) string {
	msg := fmt.Sprintf("expected a timeline line containing %q (in order)", want)
	first := -1
	for i := range n {
		if strings.Contains(line(i), want) {
			first = i
			break
		}
	}
	if first < 0 {
		return msg + "; no line contains it"
	}
	// The text before it matched the last line it could: find that line again.
	prev := -1
	for at, j := 0, 0; j <= k-1 && at < n; at++ {
		if strings.Contains(line(at), timeline[j]) {
			prev, j = at, j+1
		}
	}
	if first == prev {
		return fmt.Sprintf("%s; it is on entry %d (%s), the line the text before it, %q, matched: each text needs a line of its own",
			msg, first+1, strings.TrimSpace(line(first)), timeline[k-1])
	}
	return fmt.Sprintf("%s; it is on entry %d (%s), before entry %d (%s), where the text before it, %q, matched",
		msg, first+1, strings.TrimSpace(line(first)), prev+1, strings.TrimSpace(line(prev)), timeline[k-1])
}
