package diagnose_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// Defects met on real ports of pi's loop, each made by hand on the reference's trace: every
// one must be one cause, named by the rule it breaks.

// walkObjects calls f on every JSON object in the data of the entries of tr from index from on
// (f edits it in place), and writes the data back.
func walkObjects(t *testing.T, tr *trace.Trace, from int, f func(map[string]any)) {
	t.Helper()
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			f(x)
			for _, m := range x {
				walk(m)
			}
		case []any:
			for _, m := range x {
				walk(m)
			}
		}
	}
	for i := from; i < len(tr.Entries); i++ {
		if len(tr.Entries[i].Data) == 0 {
			continue
		}
		edit(t, tr, i, func(d map[string]any) { walk(d) })
	}
}

// causesOf diagnoses each scenario's pair of traces and groups the findings.
func causesOf(t *testing.T, runs ...portRun) []diagnose.Cause {
	t.Helper()
	var ds []diagnose.Diagnosis
	for _, r := range runs {
		ds = append(ds, diagnose.Diagnosis{Scenario: r.sc, Findings: diag(r.sc, r.want, r.got, diagnose.Options{})})
	}
	return diagnose.Group(ds)
}

type portRun struct {
	sc        diagnose.Scenario
	want, got *trace.Trace
}

// oneCause requires exactly one cause, of rule id, explaining every scenario of runs.
func oneCause(t *testing.T, causes []diagnose.Cause, id string, runs int) {
	t.Helper()
	for _, c := range causes {
		t.Logf("cause %q (%s): %d scenarios", c.Title, c.Rule, len(c.Explains))
	}
	if len(causes) != 1 {
		t.Fatalf("%d causes, want 1 of %s", len(causes), id)
	}
	if c := causes[0]; !strings.HasPrefix(c.Rule, id+" (") || len(c.Explains) != runs {
		t.Errorf("the cause is %q (%s) explaining %d scenarios, want %s explaining %d", c.Title, c.Rule, len(c.Explains), id, runs)
	}
}

// stopsReadingOnAbort is a loop that stops reading the stream when the run is aborted and
// makes up the aborted message itself: the stream's aborted error event is never delivered,
// and the message says its own words.
func stopsReadingOnAbort(t *testing.T, name string) portRun {
	t.Helper()
	sc, want := reference(t, name)
	got := clone(want)
	i := slices.IndexFunc(got.Entries, func(e trace.Entry) bool {
		return e.Kind == trace.KindDeliver && e.Name == trace.DeliverStreamEvent && bytes.Contains(e.Data, []byte(`"reason":"aborted"`))
	})
	if i < 0 {
		t.Fatalf("%s: no aborted error event", name)
	}
	got.Entries = slices.Delete(got.Entries, i, i+1)
	walkObjects(t, got, i, func(o map[string]any) {
		if o["errorMessage"] == "Request was aborted" {
			o["errorMessage"] = "Request aborted by user"
			// Stamped when the loop gave up, not by the provider.
			o["timestamp"] = o["timestamp"].(float64) + 1
		}
	})
	renumber(got)
	return portRun{sc, want, got}
}

// An abort while a response streams, or while its request is open, handled by the loop
// instead of the stream: one cause, R-ABORT-STREAM, whether the missing delivery comes
// before the message's start or its end.
func TestALoopThatStopsReadingOnAbortIsOneCauseOfItsRule(t *testing.T) {
	during := stopsReadingOnAbort(t, "abort-error/abort-during-stream")
	open := stopsReadingOnAbort(t, "abort-error/abort-on-request-open")
	fs := diag(during.sc, during.want, during.got, diagnose.Options{})
	if len(fs) == 0 || fs[0].RuleID != "R-ABORT-STREAM" || fs[0].Consequence {
		t.Fatalf("the first finding is not R-ABORT-STREAM's root: %v", fs)
	}
	for _, f := range fs[1:] {
		if !f.Consequence {
			t.Errorf("a second root: %v", f)
		}
	}
	oneCause(t, causesOf(t, during, open), "R-ABORT-STREAM", 2)
}

