package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// limited is the reference claiming only some hooks in its hello.
type limited struct {
	*sim.Reference
	hooks []string
}

func (l limited) Hello() (protocol.Hello, error) {
	return protocol.Hello{Name: "limited", Version: "1", Tracks: "1.6.0", Hooks: l.hooks}, nil
}

// rewriting is the reference with its calls' and notifications' JSON rewritten on the way out.
type rewriting struct {
	*sim.Reference
	rewrite func(kind string, data json.RawMessage) json.RawMessage
}

func (r rewriting) Start(setup sim.Setup, port sim.Port) error {
	return r.Reference.Start(setup, rewritingPort{port, r.rewrite})
}

type rewritingPort struct {
	sim.Port
	rewrite func(kind string, data json.RawMessage) json.RawMessage
}

func (p rewritingPort) Call(c sim.Call) sim.Answer {
	c.Data = p.rewrite(c.Kind, c.Data)
	return p.Port.Call(c)
}

func (p rewritingPort) Notify(n sim.Notification) {
	n.Data = p.rewrite(n.Kind, n.Data)
	p.Port.Notify(n)
}

func byName(name string) *sim.Scenario {
	for _, sc := range allScenarios() {
		if sc.Name == name {
			return sc
		}
	}
	panic("no scenario " + name)
}

func TestVerifyServeAdapter(t *testing.T) {
	suite := allScenarios()
	var seen []string
	report := conformance.Verify(context.Background(), suite, selfadapter.Process(t, "serve"), conformance.Options{
		OnResult: func(r conformance.Result) { seen = append(seen, r.Scenario) },
	})
	if !report.OK() || report.Passed != len(suite) {
		var b bytes.Buffer
		_ = report.WriteText(&b)
		t.Fatalf("not all passed:\n%s", b.String())
	}
	if len(seen) != len(suite) {
		t.Errorf("OnResult saw %d results, want %d", len(seen), len(suite))
	}
	if want := strings.Join([]string{itoa(len(suite)), "passed, 0 failed"}, " "); report.Summary() != want {
		t.Errorf("summary %q, want %q", report.Summary(), want)
	}
	if !strings.HasPrefix(report.Implementation, protocol.ReferenceName+" ") || !strings.HasSuffix(report.Implementation, "(tracks pi 1.6.0)") {
		t.Errorf("implementation %q", report.Implementation)
	}
}

func TestVerifySkipsMissingHooks(t *testing.T) {
	impl := limited{Reference: sim.NewReference(), hooks: []string{trace.HookSteering, trace.HookFollowUp}}
	suite := []*sim.Scenario{byName("text-only"), byName("hook-throws")}
	report := conformance.Verify(context.Background(), suite, impl, conformance.Options{})
	if report.Passed != 1 || report.Skipped != 1 || report.Failed != 0 {
		t.Fatalf("got %s", report.Summary())
	}
	res := report.Results[1]
	if res.Status != conformance.Skip || res.Reason != "the scenario installs hook prepareRequest, which the implementation does not support" {
		t.Errorf("result %+v", res)
	}
	if report.Summary() != "1 passed, 0 failed, 1 skipped" {
		t.Errorf("summary %q", report.Summary())
	}
}

