package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/invariant"
)

// Diagnosis is the findings of one scenario.
type Diagnosis struct {
	Scenario Scenario
	Findings []Finding
}

// Cause is one defect as the suite shows it: the findings of one signature, in every
// scenario that has them.
type Cause struct {
	// Title says the defect in words ("thinkingLevel absent on event message_end assistant").
	Title string `json:"title"`
	// Signature is the findings' shared cause key (Finding.CauseKey): the rule they break, or
	// their signature.
	Signature string `json:"signature"`
	// Shows lists the signatures of the ways the defect shows (root findings), the most
	// common first.
	Shows []string `json:"shows,omitempty"`
	Kind  Kind     `json:"kind"`
	// Rule is the rule the defect breaks: the findings' rule when most scenarios agree on it,
	// else the families of the scenarios.
	Rule string `json:"rule"`
	// Scenarios are the failing scenarios that have a finding of this signature, in the order
	// given to Group.
	Scenarios []string `json:"scenarios"`
	// Explains are the scenarios this cause was chosen to explain (a subset of Scenarios): a
	// scenario is explained by exactly one cause, or by each pi behaviour change its trace
	// shows (Version findings).
	Explains []string `json:"explains"`
	// Divergence is the signature of a divergence found, not as a consequence, in most
	// scenarios an invariant cause explains: what the broken rule looks like in the traces.
	Divergence string `json:"divergence,omitempty"`
	// Example is the finding in the first of Explains (its title's scenario too), in full.
	Example Finding `json:"example"`
	// ExampleScenario is the scenario Example comes from.
	ExampleScenario string `json:"exampleScenario"`
}

// Group picks the causes of a suite's diagnoses: every cause key (Finding.CauseKey: the rule
// a finding breaks, else its signature) that is a root finding (not marked a Consequence of an
// earlier one) in some scenario is a cause, explaining the scenarios where it is a root; each
// pi behaviour change a scenario shows (a Version finding) is a cause explaining every
// scenario that shows it. The keys left are Symptoms. Causes are ranked by the scenarios they
// are seen in, then by those they explain. Group sets each finding's Cause: the title of the
// cause of its key, else of its scenario's earliest root.
func Group(ds []Diagnosis) []Cause {
	stats := tally(ds)
	var causes []Cause
	chosen := map[string]int{} // key: index in causes
	for _, k := range sortedKeys(stats) {
		if cause, ok := stats[k].cause(k, ds); ok {
			chosen[k] = len(causes)
			causes = append(causes, cause)
		}
	}
	rootOf := earliestRoots(ds)
	for i := range ds {
		for j := range ds[i].Findings {
			f := &ds[i].Findings[j]
			if c, ok := chosen[f.CauseKey()]; ok {
				f.Cause = causes[c].Title
			} else if c, ok := chosen[rootOf[i]]; ok {
				f.Cause = causes[c].Title
			}
		}
	}
	slices.SortStableFunc(causes, func(a, b Cause) int {
		if len(a.Scenarios) != len(b.Scenarios) {
			return len(b.Scenarios) - len(a.Scenarios)
		}
		if len(a.Explains) != len(b.Explains) {
			return len(b.Explains) - len(a.Explains)
		}
		return strings.Compare(a.Signature, b.Signature)
	})
	return causes
}

// keyStat is what the suite shows of one cause key.
type keyStat struct {
	scenarios []int          // indexes into ds, each once
	roots     []int          // where a finding of this key is a root
	shows     map[string]int // its findings' signatures, by the scenarios showing them
	kind      Kind
}

// earliestRoots is each scenario's earliest root finding's cause key.
func earliestRoots(ds []Diagnosis) []string {
	rootOf := make([]string, len(ds))
	for i, d := range ds {
		at := -1
		for _, f := range d.Findings {
			if !f.Consequence && f.Kind != Version && (at < 0 || position(f) < at) {
				rootOf[i], at = f.CauseKey(), position(f)
			}
		}
	}
	return rootOf
}

