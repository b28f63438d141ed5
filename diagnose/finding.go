package diagnose

import (
	"fmt"
	"strings"

	"github.com/turnstile-dev/turnstile/docs"

	"github.com/turnstile-dev/turnstile/scenarios"
)

// Kind is what a finding is about.
type Kind string

// The kinds of findings.
const (
	// Divergence: the implementation's trace differs from the reference's.
	Divergence Kind = "divergence"
	// Invariant: the implementation's trace breaks a named invariant.
	Invariant Kind = "invariant"
	// Expectation: the implementation's trace misses a line of the scenario's expect: block.
	Expectation Kind = "expectation"
	// Error: the implementation failed to run the scenario (timeout, crash, protocol error).
	Error Kind = "error"
	// Version: the implementation's trace is the reference's with behaviour changes of pi
	// turned the other way: it behaves as another pi release than it is held to
	// (ExplainByVersion). Its other findings are then consequences of that.
	Version Kind = "version"
)

// Position is where a finding shows in both traces: 1-based entry indexes into the
// reference's (Expected) and the implementation's (Actual) trace; 0 when the finding has no
// entry on that side (an entry missing or extra, a whole-trace finding).
type Position struct {
	Expected int `json:"expected,omitempty"`
	Actual   int `json:"actual,omitempty"`
}

// Finding is one thing wrong with an implementation's run of one scenario.
type Finding struct {
	Kind Kind `json:"kind"`
	// Rule is the rule the finding breaks, in words: a rule of docs/SEMANTICS.md with its
	// title, an invariant with its rule ids, or the scenario's rule (its rule ids, or its
	// "# Rule:" sentence).
	Rule string `json:"rule"`
	// RuleID is the id of the rule of docs/SEMANTICS.md the finding breaks: the rule that
	// governs its entry (a divergence), or that its violation names (an invariant); "" when
	// none does.
	RuleID string `json:"ruleId,omitempty"`
	// Invariant names the invariant an invariant finding breaks ("truncation"), or that a
	// divergence also breaks.
	Invariant string `json:"invariant,omitempty"`
	// Says is what is wrong, in a sentence a person who never read pi understands.
	Says string `json:"says"`
	// At is where the finding shows in both traces.
	At Position `json:"at"`
	// ExpectedLine and ActualLine are the timeline lines (trace.TimelineLine) of the entries
	// concerned, one a line, when there are any.
	ExpectedLine string `json:"expectedLine,omitempty"`
	ActualLine   string `json:"actualLine,omitempty"`
	// Path is the JSON path inside the entry of a field that differs ("data.message.usage").
	Path string `json:"path,omitempty"`
	// Member is the member the finding's rule governs on any kind of entry ("timestamp",
	// "details"), when that is what named it: one defect, apart from the rule's others.
	Member string `json:"member,omitempty"`
	// Expected and Actual are the full values (JSON, or entries' JSON lines), never cut.
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	// Count is how many entries show a divergence: the entries of a region, or the pairs of
	// entries whose field differs alike.
	Count int `json:"count,omitempty"`
	// Consequence says the finding comes after the scenario's first divergence and may be
	// its consequence rather than a fault of its own.
	Consequence bool `json:"consequence,omitempty"`
	// Signature is stable across scenarios: what differs, where and in which shape, never the
	// scenario's values. Findings of one defect share it.
	Signature string `json:"signature"`
	// Headline is the signature as a sentence: the title of a cause made of this finding.
	Headline string `json:"headline"`
	// Cause is the title of the cause Group assigned the finding's scenario to ("" before
	// Group runs).
	Cause string `json:"cause,omitempty"`

	// What a divergence touches, for telling consequences (markConsequences): a message, a
	// request, an entry of the harness's, a time that moved, the end of a run that stopped
	// where a request was due; stops: the implementation made no request after a region it lacks;
	// wallClock: a timestamp from a clock other than the world's.
	messages, request, harness, shifted, follows, stops, wallClock bool
	// span lists the implementation's entries (1-based) a divergence shows on; rules, the
	// rules of the entries of a region.
	span  []int
	rules []string
	// from is where the traces start to differ when that is before At.Actual: the place an
	// entry moved later leaves (1-based); 0 otherwise.
	from int
}