func TestVerifyReportsFirstDivergence(t *testing.T) {
	// Drop the first turn_start: every later entry shifts by one.
	dropped := false
	impl := rewriting{Reference: sim.NewReference(), rewrite: func(kind string, data json.RawMessage) json.RawMessage {
		if kind == sim.NotifyEvent && bytes.Contains(data, []byte(`"agent_start"`)) {
			dropped = false // each run alike: the verdict runs a failing scenario twice
		}
		if kind == sim.NotifyEvent && !dropped && bytes.Contains(data, []byte(`"turn_start"`)) {
			dropped = true
			return json.RawMessage(`{"type":"agent_start"}`)
		}
		return data
	}}
	report := conformance.Verify(context.Background(), []*sim.Scenario{byName("text-only")}, impl, conformance.Options{})
	res := report.Results[0]
	if res.Status != conformance.Fail || !strings.HasPrefix(res.Reason, "the traces differ: ") || res.Error != "" {
		t.Fatalf("result %+v", res)
	}
	// The first turn_start is missing and an agent_start is extra: two findings, each named
	// by the rule of its own entry.
	var rules []string
	for _, f := range res.Findings {
		if !f.Consequence || f.Kind == diagnose.Divergence {
			rules = append(rules, f.RuleID+" "+f.Signature)
		}
	}
	if len(rules) != 2 || !strings.Contains(rules[0], "R-RUN-START: extra event agent_start") || !strings.Contains(rules[1], "R-EV-FIRST-TURN: missing event turn_start") {
		t.Errorf("findings %q", rules)
	}
	if report.Summary() != "0 passed, 1 failed" {
		t.Errorf("summary %q", report.Summary())
	}
	var text bytes.Buffer
	if err := report.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAIL  text-only: the traces differ", "- ", "+ ", "0 passed, 1 failed\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

func TestAChangedTextIsOneFieldFinding(t *testing.T) {
	// Change the final answer's text: the deltas, the partials and the final message differ,
	// one finding per field and entry kind.
	impl := rewriting{Reference: sim.NewReference(), rewrite: func(_ string, data json.RawMessage) json.RawMessage {
		return bytes.ReplaceAll(data, []byte("both done"), []byte("both DONE"))
	}}
	report := conformance.Verify(context.Background(), []*sim.Scenario{byName("parallel-tools-with-updates")}, impl, conformance.Options{})
	fs := report.Results[0].Findings
	if len(fs) == 0 || fs[0].Path == "" || !strings.Contains(fs[0].Expected, "both done") {
		t.Fatalf("findings %+v", fs)
	}
}

func TestSemanticProfile(t *testing.T) {
	// A validator that words its messages differently: strict fails, semantic passes.
	impl := func() sim.Implementation {
		return rewriting{Reference: sim.NewReference(), rewrite: func(_ string, data json.RawMessage) json.RawMessage {
			return bytes.ReplaceAll(data, []byte(`\n  - `), []byte(`\n  * `))
		}}
	}
	suite := []*sim.Scenario{byName("validation-and-truncation")}
	strict := conformance.Verify(context.Background(), suite, impl(), conformance.Options{Profile: trace.Strict})
	if strict.Failed != 1 {
		t.Fatalf("strict: %s", strict.Summary())
	}
	semantic := conformance.Verify(context.Background(), suite, impl(), conformance.Options{Profile: trace.Semantic})
	if !semantic.OK() {
		t.Fatalf("semantic: %s: %+v", semantic.Summary(), semantic.Results[0].Findings)
	}
	// A different tool name in the text still fails semantically.
	renamed := rewriting{Reference: sim.NewReference(), rewrite: func(_ string, data json.RawMessage) json.RawMessage {
		return bytes.ReplaceAll(data, []byte(`Validation failed for tool \"typed\"`), []byte(`Validation failed for tool \"other\"`))
	}}
	if r := conformance.Verify(context.Background(), suite, renamed, conformance.Options{Profile: trace.Semantic}); r.Failed != 1 {
		t.Errorf("semantic accepted a different tool name: %s", r.Summary())
	}
}

func TestVerifyRestartsAfterCrash(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "crashed")
	p := selfadapter.Process(t, "crash-once", flagEnv+"="+flag)
	suite := []*sim.Scenario{byName("text-only"), byName("sequential-tools")}
	report := conformance.Verify(context.Background(), suite, p, conformance.Options{})
	if report.Failed != 1 || report.Passed != 1 {
		t.Fatalf("got %s: %+v", report.Summary(), report.Results)
	}
	res := report.Results[0]
	for _, want := range []string{"scenario text-only: start: the implementation exited (exit status 7) during start", "first life: crashing"} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("error lacks %q:\n%s", want, res.Error)
		}
	}
	// The second life introduced itself as the reference: the report names what ran first.
	if report.Implementation != "crash-once 1 (tracks pi 1.6.0)" {
		t.Errorf("implementation %q", report.Implementation)
	}
}

func TestVerifyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	suite := allScenarios()[:4]
	report := conformance.Verify(ctx, suite, selfadapter.Process(t, "serve"), conformance.Options{
		OnResult: func(conformance.Result) { cancel() },
	})
	if report.Passed != 1 || report.Skipped != 3 {
		t.Fatalf("got %s", report.Summary())
	}
	if r := report.Results[1]; r.Reason != "not run: context canceled" {
		t.Errorf("reason %q", r.Reason)
	}
}

