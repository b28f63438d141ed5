package diagnose_test

import (
	"slices"
	"testing"

	"github.com/turnstile-dev/turnstile/diagnose"
)

func finding(sig string, consequence bool, rule string) diagnose.Finding {
	return diagnose.Finding{Kind: diagnose.Divergence, Signature: sig, Headline: "title of " + sig, Consequence: consequence, Rule: rule}
}

// TestGroupMakesEveryRootACause: a signature that is a root finding somewhere is a cause,
// explaining where it is a root; one seen only as a consequence is not; causes rank by the
// scenarios they are seen in.
func TestGroupMakesEveryRootACause(t *testing.T) {
	ds := []diagnose.Diagnosis{
		{Scenario: diagnose.Scenario{Name: "s1", Family: "f"}, Findings: []diagnose.Finding{finding("A", false, "r1"), finding("C", true, "r1")}},
		{Scenario: diagnose.Scenario{Name: "s2", Family: "f"}, Findings: []diagnose.Finding{finding("A", false, "r1"), finding("B", true, "r2")}},
		{Scenario: diagnose.Scenario{Name: "s3", Family: "g"}, Findings: []diagnose.Finding{finding("A", false, "r1")}},
		{Scenario: diagnose.Scenario{Name: "s4", Family: "g"}, Findings: []diagnose.Finding{finding("B", false, "r2")}},
		{Scenario: diagnose.Scenario{Name: "s5", Family: "g"}},
	}
	causes := diagnose.Group(ds)
	if len(causes) != 2 {
		t.Fatalf("want 2 causes (A explains s1-s3, B explains s4), got %d: %+v", len(causes), causes)
	}
	a, b := causes[0], causes[1]
	if a.Signature != "A" || !slices.Equal(a.Scenarios, []string{"s1", "s2", "s3"}) || !slices.Equal(a.Explains, a.Scenarios) || a.Rule != "r1" {
		t.Errorf("first cause %+v", a)
	}
	if b.Signature != "B" || !slices.Equal(b.Scenarios, []string{"s2", "s4"}) || !slices.Equal(b.Explains, []string{"s4"}) || b.Rule != "r2" {
		t.Errorf("second cause %+v", b)
	}
	// The example comes from a scenario the cause explains, not from s2, where B follows A.
	if b.ExampleScenario != "s4" || b.Example.Consequence {
		t.Errorf("second cause's example from %s (a consequence: %v)", b.ExampleScenario, b.Example.Consequence)
	}
	if ds[0].Findings[1].Cause != "title of A" || ds[1].Findings[1].Cause != "title of B" {
		t.Errorf("finding causes %q %q", ds[0].Findings[1].Cause, ds[1].Findings[1].Cause)
	}
}

// TestTwoRootsOfOneScenarioAreTwoCauses: two defects in the same scenarios, both roots (a
// divergence and an invariant of another rule): two causes, neither hiding the other.
func TestTwoRootsOfOneScenarioAreTwoCauses(t *testing.T) {
	inv := diagnose.Finding{Kind: diagnose.Invariant, Signature: "R-X: invariant x", Rule: "x: a rule", At: diagnose.Position{Actual: 9}}
	var ds []diagnose.Diagnosis
	for _, name := range []string{"s1", "s2"} {
		ds = append(ds, diagnose.Diagnosis{Scenario: diagnose.Scenario{Name: name}, Findings: []diagnose.Finding{finding("root", false, "r"), finding("after", true, "r"), inv}})
	}
	causes := diagnose.Group(ds)
	if len(causes) != 2 || causes[0].Signature != "R-X: invariant x" || causes[1].Signature != "root" {
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
	if title := diagnose.RuleTitles([]string{"R-NOT-A-RULE"}); title != "R-NOT-A-RULE" {
		t.Errorf("an unknown id is named as it is: %q", title)
	}
}
