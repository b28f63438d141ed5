package explore_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
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
	// A batch whose mode a called tool's own executionMode decides exercises R-EXEC-MODE (a
	// stranger's review: a loop that made a batch sequential only when every tool said so was
	// led to R-EXEC-SEQUENTIAL alone).
	got = parse(`
tools: [{name: a, executionMode: sequential, behaviour: {result: ok}}, {name: b, behaviour: {result: ok}}]
provider:
  - content: [{toolCall: {id: c1, name: a, arguments: {}}}, {toolCall: {id: c2, name: b, arguments: {}}}]
  - ok
run: [hi]
`)
	if want := []string{"R-EXEC-MODE", "R-EXEC-SEQUENTIAL"}; !slices.Equal(got, want) {
		t.Errorf("a tool's mode: exercised %v, want %v", got, want)
	}
}

// TestRecordRecheckTellsEachCausesREADME: the one-at-a-time verdict reaches the README of
// each cause whose minimal scenario was re-run, and only those.
func TestRecordRecheckTellsEachCausesREADME(t *testing.T) {
	var res explore.Result
	for _, name := range []string{"seed-1", "seed-2", "seed-3"} {
		dir := t.TempDir()
		readme := "# explore\n\nThe exchange's shortcuts were taken: deliveries were sent ahead:\nif the failures go away with turnstile conform --one-at-a-time, they are the cause: most likely the adapter\napplies a delivery before it is idle\n\n## Findings of the minimal scenario\n"
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		res.Failures = append(res.Failures, &explore.Failure{Dir: dir, Minimal: &sim.Scenario{Name: name}})
	}
	res.Recheck = &conformance.Recheck{Checked: []string{"seed-1", "seed-2"}, Passed: []string{"seed-2"}}
	if err := explore.RecordRecheck(res); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"it fails too", "it passes", ""} {
		readme, _ := os.ReadFile(filepath.Join(res.Failures[i].Dir, "README.md"))
		text := string(readme)
		if got := strings.Contains(text, "Without the shortcuts: "); got != (want != "") || !strings.Contains(text, want) {
			t.Errorf("cause %d:\n%s", i+1, readme)
		}
		// The verdict replaces the suggestion to check, where it stood.
		if want != "" && (strings.Contains(text, "if the failures go away") || strings.Index(text, want) > strings.Index(text, "## Findings")) {
			t.Errorf("cause %d: the verdict is not where the suggestion was:\n%s", i+1, readme)
		}
	}
	// The summary names the re-run scenarios by their causes' numbers, not their seeds.
	res.Shortcuts = protocol.Shortcuts{DeliveriesAhead: true}
	if summary := explore.Summary(res); !strings.Contains(summary, "1 of the 2 failing scenarios re-run pass (cause 2)") {
		t.Errorf("summary:\n%s", summary)
	}
}

// TestSummarySaysWhatIsNotExplored: a clean exploration says which optional features no
// generated scenario reached, and why (the target lacks them, its pi predates them, --entry),
// so that "no failure found" is not read as covering them; exploring everything says nothing.
func TestSummarySaysWhatIsNotExplored(t *testing.T) {
	res := explore.Run(context.Background(), explore.Options{Runs: 10, Entry: explore.EntryLoop,
		Target: explore.Target{Lacks: []string{sim.FeatureAbortInHook}, Tracks: "0.87.1"}})
	s := explore.Summary(res)
	if !strings.Contains(s, "no failure found\nnot explored (no generated scenario needs them): toolResolvesNothing (pi 0.87.1 predates it), abortInHook (lacked), agent (--entry loop)\n") {
		t.Errorf("summary:\n%s", s)
	}
	if s := explore.Summary(explore.Run(context.Background(), explore.Options{Runs: 10})); strings.Contains(s, "not explored") {
		t.Errorf("an exploration of everything says something is not explored:\n%s", s)
	}
}
