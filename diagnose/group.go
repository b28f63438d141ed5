package diagnose

import (
	"fmt"
	"slices"
	"strings"
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
	// scenario is explained by exactly one cause.
	Explains []string `json:"explains"`
	// Example is the finding in the first of Scenarios, in full.
	Example Finding `json:"example"`
	// ExampleScenario is the scenario Example comes from.
	ExampleScenario string `json:"exampleScenario"`
}

// Group picks the causes of a suite's diagnoses, ranked by the number of scenarios they
// touch (most first; then by signature). It proceeds greedily: the signature found in the
// most scenarios not yet explained becomes a cause and explains them, until every scenario
// with findings is explained. Ties go to the signature that is more often a scenario's
// first (not a consequence) finding, then to invariants, which name their rule. Group sets
// each finding's Cause: the title of the cause of its signature, or else of the cause that
// explains its scenario.
func Group(ds []Diagnosis) []Cause {
	type stat struct {
		scenarios []int // indexes into ds, each once
		primary   int   // findings of this signature that are not consequences
		kind      Kind
	}
	stats := map[string]*stat{}
	for i, d := range ds {
		seen := map[string]bool{}
		for _, f := range d.Findings {
			s := stats[f.Signature]
			if s == nil {
				s = &stat{kind: f.Kind}
				stats[f.Signature] = s
			}
			if !f.Consequence {
				s.primary++
			}
			if !seen[f.Signature] {
				seen[f.Signature] = true
				s.scenarios = append(s.scenarios, i)
			}
		}
	}
	explained := make([]int, len(ds)) // index+1 of the cause explaining ds[i]; 0: none yet
	var chosen []string
	for {
		best, bestN := "", 0
		for _, sig := range sortedKeys(stats) {
			s := stats[sig]
			n := 0
			for _, i := range s.scenarios {
				if explained[i] == 0 {
					n++
				}
			}
			if n == 0 {
				continue
			}
			if best == "" || n > bestN || (n == bestN && better(s.primary, s.kind, stats[best].primary, stats[best].kind)) {
				best, bestN = sig, n
			}
		}
		if best == "" {
			break
		}
		chosen = append(chosen, best)
		for _, i := range stats[best].scenarios {
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
		for _, i := range s.scenarios {
			d := ds[i]
			cause.Scenarios = append(cause.Scenarios, d.Scenario.Name)
			if explained[i] == c+1 {
				cause.Explains = append(cause.Explains, d.Scenario.Name)
			}
			if d.Scenario.Family != "" {
				families[d.Scenario.Family] = true
			}
			for _, f := range d.Findings {
				if f.Signature != sig {
					continue
				}
				if cause.ExampleScenario == "" {
					cause.Example, cause.ExampleScenario = f, d.Scenario.Name
				}
				rules[f.Rule]++
				break
			}
		}
		cause.Title = cause.Example.Headline
		cause.Rule = ruleOf(rules, len(s.scenarios), families)
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
		if len(a.Scenarios) != len(b.Scenarios) {
			return len(b.Scenarios) - len(a.Scenarios)
		}
		return strings.Compare(a.Signature, b.Signature)
	})
	return causes
}

// better breaks a tie between two signatures explaining as many scenarios: the one more
// often a first finding, then an invariant (it names its rule).
func better(primary int, kind Kind, bestPrimary int, bestKind Kind) bool {
	if primary != bestPrimary {
		return primary > bestPrimary
	}
	return kind == Invariant && bestKind != Invariant
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
	fmt.Fprintf(&b, "%s%s — %d scenario%s\n", indent, c.Title, len(c.Scenarios), plural(len(c.Scenarios)))
	fmt.Fprintf(&b, "%s  rule: %s\n", indent, indentRest(c.Rule, indent+"        "))
	fmt.Fprintf(&b, "%s  signature: %s\n", indent, c.Signature)
	fmt.Fprintf(&b, "%s  for example, in %s:\n", indent, c.ExampleScenario)
	b.WriteString(c.Example.Text(indent + "    "))
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
