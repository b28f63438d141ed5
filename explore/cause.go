package explore

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/sim"
)

// Finding is one thing wrong with an implementation's run.
type Finding struct {
	// Signature names the cause: what differs, where and in which shape, never the scenario's
	// values, so one defect gives one signature in every scenario that shows it. Failures
	// are grouped by it, shrinking preserves it, and --ignore lists it.
	Signature string
	// Rule is the rule the finding breaks, in words.
	Rule string
	// Text is this occurrence in full.
	Text string
}

// Diagnosis lists what is wrong with got, an implementation's trace, compared with want, the
// reference's trace of the same scenario (nil when there is no comparison), in the order the
// findings show in the trace; none when nothing is. It is the one place the cause signature
// comes from.
type Diagnosis func(want, got *sim.Trace) []Finding

// FirstDivergence is the diagnosis explore uses until a fuller one is plugged in: every
// broken invariant of invs (nil: invariant.All()), earliest entry first, each named by its
// invariant and the shape of its message; then the first divergence of the two traces under
// profile (an entry missing, an extra entry, or a changed one: its kind, name and role, and
// for a change the JSON path that differs). An invariant names a rule, so a run's cause is
// the earliest rule it breaks, and the divergence only when it breaks none.
func FirstDivergence(profile conformance.Profile, invs []invariant.Invariant) Diagnosis {
	if invs == nil {
		invs = invariant.All()
	}
	docs := map[string]string{}
	for _, inv := range invariant.All() {
		docs[inv.Name] = firstSentence(inv.Doc)
	}
	return func(want, got *sim.Trace) []Finding {
		fails := invariant.CheckAll(got, invs...)
		// Earliest entry first; a violation of the trace as a whole (entry 0) last.
		slices.SortStableFunc(fails, func(a, b invariant.Failure) int {
			return cmp.Compare(entryOrder(a.Entry), entryOrder(b.Entry))
		})
		var out []Finding
		for _, f := range fails {
			rule := "invariant " + f.Invariant
			if doc := docs[f.Invariant]; doc != "" {
				rule += ": " + doc
			}
			out = append(out, Finding{Signature: "invariant " + f.Invariant + ": " + Shape(f.Msg), Rule: rule, Text: f.String()})
		}
		if want != nil {
			if d := conformance.Compare(want, got, profile, 3); d != nil {
				out = append(out, divergenceFinding(want, got, d))
			}
		}
		return out
	}
}

func entryOrder(entry int) int {
	if entry <= 0 {
		return math.MaxInt
	}
	return entry
}

// divergenceFinding describes the first divergence d of got from want.
func divergenceFinding(want, got *sim.Trace, d *conformance.Divergence) Finding {
	i := d.Entry - 1
	var w, g *sim.Entry
	if i < len(want.Entries) {
		w = &want.Entries[i]
	}
	if i < len(got.Entries) {
		g = &got.Entries[i]
	}
	var sig, rule string
	switch {
	case g != nil && (w == nil || shifted(want.Entries[i:], got.Entries[i+1:])):
		sig = "extra " + entryShape(g)
		rule = "the implementation has an entry the reference does not have"
	case w != nil && (g == nil || shifted(want.Entries[i+1:], got.Entries[i:])):
		sig = "missing " + entryShape(w)
		rule = "the implementation lacks an entry the reference has"
	case entryShape(w) != entryShape(g):
		sig = "expected " + entryShape(w) + ", got " + entryShape(g)
		rule = "the implementation has another entry where the reference has this one"
	default:
		sig = entryShape(w) + " differs" + pathOf(d.Detail)
		rule = "the entry must be the reference's"
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(d.Text(""), "\n"))
	return Finding{Signature: "diff: " + sig, Rule: "trace equals the reference's: " + rule, Text: b.String()}
}

// shifted reports whether a and b agree (as timeline lines, which carry no sequence number)
// on their first few entries, both having some: one trace then has an entry the other lacks.
func shifted(a, b []sim.Entry) bool {
	n := min(3, len(a), len(b))
	if n == 0 {
		return len(a) == 0 && len(b) == 0
	}
	for k := range n {
		if sim.TimelineLine(a[k]) != sim.TimelineLine(b[k]) {
			return false
		}
	}
	return true
}

// entryShape is an entry without its values: kind and name, and the role of a message event.
func entryShape(e *sim.Entry) string {
	if e == nil {
		return "(end of trace)"
	}
	s := e.Kind + " " + e.Name
	if e.Kind == sim.KindEvent {
		var d struct {
			Message struct {
				Role string `json:"role"`
			} `json:"message"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Message.Role != "" && strings.HasPrefix(e.Name, "message_") {
			s += " " + d.Message.Role
		}
	}
	return s
}

var (
	detailPath = regexp.MustCompile(`^at ([^:]+):`)
	index      = regexp.MustCompile(`\.\d+(\.|$)`)
)

// pathOf is the JSON path a divergence's detail names, its array indexes as [].
func pathOf(detail string) string {
	m := detailPath.FindStringSubmatch(detail)
	if m == nil {
		return ""
	}
	p := m[1]
	for index.MatchString(p) {
		p = index.ReplaceAllString(p, "[]$1")
	}
	return " at " + p
}

var (
	quoted   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|` + "`[^`]*`")
	number   = regexp.MustCompile(`\d+(\.\d+)?`)
	brackets = regexp.MustCompile(`\[[^\[\]]*\]|\([^()]*\)|\{[^{}]*\}`)
)

// Shape is a message without its values: its first clause (up to ": "), quoted texts as "…",
// lists and parentheses as […] and numbers as N, so that one defect reads the same in every
// scenario.
func Shape(msg string) string {
	msg, _, _ = strings.Cut(msg, "\n")
	msg, _, _ = strings.Cut(msg, ": ")
	msg = quoted.ReplaceAllString(msg, `"…"`)
	for brackets.MatchString(msg) {
		msg = brackets.ReplaceAllString(msg, "…")
	}
	return strings.TrimSpace(number.ReplaceAllString(msg, "N"))
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// ReadSignatures reads a list of cause signatures, one a line, as `turnstile explore` prints
// them; blank lines and lines starting with # are ignored.
func ReadSignatures(r io.Reader) (map[string]bool, error) {
	out := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out[line] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading signatures: %w", err)
	}
	return out, nil
}
