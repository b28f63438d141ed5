package diagnose_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// reference runs a curated scenario with the reference loop and returns its description and
// trace.
func reference(t *testing.T, name string) (diagnose.Scenario, *trace.Trace) {
	t.Helper()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Scenario.Name == name {
			tr, err := sim.Run(f.Scenario, sim.NewReference())
			if err != nil {
				t.Fatal(err)
			}
			// The tests edit entries: they do so on the trace in full.
			return diagnose.FromFile(f), tr.Expanded()
		}
	}
	t.Fatalf("no curated scenario %s", name)
	return diagnose.Scenario{}, nil
}

// clone copies a trace so that its entries can be edited.
func clone(tr *trace.Trace) *trace.Trace {
	return &trace.Trace{Scenario: tr.Scenario, Entries: slices.Clone(tr.Entries)}
}

// edit rewrites the data of entry i (0-based) with f.
func edit(t *testing.T, tr *trace.Trace, i int, f func(map[string]any)) {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(tr.Entries[i].Data, &d); err != nil {
		t.Fatal(err)
	}
	f(d)
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	tr.Entries[i].Data = data
}

// find is the index of the first entry of that key.
func find(t *testing.T, tr *trace.Trace, key string) int {
	t.Helper()
	for i, e := range tr.Entries {
		if trace.Key(e) == key {
			return i
		}
	}
	t.Fatalf("no entry %q", key)
	return -1
}

// diag diagnoses got against want under the strict profile.
func diag(sc diagnose.Scenario, want, got *trace.Trace, opts diagnose.Options) []diagnose.Finding {
	if want == nil || got == nil {
		return diagnose.Diagnose(sc, nil, opts)
	}
	return diagnose.Diagnose(sc, trace.Compare(want, got, trace.Strict), opts)
}

// renumber sets the entries' seq as the world does.
func renumber(tr *trace.Trace) {
	for i := range tr.Entries {
		tr.Entries[i].Seq = i + 1
	}
}

func TestIdenticalTracesHaveNoFindings(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	if fs := diag(sc, want, clone(want), diagnose.Options{}); len(fs) != 0 {
		t.Fatalf("findings on identical traces: %v", fs)
	}
}

func TestFieldAbsentIsOneFindingWithItsPathAndFullValue(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	got := clone(want)
	i := find(t, got, "event message_end assistant")
	edit(t, got, i, func(d map[string]any) { delete(d["message"].(map[string]any), "thinkingLevel") })
	fs := diag(sc, want, got, diagnose.Options{})
	var divs []diagnose.Finding
	for _, f := range fs {
		if f.Kind == diagnose.Divergence {
			divs = append(divs, f)
		}
	}
	if len(divs) != 1 {
		t.Fatalf("want 1 divergence, got %d: %v", len(divs), fs)
	}
	f := divs[0]
	if f.Signature != "R-STREAM-THINKING-LEVEL: thinkingLevel absent" {
		t.Errorf("signature %q", f.Signature)
	}
	if f.At.Expected != i+1 || f.At.Actual != i+1 || f.Path != "data.message.thinkingLevel" {
		t.Errorf("at %+v path %q", f.At, f.Path)
	}
	if f.Expected != `"off"` || f.Actual != "(absent)" {
		t.Errorf("values %q %q", f.Expected, f.Actual)
	}
	if f.Consequence {
		t.Error("the first divergence is marked a consequence")
	}
	// Named by the rule that governs the field, not by the scenario's (the output token limit).
	if f.RuleID != "R-STREAM-THINKING-LEVEL" || f.Rule != "R-STREAM-THINKING-LEVEL (the thinking-level stamp)" {
		t.Errorf("rule %q (%s) is not the rule governing thinkingLevel", f.Rule, f.RuleID)
	}
}

