// Package report renders traces and their findings as self-contained HTML pages: no network,
// no external assets, readable in any browser (a CI artifact viewer included) and usable
// without JavaScript.
//
// A page shows one or more runs. Each run is a table whose rows are the trace's entries in
// order, with its virtual time in the first column, then a lane per actor — the loop's events,
// its hooks, the simulated user, the provider streams and the tool calls (streams, or tool
// calls, whose lives do not overlap share a lane, so a page has as many as run at once) —
// where a dot marks the entry's actor and a line shows how long each stream or tool call
// lives, then the entry's timeline text. When a run has an expected trace too (the
// reference's), the two are shown side by side and aligned: equal entries share a row, and
// rows where they differ are marked, the first divergence most strongly. Findings (broken invariants, failed
// expectations, diagnosed causes) are marked on the row of the entry they point at and listed
// at the top with links (those after the first divergence folded). Clicking an entry opens its
// JSON as the trace file has it (linear: a request's context as the earlier one it extends plus
// what was appended); hovering it shows the JSON in a side panel.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

// Finding is something wrong with a run, marked where it happens.
type Finding struct {
	// Entry is the seq of the actual trace's entry it points at; 0 when it concerns the run
	// as a whole or an expected entry only.
	Entry int
	// ExpectedEntry, when Entry is 0, is the seq of the expected trace's entry it points at
	// (an entry the actual trace lacks).
	ExpectedEntry int
	// Rule names what is broken: an invariant, an expectation, a cause.
	Rule string
	// Msg says what is wrong.
	Msg string
	// Detail, when set, says more in smaller print (the rule in full, say).
	Detail string
	// Later says the finding comes after the run's first divergence and may be its
	// consequence: the page lists such findings folded, after the others.
	Later bool
}

// Run is one run to show: a trace, optionally with the trace it was expected to equal.
type Run struct {
	// ID is the run's anchor on the page; derived from Title when empty.
	ID string
	// Title names the run (usually its scenario); Subtitle says more (a path, a verdict).
	Title, Subtitle string
	// Actual is the trace to show; Expected, when not nil, is shown beside it, aligned.
	Actual, Expected *trace.Trace
	// ActualLabel and ExpectedLabel head the two sides ("actual", "expected" when empty).
	ActualLabel, ExpectedLabel string
	// Findings are marked on the actual side's entries (and listed at the top of the run).
	Findings []Finding
	// Failed marks the run as failed in its heading even without findings.
	Failed bool
}

// Page is one HTML page of runs.
type Page struct {
	// Title heads the page and names its browser tab.
	Title string
	// Intro is a paragraph under the title (plain text).
	Intro string
	// Back, when set, is a link (relative URL) shown at the top, e.g. to an index page.
	Back string
	// Next and NextTitle, when set, link the page that follows (a conformance report's next
	// failing scenario).
	Next, NextTitle string
	// Runs are shown one after another, with a table of contents when there are several.
	Runs []Run
}

// Write renders the page as one self-contained HTML document.
func Write(w io.Writer, p Page) error {
	view := pageView{Title: p.Title, Intro: p.Intro, Back: p.Back, Next: p.Next, NextTitle: p.NextTitle, CSS: css, JS: js}
	ids := map[string]int{}
	for i, r := range p.Runs {
		rv := buildRun(r)
		if rv.ID == "" {
			rv.ID = slug(r.Title)
		}
		if rv.ID == "" {
			rv.ID = fmt.Sprintf("run-%d", i+1)
		}
		if n := ids[rv.ID]; n > 0 {
			rv.ID = fmt.Sprintf("%s-%d", rv.ID, n+1)
		}
		ids[rv.ID]++
		rv.prefixRows()
		view.Runs = append(view.Runs, rv)
		if rv.Failed {
			view.FailedRuns++
		}
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, view); err != nil {
		return fmt.Errorf("report: rendering %q: %w", p.Title, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// slug makes an HTML id from a name: letters, digits and dashes.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// Slug is the file-name-safe form of a scenario name that the report uses for its pages
// ("queues/poll-b" gives "queues-poll-b").
func Slug(name string) string { return slug(name) }

// entryJSON is an entry's full JSON, indented for reading.
func entryJSON(e trace.Entry) string {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Sprintf("(entry %d cannot be shown: %v)", e.Seq, err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, line, "", "  "); err != nil {
		return string(line)
	}
	return buf.String()
}

// label is an entry's timeline text without its time and kind columns.
func label(e trace.Entry) string {
	line := trace.TimelineLine(e)
	// The line is "%7dms  %-4s  text".
	if i := strings.Index(line, "ms  "); i >= 0 && len(line) >= i+4+4+2 {
		return strings.TrimLeft(line[i+4+4:], " ")
	}
	return line
}

// kindShort is the short kind of an entry, as in the timeline.
func kindShort(kind string) string {
	switch kind {
	case trace.KindEvent:
		return "ev"
	case trace.KindCall:
		return "call"
	case trace.KindDeliver:
		return "dlv"
	case trace.KindUser:
		return "user"
	case trace.KindEnd:
		return "end"
	case trace.KindFail:
		return "FAIL"
	case trace.KindOutcome:
		return "out"
	}
	return kind
}
