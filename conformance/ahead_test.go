package conformance_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// aheadLines counts the deliver lines of a protocol log written while the implementation was
// not idle: after a line of its own other than idle (a call answered, an event), or after
// another delivery.
func aheadLines(log string) int {
	n, idle := 0, true
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.HasPrefix(line, `> {"type":"deliver"`):
			if !idle {
				n++
			}
			idle = false
		case strings.HasPrefix(line, `< {"type":"idle"`):
			idle = true
		case strings.HasPrefix(line, "< "), strings.HasPrefix(line, `> {"type":"answer"`):
			idle = false
		}
	}
	return n
}

// TestDeliveriesAhead: the reference served over the protocol takes deliveries ahead (§14);
// the harness sends those certain to come next without waiting for each idle, and the trace
// is the one of the exchange one delivery at a time, byte for byte.
func TestDeliveriesAhead(t *testing.T) {
	tools := sim.Scenario{
		Name: "ahead", Model: testModel, Prompts: []loop.Message{user("go")},
		Tools: []sim.ToolSpec{tool("a", ok("1", 0)), tool("b", ok("2", 0))},
		Responses: []sim.Response{
			{Content: []loop.Block{call("a1", "a", map[string]any{}), call("b1", "b", map[string]any{})}},
			{Content: loop.Text("done"), DeltaSize: 1},
		},
		User: []sim.UserAction{{On: &sim.Trigger{Event: loop.ToolExecutionEnd, ToolCallID: "a1"}, Steer: []loop.Message{user("and?")}}},
	}
	// The same, stopped by its budget at every entry: deliveries sent ahead may still be
	// unapplied, and applied after the world closed they must show nowhere, and their calls
	// must be answered before stop is sent (found by a review: at 10 entries, stop reached
	// the adapter while such a call waited for its answer).
	both := servedBothWays(t)
	for _, sc := range withEntryBudgets(tools, 5, 60) {
		t.Run(sc.Name, func(t *testing.T) {
			shortcuts, plain, want := both.run(t, sc)
			if n := aheadLines(shortcuts); n < 3 && sc.Budget.Entries == 0 {
				t.Errorf("%d deliveries sent ahead; want at least the stream's events and a tool result:\n%s", n, shortcuts)
			}
			if n := aheadLines(plain); n != 0 {
				t.Errorf("OneAtATime: %d deliveries sent ahead:\n%s", n, plain)
			}
			if sc.Budget.Entries > 0 && sc.Budget.Entries < 40 && !bytes.Contains(want.Timeline(), []byte("budget")) {
				t.Fatalf("the budget did not stop the run:\n%s", want.Timeline())
			}
		})
	}
}

// withEntryBudgets is sc, then sc stopped by its budget at every number of entries from
// first to last.
func withEntryBudgets(sc sim.Scenario, first, last int) []*sim.Scenario {
	list := []*sim.Scenario{&sc}
	for entries := first; entries <= last; entries++ {
		stopped := sc
		stopped.Name, stopped.Budget = fmt.Sprintf("%s-budget-%d", sc.Name, entries), sim.Budget{Entries: entries}
		list = append(list, &stopped)
	}
	return list
}

// bothWays is the reference served over the protocol by two processes: one with the
// exchange's shortcuts (deliveries ahead, standing and early answers), one at a time.
type bothWays [2]*protocol.Process

func servedBothWays(t *testing.T) bothWays {
	shortcuts, plain := selfadapter.Process(t, "serve"), selfadapter.Process(t, "serve")
	plain.OneAtATime = true
	return bothWays{shortcuts, plain}
}

// run runs sc both ways and holds both traces and errors to the in-process reference's; it
// returns the two protocol logs and the reference's trace.
func (b bothWays) run(t *testing.T, sc *sim.Scenario) (shortcuts, plain string, want *trace.Trace) {
	t.Helper()
	want, wantErr := sim.Run(sc, sim.NewReference())
	var logs [2]bytes.Buffer
	for i, p := range b {
		oneAtATime := p.OneAtATime
		p.Log = &logs[i]
		got, err := sim.Run(sc, p)
		p.Log = nil
		var wantBudget, gotBudget *sim.BudgetError
		if errors.As(wantErr, &wantBudget) != errors.As(err, &gotBudget) || (wantErr == nil) != (err == nil) {
			t.Fatalf("one at a time %v: error %v, the reference's %v", oneAtATime, err, wantErr)
		}
		if !bytes.Equal(got.JSONL(), want.JSONL()) {
			t.Fatalf("one at a time %v: traces differ\nwant:\n%s\ngot:\n%s", oneAtATime, want.Timeline(), got.Timeline())
		}
	}
	return logs[0].String(), logs[1].String(), want
}