func TestMissingEntryIsOneRegionAndTheRestStillAligns(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	got := clone(want)
	i := find(t, got, "event tool_execution_end")
	got.Entries = slices.Delete(got.Entries, i, i+1)
	// A later entry differs too: it must be found, and marked as coming after.
	j := find(t, got, "event turn_end")
	edit(t, got, j, func(d map[string]any) { d["toolResults"] = []any{} })
	renumber(got)
	fs := diag(sc, want, got, diagnose.Options{})
	var sigs []string
	for _, f := range fs {
		if f.Kind == diagnose.Divergence {
			sigs = append(sigs, f.Signature)
		}
	}
	wantSigs := []string{"R-TRUNC-FAIL: missing event tool_execution_end", "R-TOOL-RESULT-MESSAGE: event turn_end data.toolResults length"}
	if !slices.Equal(sigs, wantSigs) {
		t.Fatalf("signatures %q, want %q", sigs, wantSigs)
	}
	if fs[0].At.Expected != i+1 || !strings.Contains(fs[0].ExpectedLine, "tool_execution_end w1 write error") {
		t.Errorf("region at %+v, line %q", fs[0].At, fs[0].ExpectedLine)
	}
	// A list of messages after entries lacking may follow from them: marked so.
	if fs[0].Consequence || !fs[1].Consequence {
		t.Errorf("consequence flags: %v %v", fs[0].Consequence, fs[1].Consequence)
	}
	// The expect: block names the missing line.
	var exp []string
	for _, f := range fs {
		if f.Kind == diagnose.Expectation {
			exp = append(exp, f.Signature)
		}
	}
	if !slices.Contains(exp, "expectation timeline of truncation/basic") {
		t.Errorf("expectation findings %q, want the timeline one", exp)
	}
}

// TestAnEntryOfAnotherKindIsExtraAndMissingEachByItsRule: an entry in place of the
// reference's is one the implementation has in addition and one it lacks, each named by the
// rule governing it where it stands (here: in a truncated turn).
func TestAnEntryOfAnotherKindIsExtraAndMissingEachByItsRule(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	got := clone(want)
	i := find(t, got, "event tool_execution_end")
	got.Entries[i] = trace.Entry{T: got.Entries[i].T, Kind: trace.KindCall, Name: "tool", Data: json.RawMessage(`{"toolCallId":"w1","toolName":"write","args":{}}`)}
	renumber(got)
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) < 2 || fs[0].Signature != "R-TRUNC-FAIL: extra call tool" || fs[1].Signature != "R-TRUNC-FAIL: missing event tool_execution_end" {
		t.Fatalf("findings %v", fs)
	}
	if fs[0].At.Actual != i+1 || fs[1].At.Expected != i+1 || fs[0].Consequence || !fs[1].Consequence {
		t.Errorf("at %+v and %+v", fs[0], fs[1])
	}
}

func TestValuesAreNeverCut(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	got := clone(want)
	i := find(t, got, "event message_end assistant")
	long := strings.Repeat("a long text ", 100)
	edit(t, got, i, func(d map[string]any) {
		d["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] = long
	})
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) == 0 || fs[0].Actual != `"`+long+`"` {
		t.Fatalf("the actual value is not given in full: %+v", fs)
	}
	if fs[0].Path != "data.message.content[0].text" || fs[0].Signature != "R-STREAM-END: event message_end assistant data.message.content[].text differs" {
		t.Errorf("path %q signature %q", fs[0].Path, fs[0].Signature)
	}
}