// executesInvalidCalls is a loop whose validator lets the call of tools-sequential/
// validation-failure through: the tool is called and answers "ok".
func executesInvalidCalls(t *testing.T) portRun {
	t.Helper()
	sc, want := reference(t, "tools-sequential/validation-failure")
	got := clone(want)
	i := find(t, got, "event tool_execution_end")
	var end struct {
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Args       json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(got.Entries[i].Data, &end); err != nil {
		t.Fatal(err)
	}
	call, _ := json.Marshal(map[string]any{"args": end.Args, "toolCallId": end.ToolCallID, "toolName": end.ToolName})
	got.Entries = slices.Insert(got.Entries, i,
		trace.Entry{Kind: trace.KindCall, Name: trace.CallTool, Data: call, Answer: json.RawMessage(`{}`)},
		trace.Entry{Kind: trace.KindDeliver, Name: trace.DeliverToolResult, Target: end.ToolCallID, Data: json.RawMessage(`{"result":{"content":[{"text":"ok","type":"text"}]}}`)})
	walkObjects(t, got, i+2, func(o map[string]any) {
		if o["isError"] == true {
			o["isError"] = false
		}
		if c, ok := o["content"].([]any); ok && len(c) == 1 {
			if b, ok := c[0].(map[string]any); ok && strings.HasPrefix(fmt.Sprint(b["text"]), "Validation failed") {
				b["text"] = "ok"
				delete(o, "details")
			}
		}
	})
	renumber(got)
	return portRun{sc, want, got}
}

// A call executed that validation refuses, its result the tool's: one cause, R-TOOL-VALIDATE
// (not R-TOOL-EXECUTE for the call and R-TOOL-ERROR-RESULT for the text).
func TestAnInvalidCallExecutedIsOneCauseOfValidation(t *testing.T) {
	oneCause(t, causesOf(t, executesInvalidCalls(t)), "R-TOOL-VALIDATE", 1)
}

// addsEmptyDetails is a loop that gives every tool-result message details {} when the result
// has none; want is the reference's trace of name with details taken off every tool result
// (a tool that answers without them).
func addsEmptyDetails(t *testing.T, name string) portRun {
	t.Helper()
	sc, want := reference(t, name)
	want = clone(want)
	walkObjects(t, want, 0, func(o map[string]any) {
		if _, ok := o["content"]; ok && (o["role"] == "toolResult" || o["role"] == nil) {
			if d, ok := o["details"].(map[string]any); ok && len(d) > 0 {
				delete(o, "details") // the tool's own details, not an error result's {}
			}
		}
	})
	got := clone(want)
	walkObjects(t, got, 0, func(o map[string]any) {
		if _, ok := o["details"]; !ok && o["role"] == "toolResult" {
			o["details"] = map[string]any{}
		}
	})
	return portRun{sc, want, got}
}

// details {} added to a tool's own results, an isError one among them: one cause,
// R-TOOL-RESULT-MESSAGE's details (R-TOOL-ERROR-RESULT is the shape of the loop's own error
// results, and a tool's isError result keeps its details).
func TestDetailsAddedToAToolsOwnErrorResultIsTheSameCause(t *testing.T) {
	failing := addsEmptyDetails(t, "tools-sequential/is-error-result")
	ok := addsEmptyDetails(t, "events/tool-turn")
	causes := causesOf(t, failing, ok)
	oneCause(t, causes, "R-TOOL-RESULT-MESSAGE", 2)
	if causes[0].Signature != "R-TOOL-RESULT-MESSAGE: details" {
		t.Errorf("signature %q, want the member's", causes[0].Signature)
	}
}

// Parallel calls started in reverse order, beside a details defect on every result: the order
// is a cause of its own, R-EXEC-PARALLEL, ranked among the causes.
func TestParallelCallsStartedInReverseAreACauseBesideAnother(t *testing.T) {
	withNullDetails := func(name string) portRun {
		sc, want := reference(t, name)
		got := clone(want)
		for i, e := range got.Entries {
			if trace.Key(e) == "event tool_execution_end" {
				edit(t, got, i, func(d map[string]any) { d["result"].(map[string]any)["details"] = nil })
			}
		}
		return portRun{sc, want, got}
	}
	par := withNullDetails("tools-parallel/default-is-parallel")
	i := find(t, par.got, "call tool")
	if trace.Key(par.got.Entries[i+1]) != "call tool" {
		t.Fatalf("the calls do not start together: %s", trace.Key(par.got.Entries[i+1]))
	}
	par.got.Entries[i].Data, par.got.Entries[i+1].Data = par.got.Entries[i+1].Data, par.got.Entries[i].Data
	causes := causesOf(t, par, withNullDetails("events/tool-turn"))
	var rules []string
	for _, c := range causes {
		rules = append(rules, c.Signature)
	}
	slices.Sort(rules)
	if !slices.Equal(rules, []string{"R-EXEC-PARALLEL", "R-TOOL-RESULT-MESSAGE: details"}) {
		t.Errorf("causes %q, want the order's and the details'", rules)
	}
}

// A message made at another time than the reference's says that time in its stamp: the stamp
// follows the time, and what else differs on the entry is the root.
func TestAStampThatFollowsItsEntrysTimeIsNotTheRoot(t *testing.T) {
	sc, want := reference(t, "abort-error/abort-during-stream")
	got := clone(want)
	// The message ends 5 ms early, with its own words; what comes after it comes early too.
	i := find(t, got, "event message_end assistant")
	var m struct{ Message struct{ Timestamp float64 } }
	if err := json.Unmarshal(got.Entries[i].Data, &m); err != nil {
		t.Fatal(err)
	}
	for j := i; j < len(got.Entries); j++ {
		got.Entries[j].T -= 5
	}
	walkObjects(t, got, i, func(o map[string]any) {
		if o["role"] == "assistant" && o["timestamp"] == m.Message.Timestamp {
			o["timestamp"] = m.Message.Timestamp - 5
			o["errorMessage"] = "Request aborted by user"
		}
	})
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) == 0 || fs[0].RuleID != "R-ABORT-STREAM" {
		t.Fatalf("the root is not the message's errorMessage: %v", fs)
	}
	for _, f := range fs {
		if f.RuleID == "R-TIME-STAMP" && !f.Consequence {
			t.Errorf("the stamp of a message made earlier is a root: %v", f)
		}
	}
}

