package sim_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// endless is the scenario that never ends: finishTurn answers continue on every turn and
// an extra response answers every request.
func endless() *sim.Scenario {
	return &sim.Scenario{
		Name:          "endless",
		Prompts:       []loop.Message{&loop.UserMessage{Text: "go"}},
		Hooks:         sim.Hooks{FinishTurn: &sim.Script[sim.FinishAnswer]{Default: sim.FinishAnswer{Action: loop.DecisionContinue}}},
		Responses:     []sim.Response{{Content: loop.Text("hi")}},
		ExtraResponse: &sim.Response{Content: loop.Text("again")},
	}
}

// TestEndlessRunEndsWithTheBudgetVerdict: every budget stops the endless scenario with a
// verdict naming it, as the trace's last entry and as Run's error.
func TestEndlessRunEndsWithTheBudgetVerdict(t *testing.T) {
	for _, c := range []struct {
		budget sim.Budget
		name   string
		text   string
	}{
		// The default budget: the context grows, and the trace in full reaches 16 MiB (as the
		// linear form, it would hold a thousand requests in less).
		{sim.Budget{}, "bytes", "the trace in full reached 16,"},
		{sim.Budget{Bytes: 200_000}, "bytes", "budget 200,000"},
		{sim.Budget{Requests: 1000, Bytes: 1 << 40}, "requests", "the run made 1,000 requests; budget 1,000"},
		{sim.Budget{Requests: 100}, "requests", "the run made 100 requests; budget 100"},
		{sim.Budget{Entries: 500}, "entries", "the trace reached 500 entries; budget 500"},
		{sim.Budget{Requests: 7}, "requests", "the run made 7 requests; budget 7"},
		{sim.Budget{Requests: 7, Entries: math.MaxInt}, "requests", "the run made 7 requests; budget 7"},
	} {
		sc := endless()
		sc.Budget = c.budget
		tr, err := sim.Run(sc, sim.NewReference())
		var be *sim.BudgetError
		if !errors.As(err, &be) || be.Budget != c.name || !strings.Contains(be.Text, c.text) {
			t.Fatalf("budget %+v: error %v, want the %s budget: %s", c.budget, err, c.name, c.text)
		}
		last := tr.Entries[len(tr.Entries)-1]
		if last.Kind != trace.KindFail || last.Name != "budget" || last.Target != c.name || last.Error != be.Text {
			t.Fatalf("budget %+v: last entry %+v", c.budget, last)
		}
	}
	// Virtual time: each request takes a second.
	sc := endless()
	sc.ExtraResponse.Delay = 1000
	sc.Budget.Time = 60_000
	_, err := sim.Run(sc, sim.NewReference())
	var be *sim.BudgetError
	if !errors.As(err, &be) || be.Budget != "time" || be.Text != "the run's next happening is at 61,000ms of virtual time; budget 60,000ms" {
		t.Fatalf("time budget: %v", err)
	}
}

// genScenario draws a scenario that ends: tool turns with awkward texts (escaped in JSON
// lines), delays and durations, streamed in deltas or whole, then a final answer.
func genScenario(t *rapid.T) *sim.Scenario {
	text := rapid.StringOfN(rapid.SampledFrom([]rune("ab <>&\"\\\u2028\u2029é\n")), 0, 12, -1)
	sc := &sim.Scenario{Name: "budget", Prompts: []loop.Message{&loop.UserMessage{Text: text.Draw(t, "prompt")}},
		Tools: []sim.ToolSpec{{Name: "step", Behaviour: sim.Behaviour{Duration: rapid.Int64Range(0, 50).Draw(t, "duration"),
			Result: loop.ToolResult{Content: loop.Text(text.Draw(t, "result"))}}}}}
	for i := range rapid.IntRange(0, 6).Draw(t, "turns") {
		sc.Responses = append(sc.Responses, sim.Response{
			Content: []loop.Block{loop.TextContent{Text: text.Draw(t, "text")}, loop.ToolCall{ID: fmt.Sprintf("s%d", i), Name: "step", Arguments: map[string]any{"x": text.Draw(t, "arg")}}},
			Delay:   rapid.Int64Range(0, 30).Draw(t, "delay"), ChunkDelay: rapid.Int64Range(0, 5).Draw(t, "chunk"),
			DeltaSize: rapid.IntRange(0, 3).Draw(t, "deltaSize"),
		})
	}
	sc.Responses = append(sc.Responses, sim.Response{Content: loop.Text(text.Draw(t, "final"))})
	return sc
}