// tally counts, for each cause key, the scenarios showing it, those where it is a root and
// the signatures its root findings show.
func tally(ds []Diagnosis) map[string]*keyStat {
	stats := map[string]*keyStat{}
	for i, d := range ds {
		seen, root, shown := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, f := range d.Findings {
			k := f.CauseKey()
			s := stats[k]
			if s == nil {
				s = &keyStat{kind: f.Kind, shows: map[string]int{}}
				stats[k] = s
			}
			if f.Kind == Version {
				s.kind = Version // said as the pi change, the plainest way
			}
			if !seen[k] {
				seen[k] = true
				s.scenarios = append(s.scenarios, i)
			}
			if !f.Consequence && !root[k] {
				root[k] = true
				s.roots = append(s.roots, i)
			}
			if !f.Consequence && !shown[f.Signature] {
				shown[f.Signature] = true
				s.shows[f.Signature]++
			}
		}
	}
	return stats
}

// cause is key k's cause, false when it is a root nowhere (a symptom).
func (s *keyStat) cause(k string, ds []Diagnosis) (Cause, bool) {
	explains := s.roots
	switch {
	case s.kind == Version:
		explains = s.scenarios
	case len(s.roots) == 0:
		return Cause{}, false
	}
	cause := Cause{Signature: k, Kind: s.kind, Shows: s.showsByCount()}
	rules := map[string]int{}
	for _, i := range s.scenarios {
		d := ds[i]
		cause.Scenarios = append(cause.Scenarios, d.Scenario.Name)
		mine := slices.Contains(explains, i)
		if mine {
			cause.Explains = append(cause.Explains, d.Scenario.Name)
		}
		for _, f := range d.Findings {
			if f.CauseKey() != k || f.Consequence && mine {
				continue
			}
			if mine && (cause.ExampleScenario == "" || cause.betterExample(f)) {
				cause.Example, cause.ExampleScenario = f, d.Scenario.Name
			}
			rules[f.Rule]++
			break
		}
	}
	cause.Title = cause.Example.Headline
	if n := len(cause.Shows) - 1; n > 0 {
		cause.Title += fmt.Sprintf(" (and %d other way%s it shows)", n, plural(n))
	}
	cause.Rule = ruleOf(rules)
	if inv, ok := invariant.ByName(cause.Example.Invariant); ok && cause.Example.Kind == Invariant && cause.Rule == invariantRule(inv, "", false) {
		// The cause states the invariant in full, once.
		cause.Rule = invariantRule(inv, "", true)
	}
	return cause, true
}

// showsByCount is the key's signatures, the most shown first.
func (s *keyStat) showsByCount() []string {
	var shows []string
	for sig := range s.shows {
		shows = append(shows, sig)
	}
	slices.SortFunc(shows, func(a, b string) int {
		if s.shows[a] != s.shows[b] {
			return s.shows[b] - s.shows[a]
		}
		return strings.Compare(a, b)
	})
	return shows
}

// betterExample says f is a better example than c's: the pi change when there is one, else
// the most common way the defect shows.
func (c *Cause) betterExample(f Finding) bool {
	return f.Kind == Version && c.Example.Kind != Version ||
		c.Example.Kind != Version && len(c.Shows) > 0 && f.Signature == c.Shows[0] && c.Example.Signature != f.Signature
}

// RuleOrder is a rule's place in docs/SEMANTICS.md (an unknown id last), to list rules in
// the contract's order.
func RuleOrder(id string) int {
	if i, ok := ruleIndex()[id]; ok {
		return i
	}
	return 1 << 30
}

// ruleIndex maps each rule id of docs/SEMANTICS.md to its place, read once.
var ruleIndex = sync.OnceValue(func() map[string]int {
	out := map[string]int{}
	for i, r := range docs.Rules() {
		out[r.ID] = i
	}
	return out
})

// ruleOf names a cause's rule: the rule most of its findings give.
func ruleOf(rules map[string]int) string {
	best, bestN := "", 0
	for _, r := range sortedKeys(rules) {
		if rules[r] > bestN {
			best, bestN = r, rules[r]
		}
	}
	return best
}

// Text renders a cause for people: its title, rule and scenario count, its example finding
// in full (each line prefixed with indent), then one line per scenario it touches.
func (c Cause) Text(indent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s — %s\n", indent, c.Title, c.Count())
	fmt.Fprintf(&b, "%s  rule: %s\n", indent, indentRest(wrap(c.Rule, ruleWidth-len(indent)), indent+"        "))
	fmt.Fprintf(&b, "%s  signature: %s\n", indent, c.Signature)
	fmt.Fprintf(&b, "%s  for example, in %s:\n", indent, c.ExampleScenario)
	b.WriteString(c.Example.Text(indent + "    "))
	return b.String()
}