func TestJUnit(t *testing.T) {
	report := conformance.Report{
		Implementation: "impl 1 (tracks pi 1.6.0)", Profile: trace.Strict,
		Passed: 1, Failed: 2, Skipped: 1,
		Results: []conformance.Result{
			{Scenario: "a", Status: conformance.Pass},
			{Scenario: "b", Status: conformance.Fail, Reason: "traces differ at entry 3",
				Findings: []diagnose.Finding{{Kind: diagnose.Divergence, Says: "at x: expected 1, actual 2", ExpectedLine: "exp <line>", ActualLine: "act & line", At: diagnose.Position{Expected: 3, Actual: 3}}}},
			{Scenario: "c", Status: conformance.Fail, Reason: "scenario c: start: timeout after 1s: stuck\nmore", Error: "scenario c: start: timeout after 1s: stuck\nmore"},
			{Scenario: "d", Status: conformance.Skip, Reason: "needs hook x"},
		},
	}
	var buf bytes.Buffer
	if err := conformance.WriteJUnit(&buf, report); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if doc.Tests != 4 || doc.Failures != 2 || doc.Skipped != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 4 {
		t.Fatalf("counts: %+v\n%s", doc, buf.String())
	}
	cases := doc.Suites[0].Cases
	if cases[0].Failure != nil || cases[0].Skipped != nil {
		t.Errorf("a: %+v", cases[0])
	}
	if f := cases[1].Failure; f == nil || f.Type != "divergence" || !strings.Contains(f.Text, "- exp <line>") || !strings.Contains(f.Text, "+ act & line") {
		t.Errorf("b: %+v", cases[1].Failure)
	}
	if f := cases[2].Failure; f == nil || f.Type != "error" || f.Message != "scenario c: start: timeout after 1s: stuck" {
		t.Errorf("c: %+v", cases[2].Failure)
	}
	if s := cases[3].Skipped; s == nil || s.Message != "needs hook x" {
		t.Errorf("d: %+v", cases[3].Skipped)
	}
	if !slices.Equal([]string{cases[0].Name, cases[3].Name}, []string{"a", "d"}) {
		t.Errorf("names")
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestVersionLess(t *testing.T) {
	cases := []struct {
		a, b string
		less bool
	}{
		{"0.99.1", "1.6.0", true}, {"1.6.0", "0.99.1", false}, {"0.87", "0.87", false},
		{"0.84", "0.87", true}, {"1.3.0", "1.3", false}, {"1.3", "1.3.1", true}, {"0.9", "0.10", true},
	}
	for _, c := range cases {
		if got := conformance.VersionLess(c.a, c.b); got != c.less {
			t.Errorf("VersionLess(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

// oldPort is the reference claiming to track an older pi.
type oldPort struct{ *sim.Reference }

func (oldPort) Hello() (protocol.Hello, error) {
	return protocol.Hello{Name: "old", Tracks: "0.99.1", Hooks: protocol.AllHooks}, nil
}

func TestVerifySkipsScenariosNewerThanTracked(t *testing.T) {
	newer := *byName("text-only")
	newer.Name, newer.Since = "newer", "1.3.0"
	older := *byName("text-only")
	older.Name, older.Since = "older", "0.87"
	report := conformance.Verify(context.Background(), []*sim.Scenario{&newer, &older}, oldPort{sim.NewReference()}, conformance.Options{})
	if report.Summary() != "1 passed, 0 failed, 1 skipped" {
		t.Fatalf("summary %q", report.Summary())
	}
	if r := report.Results[0]; r.Status != conformance.Skip || r.Reason != "the scenario pins behaviour of pi 1.3.0; the implementation tracks pi 0.99.1" {
		t.Errorf("result %+v", r)
	}
}

func TestVerifyExpectFail(t *testing.T) {
	// The rewrite breaks every scenario: "text-only" is listed as a known failure, "also" is
	// listed but passes (the rewrite only touches text-only's answer).
	impl := rewriting{Reference: sim.NewReference(), rewrite: func(kind string, data json.RawMessage) json.RawMessage {
		return bytes.ReplaceAll(data, []byte(`"turn_start"`), []byte(`"agent_start"`))
	}}
	broken := byName("text-only")
	report := conformance.Verify(context.Background(), []*sim.Scenario{broken}, impl, conformance.Options{
		ExpectFail: map[string]bool{"text-only": true},
	})
	if r := report.Results[0]; r.Status != conformance.ExpectedFail || !strings.HasPrefix(r.Reason, "expected failure: the traces differ") || len(r.Findings) == 0 {
		t.Errorf("known failure reported as %+v", r)
	}
	// Counted apart: neither failed nor skipped, and the closing line keeps its form.
	if report.ExpectedFailures != 1 || report.Skipped != 0 || report.Failed != 0 || report.Summary() != "0 passed, 0 failed" || !report.OK() {
		t.Errorf("counts: %d expected, %d skipped, %d failed, summary %q", report.ExpectedFailures, report.Skipped, report.Failed, report.Summary())
	}
	// Its cause is known: grouped apart, not among the causes of failure.
	var sum strings.Builder
	if err := report.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if len(report.Causes) != 0 || len(report.Symptoms) != 0 || len(report.KnownCauses) != 1 ||
		!strings.Contains(sum.String(), "causes seen in the expected failures") || strings.Contains(sum.String(), "cause of failure") {
		t.Errorf("causes %+v, symptoms %+v, known %+v:\n%s", report.Causes, report.Symptoms, report.KnownCauses, sum.String())
	}
	// Kept through JSON and a merge, which groups the results again.
	var js bytes.Buffer
	if err := report.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	read, err := conformance.ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if merged, err := conformance.Merge([]conformance.Report{read}, []string{"one"}); err != nil || len(merged.KnownCauses) != 1 || len(merged.Causes) != 0 {
		t.Errorf("merged: %v, causes %+v, known %+v", err, merged.Causes, merged.KnownCauses)
	}
	report = conformance.Verify(context.Background(), []*sim.Scenario{broken}, sim.NewReference(), conformance.Options{
		ExpectFail: map[string]bool{"text-only": true},
	})
	if r := report.Results[0]; r.Status != conformance.Fail || !strings.HasPrefix(r.Reason, "unexpected pass") {
		t.Errorf("unexpected pass reported as %+v", r)
	}
}

func TestVerifyParallelKeepsOrder(t *testing.T) {
	suite := allScenarios()
	report := conformance.VerifyParallel(context.Background(), suite, func() sim.Implementation { return sim.NewReference() }, 3, conformance.Options{})
	if !report.OK() || report.Passed != len(suite) {
		t.Fatalf("got %s", report.Summary())
	}
	for i, r := range report.Results {
		if r.Scenario != suite[i].Name {
			t.Fatalf("result %d is %s, want %s", i, r.Scenario, suite[i].Name)
		}
	}
}

func TestVerifyNamesBrokenInvariants(t *testing.T) {
	// Turn the assistant's final message into a second turn_start: the grammar breaks.
	impl := rewriting{Reference: sim.NewReference(), rewrite: func(kind string, data json.RawMessage) json.RawMessage {
		if kind == sim.NotifyEvent && bytes.Contains(data, []byte(`"agent_end"`)) {
			return json.RawMessage(`{"type":"turn_start"}`)
		}
		return data
	}}
	report := conformance.Verify(context.Background(), []*sim.Scenario{byName("text-only")}, impl, conformance.Options{})
	res := report.Results[0]
	if res.Status != conformance.Fail || !slices.ContainsFunc(res.Findings, func(f diagnose.Finding) bool { return f.Invariant == "grammar" }) {
		t.Fatalf("result %+v", res)
	}
	// The profile by invariant counts the scenario as failing grammar.
	for _, tally := range report.Invariants {
		if tally.Name == "grammar" && tally.Failed != 1 {
			t.Errorf("the profile by invariant: %+v", tally)
		}
	}
	var text bytes.Buffer
	_ = report.WriteText(&text)
	if !strings.Contains(text.String(), "breaks invariant grammar") {
		t.Errorf("the report does not name the invariant:\n%s", text.String())
	}
}

// alternating is the reference that emits an extra agent_start every other run: another trace
// each time, as a port whose goroutines race.
type alternating struct {
	*sim.Reference
	runs *int
}

func (a alternating) Start(setup sim.Setup, port sim.Port) error {
	*a.runs++
	odd := *a.runs%2 == 1
	return a.Reference.Start(setup, rewritingPort{port, func(kind string, data json.RawMessage) json.RawMessage {
		if odd && kind == sim.NotifyEvent && bytes.Contains(data, []byte(`"agent_start"`)) {
			port.Notify(sim.Notification{Kind: kind, Data: data})
		}
		return data
	}})
}

// TestAFlakyScenarioIsSaidSoApartFromCauses: a failing scenario is run again; another trace
// the second time is reported flaky, in the result, the text and the JSON, and its findings
// make no cause.
func TestAFlakyScenarioIsSaidSoApartFromCauses(t *testing.T) {
	runs := 0
	report := conformance.Verify(context.Background(), []*sim.Scenario{byName("text-only")}, alternating{sim.NewReference(), &runs}, conformance.Options{})
	res := report.Results[0]
	if res.Status != conformance.Fail || !res.Flaky || !strings.HasPrefix(res.Reason, "flaky: ") || runs != 2 {
		t.Fatalf("result %+v after %d runs", res, runs)
	}
	if len(report.Causes) != 0 {
		t.Errorf("a flaky scenario makes causes: %+v", report.Causes)
	}
	var text, js bytes.Buffer
	_ = report.WriteText(&text)
	_ = report.WriteJSON(&js)
	if !strings.Contains(text.String(), "FAIL (flaky)  text-only") || !strings.Contains(text.String(), "1 flaky scenario: ") {
		t.Errorf("text:\n%s", text.String())
	}
	if !strings.Contains(js.String(), `"flaky": true`) {
		t.Errorf("the JSON does not say flaky")
	}
	// A steady failure is not flaky.
	steady := conformance.Verify(context.Background(), []*sim.Scenario{byName("text-only")}, rewriting{sim.NewReference(), noThinkingLevel}, conformance.Options{})
	if r := steady.Results[0]; r.Status != conformance.Fail || r.Flaky {
		t.Errorf("a steady failure: %+v", r)
	}
}

// TestExpectFailByFindingAndIgnore: a scenario expected to fail with a finding fails when it
// fails otherwise (a new defect in a scenario already listed is not hidden); ignored findings
// are left out, and a scenario left with none passes.
func TestExpectFailByFindingAndIgnore(t *testing.T) {
	suite := []*sim.Scenario{byName("text-only")}
	impl := func() sim.Implementation { return rewriting{sim.NewReference(), noThinkingLevel} }
	expect := map[string]bool{"text-only": true}
	r := conformance.Verify(context.Background(), suite, impl(), conformance.Options{ExpectFail: expect,
		ExpectFindings: map[string][]string{"text-only": {"R-STREAM-THINKING-LEVEL"}}})
	if res := r.Results[0]; res.Status != conformance.ExpectedFail {
		t.Errorf("the finding expected: %+v", res)
	}
	r = conformance.Verify(context.Background(), suite, impl(), conformance.Options{ExpectFail: expect,
		ExpectFindings: map[string][]string{"text-only": {"R-TRUNC"}}})
	if res := r.Results[0]; res.Status != conformance.Fail || !strings.Contains(res.Reason, "fails otherwise than expected") ||
		!strings.Contains(res.Reason, "R-STREAM-THINKING-LEVEL") {
		t.Errorf("another finding than expected: %+v", res)
	}
	r = conformance.Verify(context.Background(), suite, impl(), conformance.Options{Ignore: map[string]bool{"R-STREAM-THINKING-LEVEL": true}})
	if res := r.Results[0]; res.Status != conformance.Pass || !r.OK() {
		t.Errorf("its only finding ignored: %+v", res)
	}
	names, findings, err := conformance.ParseExpectFail([]string{"text-only", "text-only: R-X", "no-such"}, []string{"text-only"})
	if err == nil || names != nil || findings != nil {
		t.Errorf("an unknown name: %v %v %v", names, findings, err)
	}
}
