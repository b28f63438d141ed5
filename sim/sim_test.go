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