func TestBrokenInvariantIsAFindingNamedByItsRule(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	got := clone(want)
	// The implementation runs the truncated call: its result is ok, not the error.
	i := find(t, got, "event tool_execution_end")
	edit(t, got, i, func(d map[string]any) { d["isError"] = false })
	fs := diag(sc, want, got, diagnose.Options{})
	// The truncation invariant, broken at the same entry, says the same defect: its words go
	// with the divergence, named by the rule that governs the entry.
	if len(fs) == 0 || fs[0].RuleID != "R-TRUNC-FAIL" || fs[0].Invariant != "truncation" || !strings.Contains(fs[0].Says, "breaks invariant truncation") {
		t.Fatalf("first finding %v", fs)
	}
	for _, f := range fs {
		if f.Kind == diagnose.Invariant && f.Invariant == "truncation" {
			t.Errorf("the invariant is a finding of its own too: %v", f)
		}
	}
	// One cause, the rule's.
	causes := diagnose.Group([]diagnose.Diagnosis{{Scenario: sc, Findings: fs}})
	if len(causes) == 0 || causes[0].Signature != "R-TRUNC" || causes[0].Rule != "R-TRUNC-FAIL (a truncated response runs nothing)" {
		t.Errorf("causes %+v", causes)
	}
}

func TestRunErrorIsAnErrorFinding(t *testing.T) {
	sc, _ := reference(t, "truncation/basic")
	fs := diag(sc, nil, nil, diagnose.Options{RunError: errString(`timeout after 10s waiting for "w1"`)})
	if len(fs) != 1 || fs[0].Kind != diagnose.Error || fs[0].Signature != "error: timeout after N waiting for …" {
		t.Fatalf("findings %+v", fs)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestATimeNoRuleGovernsSaysSo: the virtual time of an entry follows from what the loop waited
// on; no rule governs it alone, and the finding says so rather than borrow the scenario's
// rule (the output token limit).
func TestATimeNoRuleGovernsSaysSo(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	got := clone(want)
	got.Entries[len(got.Entries)-1].T += 7
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) != 1 || fs[0].RuleID != "" || !strings.HasPrefix(fs[0].Rule, "no rule") || strings.Contains(fs[0].Rule, "output token limit") {
		t.Fatalf("findings %v", fs)
	}
	if fs[0].Signature != "no rule: end run t differs" {
		t.Errorf("signature %q", fs[0].Signature)
	}
}

// TestSwappedResultsAreOneDefectNamedByItsRule: two tool-result messages swapped differ
// first in their toolCallId (not their text), and the results invariant their message breaks
// is a root finding, not a consequence of that divergence.
func TestSwappedResultsAreOneDefectNamedByItsRule(t *testing.T) {
	sc, want := reference(t, "tools-parallel/completion-order")
	got := clone(want)
	i := find(t, got, "event message_start toolResult")
	if trace.Key(got.Entries[i+2]) != "event message_start toolResult" {
		t.Fatalf("entry %d is %s", i+3, trace.Key(got.Entries[i+2]))
	}
	for k := range 2 {
		got.Entries[i+k].Data, got.Entries[i+2+k].Data = got.Entries[i+2+k].Data, got.Entries[i+k].Data
	}
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) == 0 || fs[0].Kind != diagnose.Divergence || fs[0].Path != "data.message.toolCallId" {
		t.Fatalf("first finding %+v", fs[0])
	}
	// The order of a parallel batch's results is R-EXEC-PARALLEL's; the results invariant,
	// broken by the same message, says that rule too and is folded into the divergence.
	if fs[0].RuleID != "R-EXEC-PARALLEL" {
		t.Errorf("the divergence %v", fs[0])
	}
	if !slices.ContainsFunc(fs, func(f diagnose.Finding) bool { return f.RuleID == "R-EXEC-PARALLEL" && f.Invariant == "results" }) {
		t.Errorf("the results invariant is not folded into the divergence at its entry: %v", fs)
	}
	for _, f := range fs {
		if f.Kind == diagnose.Invariant && f.RuleID == "R-EXEC-PARALLEL" {
			t.Errorf("the invariant is a finding of its own: %v", f)
		}
	}
}

