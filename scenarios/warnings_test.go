package scenarios_test

import (
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestWarningsNameEveryPartOfTheScriptThatNeverTookEffect: a response never requested, an
// update due after its tool settled (once per line, however many calls ran it late; whether
// it was delivered late or the run was over first; one due at the tool's duration comes
// first and takes effect), and a user action whose trigger never
// fired are each a warning at their line, in the file's order.
func TestWarningsNameEveryPartOfTheScriptThatNeverTookEffect(t *testing.T) {
	src := `tools:
  - name: read
    behaviour:
      duration: 10
      updates:
        - {at: 10, result: at the end}
        - {at: 12, result: too late}
      result: ok
toolCalls:
  r2:
    duration: 5
    updates:
      - {at: 9, result: late for r2}
    result: ok
provider:
  - content: [{toolCall: {id: r1, name: read, arguments: {}}}, {toolCall: {id: r3, name: read, arguments: {}}}]
  - content: [{toolCall: {id: r2, name: read, arguments: {}}}]
  - done
  - never asked
  - nor this
user:
  - on: {event: tool_execution_update, toolCallId: r1, nth: 2}
    steer: [never sent]
run: [hi]
`
	f, err := scenarios.Parse("w.yaml", "w", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sim.Run(f.Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"w.yaml:7:11: warning: this update never took effect: it is due at 12ms, after tool call r1 settled at 10ms (a loop drops it)",
		"w.yaml:13:9: warning: this update never took effect: it is due at 19ms, after tool call r2 settled at 15ms (a loop drops it)",
		"w.yaml:19:5: warning: this response was never requested: the run made 3 requests",
		"w.yaml:20:5: warning: this response was never requested: the run made 3 requests",
		"w.yaml:22:5: warning: this user action never happened: its trigger never fired",
	}
	if got := f.Warnings(tr); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s\ntimeline:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), tr.Timeline())
	}
}

// TestTheCuratedSuiteWarnsOnlyOfItsTraps: the curated suite's warnings are the parts it
// scripts on purpose for a wrong loop to trip on; a new one is a mistake or a new trap, to be
// added here knowingly.
func TestTheCuratedSuiteWarnsOnlyOfItsTraps(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	traps := map[string]int{ // scenario: warnings
		"agent/abort-during-stream": 1, "agent/aborted-error-turn": 1, "continue/refuses-assistant-tail": 1,
		"continue/refuses-empty-context": 1, "prepare-hooks/prepare-next-turn-throws": 1,
		"prepare-hooks/prepare-request-throws": 1, "prepare-hooks/transform-context-throws": 1,
		"tools-parallel/update-after-settle": 1, "agent/update-after-run": 1,
	}
	total := 0
	for _, f := range files {
		tr, err := sim.Run(f.Scenario, sim.NewReference())
		if err != nil {
			t.Fatal(err)
		}
		var ws []string
		for _, w := range f.Warnings(tr) {
			if !strings.Contains(w, "this user action never happened") { // pinned by the CLI's tests
				ws = append(ws, w)
			}
		}
		total += len(ws)
		if len(ws) != traps[f.Rel] {
			t.Errorf("%s: %d warnings, want %d:\n%s", f.Rel, len(ws), traps[f.Rel], strings.Join(ws, "\n"))
		}
	}
	if total != 9 {
		t.Errorf("%d warnings in the suite, want 9", total)
	}
}