// CauseKey is what the findings of one defect share across scenarios and runs: the rule the
// finding breaks ("R-TRUNC-FAIL"), since one defect shows in several ways under its rule (a
// truncated call executed: an extra call, an extra update, a missing failure); for a
// finding no rule names (an error, an expectation), its signature; for one named by a member
// its rule governs on any entry, the rule and the member when the rule governs entries too
// (R-TOOL-RESULT-MESSAGE: details, apart from its entries' findings). A pi change (Version)
// shares the key of the rule it changes: a port lacking it shows it so where the rest of the
// trace is pi's, and as that rule's findings elsewhere.
func (f Finding) CauseKey() string {
	if f.RuleID != "" && f.Member != "" && f.Kind == Divergence && governsEntries(f.RuleID) {
		return causeRule(f.RuleID) + ": " + f.Member
	}
	if f.RuleID != "" && (f.Kind == Divergence || f.Kind == Invariant || f.Kind == Version) {
		return causeRule(f.RuleID)
	}
	return f.Signature
}

// Names are what a list of known findings (--expect-fail, --ignore) may name the finding
// by: its cause key, the rule alone of a key that adds a member ("R-TIME-STAMP" for
// "R-TIME-STAMP: timestamp"), its signature, and "invariant NAME" for an invariant's.
func (f Finding) Names() []string {
	out := []string{f.CauseKey(), f.Signature}
	if rule, _, ok := strings.Cut(f.CauseKey(), ": "); ok && f.Member != "" {
		out = append(out, rule)
	}
	if f.Invariant != "" && f.Kind == Invariant {
		out = append(out, "invariant "+f.Invariant)
	}
	return out
}

// mechanisms are the rule families of docs/SEMANTICS.md that describe one mechanism, whose
// rules are one cause ("Which rule governs an entry").
var mechanisms = []string{"R-DECL-", "R-TRUNC-"}

// causeRule is the cause key of a rule: its mechanism's family ("R-DECL"), else the rule.
func causeRule(id string) string {
	for _, m := range mechanisms {
		if strings.HasPrefix(id, m) {
			return strings.TrimSuffix(m, "-")
		}
	}
	return id
}

// maxRegionShown is the number of entries of a region Text shows as full JSON lines; a
// longer region shows its timeline lines only.
const maxRegionShown = 3

// maxLinesShown is the number of timeline lines of a region Text shows.
const maxLinesShown = 12

// String is the finding in one paragraph: kind, rule, sentence, and the values.
func (f Finding) String() string { return f.Text("") }

// Text renders the finding for people, each line prefixed with indent: a first line with
// the kind, positions and sentence, then the rule, the timeline lines and the full values.
func (f Finding) Text(indent string) string {
	var b strings.Builder
	mark := ""
	if f.Consequence {
		mark = " (after an earlier finding: may be its consequence)"
	}
	at := ""
	switch {
	case f.At.Expected > 0 && f.At.Actual > 0:
		at = fmt.Sprintf(" at entry %d (reference %d)", f.At.Actual, f.At.Expected)
		if f.At.Expected == f.At.Actual {
			at = fmt.Sprintf(" at entry %d", f.At.Actual)
		}
	case f.At.Actual > 0:
		at = fmt.Sprintf(" at entry %d", f.At.Actual)
	case f.At.Expected > 0:
		at = fmt.Sprintf(" at reference entry %d", f.At.Expected)
	}
	fmt.Fprintf(&b, "%s%s%s%s: %s\n", indent, f.Kind, at, mark, indentRest(f.Says, indent+"    "))
	if f.Rule != "" {
		fmt.Fprintf(&b, "%s    rule: %s\n", indent, indentRest(wrap(f.Rule, ruleWidth-len(indent)), indent+"          "))
	}
	lines := func(text, mark string) {
		if text == "" {
			return
		}
		ls := strings.Split(text, "\n")
		limit := maxLinesShown
		if f.Consequence {
			limit = maxLinesShown / 4
		}
		for i, l := range ls {
			if i == limit && len(ls) > limit+1 {
				fmt.Fprintf(&b, "%s  %s … %d more entries\n", indent, mark, len(ls)-i)
				break
			}
			fmt.Fprintf(&b, "%s  %s %s\n", indent, mark, l)
		}
	}
	lines(f.ExpectedLine, "-")
	lines(f.ActualLine, "+")
	region := f.Path == "" && (strings.Count(f.Expected, "\n") >= maxRegionShown || strings.Count(f.Actual, "\n") >= maxRegionShown)
	switch {
	case f.Kind == Error:
		if strings.Contains(f.Actual, "\n") {
			fmt.Fprintf(&b, "%s    the error in full: %s\n", indent, indentRest(f.Actual, indent+"      "))
		}
	case region:
		fmt.Fprintf(&b, "%s    (the entries in full are in the JSON report)\n", indent)
	case f.Path != "" || f.Expected != "" || f.Actual != "":
		where := ""
		if f.Path != "" {
			where = " " + f.Path
		}
		if f.Expected != "" {
			fmt.Fprintf(&b, "%s    expected%s: %s\n", indent, where, indentRest(f.Expected, indent+"      "))
		}
		if f.Actual != "" {
			fmt.Fprintf(&b, "%s    actual%s:   %s\n", indent, where, indentRest(f.Actual, indent+"      "))
		}
	}
	return b.String()
}

