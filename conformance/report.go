package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/trace"
)

// FindingsText renders findings for people, each in full (diagnose.Finding.Text), each line
// prefixed with indent; a rule already given by the finding before is not repeated ("as
// above"). max > 0 shows at most max of them and says how many more there are.
func FindingsText(fs []diagnose.Finding, indent string, max int) string {
	var b strings.Builder
	fs = rootsFirst(fs)
	for i, f := range fs {
		if max > 0 && i == max {
			fmt.Fprintf(&b, "%s… and %d more findings (all are in the JSON and JUnit reports)\n", indent, len(fs)-i)
			break
		}
		if i > 0 && f.Rule != "" && f.Rule == fs[i-1].Rule {
			f.Rule = "(as above)"
		}
		b.WriteString(f.Text(indent))
	}
	return b.String()
}

// Progress renders results one at a time, as a run goes, so that the output grows with the
// number of distinct defects rather than with the number of scenarios: a finding whose
// shape (diagnose.Finding.Shape: a field and how it differs, an invariant) was already shown
// in full is only counted, and a scenario whose findings were all shown before takes one
// line.
type Progress struct {
	// Max caps the findings shown in full per scenario (0: no cap).
	Max int
	// Status renders a verdict word ("PASS", "FAIL"); nil leaves it plain.
	Status func(Status) string
	shown  map[string]string // a finding's shape shown in full: the scenario it was shown under
	// skipped maps a reason for skipping, given in full once, to the scenario it was given under.
	skipped map[string]string
}

// Text renders one result: its verdict line, then its findings not shown before, in full.
func (p *Progress) Text(res Result) string {
	word := map[Status]string{Pass: "PASS", Fail: "FAIL", Skip: "SKIP", ExpectedFail: "XFAIL"}[res.Status]
	if p.Status != nil {
		word = p.Status(res.Status)
	}
	if res.Flaky {
		word += " (flaky)"
	}
	if p.shown == nil {
		p.shown, p.skipped = map[string]string{}, map[string]string{}
	}
	switch res.Status {
	case Pass:
		return fmt.Sprintf("%s  %s\n", word, res.Scenario)
	case Skip:
		if first := p.skipped[res.Reason]; first != "" {
			return fmt.Sprintf("%s  %s: as %s\n", word, res.Scenario, first)
		}
		p.skipped[res.Reason] = res.Scenario
		return fmt.Sprintf("%s  %s: %s\n", word, res.Scenario, res.Reason)
	}
	var fresh, seen []diagnose.Finding
	for _, f := range rootsFirst(res.Findings) {
		if p.shown[f.Shape()] != "" {
			seen = append(seen, f)
		} else {
			fresh = append(fresh, f)
		}
	}
	var b strings.Builder
	head := fmt.Sprintf("%s  %s: %s", word, res.Scenario, indentRest(res.Reason, "      "))
	if len(res.Findings) > 0 {
		// The findings say the reason in full.
		head = fmt.Sprintf("%s  %s: %s", word, res.Scenario, strings.TrimSuffix(firstLine(res.Reason), ":"))
		head += fmt.Sprintf(" — %d finding%s", len(res.Findings), plural(len(res.Findings)))
	}
	if len(fresh) == 0 && len(seen) > 0 {
		fmt.Fprintf(&b, "%s, all %s: %s\n", head, p.shownWhere(seen, res.Scenario), headlines(seen, 2))
		return b.String()
	}
	b.WriteString(head + "\n")
	// When the scenario's first finding is of a kind shown before, the folded line comes
	// first: a finding marked as coming after an earlier one then has that one above it.
	if len(seen) > 0 && p.shown[res.Findings[0].Shape()] != "" {
		fmt.Fprintf(&b, "      %d finding%s %s: %s\n", len(seen), plural(len(seen)), p.shownWhere(seen, res.Scenario), headlines(seen, 2))
		seen = nil
	}
	shownNow := fresh
	if p.Max > 0 && len(shownNow) > p.Max {
		shownNow = shownNow[:p.Max]
	}
	var full []diagnose.Finding
	for _, f := range shownNow {
		if p.shown[f.Shape()] == "" {
			full = append(full, f)
			p.shown[f.Shape()] = res.Scenario
		} else {
			seen = append(seen, f)
		}
	}
	b.WriteString(FindingsText(full, "      ", 0))
	if len(fresh) > len(shownNow) {
		fmt.Fprintf(&b, "      … and %d more findings (all are in the JSON and JUnit reports)\n", len(fresh)-len(shownNow))
	}
	if len(seen) > 0 {
		fmt.Fprintf(&b, "      and %d finding%s %s: %s\n", len(seen), plural(len(seen)), p.shownWhere(seen, res.Scenario), headlines(seen, 2))
	}
	return b.String()
}