// TestFailuresWithDeliveriesAheadPointToOneAtATime: a report of a run with deliveries ahead
// and standing answers that failed says how to rule the adapter's queue and standing answers
// out; one that passed, or ran one at a time, says nothing of it.
func TestFailuresWithDeliveriesAheadPointToOneAtATime(t *testing.T) {
	sc := []*sim.Scenario{{Name: "ahead", Model: testModel, Prompts: []loop.Message{user("go")},
		Responses: []sim.Response{{Content: loop.Text("hi")}}}}
	for _, c := range []struct {
		oneAtATime, fail, note bool
	}{{false, true, true}, {false, false, false}, {true, true, false}} {
		p := selfadapter.Process(t, "serve")
		p.OneAtATime = c.oneAtATime
		r := conformance.Verify(context.Background(), sc, p, conformance.Options{})
		if r.DeliveriesAhead == c.oneAtATime || r.StandingAnswers == c.oneAtATime {
			t.Errorf("one at a time %v: DeliveriesAhead %v, StandingAnswers %v", c.oneAtATime, r.DeliveriesAhead, r.StandingAnswers)
		}
		if c.fail {
			r.Failed++
		}
		var b strings.Builder
		if err := r.WriteSummary(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "--one-at-a-time") && strings.Contains(b.String(), "§15"); got != c.note {
			t.Errorf("one at a time %v, failed %v: note %v, want %v:\n%s", c.oneAtATime, c.fail, got, c.note, b.String())
		}
	}
}

// TestRecheckTellsWhetherTheShortcutsAreTheCause: failures re-run without the shortcuts
// that pass blame the adapter's handling of them; failures that stay rule them out; a run
// that took no shortcut is not re-run.
func TestRecheckTellsWhetherTheShortcutsAreTheCause(t *testing.T) {
	sc := &sim.Scenario{Name: "hi", Model: testModel, Prompts: []loop.Message{user("go")},
		Responses: []sim.Response{{Content: loop.Text("hi")}}}
	failed := func(ahead bool) conformance.Report {
		return conformance.Report{DeliveriesAhead: ahead, Failed: 1, Results: []conformance.Result{{Scenario: "hi", Status: conformance.Fail}}}
	}
	summary := func(r conformance.Report) string {
		var b strings.Builder
		if err := r.WriteSummary(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	r := failed(true)
	conformance.RecheckWithoutShortcuts(context.Background(), &r, []*sim.Scenario{sc}, sim.NewReference(), 3, conformance.Options{})
	if r.Recheck == nil || len(r.Recheck.Passed) != 1 || !strings.Contains(summary(r), "1 of the 1 failing scenarios re-run pass (hi)") {
		t.Errorf("passing one at a time: %+v\n%s", r.Recheck, summary(r))
	}
	r = failed(true)
	wrong := rewriting{Reference: sim.NewReference(), rewrite: noThinkingLevel}
	conformance.RecheckWithoutShortcuts(context.Background(), &r, []*sim.Scenario{sc}, wrong, 3, conformance.Options{})
	if s := summary(r); r.Recheck == nil || len(r.Recheck.Checked) != 1 || len(r.Recheck.Passed) != 0 ||
		!strings.Contains(s, "checked, one scenario per cause: hi fails without the exchange's shortcuts too") || !strings.Contains(s, "so the failures are the loop's, not the shortcuts'") || strings.Contains(s, "--one-at-a-time, they are") {
		t.Errorf("failing one at a time: %+v\n%s", r.Recheck, s)
	}
	r.Recheck.Untried = 2
	if s := summary(r); !strings.Contains(s, "; 2 more causes not re-run (--one-at-a-time tries them all)") {
		t.Errorf("causes left untried are not said:\n%s", s)
	}
	r = failed(false)
	conformance.RecheckWithoutShortcuts(context.Background(), &r, []*sim.Scenario{sc}, sim.NewReference(), 3, conformance.Options{})
	if r.Recheck != nil {
		t.Errorf("no shortcut taken, yet re-run: %+v", r.Recheck)
	}
	// A scenario listed as a known failure that passes fails the run; passing again one at
	// a time blamed the shortcuts for the stale list (a stranger's port, fixed).
	r = conformance.Verify(context.Background(), []*sim.Scenario{sc}, sim.NewReference(), conformance.Options{ExpectFail: map[string]bool{"hi": true}})
	r.DeliveriesAhead = true
	if len(r.Results) != 1 || !r.Results[0].UnexpectedPass() {
		t.Fatalf("not an unexpected pass: %+v", r.Results)
	}
	conformance.RecheckWithoutShortcuts(context.Background(), &r, []*sim.Scenario{sc}, sim.NewReference(), 3, conformance.Options{})
	if s := summary(r); strings.Contains(s, "shortcuts") {
		t.Errorf("an unexpected pass was re-run and blamed on the shortcuts: %+v\n%s", r.Recheck, s)
	}
}

// TestRecheckTakesOneScenarioPerCause: the scenarios re-run are one per cause, the causes
// touching the most first, and the causes left over are counted, not spoken for.
func TestRecheckTakesOneScenarioPerCause(t *testing.T) {
	var suite []*sim.Scenario
	r := conformance.Report{DeliveriesAhead: true, Failed: 3}
	for _, name := range []string{"a", "b", "c"} {
		suite = append(suite, &sim.Scenario{Name: name, Model: testModel, Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{{Content: loop.Text("hi")}}})
		r.Results = append(r.Results, conformance.Result{Scenario: name, Status: conformance.Fail})
	}
	r.Causes = []diagnose.Cause{{Explains: []string{"b", "a"}}, {Explains: []string{"c"}}}
	conformance.RecheckWithoutShortcuts(context.Background(), &r, suite, sim.NewReference(), 1, conformance.Options{})
	if r.Recheck == nil || !slices.Equal(r.Recheck.Checked, []string{"b"}) || r.Recheck.Untried != 1 {
		t.Errorf("recheck %+v", r.Recheck)
	}
}