// ruleWidth is the width a rule's text is wrapped to, its indent included.
const ruleWidth = 100

// wrap breaks a one-line text into lines of at most width characters, between words (a
// longer word keeps a line of its own); a text holding line breaks is left as it is.
func wrap(s string, width int) string {
	if strings.Contains(s, "\n") || len(s) <= width {
		return s
	}
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		switch {
		case i == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

func indentRest(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}

// Scenario is what Diagnose needs to know of a scenario besides its traces.
type Scenario struct {
	// Name is the scenario's name.
	Name string
	// Family is its rule family: the suite folder it comes from ("truncation"); "" when it
	// has none.
	Family string
	// Rule is the rule the scenario pins down, in words (its file's "# Rule:" comment).
	Rule string
	// Rules are the ids of the rules it pins down (docs/SEMANTICS.md), when it lists them.
	Rules []string
	// Expect is the scenario's expect: block; nil when it has none.
	Expect *scenarios.Expect
}

// RuleName is the rule a divergence of the scenario breaks: its rule ids (docs/SEMANTICS.md)
// followed by its rule sentence, either alone when the other is missing, else "the
// reference's trace".
func (s Scenario) RuleName() string {
	switch {
	case len(s.Rules) > 0 && s.Rule != "":
		return strings.Join(s.Rules, ", ") + ": " + s.Rule
	case len(s.Rules) > 0:
		return RuleTitles(s.Rules)
	case s.Rule != "":
		return s.Rule
	}
	return NoRule
}

// NoRule is the rule of a divergence in a scenario that names none (a generated one): what
// the reference's trace does.
const NoRule = "the reference's trace"

// RuleTitles names rules of docs/SEMANTICS.md by id and title: "R-POLL-B (…); R-TRUNC-1 (…)".
func RuleTitles(ids []string) string {
	parts := make([]string, 0, len(ids))
	for _, id := range ids {
		if r, ok := docs.Lookup(id); ok {
			parts = append(parts, id+" ("+r.Title+")")
		} else {
			parts = append(parts, id)
		}
	}
	return strings.Join(parts, "; ")
}

// FromFile describes a loaded scenario file: its name, family (first folder of its path in
// the suite), rule and expectations.
func FromFile(f *scenarios.File) Scenario {
	s := Scenario{Name: f.Scenario.Name, Rule: f.Rule, Rules: f.Scenario.Rules}
	if fam, _, ok := strings.Cut(f.Rel, "/"); ok {
		s.Family = fam
	}
	if !f.Expect.Empty() {
		ex := f.Expect
		s.Expect = &ex
	}
	return s
}

// FromFiles describes loaded scenario files, by scenario name.
func FromFiles(files []*scenarios.File) map[string]Scenario {
	out := make(map[string]Scenario, len(files))
	for _, f := range files {
		out[f.Scenario.Name] = FromFile(f)
	}
	return out
}
