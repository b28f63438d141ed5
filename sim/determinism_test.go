package sim_test

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// suiteAndGenerated is concurrencyScenarios, the curated suite, and n scenarios generated from
// seed as explore generates them.
func suiteAndGenerated(t *testing.T, seed uint64, n int) []*sim.Scenario {
	t.Helper()
	list := concurrencyScenarios()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		list = append(list, f.Scenario)
	}
	for i := range n {
		list = append(list, explore.GenerateScenario(explore.RunSeed(seed, i)))
	}
	return list
}

// concurrencyScenarios are situations where goroutines would race if the simulator did not
// fix the interleaving: parallel tools with overlapping updates, steering while tools run,
// aborts in the middle of a batch, follow-up after a terminating batch.
func concurrencyScenarios() []*sim.Scenario {
	var out []*sim.Scenario
	for i := range 24 {
		n := 2 + i%4 // tools in the batch
		sc := &sim.Scenario{
			Name:         fmt.Sprintf("concurrency-%02d", i),
			Model:        loop.Model{ID: "m", API: "faux", Provider: "faux"},
			Prompts:      []loop.Message{&loop.UserMessage{Text: "go"}},
			SteeringMode: []loop.QueueMode{loop.OneAtATime, loop.All}[i%2],
		}
		var calls []loop.Block
		for j := range n {
			id := fmt.Sprintf("c%d", j)
			b := sim.Behaviour{
				// Durations collide on purpose: ties are broken by scheduling order.
				Duration: int64(10 * ((j*7 + i) % 4)),
				Result:   loop.ToolResult{Content: loop.Text("r" + id), Terminate: i%3 == 0},
			}
			for u := range 3 {
				b.Updates = append(b.Updates, sim.Update{At: int64(u * (3 + j)), Result: loop.ToolResult{Content: loop.Text(fmt.Sprintf("%s-%d", id, u))}})
			}
			if i%4 == 1 {
				b.OnAbort = &sim.AbortReaction{Throw: "aborted " + id}
			}
			sc.Tools = append(sc.Tools, sim.ToolSpec{Name: "tool" + id, Description: "d", Parameters: map[string]any{"type": "object"}, Behaviour: b})
			calls = append(calls, loop.ToolCall{ID: id, Name: "tool" + id, Arguments: map[string]any{"i": float64(j)}})
		}
		sc.Responses = []sim.Response{
			{Content: calls, Delay: 1, ChunkDelay: int64(i % 3)},
			{Content: loop.Text("after tools"), Delay: 2, DeltaSize: 3},
			{Content: loop.Text("after steering"), Delay: 2},
			{Content: loop.Text("after follow-up"), Delay: 2},
		}
		sc.ExtraResponse = &sim.Response{Content: loop.Text("more")}
		switch i % 4 {
		case 0: // follow-up after a terminating batch
			at := int64(5)
			sc.User = append(sc.User, sim.UserAction{At: &at, FollowUp: []loop.Message{&loop.UserMessage{Text: "and then?"}}})
		case 1: // abort in the middle of the batch
			at := int64(12)
			sc.User = append(sc.User, sim.UserAction{At: &at, Abort: true})
		case 2: // steering while a tool runs
			sc.User = append(sc.User,
				sim.UserAction{On: &sim.Trigger{Event: loop.ToolExecutionStart, ToolCallID: "c1"}, Steer: []loop.Message{&loop.UserMessage{Text: "steer 1"}, &loop.UserMessage{Text: "steer 2"}}},
				sim.UserAction{On: &sim.Trigger{Event: loop.ToolExecutionUpdate, Nth: 2}, Steer: []loop.Message{&loop.UserMessage{Text: "steer 3"}}})
		case 3: // sequential mode with a mid-batch abort trigger
			sc.ToolExecution = loop.Sequential
			sc.User = append(sc.User, sim.UserAction{On: &sim.Trigger{Event: loop.ToolExecutionEnd, ToolCallID: "c0"}, Abort: true})
		}
		out = append(out, sc)
	}
	return out
}

// TestDeterminism runs each concurrency scenario many times at several GOMAXPROCS settings
// and requires byte-identical canonical traces. At each setting the runs of all scenarios go
// on at once, several at a time, so that they also contend with each other for the runtime.
func TestDeterminism(t *testing.T) {
	runs := 200 // per scenario and GOMAXPROCS setting
	if testing.Short() {
		runs = 5
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	scenarios := concurrencyScenarios()
	want := make([][]byte, len(scenarios))
	runtime.GOMAXPROCS(1)
	for i, sc := range scenarios {
		tr, err := sim.Run(sc, sim.NewReference())
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		if tr.Failed() {
			t.Fatalf("%s failed:\n%s", sc.Name, tr.Timeline())
		}
		want[i] = tr.JSONL()
	}
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		jobs := make(chan int)
		errs := make(chan error, 1)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for i := range jobs {
					sc := scenarios[i%len(scenarios)]
					tr, err := sim.Run(sc, sim.NewReference())
					if err == nil && !bytes.Equal(tr.JSONL(), want[i%len(scenarios)]) {
						err = fmt.Errorf("%s: run %d with GOMAXPROCS=%d differs from the first run", sc.Name, i/len(scenarios), procs)
					}
					if err != nil {
						select {
						case errs <- err:
						default:
						}
					}
				}
			})
		}
		for i := range runs * len(scenarios) {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
	}
}

// TestNoGoroutineOutlivesARun checks that a finished run, a stuck run and a run stopped
// mid-way leave no goroutine behind.
func TestNoGoroutineOutlivesARun(t *testing.T) {
	before := runtime.NumGoroutine()
	// A run that fails mid-batch: the second request is not scripted while a tool that
	// ignores abort is still parked in another scenario's shape.
	failing := &sim.Scenario{Name: "unscripted", Prompts: []loop.Message{&loop.UserMessage{Text: "x"}},
		Tools:     []sim.ToolSpec{{Name: "slow", Behaviour: sim.Behaviour{Duration: 100}}},
		Responses: []sim.Response{{Content: []loop.Block{loop.ToolCall{ID: "a", Name: "slow"}, loop.ToolCall{ID: "b", Name: "slow"}}}}}
	scenarios := append(concurrencyScenarios(), failing)
	for _, sc := range scenarios {
		if _, err := sim.Run(sc, sim.NewReference()); err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
	}
	// A finished task's goroutine hands the turn on just before it returns: give the last
	// ones a moment to be gone.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
