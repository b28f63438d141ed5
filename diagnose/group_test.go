package diagnose_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/diagnose"
)

func finding(sig string, consequence bool, rule string) diagnose.Finding {
	return diagnose.Finding{Kind: diagnose.Divergence, Signature: sig, Headline: "title of " + sig, Consequence: consequence, Rule: rule}
}

func TestGroupPicksTheFewestCausesRankedByScenarios(t *testing.T) {
	ds := []diagnose.Diagnosis{
		{Scenario: diagnose.Scenario{Name: "s1", Family: "f"}, Findings: []diagnose.Finding{finding("A", false, "r1"), finding("C", true, "r1")}},
		{Scenario: diagnose.Scenario{Name: "s2", Family: "f"}, Findings: []diagnose.Finding{finding("A", false, "r2"), finding("B", true, "r2")}},
		{Scenario: diagnose.Scenario{Name: "s3", Family: "g"}, Findings: []diagnose.Finding{finding("A", false, "r3")}},
		{Scenario: diagnose.Scenario{Name: "s4", Family: "g"}, Findings: []diagnose.Finding{finding("B", false, "r4")}},
		{Scenario: diagnose.Scenario{Name: "s5", Family: "g"}},
	}
	causes := diagnose.Group(ds)
	if len(causes) != 2 {
		t.Fatalf("want 2 causes (A explains s1-s3, B explains s4), got %d: %+v", len(causes), causes)
	}
	a, b := causes[0], causes[1]
	if a.Signature != "A" || !slices.Equal(a.Scenarios, []string{"s1", "s2", "s3"}) || !slices.Equal(a.Explains, a.Scenarios) {
		t.Errorf("first cause %+v", a)
	}
	if b.Signature != "B" || !slices.Equal(b.Scenarios, []string{"s2", "s4"}) || !slices.Equal(b.Explains, []string{"s4"}) {
		t.Errorf("second cause %+v", b)
	}
	// The example comes from a scenario the cause explains, not from s2, where B only
	// follows A's divergence.
	if b.ExampleScenario != "s4" || b.Example.Consequence {
		t.Errorf("second cause's example from %s (a consequence: %v)", b.ExampleScenario, b.Example.Consequence)
	}
	// Three different rules over two families: the rule names the families.
	if !strings.Contains(a.Rule, "f, g") {
		t.Errorf("rule of A %q", a.Rule)
	}
	if ds[0].Findings[1].Cause != "title of A" || ds[1].Findings[1].Cause != "title of B" {
		t.Errorf("finding causes %q %q", ds[0].Findings[1].Cause, ds[1].Findings[1].Cause)
	}
}

func TestGroupPrefersInvariantsThenFirstFindingsOnTies(t *testing.T) {
	ds := []diagnose.Diagnosis{
		{Scenario: diagnose.Scenario{Name: "s1"}, Findings: []diagnose.Finding{finding("root", false, "r"), finding("after", true, "r")}},
		{Scenario: diagnose.Scenario{Name: "s2"}, Findings: []diagnose.Finding{finding("root", false, "r"), finding("after", true, "r")}},
	}
	causes := diagnose.Group(ds)
	if len(causes) != 1 || causes[0].Signature != "root" || causes[0].Rule != "r" {
		t.Fatalf("causes %+v", causes)
	}
	inv := diagnose.Finding{Kind: diagnose.Invariant, Signature: "invariant x", Rule: "x: a rule"}
	for i := range ds {
		ds[i].Findings = append(ds[i].Findings, inv)
	}
	causes = diagnose.Group(ds)
	if len(causes) != 1 || causes[0].Signature != "invariant x" || causes[0].Rule != "x: a rule" {
		t.Fatalf("causes %+v", causes)
	}
}

func TestGroupNeverExplainsByAConsequence(t *testing.T) {
	// Two defects end in the same symptom after their first divergences: two causes.
	ds := []diagnose.Diagnosis{
		{Scenario: diagnose.Scenario{Name: "s1"}, Findings: []diagnose.Finding{finding("A", false, "r"), finding("symptom", true, "r")}},
		{Scenario: diagnose.Scenario{Name: "s2"}, Findings: []diagnose.Finding{finding("B", false, "r"), finding("symptom", true, "r")}},
	}
	causes := diagnose.Group(ds)
	if len(causes) != 2 || causes[0].Signature != "A" || causes[1].Signature != "B" {
		t.Fatalf("causes %+v", causes)
	}
	if ds[0].Findings[1].Cause != "title of A" {
		t.Errorf("the symptom's cause %q, want the cause of its scenario", ds[0].Findings[1].Cause)
	}
}