// TestAWrongClockIsOneDefectOfItsRule: timestamps that differ on entries of different kinds
// (a loop stamping with the real clock) are one signature, of R-TIME-STAMP, whatever the
// scenario's rule.
func TestAWrongClockIsOneDefectOfItsRule(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	got := clone(want)
	for _, key := range []string{"event message_start system", "event message_end system", "event message_start toolResult", "event message_end toolResult"} {
		edit(t, got, find(t, got, key), func(d map[string]any) { d["message"].(map[string]any)["timestamp"] = 1796396384897 })
	}
	sigs := map[string]bool{}
	for _, f := range diag(sc, want, got, diagnose.Options{}) {
		if f.Kind == diagnose.Divergence && strings.HasSuffix(f.Path, ".timestamp") {
			sigs[f.Signature] = true
			if !strings.HasPrefix(f.Rule, "R-TIME-STAMP (") {
				t.Errorf("rule %q", f.Rule)
			}
		}
	}
	if len(sigs) != 1 || !sigs["R-TIME-STAMP: timestamp differs (wall clock)"] {
		t.Errorf("signatures %v", sigs)
	}
}

// TestARunThatFailsIsTheRootOfWhatItLacks: a loop that raises (a KeyError) where the
// reference's run returns lacks every entry after that point; the failure is the root
// finding, named by R-FAIL-THROW, and the entries it lacks are its consequences.
func TestARunThatFailsIsTheRootOfWhatItLacks(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	i := find(t, want, "event message_start toolResult")
	end := want.Entries[len(want.Entries)-1]
	end.Data, end.Error = json.RawMessage(`{"error":"'durationMs'"}`), "'durationMs'"
	got := &trace.Trace{Scenario: want.Scenario, Entries: append(slices.Clone(want.Entries[:i]), end)}
	renumber(got)
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) < 2 {
		t.Fatalf("findings %v", fs)
	}
	root := fs[0]
	if root.Consequence || root.Signature != "R-FAIL-THROW: run fails: 'durationMs'" || !strings.HasPrefix(root.Rule, "R-FAIL-THROW (") ||
		!strings.Contains(root.Says, `failed with "'durationMs'" where the reference's returned`) {
		t.Errorf("root %+v", root)
	}
	for _, f := range fs[1:] {
		if !f.Consequence {
			t.Errorf("not a consequence: %v", f)
		}
	}
	causes := diagnose.Group([]diagnose.Diagnosis{{Scenario: sc, Findings: fs}})
	if len(causes) != 1 || causes[0].Rule != root.Rule {
		t.Errorf("causes %+v", causes)
	}
}

// TestAnErrorCauseNamesTheProtocolNotTheScenariosRules: a timeout in scenarios that pin
// R-STREAM-UPDATE is not a breach of R-STREAM-UPDATE: its cause names the protocol.
func TestAnErrorCauseNamesTheProtocolNotTheScenariosRules(t *testing.T) {
	var ds []diagnose.Diagnosis
	for _, name := range []string{"streaming/one", "streaming/two"} {
		sc := diagnose.Scenario{Name: name, Rules: []string{"R-STREAM-UPDATE"}}
		ds = append(ds, diagnose.Diagnosis{Scenario: sc, Findings: diagnose.Diagnose(sc, nil,
			diagnose.Options{RunError: fmt.Errorf("scenario %s: the implementation timed out waiting for idle", name)})})
	}
	causes := diagnose.Group(ds)
	if len(causes) != 1 || !strings.HasPrefix(causes[0].Rule, "the conformance protocol") {
		t.Errorf("causes %+v", causes)
	}
}