// A tool's update emitted only once its execute returned, in a batch the run's abort reached:
// R-TOOL-UPDATES (an update's moment is that rule's in any batch), not R-ABORT-TOOLS.
func TestAnUpdateHeldBackAfterAnAbortIsTheUpdatesRule(t *testing.T) {
	f, err := scenarios.Parse("held-update.yaml", "abort-error/held-update.yaml", []byte(`name: abort-error/held-update
tools:
  - {name: write, description: the write tool, parameters: {type: object}, behaviour: {updates: [{at: 0, result: "write 1"}], result: ok}}
hooks: {steering: false, followUp: false}
provider:
  - {content: [{toolCall: {id: c1, name: write}}]}
extraResponse: extra
user:
  - {on: {event: tool_execution_start, toolCallId: c1}, abort: true}
run: []
`))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := sim.Run(f.Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	want := ref.Expanded()
	got := clone(want)
	u := find(t, got, "event tool_execution_update")
	if trace.Key(got.Entries[u+1]) != "deliver toolResult" {
		t.Fatalf("the update is not followed by the result's delivery: %s", trace.Key(got.Entries[u+1]))
	}
	got.Entries[u], got.Entries[u+1] = got.Entries[u+1], got.Entries[u]
	renumber(got)
	oneCause(t, causesOf(t, portRun{diagnose.FromFile(f), want, got}), "R-TOOL-UPDATES", 1)
}
