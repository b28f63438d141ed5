package sim_test

import (
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// hourScenario runs one tool for a virtual hour, with an update every virtual minute.
func hourScenario() *sim.Scenario {
	b := sim.Behaviour{Duration: 3_600_000, Result: loop.ToolResult{Content: loop.Text("done")}}
	for m := range 60 {
		b.Updates = append(b.Updates, sim.Update{At: int64(m) * 60_000, Result: loop.ToolResult{Content: loop.Text("tick")}})
	}
	return &sim.Scenario{
		Name:    "hour",
		Prompts: []loop.Message{&loop.UserMessage{Text: "wait an hour"}},
		Tools:   []sim.ToolSpec{{Name: "wait", Behaviour: b}},
		Responses: []sim.Response{
			{Content: []loop.Block{loop.ToolCall{ID: "w", Name: "wait"}}},
			{Content: loop.Text("waited")},
		},
	}
}

// BenchmarkSimulatedHour measures the wall time of one simulated hour of tool time (with 60
// updates), trace recording included. Target: well under 1 ms per op.
func BenchmarkSimulatedHour(b *testing.B) {
	sc := hourScenario()
	for b.Loop() {
		tr, err := sim.Run(sc, sim.NewReference())
		if err != nil || tr.Failed() {
			b.Fatal(err)
		}
	}
}

// BenchmarkSimulatedHourQuiet is the same hour without updates: the cost of virtual time
// alone.
func BenchmarkSimulatedHourQuiet(b *testing.B) {
	sc := hourScenario()
	sc.Tools[0].Behaviour.Updates = nil
	for b.Loop() {
		if _, err := sim.Run(sc, sim.NewReference()); err != nil {
			b.Fatal(err)
		}
	}
}