// TestARunThatReturnsWhereTheReferenceFailsIsTheRoot: a loop that swallows a stream's throw
// and ends normally has agent_end and a returned end where the reference's run failed; the
// root is that the run returned (R-FAIL-THROW), not the grammar its extra events break.
func TestARunThatReturnsWhereTheReferenceFailsIsTheRoot(t *testing.T) {
	sc, want := reference(t, "abort-error/stream-throws-fails-run")
	n := len(want.Entries)
	if e := want.Entries[n-1]; e.Kind != trace.KindEnd || e.Error == "" {
		t.Fatalf("the reference's run does not fail: %+v", e)
	}
	last := want.Entries[n-1]
	got := &trace.Trace{Scenario: want.Scenario, Entries: slices.Clone(want.Entries[:n-1])}
	got.Entries = append(got.Entries,
		trace.Entry{T: last.T, Kind: trace.KindEvent, Name: "agent_end", Data: json.RawMessage(`{"messages":[],"type":"agent_end"}`)},
		trace.Entry{T: last.T, Kind: trace.KindEnd, Name: last.Name, Data: json.RawMessage(`{"messages":[]}`)})
	renumber(got)
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) == 0 || fs[0].Consequence || fs[0].Signature != "R-FAIL-THROW: run returns where the reference's fails" ||
		!strings.HasPrefix(fs[0].Rule, "R-FAIL-THROW (") {
		t.Fatalf("root %+v", fs[0])
	}
	for _, f := range fs[1:] {
		if !f.Consequence {
			t.Errorf("not a consequence: %v", f)
		}
	}
}

// TestARunThatFailsAfterAnEarlierDivergenceKeepsItsRoot: a loop that makes an extra request
// fails on the script's end ("request N was not scripted"); the extra request is the root,
// not the failure it leads to.
func TestARunThatFailsAfterAnEarlierDivergenceKeepsItsRoot(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	i := find(t, want, "call stream")
	end := want.Entries[len(want.Entries)-1]
	end.Data, end.Error = json.RawMessage(`{"error":"request 3 was not scripted"}`), "request 3 was not scripted"
	got := &trace.Trace{Scenario: want.Scenario, Entries: slices.Clone(want.Entries[:i+1])}
	got.Entries = append(got.Entries, want.Entries[i], end) // a second request, then the failure
	renumber(got)
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) == 0 || strings.Contains(fs[0].Signature, "run fails") || fs[0].Consequence {
		t.Fatalf("root %+v", fs[0])
	}
}

// TestOneCrashIsOneSignatureWhereverItHappens: the same failure met at the start or during
// different deliveries is one signature.
func TestOneCrashIsOneSignatureWhereverItHappens(t *testing.T) {
	sigs := map[string]bool{}
	for _, msg := range []string{
		"scenario x: start: protocol error at line 3: bad shape",
		"scenario x: delivery streamEvent at 67ms: protocol error at line 9: bad shape",
		"scenario x: delivery toolResult at 5ms: protocol error at line 12: bad shape",
	} {
		fs := diagnose.Diagnose(diagnose.Scenario{Name: "x"}, nil, diagnose.Options{RunError: errors.New(msg)})
		sigs[fs[0].Signature] = true
	}
	exits := map[string]bool{}
	for _, msg := range []string{
		"scenario x: delivery streamEvent at 3ms: the implementation exited (exit status 1) during delivery streamEvent at 3ms",
		"scenario x: delivery toolResult at 9ms: the implementation exited (exit status 1) during delivery toolResult at 9ms",
	} {
		fs := diagnose.Diagnose(diagnose.Scenario{Name: "x"}, nil, diagnose.Options{RunError: errors.New(msg)})
		exits[fs[0].Signature] = true
	}
	if len(sigs) != 1 || len(exits) != 1 {
		t.Errorf("signatures %v %v", sigs, exits)
	}
}

// TestFieldRulesHoldInsideTheirField: a difference inside a declaration's toolsAdded is
// R-DECL-DIFF's, whatever member of it differs.
func TestFieldRulesHoldInsideTheirField(t *testing.T) {
	sc, want := reference(t, "truncation/basic")
	got := clone(want)
	for _, key := range []string{"event message_start system", "event message_end system"} {
		edit(t, got, find(t, got, key), func(d map[string]any) {
			d["message"].(map[string]any)["toolsAdded"].([]any)[0].(map[string]any)["description"] = "Write it"
		})
	}
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) == 0 || fs[0].Signature != "R-DECL-DIFF: toolsAdded differs" || !strings.HasPrefix(fs[0].Rule, "R-DECL-DIFF (") {
		t.Fatalf("first finding %+v", fs[0])
	}
}

