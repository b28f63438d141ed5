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
	// Signature is the findings' shared signature.
	Signature string `json:"signature"`
	Kind      Kind   `json:"kind"`
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

// Group picks the causes of a suite's diagnoses, ranked by the number of scenarios they
// explain, then by those they touch (most first; then by signature). First each pi behaviour
// change a scenario shows (a Version finding) becomes a cause explaining every scenario that
// shows it. Then it proceeds greedily: the signature that is a root
// finding (not a consequence of an earlier divergence) in the most scenarios not yet
// explained becomes a cause and explains them, until every scenario with findings is
// explained. A finding after the first divergence never explains a scenario: it may be the
// divergence's consequence, and two defects often end in the same symptom. Ties go to
// invariants, which name their rule, then to the signature that is the earliest root (an
// error, else at the earliest entry) in more of the scenarios it would explain, then to the
// signature with more root findings in them, then to the first signature in order. Group
// sets each finding's Cause: the title of the cause of its signature, or else of the cause
// that explains its scenario.
func Group(ds []Diagnosis) []Cause {
	type stat struct {
		scenarios []int        // indexes into ds, each once
		roots     []int        // the scenarios where a finding of this signature is not a consequence
		primary   map[int]int  // per scenario, the findings of this signature that are not consequences
		earliest  map[int]bool // the scenarios where this signature is the earliest root
		kind      Kind
	}
	stats := map[string]*stat{}
	for i, d := range ds {
		seen, root := map[string]bool{}, map[string]bool{}
		anyRoot := false
		first, firstAt := "", 0 // the earliest root finding's signature, and its entry
		for _, f := range d.Findings {
			anyRoot = anyRoot || !f.Consequence
			if at := position(f); !f.Consequence && (first == "" || at < firstAt) {
				first, firstAt = f.Signature, at
			}
		}
		for _, f := range d.Findings {
			s := stats[f.Signature]
			if s == nil {
				s = &stat{kind: f.Kind, primary: map[int]int{}, earliest: map[int]bool{}}
				stats[f.Signature] = s
			}
			if !f.Consequence {
				s.primary[i]++
			}
			if f.Signature == first {
				s.earliest[i] = true
			}
			if !seen[f.Signature] {
				seen[f.Signature] = true
				s.scenarios = append(s.scenarios, i)
			}
			// A scenario whose findings are all consequences (none should be) lets any
			// of them explain it.
			if (!f.Consequence || !anyRoot) && !root[f.Signature] {
				root[f.Signature] = true
				s.roots = append(s.roots, i)
			}
		}
	}
	explained := make([]int, len(ds)) // index+1 of the cause explaining ds[i]; 0: none yet
	var chosen []string
	// Each pi behaviour change a scenario's trace shows (a Version finding) is a cause of its
	// own and explains every scenario showing it, several changes a scenario each: the trace
	// is the reference's with all of them turned, so each is a defect to fix.
	versions := map[string]map[int]bool{}
	for _, sig := range sortedKeys(stats) {
		if s := stats[sig]; s.kind == Version && len(s.roots) > 0 {
			versions[sig] = map[int]bool{}
			for _, i := range s.roots {
				versions[sig][i] = true
			}
		}
	}
	for _, sig := range sortedKeys(versions) {
		chosen = append(chosen, sig)
		for i := range versions[sig] {
			if explained[i] == 0 {
				explained[i] = len(chosen)
			}
		}
	}
	// explains reports whether cause c (0-based) explains scenario i.
	explains := func(c, i int) bool { return explained[i] == c+1 || versions[chosen[c]][i] }
	for {
		best, bestN, bestE, bestP := "", 0, 0, 0
		for _, sig := range sortedKeys(stats) {
			s := stats[sig]
			n, e, p := 0, 0, 0
			for _, i := range s.roots {
				if explained[i] == 0 {
					n++
					p += s.primary[i]
					if s.earliest[i] {
						e++
					}
				}
			}
			if n == 0 {
				continue
			}
			if best == "" || n > bestN || (n == bestN && better(e, p, s.kind, bestE, bestP, stats[best].kind)) {
				best, bestN, bestE, bestP = sig, n, e, p
			}
		}
		if best == "" {
			break
		}
		chosen = append(chosen, best)
		for _, i := range stats[best].roots {
			if explained[i] == 0 {
				explained[i] = len(chosen)
			}
		}
	}
	causes := make([]Cause, len(chosen))
	for c, sig := range chosen {
		s := stats[sig]
		cause := Cause{Signature: sig, Kind: s.kind}
		rules := map[string]int{}
		families := map[string]bool{}
		ids := map[string]int{} // SEMANTICS rule ids, by how many of the scenarios pin them
		for _, i := range s.scenarios {
			d := ds[i]
			for _, id := range d.Scenario.Rules {
				ids[id]++
			}
			cause.Scenarios = append(cause.Scenarios, d.Scenario.Name)
			if explains(c, i) {
				cause.Explains = append(cause.Explains, d.Scenario.Name)
			}
			if d.Scenario.Family != "" {
				families[d.Scenario.Family] = true
			}
			for _, f := range d.Findings {
				if f.Signature != sig {
					continue
				}
				// The example comes from a scenario the cause explains, as its title does (a
				// cause is chosen for the scenarios it explains, so there is one).
				if cause.ExampleScenario == "" && explains(c, i) {
					cause.Example, cause.ExampleScenario = f, d.Scenario.Name
				}
				rules[f.Rule]++
				break
			}
		}
		cause.Title = cause.Example.Headline
		cause.Rule = ruleOf(rules, len(s.scenarios), families)
		if s.kind == Divergence && !ownRule(sig) {
			// A divergence breaks what its scenarios pin: the rule ids most of them share.
			var common []string
			for _, id := range sortedKeys(ids) {
				if ids[id]*2 > len(s.scenarios) {
					common = append(common, id)
				}
			}
			// Most pinned first; among equals, in the contract's order (the loop's steps).
			slices.SortStableFunc(common, func(a, b string) int {
				if ids[a] != ids[b] {
					return ids[b] - ids[a]
				}
				return RuleOrder(a) - RuleOrder(b)
			})
			if len(common) > 0 {
				parts := make([]string, len(common))
				for k, id := range common {
					parts[k] = RuleTitles([]string{id})
					if ids[id] < len(s.scenarios) {
						parts[k] += fmt.Sprintf(" (pinned by %d of the %d scenarios)", ids[id], len(s.scenarios))
					}
				}
				cause.Rule = strings.Join(parts, "; ")
			}
		}
		if inv, ok := invariant.ByName(cause.Example.Invariant); ok && cause.Rule == invariantRule(inv, "", false) {
			// The cause states the invariant in full, once.
			cause.Rule = invariantRule(inv, "", true)
		}
		if s.kind == Invariant {
			// Say what differs, when one divergence is a root finding in every scenario the
			// invariant explains: the rule names it, the divergence shows it.
			if sig, head := sharedDivergence(ds, explained, c+1, cause.ExampleScenario); sig != "" {
				cause.Title = head + " — " + cause.Example.Headline
				cause.Divergence = sig
			}
		}
		causes[c] = cause
	}
	titles := map[string]string{}
	for _, c := range causes {
		titles[c.Signature] = c.Title
	}
	for i := range ds {
		for j := range ds[i].Findings {
			f := &ds[i].Findings[j]
			if t, ok := titles[f.Signature]; ok {
				f.Cause = t
			} else if explained[i] > 0 {
				f.Cause = causes[explained[i]-1].Title
			}
		}
	}
	slices.SortStableFunc(causes, func(a, b Cause) int {
		// A cause explaining few scenarios but touching many, as a consequence of others,
		// comes after the causes it follows from.
		if len(a.Explains) != len(b.Explains) {
			return len(b.Explains) - len(a.Explains)
		}
		if len(a.Scenarios) != len(b.Scenarios) {
			return len(b.Scenarios) - len(a.Scenarios)
		}
		return strings.Compare(a.Signature, b.Signature)
	})
	return causes
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

// ownRule reports whether a divergence's signature carries its own rule, which its scenarios'
// rules must not replace: a field one rule governs (fieldRules), a run that fails.
func ownRule(sig string) bool {
	return strings.HasPrefix(sig, "R-") || strings.HasPrefix(sig, runFails) || strings.HasPrefix(sig, runReturns)
}

// position orders root findings by where they show: an error (no entry) first, then by the
// implementation's entry, else the reference's.
func position(f Finding) int {
	switch {
	case f.At.Actual > 0:
		return f.At.Actual
	case f.At.Expected > 0:
		return f.At.Expected
	}
	return 0
}

// better breaks a tie between two signatures explaining as many scenarios: an invariant
// (it names its rule), then the one that is the earliest root in more of those scenarios (a
// termination bug breaks termination before queue timing), then the one with more root
// findings in them; a tie left goes to the signature first in order.
func better(earliest, primary int, kind Kind, bestEarliest, bestPrimary int, bestKind Kind) bool {
	if (kind == Invariant) != (bestKind == Invariant) {
		return kind == Invariant
	}
	if earliest != bestEarliest {
		return earliest > bestEarliest
	}
	return primary > bestPrimary
}

// ruleOf names a cause's rule: the rule most of its scenarios' findings give, or the
// families the scenarios come from.
func ruleOf(rules map[string]int, n int, families map[string]bool) string {
	best, bestN := "", 0
	for _, r := range sortedKeys(rules) {
		if rules[r] > bestN {
			best, bestN = r, rules[r]
		}
	}
	if bestN*2 > n || len(rules) == 1 {
		return best
	}
	fams := sortedKeys(families)
	if len(fams) == 0 {
		return fmt.Sprintf("the reference's trace (%d different scenario rules)", len(rules))
	}
	return fmt.Sprintf("the reference's trace, across %d scenario rules of the families %s", len(rules), strings.Join(fams, ", "))
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

// sharedDivergence is the divergence signature that is a root finding in most (more than
// half) of the scenarios explained by cause number c, and its headline; "" when there is
// none.
func sharedDivergence(ds []Diagnosis, explained []int, c int, example string) (sig, headline string) {
	count := map[string]int{}
	heads := map[string]string{}
	n := 0
	for i, d := range ds {
		if explained[i] != c {
			continue
		}
		n++
		seen := map[string]bool{}
		for _, f := range d.Findings {
			if f.Kind == Divergence && !f.Consequence && !seen[f.Signature] {
				seen[f.Signature] = true
				count[f.Signature]++
				// The headline of the example's scenario, else of the first that has it.
				if heads[f.Signature] == "" || d.Scenario.Name == example {
					heads[f.Signature] = f.Headline
				}
			}
		}
	}
	best := 0
	for _, k := range sortedKeys(count) {
		if count[k] > best {
			sig, headline, best = k, heads[k], count[k]
		}
	}
	if best*2 <= n {
		return "", ""
	}
	return sig, headline
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
			if chosen[f.Signature] {
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
			if f.Kind == Expectation || chosen[f.Signature] || causeKeys[k] {
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