// TestGroupNamesADivergenceByTheRuleIdsMostScenariosPin: a divergence-only cause cites the
// SEMANTICS rule ids most of its scenarios pin, with their titles, and says when not all do.
func TestGroupNamesADivergenceByTheRuleIdsMostScenariosPin(t *testing.T) {
	pins := func(name string, ids ...string) diagnose.Diagnosis {
		return diagnose.Diagnosis{Scenario: diagnose.Scenario{Name: name, Family: "f", Rules: ids},
			Findings: []diagnose.Finding{finding("missing call finishTurn", false, "r-"+name)}}
	}
	causes := diagnose.Group([]diagnose.Diagnosis{
		pins("s1", "R-FINISH-IGNORED", "R-EXIT-HARD"),
		pins("s2", "R-FINISH-IGNORED"),
		pins("s3", "R-STREAM-THINKING-LEVEL"),
	})
	if len(causes) != 1 {
		t.Fatalf("causes %+v", causes)
	}
	rule := causes[0].Rule
	if !strings.HasPrefix(rule, "R-FINISH-IGNORED (") || strings.Contains(rule, "R-EXIT-HARD") ||
		!strings.HasSuffix(rule, "(pinned by 2 of the 3 scenarios)") {
		t.Errorf("rule %q", rule)
	}
	if title := diagnose.RuleTitles([]string{"R-NOT-A-RULE"}); title != "R-NOT-A-RULE" {
		t.Errorf("an unknown id is named as it is: %q", title)
	}
}

// TestGroupPrefersTheEarliestRootOnTies: two invariants broken in the same scenarios, both
// root findings: the one broken earlier is the cause (a termination bug breaks termination
// at the turn's end, then queue timing at the polls after it).
func TestGroupPrefersTheEarliestRootOnTies(t *testing.T) {
	inv := func(name string, at int) diagnose.Finding {
		return diagnose.Finding{Kind: diagnose.Invariant, Signature: "invariant " + name, Rule: name, At: diagnose.Position{Actual: at}}
	}
	var ds []diagnose.Diagnosis
	for _, name := range []string{"s1", "s2"} {
		ds = append(ds, diagnose.Diagnosis{Scenario: diagnose.Scenario{Name: name}, Findings: []diagnose.Finding{inv("a-later", 41), inv("b-earlier", 39)}})
	}
	causes := diagnose.Group(ds)
	if len(causes) != 1 || causes[0].Signature != "invariant b-earlier" {
		t.Fatalf("causes %+v", causes)
	}
}

// TestACauseRanksTheRulesItsScenariosPin: the rules most of a divergence's scenarios pin,
// the most pinned first, equals in the contract's order, each with its own count.
func TestACauseRanksTheRulesItsScenariosPin(t *testing.T) {
	var ds []diagnose.Diagnosis
	for i, rules := range [][]string{{"R-TIME-DURATION", "R-TOOL-AFTER"}, {"R-TIME-DURATION", "R-TOOL-AFTER"}, {"R-TOOL-AFTER"}} {
		sc := diagnose.Scenario{Name: fmt.Sprintf("s%d", i), Rules: rules}
		ds = append(ds, diagnose.Diagnosis{Scenario: sc, Findings: []diagnose.Finding{finding("A", false, "r")}})
	}
	want := "R-TOOL-AFTER (afterToolCall); R-TIME-DURATION (durationMs) (pinned by 2 of the 3 scenarios)"
	if causes := diagnose.Group(ds); len(causes) != 1 || causes[0].Rule != want {
		t.Fatalf("causes %+v, want rule %q", causes, want)
	}
	ds[2].Scenario.Rules = []string{"R-TIME-DURATION"}
	ds[1].Scenario.Rules = []string{"R-TOOL-AFTER"}
	want = "R-TOOL-AFTER (afterToolCall) (pinned by 2 of the 3 scenarios); R-TIME-DURATION (durationMs) (pinned by 2 of the 3 scenarios)"
	if causes := diagnose.Group(ds); len(causes) != 1 || causes[0].Rule != want {
		t.Fatalf("causes %+v, want rule %q", causes, want)
	}
}
