package invariant

import (
	"math"
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestRunEndsAreTheirData: the end entry made for each run of an Agent trace carries as its
// values what its data decodes to, and its data is what the world would write: the agent_end's
// messages, or the failure of a run the Agent ended with its error turn (both kinds met).
func TestRunEndsAreTheirData(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]int{}
	for _, f := range files {
		tr, err := sim.Run(f.Scenario, sim.NewReference())
		if err != nil || !trace.IsAgentTrace(tr.Entries) {
			continue
		}
		for _, r := range runsOf(newView(tr)) {
			for i, j := range r.from {
				if j >= 0 {
					continue
				}
				e := r.es[i]
				if !r.decoded[i] || !reflect.DeepEqual(r.data[i], decodeJSON(e.Data)) {
					t.Errorf("%s: the end of a run carries %s, its data is %s", f.Rel, show(r.data[i]), e.Data)
				}
				ends[e.Error]++
			}
		}
	}
	if len(ends) < 2 || ends[""] == 0 {
		t.Fatalf("run ends met: %v; want ended runs and failed ones", ends)
	}
}

// TestIdenticalIsTheSameText: two decoded values are identical exactly when encoding/json
// writes them alike.
func TestIdenticalIsTheSameText(t *testing.T) {
	values := []any{nil, 0.0, math.Copysign(0, -1), 1.0, "a", "", true, false,
		map[string]any{}, []any{}, map[string]any{"a": 0.0}, map[string]any{"a": math.Copysign(0, -1)},
		map[string]any{"a": []any{"x", 1.0}}, map[string]any{"a": []any{"x", 1.0}}, []any{nil}, []any{map[string]any{}},
		noMessage{}}
	for _, a := range values {
		for _, b := range values {
			if _, ok := a.(noMessage); ok {
				if identical(a, b) != (b == noMessage{}) {
					t.Errorf("identical(noMessage, %#v) = %v", b, identical(a, b))
				}
				continue
			}
			if _, ok := b.(noMessage); ok {
				continue
			}
			if got, want := identical(a, b), show(a) == show(b); got != want {
				t.Errorf("identical(%s, %s) = %v", show(a), show(b), got)
			}
		}
	}
}
