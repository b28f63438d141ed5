package sim_test

import (
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

func TestSmoke(t *testing.T) {
	sc := &sim.Scenario{
		Name:    "smoke",
		Model:   loop.Model{ID: "m", API: "faux", Provider: "faux"},
		Tools:   []sim.ToolSpec{{Name: "read", Description: "reads", Parameters: map[string]any{"type": "object"}, Behaviour: sim.Behaviour{Duration: 30, Result: loop.ToolResult{Content: loop.Text("ok")}}}},
		Prompts: []loop.Message{&loop.UserMessage{Text: "hi"}},
		Responses: []sim.Response{
			{Content: []loop.Block{loop.ToolCall{ID: "t1", Name: "read", Arguments: map[string]any{}}}, Delay: 5},
			{Content: loop.Text("done"), Delay: 5},
		},
	}
	tr, err := sim.Run(sc, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	// One tool turn and a text turn: the tool settles 30ms after it starts at 5ms.
	got := string(tr.Timeline())
	for _, want := range []string{
		"      5ms  call  tool t1 read {}",
		"     35ms  ev    tool_execution_end t1 read ok 30ms [\"ok\"]",
		"     40ms  ev    agent_end [system user assistant toolResult assistant]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline lacks %q:\n%s", want, got)
		}
	}
}

// TestRepeatedIDInOneResponseDoesNotHang: the Go API can build what the loader refuses, two
// calls of one response with one id; the second fails instead of leaving a task parked.
func TestRepeatedIDInOneResponseDoesNotHang(t *testing.T) {
	sc := &sim.Scenario{
		Name:    "same-id",
		Prompts: []loop.Message{&loop.UserMessage{Text: "go"}},
		Tools:   []sim.ToolSpec{{Name: "a", Behaviour: sim.Behaviour{Duration: 5}}, {Name: "b", Behaviour: sim.Behaviour{Duration: 5}}},
		Responses: []sim.Response{
			{Content: []loop.Block{loop.ToolCall{ID: "c1", Name: "a"}, loop.ToolCall{ID: "c1", Name: "b"}}},
			{Content: loop.Text("done")},
		},
	}
	tr, err := sim.Run(sc, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tr.Timeline()), "tool call c1 is already running") {
		t.Errorf("the second call did not fail:\n%s", tr.Timeline())
	}
}