// TestATimeoutSaysItHangs: an implementation past its time limit is said to hang or be too
// slow, with what the protocol expects, and keeps the signature of any error of its shape (a
// stranger's review took "the conformance protocol" for a fault of the adapter); one past its
// budget is said to run away.
func TestATimeoutSaysItHangs(t *testing.T) {
	err := fmt.Errorf("scenario seed-1: delivery streamEvent at 0ms: %w after 15s: the implementation did not report idle during delivery streamEvent at 0ms", trace.ErrTimeout)
	fs := diagnose.Diagnose(diagnose.Scenario{Name: "seed-1"}, nil, diagnose.Options{RunError: err})
	if len(fs) != 1 || fs[0].Signature != "error: timeout after N: the implementation did not report idle during a delivery" ||
		!strings.HasPrefix(fs[0].Headline, "the implementation hangs or is too slow: ") || !strings.Contains(fs[0].Rule, "reports idle, within --timeout; it hung") {
		t.Errorf("findings %+v", fs)
	}
	over := diagnose.Diagnose(diagnose.Scenario{Name: "runaway"}, nil, diagnose.Options{RunError: &sim.BudgetError{Budget: "requests", Text: "the run made 1,000 requests; budget 1,000"}})
	if len(over) != 1 || !strings.HasPrefix(over[0].Rule, "the run's budget") || !strings.Contains(over[0].Says, "the run made 1,000 requests; budget 1,000") ||
		!strings.HasPrefix(over[0].Headline, "the implementation runs past the budget: ") {
		t.Errorf("a budget: %+v", over)
	}
	plain := diagnose.Diagnose(diagnose.Scenario{Name: "s"}, nil, diagnose.Options{RunError: errors.New("scenario s: the implementation exited")})
	if len(plain) != 1 || plain[0].Rule != "the conformance protocol (conformance/PROTOCOL.md)" {
		t.Errorf("another error: %+v", plain)
	}
}

// TestAListOfAnotherLengthSaysWhichItems: a list that differs in length names the items the
// implementation's lacks or has in addition, by their identity members (a stranger's review:
// "has 5 items; the reference's has 6" dumped both lists and never said which was missing).
func TestAListOfAnotherLengthSaysWhichItems(t *testing.T) {
	msg := func(role, id string) map[string]any {
		m := map[string]any{"role": role, "content": []any{map[string]any{"type": "text", "text": "…"}}}
		if id != "" {
			m["toolCallId"] = id
		}
		return m
	}
	entry := func(ms ...any) trace.Entry {
		data, _ := json.Marshal(map[string]any{"messages": ms})
		return trace.Entry{Kind: trace.KindCall, Name: "hook", Data: data}
	}
	want := &trace.Trace{Entries: []trace.Entry{entry(msg("user", ""), msg("assistant", ""), msg("toolResult", "c1"), msg("user", "2"))}}
	got := &trace.Trace{Entries: []trace.Entry{entry(msg("user", ""), msg("assistant", ""), msg("user", "2"))}}
	fs := diag(diagnose.Scenario{Name: "x"}, want, got, diagnose.Options{})
	if len(fs) == 0 || !strings.Contains(fs[0].Says, "has 3 items; the reference's has 4: it lacks the reference's item 3 (role toolResult, toolCallId c1)") {
		t.Errorf("findings: %+v", fs)
	}
	got.Entries[0] = entry(msg("user", ""), msg("system", ""), msg("assistant", ""), msg("toolResult", "c1"), msg("user", "2"))
	fs = diag(diagnose.Scenario{Name: "x"}, want, got, diagnose.Options{})
	if len(fs) == 0 || !strings.Contains(fs[0].Says, "has 5 items; the reference's has 4: it has in addition item 2 (role system)") {
		t.Errorf("findings: %+v", fs)
	}
}

