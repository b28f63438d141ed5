// Package bench holds the benchmark scenario shapes shared by the Go benchmarks and the pi
// baseline (bench/pi-baseline.mjs builds the same shapes for pi), and the side-by-side
// runner behind `make bench-vs-pi`.
package bench

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// Shape is one benchmark situation.
type Shape struct {
	Name string
	// Turns is the number of provider requests one run makes.
	Turns    int
	Scenario func() *sim.Scenario
}

// Shapes are the benchmark situations, in the order the pi baseline prints them.
var Shapes = []Shape{
	{Name: "10x2-parallel-tools", Turns: 11, Scenario: parallelTools},
	{Name: "100-turns", Turns: 101, Scenario: hundredTurns},
	{Name: "1000-deltas", Turns: 1, Scenario: thousandDeltas},
}

func tool(name string) sim.ToolSpec {
	return sim.ToolSpec{Name: name, Description: "d", Parameters: map[string]any{"type": "object"},
		Behaviour: sim.Behaviour{Result: loop.ToolResult{Content: loop.Text("ok"), Details: map[string]any{}}}}
}

func base(name string) *sim.Scenario {
	return &sim.Scenario{Name: name, Prompts: []loop.Message{&loop.UserMessage{Text: "go"}}}
}

// parallelTools: 10 turns each calling two tools in parallel, then a text turn.
func parallelTools() *sim.Scenario {
	sc := base("10x2-parallel-tools")
	sc.Tools = []sim.ToolSpec{tool("a"), tool("b")}
	for n := 1; n <= 10; n++ {
		sc.Responses = append(sc.Responses, sim.Response{Content: []loop.Block{
			loop.ToolCall{ID: fmt.Sprintf("a%d", n), Name: "a", Arguments: map[string]any{"i": float64(n)}},
			loop.ToolCall{ID: fmt.Sprintf("b%d", n), Name: "b", Arguments: map[string]any{"i": float64(n)}},
		}})
	}
	sc.Responses = append(sc.Responses, sim.Response{Content: loop.Text("done")})
	return sc
}

// hundredTurns: 100 turns of one tool call each, then a text turn.
func hundredTurns() *sim.Scenario {
	sc := Requests(101)
	sc.Name = "100-turns"
	return sc
}

// Requests is the 100-turn shape at any length: n provider requests, each answered with one
// tool call but the last, answered with text.
func Requests(n int) *sim.Scenario {
	sc := base(fmt.Sprintf("%d-requests", n))
	sc.Tools = []sim.ToolSpec{tool("a")}
	for i := 1; i < n; i++ {
		sc.Responses = append(sc.Responses, sim.Response{Content: []loop.Block{
			loop.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "a", Arguments: map[string]any{}},
		}})
	}
	sc.Responses = append(sc.Responses, sim.Response{Content: loop.Text("done")})
	// In full, the trace grows with the square of the requests: 1,000 exceed the default 16 MiB.
	sc.Budget.Bytes = 1 << 30
	return sc
}

// PerTurn is what a simulated run of Requests(n) costs for each of its requests: the bytes
// of its trace's JSON lines, and the allocations and bytes allocated by the run (the reference
// loop's, the simulator's and the trace's), the mean of runs runs after one to warm up.
type PerTurn struct {
	Requests                           int
	TraceBytes, Allocs, AllocatedBytes float64
}

// MeasurePerTurn runs Requests(n) and reports its figures per request.
func MeasurePerTurn(n, runs int) (PerTurn, error) {
	sc := Requests(n)
	tr, err := sim.Run(sc, sim.NewReference())
	if err == nil && tr.Failed() {
		err = fmt.Errorf("%s failed: %s", sc.Name, tr.Failure().Error)
	}
	if err != nil {
		return PerTurn{}, err
	}
	turns := float64(n)
	out := PerTurn{Requests: n, TraceBytes: float64(len(tr.JSONL())) / turns}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := sim.Run(sc, sim.NewReference()); err != nil {
			return PerTurn{}, err
		}
	}
	runtime.ReadMemStats(&after)
	out.Allocs = float64(after.Mallocs-before.Mallocs) / float64(runs) / turns
	out.AllocatedBytes = float64(after.TotalAlloc-before.TotalAlloc) / float64(runs) / turns
	return out, nil
}

// thousandDeltas: one turn streaming 1,000 one-character text deltas.
func thousandDeltas() *sim.Scenario {
	sc := base("1000-deltas")
	sc.Responses = []sim.Response{{Content: loop.Text(strings.Repeat("x", 1000)), DeltaSize: 1}}
	return sc
}
