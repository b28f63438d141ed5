package sim_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestBytesBudgetIsTheTraceInFull: the bytes budget counts exactly the trace in full (its
// links restored), in the curated suite and generated runs, in-process and over JSON: a run
// fits a budget of that size and is stopped by one a byte smaller.
func TestBytesBudgetIsTheTraceInFull(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 10
	}
	list := append(suiteAndGenerated(t, 13, n), streamedScenarios()...)
	impls := map[string]func() sim.Implementation{
		"values": func() sim.Implementation { return sim.NewReference() },
		"JSON":   func() sim.Implementation { return viaJSON{sim.NewReference()} },
	}
	for _, sc := range list {
		for how, impl := range impls {
			tr, err := sim.Run(sc, impl())
			if err != nil {
				continue // stopped by its own budget, or broken by design
			}
			size := int64(len(tr.Expanded().JSONL()))
			c := *sc
			c.Budget.Bytes = size
			if _, err := sim.Run(&c, impl()); err != nil {
				t.Errorf("%s (%s): a bytes budget of its trace in full (%d) stops it: %v", sc.Name, how, size, err)
			}
			c.Budget.Bytes = size - 1
			var be *sim.BudgetError
			if _, err := sim.Run(&c, impl()); !errors.As(err, &be) || be.Budget != "bytes" {
				t.Errorf("%s (%s): a bytes budget a byte under its trace in full (%d) does not stop it: %v", sc.Name, how, size, err)
			}
		}
	}
}

// streamedScenarios stream texts and thinking in small deltas: texts with characters JSON
// escapes, and with invalid UTF-8 cut between deltas, whose writing depends on what follows.
func streamedScenarios() []*sim.Scenario {
	var out []*sim.Scenario
	for i, text := range []string{"plain text", "é <b>&\"\\ \u2028\n€", "a\xffb\xe2\x82\xacc\xe2\x82", "\xe2\x82\xac\xe2\x82x\xf0\x9f\x98"} {
		for _, size := range []int{1, 2, 3} {
			out = append(out, &sim.Scenario{
				Name:    fmt.Sprintf("streamed-%d-%d", i, size),
				Prompts: []loop.Message{&loop.UserMessage{Text: "go"}},
				Tools:   []sim.ToolSpec{{Name: "noop", Behaviour: sim.Behaviour{Result: loop.ToolResult{Content: loop.Text(text)}}}},
				Responses: []sim.Response{
					{Content: []loop.Block{loop.ThinkingContent{Thinking: text}, loop.TextContent{Text: text},
						loop.ToolCall{ID: "t", Name: "noop", Arguments: map[string]any{"x": text}}}, DeltaSize: size},
					{Content: []loop.Block{loop.TextContent{Text: text}, loop.TextContent{Text: text}}, DeltaSize: size},
				},
			})
		}
	}
	return out
}

// endlessWithTools is the endless scenario whose every response calls a tool: each request
// sends a context two messages longer than the one before.
func endlessWithTools() *sim.Scenario {
	call := &sim.Response{Content: []loop.Block{loop.ToolCall{ID: "tool-1", Name: "noop", Arguments: map[string]any{}}}}
	return &sim.Scenario{
		Name:          "endless-tools",
		Prompts:       []loop.Message{&loop.UserMessage{Text: "go"}},
		Tools:         []sim.ToolSpec{{Name: "noop", Description: "Noop", Behaviour: sim.Behaviour{Result: loop.ToolResult{Content: loop.Text("done")}}}},
		Hooks:         sim.Hooks{FinishTurn: &sim.Script[sim.FinishAnswer]{Default: sim.FinishAnswer{Action: loop.DecisionContinue}}},
		ExtraResponse: call,
	}
}

// TestEndlessRunsStayBoundedInFull: an endless run whose context grows stops on the default
// budget with a trace whose full form (what the invariants, expect:, the timeline and the
// comparisons expand it to) stays within the bytes budget, in-process and over JSON. Counting
// the linear form only, both reached a thousand requests, 476 and 755 MB in full.
func TestEndlessRunsStayBoundedInFull(t *testing.T) {
	for _, sc := range []*sim.Scenario{endless(), endlessWithTools()} {
		for how, impl := range map[string]sim.Implementation{"values": sim.NewReference(), "JSON": viaJSON{sim.NewReference()}} {
			tr, err := sim.Run(sc, impl)
			var be *sim.BudgetError
			if !errors.As(err, &be) {
				t.Fatalf("%s (%s): no budget verdict: %v", sc.Name, how, err)
			}
			if size := int64(len(tr.Expanded().JSONL())); size > sim.DefaultBudget.Bytes {
				t.Errorf("%s (%s): stopped by %s (%s) with %d bytes in full, budget %d", sc.Name, how, be.Budget, be.Text, size, sim.DefaultBudget.Bytes)
			}
		}
	}
}

// BenchmarkEndlessWithToolsToBudget is the time the endless scenario with tools takes to
// reach the default budget, its trace expanded as every check expands it: well under a
// second, and the trace in full within the bytes budget (reported as full-MB).
func BenchmarkEndlessWithToolsToBudget(b *testing.B) {
	var size int
	for b.Loop() {
		tr, err := sim.Run(endlessWithTools(), sim.NewReference())
		if err == nil {
			b.Fatal("the endless scenario ended without a verdict")
		}
		size = len(tr.Expanded().JSONL())
	}
	b.ReportMetric(float64(size)/1e6, "full-MB")
}