// TestAMovedEntryIsSaidMoved: an entry the implementation emits elsewhere than the reference is
// one finding that says it moved, where, and what it passed, named by the rule governing the
// entry where the reference has it (a stranger's review read "missing" and "extra" for a
// reordering).
func TestAMovedEntryIsSaidMoved(t *testing.T) {
	sc, want := reference(t, "tools-parallel/completion-order")
	got := clone(want)
	// turn_end after the steering poll that should follow it.
	i := find(t, got, "event turn_end")
	got.Entries[i], got.Entries[i+1] = got.Entries[i+1], got.Entries[i]
	renumber(got)
	var moved []diagnose.Finding
	for _, f := range diag(sc, want, got, diagnose.Options{}) {
		if f.Kind == diagnose.Divergence {
			moved = append(moved, f)
		}
	}
	if len(moved) != 1 || !strings.Contains(moved[0].Says, "moved, not lost or added") {
		t.Fatalf("findings %v", moved)
	}
	f := moved[0]
	// A swap of two entries reads as one of them moved past the other, named by the rule of
	// the one said moved, where the implementation put it.
	switch f.Signature {
	case "R-POLL-NEVER-ELSE: moved call getSteeringMessages earlier":
		if f.Headline != "R-POLL-NEVER-ELSE: a call getSteeringMessages comes earlier than the reference's, before event turn_end" {
			t.Errorf("headline %q", f.Headline)
		}
	case "R-TURN-REQUEST: moved event turn_end later":
		if f.Headline != "R-TURN-REQUEST: an event turn_end comes later than the reference's, after call getSteeringMessages" {
			t.Errorf("headline %q", f.Headline)
		}
	default:
		t.Errorf("%s / %s / %s", f.RuleID, f.Signature, f.Headline)
	}
	// An entry lost, not moved, is only missing.
	gone := clone(want)
	gone.Entries = slices.Delete(gone.Entries, i, i+1)
	renumber(gone)
	for _, f := range diag(sc, want, gone, diagnose.Options{}) {
		if strings.Contains(f.Says, "moved") {
			t.Errorf("a lost entry said moved: %s", f.Says)
		}
	}
}

// TestAMissingDeliverySaysItIsTheHarnesss: entries the implementation lacks starting with a
// delivery say that the harness makes deliveries, when the implementation is idle (a
// stranger read "a deliver agent the reference has is missing" as their Agent's fault to
// deliver something); other missing entries do not.
func TestAMissingDeliverySaysItIsTheHarnesss(t *testing.T) {
	sc, want := reference(t, "agent/reset-then-prompt")
	got := clone(want)
	i := find(t, got, "deliver agent")
	got.Entries = got.Entries[:i]
	renumber(got)
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) == 0 || !strings.Contains(fs[0].Says, "a delivery is the harness's") {
		t.Fatalf("first finding: %+v", fs)
	}
	sc, want = reference(t, "truncation/basic")
	got = clone(want)
	j := find(t, got, "event tool_execution_end")
	got.Entries = slices.Delete(got.Entries, j, j+1)
	renumber(got)
	if fs := diag(sc, want, got, diagnose.Options{}); strings.Contains(fs[0].Says, "harness") {
		t.Errorf("a missing event is said to be a delivery: %s", fs[0].Says)
	}
}

// TestAReorderedListIsOneFinding: a list holding the reference's items in another order is
// one finding that says where each went, not one per field of every item out of place (a
// stranger's Agent, whose steering messages came two places early, got twenty).
func TestAReorderedListIsOneFinding(t *testing.T) {
	sc, want := reference(t, "tools-parallel/completion-order")
	got := clone(want)
	i := find(t, got, "event turn_end")
	edit(t, got, i, func(d map[string]any) {
		r := d["toolResults"].([]any)
		r[0], r[1] = r[1], r[0]
	})
	fs := diag(sc, want, got, diagnose.Options{})
	var at []diagnose.Finding
	for _, f := range fs {
		if f.Kind == diagnose.Divergence && f.At.Actual == i+1 {
			at = append(at, f)
		}
	}
	if len(at) != 1 || at[0].Path != "data.toolResults" || !strings.Contains(at[0].Says, "the list data.toolResults has the reference's items in another order: item 0 is the reference's 1, item 1 is the reference's 0") {
		t.Fatalf("findings at the turn_end: %+v", at)
	}
	if !strings.HasSuffix(at[0].Signature, "data.toolResults order") {
		t.Errorf("signature %q", at[0].Signature)
	}
}