// TestBudgetProperty: a run under any budget either ends as it would without one (when it
// fits) or stops with a BudgetError exactly where the named budget would be passed, its
// trace a prefix of the unbounded trace plus the verdict. The bytes budget counts the trace
// in full (expanded), the linear form's links restored.
func TestBudgetProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := genScenario(t)
		// In-process (payloads as values) or as over the protocol (payloads as JSON).
		impl := func() sim.Implementation { return sim.NewReference() }
		if rapid.Bool().Draw(t, "json") {
			impl = func() sim.Implementation { return viaJSON{sim.NewReference()} }
		}
		full, err := sim.Run(sc, impl())
		if err != nil {
			t.Fatal(err)
		}
		inFull := full.Expanded().JSONL()
		lines := bytes.SplitAfter(inFull, []byte("\n"))
		lines = lines[:len(lines)-1]
		requests, maxT := 0, int64(0)
		for _, e := range full.Entries {
			if e.Kind == trace.KindCall && e.Name == trace.CallStream {
				requests++
			}
			maxT = max(maxT, e.T)
		}
		b := sim.Budget{
			Requests: rapid.IntRange(1, requests+1).Draw(t, "requests"),
			Time:     rapid.Int64Range(1, maxT+1).Draw(t, "time"),
			Entries:  rapid.IntRange(1, len(full.Entries)+1).Draw(t, "entries"),
			Bytes:    rapid.Int64Range(1, int64(len(inFull))+1).Draw(t, "bytes"),
		}
		c := *sc
		c.Budget = b
		got, err := sim.Run(&c, impl())
		fits := requests <= b.Requests && maxT <= b.Time && len(full.Entries) <= b.Entries && int64(len(inFull)) <= b.Bytes
		if fits {
			if err != nil || !bytes.Equal(got.JSONL(), full.JSONL()) {
				t.Fatalf("budget %+v fits the run, yet: %v", b, err)
			}
			return
		}
		var be *sim.BudgetError
		if !errors.As(err, &be) {
			t.Fatalf("budget %+v does not fit (requests %d, time %d, entries %d, bytes %d), yet no verdict: %v",
				b, requests, maxT, len(full.Entries), len(inFull), err)
		}
		k := len(got.Entries) - 1
		if last := got.Entries[k]; last.Name != "budget" || last.Target != be.Budget {
			t.Fatalf("last entry %+v", last)
		}
		prefix := bytes.Join(lines[:k], nil)
		if !bytes.HasPrefix(full.JSONL(), (&trace.Trace{Entries: got.Entries[:k]}).JSONL()) || k >= len(full.Entries) {
			t.Fatalf("the stopped trace is not a prefix of the full one")
		}
		next := full.Entries[k]
		switch be.Budget {
		case "requests":
			n := bytes.Count(prefix, []byte(`"kind":"call","name":"stream"`))
			if n != b.Requests || next.Name != trace.CallStream || next.Kind != trace.KindCall {
				t.Fatalf("stopped after %d requests, budget %d, next %s", n, b.Requests, next.Name)
			}
		case "time":
			if next.T <= b.Time {
				t.Fatalf("stopped for time %d, but the next entry is at %d", b.Time, next.T)
			}
		case "entries":
			if k != b.Entries {
				t.Fatalf("stopped at %d entries, budget %d", k, b.Entries)
			}
		case "bytes":
			if int64(len(prefix)) > b.Bytes || int64(len(prefix)+len(lines[k])) <= b.Bytes {
				t.Fatalf("stopped at %d bytes, next line %d, budget %d", len(prefix), len(lines[k]), b.Bytes)
			}
		default:
			t.Fatalf("unknown budget %q", be.Budget)
		}
	})
}

// BenchmarkEndlessToBudget is the time the endless scenario takes to reach the default
// budget: well under a second.
func BenchmarkEndlessToBudget(b *testing.B) {
	for b.Loop() {
		if _, err := sim.Run(endless(), sim.NewReference()); err == nil {
			b.Fatal("the endless scenario ended without a verdict")
		}
	}
}
