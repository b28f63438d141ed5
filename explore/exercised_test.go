package explore_test

import (
	"slices"
	"testing"

	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/scenarios"
)

// TestExercisedNamesTheRulesAScenarioTouches: hooks, a sequential batch, a truncated one and
// a steered message each add their rule, in the contract's order; a plain turn adds none.
func TestExercisedNamesTheRulesAScenarioTouches(t *testing.T) {
	parse := func(yaml string) []string {
		t.Helper()
		f, err := scenarios.Parse("x.yaml", "x", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		return explore.Exercised(f.Scenario)
	}
	if got := parse("run: [hi]\nprovider: [ok]\n"); len(got) != 0 {
		t.Errorf("a plain turn exercises %v", got)
	}
	got := parse(`
tools: [{name: a, executionMode: sequential, behaviour: {result: ok}}]
hooks: {afterToolCall: {}}
provider:
  - content: [{toolCall: {id: c1, name: a, arguments: {}}}]
  - content: [{toolCall: {id: c2, name: a, arguments: {}}}]
    stopReason: length
  - ok
user: [{on: {event: turn_end}, steer: [more]}]
run: [hi]
`)
	want := []string{"R-POLL-C", "R-TOOL-AFTER", "R-EXEC-SEQUENTIAL", "R-TRUNC-FAIL"}
	if !slices.Equal(got, want) {
		t.Errorf("exercised %v, want %v", got, want)
	}
}
