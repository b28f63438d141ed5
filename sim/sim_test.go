package sim_test

import (
	"fmt"
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
	for _, e := range tr.Entries {
		fmt.Println(sim.TimelineLine(e))
	}
}

func trunc(s string) string {
	if len(s) > 100 {
		return s[:100]
	}
	return s
}
