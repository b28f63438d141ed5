package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/invariant"
	curatedsuite "github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// noThinkingLevel drops thinkingLevel from the assistant's final message event, the way pi
// 0.87 did: one defect met by nearly every scenario.
var noThinkingLevel = func(kind string, data json.RawMessage) json.RawMessage {
	if kind != sim.NotifyEvent || !bytes.Contains(data, []byte(`"message_end"`)) {
		return data
	}
	var ev map[string]any
	if json.Unmarshal(data, &ev) != nil {
		return data
	}
	if m, ok := ev["message"].(map[string]any); ok && m["role"] == "assistant" {
		delete(m, "thinkingLevel")
	}
	out, _ := json.Marshal(ev)
	return out
}

func curatedWithRules(t *testing.T) ([]*sim.Scenario, map[string]diagnose.Scenario) {
	t.Helper()
	files, err := curatedsuite.Suite()
	if err != nil {
		t.Fatal(err)
	}
	return curatedsuite.Scenarios(files), diagnose.FromFiles(files)
}

// TestOneDefectIsOneCauseAndTheReportIsBoundedByCauses: a defect failing almost every
// scenario is one cause, and the text report is one block for it plus a line per scenario.
func TestOneDefectIsOneCauseAndTheReportIsBoundedByCauses(t *testing.T) {
	t.Parallel() // whole-suite runs, each on one core: two at a time
	suite, desc := curatedWithRules(t)
	impl := rewriting{Reference: sim.NewReference(), rewrite: noThinkingLevel}
	r := conformance.Verify(context.Background(), suite, impl, conformance.Options{Scenarios: desc})
	if r.Failed < 100 {
		t.Fatalf("only %d scenarios failed", r.Failed)
	}
	if len(r.Causes) != 1 {
		for _, c := range r.Causes {
			t.Logf("cause %s — %d", c.Title, len(c.Scenarios))
		}
		t.Fatalf("%d causes, want 1", len(r.Causes))
	}
	c := r.Causes[0]
	if len(c.Scenarios) != r.Failed || !strings.Contains(c.Title, "thinkingLevel absent on event message_end assistant") {
		t.Errorf("cause %q touches %d scenarios of %d failed", c.Title, len(c.Scenarios), r.Failed)
	}
	for _, res := range r.Results {
		for _, f := range res.Findings {
			if f.Cause != c.Title {
				t.Fatalf("%s: finding %q has cause %q", res.Scenario, f.Signature, f.Cause)
			}
		}
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(text.String(), "\n")
	// One line per scenario, the first failure's findings in full, the cause block (its
	// rule in full, wrapped, and its list of scenarios wrapping two to four to a line), the
	// profile and the closing line.
	if limit := len(r.Results) + r.Failed/2 + 70; lines > limit {
		t.Errorf("the report has %d lines for %d scenarios and one cause (limit %d):\n%s", lines, len(r.Results), limit, text.String())
	}
	if !strings.HasSuffix(text.String(), "\n"+r.Summary()+"\n") {
		t.Errorf("the report does not end with the closing line %q", r.Summary())
	}
}

func TestJSONAndJUnitCarryEveryFinding(t *testing.T) {
	suite, desc := curatedWithRules(t)
	suite = suite[:20]
	impl := rewriting{Reference: sim.NewReference(), rewrite: noThinkingLevel}
	r := conformance.Verify(context.Background(), suite, impl, conformance.Options{Scenarios: desc,
		ExpectFail: map[string]bool{suite[0].Name: true}})
	total := 0
	for _, res := range r.Results {
		total += len(res.Findings)
	}
	if total == 0 || r.ExpectedFailures != 1 {
		t.Fatalf("%d findings, %d expected failures", total, r.ExpectedFailures)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary          string
		ExpectedFailures int
		Causes           []struct {
			Rank      int
			Title     string
			Rule      string
			Scenarios []string
		}
		Families   []conformance.Tally
		Invariants []conformance.Tally
		Results    []struct {
			Scenario string
			Status   string
			Findings []diagnose.Finding
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, res := range doc.Results {
		n += len(res.Findings)
	}
	if n != total || doc.Summary != r.Summary() || doc.ExpectedFailures != 1 || len(doc.Causes) != 1 || doc.Causes[0].Rank != 1 ||
		doc.Causes[0].Rule == "" || len(doc.Families) == 0 || len(doc.Invariants) != len(invariant.All()) {
		t.Errorf("JSON: %d findings of %d, summary %q, causes %+v, %d families, %d invariants", n, total, doc.Summary, doc.Causes, len(doc.Families), len(doc.Invariants))
	}
	var xb bytes.Buffer
	if err := conformance.WriteJUnit(&xb, r); err != nil {
		t.Fatal(err)
	}
	var ju struct {
		Suites []struct {
			Skipped    int `xml:"skipped,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct {
					Type string `xml:"type,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(xb.Bytes(), &ju); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for _, p := range ju.Suites[0].Properties {
		props[p.Name] = p.Value
	}
	if props["expected-failures"] != "1" || props["skipped"] != "0" || props["causes"] != "1" {
		t.Errorf("JUnit properties %v", props)
	}
	for i, c := range ju.Suites[0].Cases {
		res := r.Results[i]
		switch {
		case res.Status == conformance.ExpectedFail:
			if c.Skipped == nil || c.Skipped.Type != "expected-failure" {
				t.Errorf("%s: expected failure as %+v", c.Name, c.Skipped)
			}
		case res.Status == conformance.Fail:
			if c.Failure == nil || strings.Count(c.Failure.Text, "\ndivergence")+strings.Count(c.Failure.Text, "\ninvariant")+strings.Count(c.Failure.Text, "\nversion") < len(res.Findings) {
				t.Errorf("%s: the failure does not hold its %d findings:\n%v", c.Name, len(res.Findings), c.Failure)
			}
		}
	}
}

func TestCheckNamesNamesTheNearest(t *testing.T) {
	suite := []string{"truncation/basic", "queues/steering-all"}
	if _, err := conformance.CheckNames([]string{"truncation/basc"}, suite); err == nil || !strings.Contains(err.Error(), `did you mean "truncation/basic"`) {
		t.Errorf("error %v", err)
	}
	got, err := conformance.CheckNames([]string{"queues/steering-all"}, suite)
	if err != nil || !got["queues/steering-all"] || len(got) != 1 {
		t.Errorf("got %v, %v", got, err)
	}
}

func TestImplementationThatCannotStartIsOneError(t *testing.T) {
	suite, _ := curatedWithRules(t)
	p := &protocol.Process{Command: []string{"/nonexistent/adapter"}}
	calls := 0
	r := conformance.Verify(context.Background(), suite[:5], p, conformance.Options{OnResult: func(conformance.Result) { calls++ }})
	if r.StartError == "" || r.OK() || r.Failed != 0 || calls != 0 {
		t.Errorf("start error %q, ok %v, %d failed, %d results reported", r.StartError, r.OK(), r.Failed, calls)
	}
}

// TestProgressSaysWhereAFoldedKindWasShown: a finding of a kind shown in full under an
// earlier scenario is folded into a line naming that scenario; one of a kind shown earlier
// in the same scenario is folded "above".
func TestProgressSaysWhereAFoldedKindWasShown(t *testing.T) {
	f := diagnose.Finding{Kind: diagnose.Divergence, Signature: "event x: y differs", Headline: "y differs on event x", Says: "y differs", At: diagnose.Position{Actual: 3, Expected: 3}}
	twice := []diagnose.Finding{f, f}
	twice[1].At = diagnose.Position{Actual: 9, Expected: 9}
	var p conformance.Progress
	first := p.Text(conformance.Result{Scenario: "fam/one", Status: conformance.Fail, Reason: "traces differ", Findings: twice})
	if !strings.Contains(first, "and 1 finding of kinds shown above: ") {
		t.Errorf("the same scenario:\n%s", first)
	}
	second := p.Text(conformance.Result{Scenario: "fam/two", Status: conformance.Fail, Reason: "traces differ", Findings: []diagnose.Finding{f}})
	if !strings.Contains(second, "all of kinds shown in full above (the first under fam/one): ") {
		t.Errorf("a later scenario:\n%s", second)
	}
	// A kind repeated at two hundred entries names five of them.
	var many []diagnose.Finding
	for i := range 200 {
		g := f
		g.At = diagnose.Position{Actual: 10 + i, Expected: 10 + i}
		many = append(many, g)
	}
	third := p.Text(conformance.Result{Scenario: "fam/three", Status: conformance.Fail, Reason: "traces differ", Findings: many})
	if !strings.Contains(third, "(entries 10, 11, 12, 13, 14 and 195 more)") || len(third) > 400 {
		t.Errorf("a kind at many entries:\n%s", third)
	}
	// A finding after the first one, marked as perhaps its consequence, has that first one
	// above it even when it is folded.
	after := diagnose.Finding{Kind: diagnose.Invariant, Signature: "invariant z", Headline: "breaks invariant z", Says: "z", At: diagnose.Position{Actual: 20}, Consequence: true}
	fourth := p.Text(conformance.Result{Scenario: "fam/four", Status: conformance.Fail, Reason: "traces differ", Findings: []diagnose.Finding{f, after}})
	folded, marked := strings.Index(fourth, "1 finding of kinds shown in full above"), strings.Index(fourth, "may be its consequence")
	if folded < 0 || marked < 0 || folded > marked || strings.Contains(fourth, "and 1 finding") {
		t.Errorf("a consequence of a folded finding:\n%s", fourth)
	}
}

// TestRootFindingsComeFirst: a scenario's findings that may be causes are shown before those
// marked as coming after the first divergence, whatever their order in the diagnosis: an
// invariant naming the defect was shown under twenty field differences that followed from it.
func TestRootFindingsComeFirst(t *testing.T) {
	root := diagnose.Finding{Kind: diagnose.Divergence, Signature: "event a moved", Headline: "a moved", Says: "a comes earlier", At: diagnose.Position{Actual: 30, Expected: 31}}
	var fs []diagnose.Finding
	fs = append(fs, root)
	for i := range 3 {
		fs = append(fs, diagnose.Finding{Kind: diagnose.Divergence, Signature: fmt.Sprintf("field m%d differs", i), Headline: fmt.Sprintf("m%d differs", i), Says: fmt.Sprintf("the field m%d differs", i), At: diagnose.Position{Actual: 40 + i, Expected: 40 + i}, Consequence: true})
	}
	fs = append(fs, diagnose.Finding{Kind: diagnose.Invariant, Signature: "invariant agent-queues", Headline: "breaks invariant agent-queues", Says: "one poll took 3 steering messages in one-at-a-time mode", At: diagnose.Position{Actual: 31}})
	var p conformance.Progress
	for _, text := range []string{p.Text(conformance.Result{Scenario: "agent/x", Status: conformance.Fail, Reason: "traces differ", Findings: fs}), conformance.FindingsText(fs, "", 0)} {
		inv, field := strings.Index(text, "one poll took 3"), strings.Index(text, "the field m0 differs")
		if inv < 0 || field < 0 || inv > field || strings.Index(text, "a comes earlier") > inv {
			t.Errorf("the invariant is not shown right after the first divergence:\n%s", text)
		}
	}
}

// TestSkipReasonsGivenOnce: a reason for skipping is given in full under the first scenario it
// skips, later ones name that scenario, and the summary counts the scenarios of each reason.
func TestSkipReasonsGivenOnce(t *testing.T) {
	lacks := "the scenario needs feature agent, which the implementation lacks"
	results := []conformance.Result{
		{Scenario: "agent/a", Status: conformance.Skip, Reason: lacks},
		{Scenario: "agent/b", Status: conformance.Skip, Reason: lacks},
		{Scenario: "queues/c", Status: conformance.Skip, Reason: "the scenario pins behaviour of pi 1.6.0"},
		{Scenario: "agent/d", Status: conformance.Skip, Reason: lacks},
	}
	var p conformance.Progress
	var lines []string
	for _, res := range results {
		lines = append(lines, p.Text(res))
	}
	want := []string{
		"SKIP  agent/a: " + lacks + "\n",
		"SKIP  agent/b: as agent/a\n",
		"SKIP  queues/c: the scenario pins behaviour of pi 1.6.0\n",
		"SKIP  agent/d: as agent/a\n",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("progress:\n%q\nwant\n%q", lines, want)
	}
	r := conformance.Report{Results: results, Skipped: len(results)}
	var b strings.Builder
	if err := r.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "skipped, by reason:\n    3  "+lacks+"\n    1  the scenario pins") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// TestSymptomsNameAScenario: a symptom line names the first scenario that shows it, where the
// reader finds it in full (a stranger's review: "text differs on call stream, … — 6 scenarios"
// gave nowhere to look).
func TestSymptomsNameAScenario(t *testing.T) {
	r := conformance.Report{Failed: 2, Symptoms: []diagnose.Symptom{{Title: "text differs", Where: []string{"call stream"}, Scenarios: []string{"fam/a", "fam/b"}}}}
	var b strings.Builder
	if err := r.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  text differs on call stream — 2 scenarios, first fam/a\n") {
		t.Errorf("summary:\n%s", b.String())
	}
}