// TestEntriesLostBeforeAnotherDefectKeepTheirRule: entries the implementation lacks are named
// by the rule of the first of them, not by a rule the entry after the gap breaks (a stranger's
// loop without type coercion, whose calls also had a durationMs they should not, had its
// missing hooks named R-TIME-DURATION, and the coercion defect hidden).
func TestEntriesLostBeforeAnotherDefectKeepTheirRule(t *testing.T) {
	sc, want := reference(t, "tools-sequential/coercion")
	got := clone(want)
	i, j := find(t, got, "call beforeToolCall"), find(t, got, "event tool_execution_end")
	got.Entries = slices.Delete(got.Entries, i, j)
	renumber(got)
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) == 0 || fs[0].Signature != "R-TOOL-BEFORE: missing call beforeToolCall" {
		t.Fatalf("first finding %+v", fs)
	}
	broken := false
	for _, f := range fs {
		broken = broken || f.Kind == diagnose.Invariant && f.At.Actual == i+1 && f.RuleID == "R-TIME-DURATION"
	}
	if !broken {
		t.Fatalf("the test needs the end after the gap to break the durationMs rule: %v", fs)
	}
}

// TestAReorderedLongListNamesFourMoves: a reversed list of five or more items names the
// first four moves and counts the rest.
func TestAReorderedLongListNamesFourMoves(t *testing.T) {
	sc, want := reference(t, "tools-parallel/completion-order")
	got := clone(want)
	i := len(got.Entries) - 1 // the run's end, with every new message
	edit(t, got, i, func(d map[string]any) { slices.Reverse(d["messages"].([]any)) })
	var says []string
	for _, f := range diag(sc, want, got, diagnose.Options{}) {
		if f.At.Actual == i+1 && f.Kind == diagnose.Divergence {
			says = append(says, f.Says)
		}
	}
	if len(says) != 1 || !regexp.MustCompile(`another order: item 0 is the reference's \d+, item 1 is the reference's \d+, item 2 is the reference's \d+, item 3 is the reference's \d+ and \d+ more(;|$)`).MatchString(says[0]) {
		t.Errorf("findings at the end: %q", says)
	}
}

// TestARepeatedValueIsOneSignature: an error that names a value as many times as the run met
// it is one signature however many (explore split one unencodable event twelve ways), and
// one line of bounded length.
func TestARepeatedValueIsOneSignature(t *testing.T) {
	sigs := map[string]bool{}
	for _, n := range []int{1, 2, 5, 40} {
		msg := "scenario x: json: unsupported value: " + strings.TrimSpace(strings.Repeat("NaN ", n))
		fs := diagnose.Diagnose(diagnose.Scenario{Name: "x"}, nil, diagnose.Options{RunError: errors.New(msg)})
		sigs[fs[0].Signature] = true
		if len(fs[0].Headline) > 220 || strings.Contains(fs[0].Headline, "\n") {
			t.Errorf("headline %q", fs[0].Headline)
		}
	}
	if len(sigs) != 1 {
		t.Errorf("signatures %v", sigs)
	}
	long := diagnose.Diagnose(diagnose.Scenario{Name: "x"}, nil, diagnose.Options{RunError: errors.New(strings.Repeat("a sentence, ", 4000))})
	if len(long[0].Signature) > 220 {
		t.Errorf("a signature of %d bytes", len(long[0].Signature))
	}
}