// Count says how many scenarios the cause explains, and in how many more it is seen (there
// a consequence of, or hidden by, another cause): "8 scenarios (seen in 191)".
func (c Cause) Count() string {
	n := len(c.Explains)
	out := fmt.Sprintf("%d scenario%s", n, plural(n))
	if len(c.Scenarios) > n {
		out += fmt.Sprintf(" (seen in %d)", len(c.Scenarios))
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Symptom is a kind of finding seen only after the first divergence of the scenarios it is
// in, and that no cause's signature names: it may be a consequence of those causes, or a
// defect of its own hidden behind them.
type Symptom struct {
	// Title says it: the field and how it differs, an invariant, a region.
	Title string `json:"title"`
	// Where lists the entry keys it shows on ("event tool_execution_end"), for a field.
	Where []string `json:"where,omitempty"`
	// Scenarios are the scenarios showing it.
	Scenarios []string `json:"scenarios"`
}

// Symptoms groups the findings whose signature is no cause's (those after a scenario's first
// divergence, and the root findings of scenarios another cause explains, whose defect that
// cause may hide) by their root: fields by name and shape whatever the entry, invariants by
// name. A symptom of the same field as a
// cause's divergence is left out (the same value, carried on). Ranked by scenarios.
func Symptoms(ds []Diagnosis, causes []Cause) []Symptom {
	chosen := map[string]bool{}
	for _, c := range causes {
		chosen[c.Signature] = true
		if c.Divergence != "" {
			chosen[c.Divergence] = true
		}
	}
	causeKeys := map[string]bool{}
	for _, d := range ds {
		for _, f := range d.Findings {
			if chosen[f.CauseKey()] {
				causeKeys[symptomKey(f)] = true
			}
		}
	}
	type acc struct {
		where     map[string]bool
		scenarios []string
	}
	byKey := map[string]*acc{}
	for _, d := range ds {
		if slices.ContainsFunc(d.Findings, func(f Finding) bool { return f.Kind == Version }) {
			continue // the trace is the reference's with pi's changes turned: nothing else is wrong
		}
		seen := map[string]bool{}
		for _, f := range d.Findings {
			k := symptomKey(f)
			if f.Kind == Expectation || chosen[f.CauseKey()] || causeKeys[k] {
				continue
			}
			a := byKey[k]
			if a == nil {
				a = &acc{where: map[string]bool{}}
				byKey[k] = a
			}
			if where, _, _ := strings.Cut(f.Signature, ": "); f.Kind == Divergence && f.Path != "" && !strings.HasPrefix(where, "R-") {
				// The entry's key; a field with a rule of its own (fieldRules) is one symptom
				// wherever it is.
				a.where[where] = true
			}
			if !seen[k] {
				seen[k] = true
				a.scenarios = append(a.scenarios, d.Scenario.Name)
			}
		}
	}
	var out []Symptom
	for _, k := range sortedKeys(byKey) {
		a := byKey[k]
		out = append(out, Symptom{Title: k, Where: sortedKeys(a.where), Scenarios: a.scenarios})
	}
	slices.SortStableFunc(out, func(a, b Symptom) int { return len(b.Scenarios) - len(a.Scenarios) })
	return out
}

// Shape is what a finding shows regardless of where: a field's name and how it differs
// ("thinkingLevel absent"), an invariant's headline, the kind of an unmet expectation
// ("unmet expectation timeline"), else the signature. Findings of one
// shape on several kinds of entries are one symptom.
func (f Finding) Shape() string {
	switch {
	case f.Kind == Divergence && f.Path != "":
		_, shape, _ := strings.Cut(f.Signature, ": ")
		if i := strings.LastIndexByte(shape, ' '); i >= 0 {
			shape = shape[i+1:]
		}
		return fieldName(f.Path) + " " + shape
	case f.Kind == Invariant:
		return f.Headline
	case f.Kind == Expectation:
		what, _, _ := strings.Cut(f.Signature, " of ")
		return "unmet " + what
	}
	return f.Signature
}

func symptomKey(f Finding) string { return f.Shape() }