// rootsFirst is fs with the findings that may be a cause (not marked as coming after the
// first divergence) first, each part in its order: an invariant that names the defect is
// not shown below twenty field differences that follow from it (a stranger's Agent).
func rootsFirst(fs []diagnose.Finding) []diagnose.Finding {
	out := make([]diagnose.Finding, 0, len(fs))
	for _, later := range []bool{false, true} {
		for _, f := range fs {
			if f.Consequence == later {
				out = append(out, f)
			}
		}
	}
	return out
}

// shownWhere says where the kinds of findings seen were shown in full: above, in this
// scenario, or under an earlier one.
func (p *Progress) shownWhere(seen []diagnose.Finding, scenario string) string {
	if first := p.shown[seen[0].Shape()]; first != "" && first != scenario {
		return "of kinds shown in full above (the first under " + first + ")"
	}
	return "of kinds shown above"
}

// headlines lists the distinct shapes of findings (diagnose.Finding.Shape), at most n, with
// the entries they are at.
func headlines(fs []diagnose.Finding, n int) string {
	var order []string
	at := map[string][]string{}
	for _, f := range fs {
		h := f.Shape()
		if _, ok := at[h]; !ok {
			order = append(order, h)
			at[h] = nil
		}
		e := ""
		if f.At.Actual > 0 {
			e = fmt.Sprint(f.At.Actual)
		} else if f.At.Expected > 0 {
			e = "ref " + fmt.Sprint(f.At.Expected)
		}
		if e != "" && !slices.Contains(at[h], e) {
			at[h] = append(at[h], e)
		}
	}
	var parts []string
	for i, h := range order {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(order)-n))
			break
		}
		const most = 5 // entries named: a defect repeated every turn is at hundreds
		if es := at[h]; len(es) == 1 {
			h += " (entry " + es[0] + ")"
		} else if len(es) > most+1 {
			h += fmt.Sprintf(" (entries %s and %d more)", strings.Join(es[:most], ", "), len(es)-most)
		} else if len(es) > 1 {
			h += " (entries " + strings.Join(es, ", ") + ")"
		}
		parts = append(parts, h)
	}
	return strings.Join(parts, "; ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// maxSymptoms is the number of symptoms WriteSummary lists.
const maxSymptoms = 5

// WriteSummary writes the end of a run for people: the causes ranked by the number of
// scenarios they touch, each with its rule, an example finding in full and the scenarios;
// the profile by rule family and by invariant; the expected failures; and the closing line
// "N passed, M failed, K skipped".
func (r *Report) WriteSummary(w io.Writer) error {
	var b strings.Builder
	if r.StartError != "" {
		fmt.Fprintf(&b, "the implementation did not start: %s\n", r.StartError)
	}
	if len(r.Causes) > 0 {
		fmt.Fprintf(&b, "\n%d cause%s of failure, the one explaining the most scenarios first:\n", len(r.Causes), plural(len(r.Causes)))
		for i, c := range r.Causes {
			fmt.Fprintf(&b, "\n%2d. ", i+1)
			b.WriteString(strings.TrimPrefix(c.Text("    "), "    "))
			b.WriteString(wrapNames("    scenarios: ", c.Explains, "      "))
			if more := len(c.Scenarios) - len(c.Explains); more > 0 {
				fmt.Fprintf(&b, "    seen too in %d scenario%s another cause explains (all in the JSON report)\n", more, plural(more))
			}
		}
	}
	if len(r.KnownCauses) > 0 {
		b.WriteString("\ncauses seen in the expected failures (--expect-fail), not counted:\n")
		for _, c := range r.KnownCauses {
			fmt.Fprintf(&b, "  %s — %d scenario%s, first %s\n", c.Title, len(c.Scenarios), plural(len(c.Scenarios)), c.Scenarios[0])
		}
	}
	var flaky []string
	conventions := map[string]int{}
	for _, res := range r.Results {
		if res.Flaky {
			flaky = append(flaky, res.Scenario)
		}
		for _, id := range res.Conventions {
			conventions[id]++
		}
	}
	if len(conventions) > 0 {
		b.WriteString("\npi's conventions the implementation does not follow (not judged at core level; --level pi judges them):\n")
		for _, id := range sortedByCount(conventions) {
			fmt.Fprintf(&b, "  %s — %d scenario%s\n", diagnose.RuleTitles([]string{id}), conventions[id], plural(conventions[id]))
		}
	}
	if len(flaky) > 0 {
		fmt.Fprintf(&b, "\n%d flaky scenario%s: run again, the implementation gave another trace (its own goroutines, a clock, a map's order?); not grouped into causes, fix this first:\n",
			len(flaky), plural(len(flaky)))
		b.WriteString(wrapNames("    ", flaky, "    "))
	}
	if len(r.Symptoms) > 0 {
		b.WriteString("\nseen only after a first divergence (consequences, or defects the causes above hide):\n")
		for i, sy := range r.Symptoms {
			if i == maxSymptoms {
				fmt.Fprintf(&b, "  … and %d more (all in the JSON report)\n", len(r.Symptoms)-i)
				break
			}
			where := ""
			if n := len(sy.Where); n > 3 {
				where = fmt.Sprintf(" on %s and %d more kinds of entries", strings.Join(sy.Where[:3], ", "), n-3)
			} else if n > 0 {
				where = " on " + strings.Join(sy.Where, ", ")
			}
			fmt.Fprintf(&b, "  %s%s — %d scenario%s, first %s\n", sy.Title, where, len(sy.Scenarios), plural(len(sy.Scenarios)), sy.Scenarios[0])
		}
	}
	b.WriteString(r.skipReasons())
	if len(r.Families) > 0 {
		b.WriteString("\nprofile by rule family:\n")
		writeTallies(&b, r.Families)
	}
	if len(r.Invariants) > 0 {
		b.WriteString("by invariant (scenarios whose trace keeps it):\n")
		writeTallies(&b, r.Invariants)
	}
	if s := r.ExpectedText(); s != "" {
		b.WriteString(s + "\n")
	}
	if r.Failed > 0 {
		b.WriteString(r.shortcutsNote())
	}
	b.WriteString(r.Summary() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// skipReasons says why scenarios were skipped, each reason once with the number of scenarios it
// skipped, the most frequent first ("" when none was skipped).
func (r *Report) skipReasons() string {
	count := map[string]int{}
	var reasons []string
	for _, res := range r.Results {
		if res.Status != Skip {
			continue
		}
		if count[res.Reason] == 0 {
			reasons = append(reasons, res.Reason)
		}
		count[res.Reason]++
	}
	if len(reasons) == 0 {
		return ""
	}
	slices.SortStableFunc(reasons, func(a, b string) int { return count[b] - count[a] })
	var b strings.Builder
	b.WriteString("\nskipped, by reason:\n")
	for _, reason := range reasons {
		fmt.Fprintf(&b, "  %3d  %s\n", count[reason], indentRest(reason, "       "))
	}
	return b.String()
}

func writeTallies(b *strings.Builder, ts []Tally) {
	width := 0
	for _, t := range ts {
		width = max(width, len(t.Name))
	}
	for _, t := range ts {
		fmt.Fprintf(b, "  %-*s  %3d passed, %3d failed, %3d skipped\n", width, t.Name, t.Passed, t.Failed, t.Skipped)
	}
}

// wrapNames lists names after a label, wrapped near 100 columns.
func wrapNames(label string, names []string, indent string) string {
	var b strings.Builder
	line := label
	for i, n := range names {
		item := n
		if i < len(names)-1 {
			item += ","
		}
		if len(line)+len(item)+1 > 100 && line != label && line != indent {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		}
		line += item + " "
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

// jsonReport is the report for machines (WriteJSON).
type jsonReport struct {
	Implementation   string             `json:"implementation"`
	Profile          trace.Profile      `json:"profile"`
	Passed           int                `json:"passed"`
	Failed           int                `json:"failed"`
	Skipped          int                `json:"skipped"`
	ExpectedFailures int                `json:"expectedFailures"`
	DurationMs       int64              `json:"durationMs"`
	StartError       string             `json:"startError,omitempty"`
	DeliveriesAhead  bool               `json:"deliveriesAhead,omitempty"`
	StandingAnswers  bool               `json:"standingAnswers,omitempty"`
	Recheck          *Recheck           `json:"recheckOneAtATime,omitempty"`
	Summary          string             `json:"summary"`
	Causes           []jsonCause        `json:"causes"`
	Symptoms         []diagnose.Symptom `json:"symptoms"`
	KnownCauses      []diagnose.Cause   `json:"knownCauses,omitempty"`
	Families         []Tally            `json:"families"`
	Invariants       []Tally            `json:"invariants"`
	Results          []jsonResult       `json:"results"`
}

type jsonCause struct {
	Rank int `json:"rank"`
	diagnose.Cause
}

type jsonResult struct {
	Scenario   string             `json:"scenario"`
	Family     string             `json:"family,omitempty"`
	Status     Status             `json:"status"`
	Reason     string             `json:"reason,omitempty"`
	Error      string             `json:"error,omitempty"`
	DurationMs int64              `json:"durationMs"`
	Flaky      bool               `json:"flaky,omitempty"`
	Findings   []diagnose.Finding `json:"findings,omitempty"`
}

// WriteJSON writes the whole report as one JSON document: the totals, the causes ranked,
// the profile by family and invariant, and every result with all its findings.
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{Implementation: r.Implementation, Profile: r.Profile, Passed: r.Passed, Failed: r.Failed,
		Skipped: r.Skipped, ExpectedFailures: r.ExpectedFailures, DurationMs: r.Duration.Milliseconds(),
		StartError: r.StartError, DeliveriesAhead: r.DeliveriesAhead, StandingAnswers: r.StandingAnswers, Recheck: r.Recheck, Summary: r.Summary(), Families: r.Families, Invariants: r.Invariants,
		Causes: []jsonCause{}, Symptoms: r.Symptoms, KnownCauses: r.KnownCauses, Results: []jsonResult{}}
	if out.Symptoms == nil {
		out.Symptoms = []diagnose.Symptom{}
	}
	for i, c := range r.Causes {
		out.Causes = append(out.Causes, jsonCause{Rank: i + 1, Cause: c})
	}
	for _, res := range r.Results {
		out.Results = append(out.Results, jsonResult{Scenario: res.Scenario, Family: res.Family, Status: res.Status,
			Reason: res.Reason, Error: res.Error, DurationMs: res.Duration.Milliseconds(), Flaky: res.Flaky, Findings: res.Findings})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// CheckNames checks a list of scenario names (an expected-failure list) against the suite's
// names and returns it as a set; a name not in the suite is an error naming the nearest
// suite name.
func CheckNames(list, suite []string) (map[string]bool, error) {
	names, _, err := ParseExpectFail(list, suite)
	return names, err
}

// ParseExpectFail reads an --expect-fail list: a line names a scenario ("family/name"), or a
// scenario and a finding of it known ("family/name: R-TRUNC-FAIL", a cause key or a
// signature; several lines may name one scenario). It returns the names and, by name, the
// findings; an error names every line that is not a scenario of the suite.
func ParseExpectFail(list, suite []string) (map[string]bool, map[string][]string, error) {
	out := map[string]bool{}
	findings := map[string][]string{}
	var bad []string
	for _, line := range list {
		n, key, withKey := strings.Cut(line, ": ")
		n = strings.TrimSpace(n)
		if withKey {
			findings[n] = append(findings[n], strings.TrimSpace(key))
		}
		if !slices.Contains(suite, n) {
			msg := fmt.Sprintf("%q is not a scenario of the suite", n)
			if near := Nearest(n, suite); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			bad = append(bad, msg)
			continue
		}
		out[n] = true
	}
	if len(bad) > 0 {
		return nil, nil, fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return out, findings, nil
}

// Nearest is the name closest to s by edit distance when it is close enough to be a typo of
// it (a distance of at most a third of s's length, and at least one), else "": a name far from
// every one gets no suggestion rather than an unrelated one.
func Nearest(s string, names []string) string {
	best, bestD := "", max(1, len(s)/3)+1
	for _, n := range names {
		if d := levenshtein.ComputeDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// shortcutsNote tells how to rule out the exchange's shortcuts the implementation took
// (deliveries ahead, standing answers) when scenarios failed; "" when it took none.
func (r *Report) shortcutsNote() string {
	took := protocol.Shortcuts{DeliveriesAhead: r.DeliveriesAhead, StandingAnswers: r.StandingAnswers}
	if r.Recheck != nil {
		return r.Recheck.Note(took)
	}
	return took.Note("turnstile conform")
}

// sortedByCount is a map's keys, the highest count first, then by key.
func sortedByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	return keys
}
