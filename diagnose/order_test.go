package diagnose_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/trace"
)

// Order defects of loops written without pi's code, made by hand on the reference's trace:
// each is one cause, named by the rule of the order it breaks.

// endsTurnBeforeFinish is a loop that emits turn_end before it calls finishTurn: the call
// moves after the turn's end, or, when finishTurn throws (no turn_end in the reference), a
// turn_end comes before it.
func endsTurnBeforeFinish(t *testing.T, name string) portRun {
	t.Helper()
	sc, want := reference(t, name)
	got := clone(want)
	for i := 0; i < len(got.Entries); i++ {
		if trace.Key(got.Entries[i]) != "call finishTurn" {
			continue
		}
		end := slices.IndexFunc(got.Entries[i:], func(e trace.Entry) bool { return trace.Key(e) == "event turn_end" })
		if end == 1 {
			got.Entries[i], got.Entries[i+1] = got.Entries[i+1], got.Entries[i]
			i++
			continue
		}
		// No turn_end follows (finishTurn threw): the loop's comes first.
		asst := got.Entries[slices.IndexFunc(got.Entries, func(e trace.Entry) bool { return trace.Key(e) == "event message_end assistant" })]
		var m struct{ Message json.RawMessage }
		if err := json.Unmarshal(asst.Data, &m); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(map[string]any{"message": m.Message, "toolResults": []any{}})
		got.Entries = slices.Insert(got.Entries, i, trace.Entry{T: got.Entries[i].T, Kind: trace.KindEvent, Name: "turn_end", Data: data})
		i++
	}
	renumber(got)
	return portRun{sc, want, got}
}

// turn_end before finishTurn, in a turn that ends the run, one that goes on and one whose
// finishTurn throws: one cause, R-FINISH-WHEN (not the extra turn_end's R-TURN-REQUEST, nor
// the invariants the turn_end breaks before the moved call).
func TestTurnEndBeforeFinishTurnIsOneCause(t *testing.T) {
	oneCause(t, causesOf(t,
		endsTurnBeforeFinish(t, "finish-turn/end-event-sequence"),
		endsTurnBeforeFinish(t, "finish-turn/after-tool-results"),
		endsTurnBeforeFinish(t, "finish-turn/throws"),
	), "R-FINISH-WHEN", 3)
}

// A loop that puts the steering it took before prepareNextTurn's messages, one of them a
// system message that took the turn's tool changes: R-PREPARE-NEXT-TURN (the system message
// is prepareNextTurn's, not a declaration of the loop's own, R-DECL-WHEN's).
func TestPreparedSystemMessageAfterSteeringIsPrepareNextTurns(t *testing.T) {
	sc, want := reference(t, "transcript/prepared-system-message-takes-delta")
	got := clone(want)
	sys := slices.IndexFunc(got.Entries, func(e trace.Entry) bool {
		return trace.Key(e) == "event message_start system" && bytes.Contains(e.Data, []byte("updated guidance"))
	})
	if sys < 0 || trace.Key(got.Entries[sys+2]) != "event message_start user" {
		t.Fatalf("the reference's trace has no prepared system message before a user message")
	}
	pair := slices.Clone(got.Entries[sys : sys+2])
	got.Entries = slices.Delete(got.Entries, sys, sys+2)
	got.Entries = slices.Insert(got.Entries, sys+2, pair...)
	renumber(got)
	fs := diag(sc, want, got, diagnose.Options{})
	if len(fs) == 0 || fs[0].RuleID != "R-PREPARE-NEXT-TURN" {
		t.Fatalf("the first finding is not R-PREPARE-NEXT-TURN's: %+v", fs)
	}
}

// Tool-result messages emitted in the order the calls completed, not the calls' order: one
// cause, R-EXEC-PARALLEL, titled as an order (not "toolCallId differs").
func TestResultMessagesInCompletionOrderAreTheBatchsOrder(t *testing.T) {
	r := func(name string) portRun {
		sc, want := reference(t, name)
		got := clone(want)
		for _, key := range []string{"event message_start toolResult", "event message_end toolResult"} {
			var at []int
			for i, e := range got.Entries {
				if trace.Key(e) == key {
					at = append(at, i)
				}
			}
			if len(at) < 2 {
				t.Fatalf("%s: fewer than two %s", name, key)
			}
			got.Entries[at[0]].Data, got.Entries[at[1]].Data = got.Entries[at[1]].Data, got.Entries[at[0]].Data
		}
		return portRun{sc, want, got}
	}
	causes := causesOf(t, r("tools-parallel/completion-order"))
	oneCause(t, causes, "R-EXEC-PARALLEL", 1)
	if !strings.Contains(causes[0].Title, "in another order") {
		t.Errorf("title %q does not say the order", causes[0].Title)
	}
}
