package sim_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// promiseChecker runs the reference as an implementation that asks the world, after every
// call and at every delivery, which deliveries are certain to come next (sim.Ahead), and
// checks that the world keeps its word: each promise extends the last one, and every delivery
// released is the head of the promise.
type promiseChecker struct {
	ref      *sim.Reference
	world    sim.Ahead
	promised []sim.Delivery
	kept     int
	err      error
}

func (c *promiseChecker) Start(setup sim.Setup, world sim.Port) error {
	c.world = world.(sim.Ahead)
	return c.ref.Start(setup, promisePort{world, c})
}

func (c *promiseChecker) Deliver(d sim.Delivery) error {
	if len(c.promised) > 0 {
		if p := c.promised[0]; p.Kind != d.Kind || p.Target != d.Target || p.Now != d.Now || !bytes.Equal(p.Data, d.Data) {
			c.fail(fmt.Errorf("released %s %q at %d, but %s %q at %d was promised", d.Kind, d.Target, d.Now, p.Kind, p.Target, p.Now))
		}
		c.promised = c.promised[1:]
		c.kept++
	}
	c.ask()
	return c.ref.Deliver(d)
}

func (c *promiseChecker) Stop() error { return c.ref.Stop() }

// ask takes the world's promise, which must extend the one still outstanding.
func (c *promiseChecker) ask() {
	due := c.world.Due(64)
	for i, p := range c.promised {
		if i >= len(due) || due[i].Kind != p.Kind || due[i].Target != p.Target || !bytes.Equal(due[i].Data, p.Data) {
			if len(due) == 0 {
				return // the world closed: nothing more is delivered
			}
			c.fail(fmt.Errorf("promised %s %q, then no longer (now %d due)", p.Kind, p.Target, len(due)))
			return
		}
	}
	c.promised = due
}

func (c *promiseChecker) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

type promisePort struct {
	sim.Port
	c *promiseChecker
}

func (p promisePort) Call(call sim.Call) sim.Answer {
	a := p.Port.Call(call)
	p.c.ask()
	return a
}

// TestDueDeliveriesComeNext: what the world says is certain to be released next (sim.Ahead,
// which the protocol's deliveries ahead rely on) is released next, in every curated scenario
// and generated ones with aborts, steering, hooks and errors; and the promises do cover
// most deliveries.
func TestDueDeliveriesComeNext(t *testing.T) {
	kept, delivered := 0, 0
	for _, sc := range append(corpus(t), append(streamedOneAtATime(), abortInHookSameTime())...) {
		c := &promiseChecker{ref: sim.NewReference()}
		tr, _ := sim.Run(sc, c)
		if c.err != nil {
			t.Fatalf("scenario %s: %v\n%s", sc.Name, c.err, tr.Timeline())
		}
		kept += c.kept
		for _, e := range tr.Entries {
			if e.Kind == trace.KindDeliver {
				delivered++
			}
		}
	}
	if kept*2 < delivered {
		t.Errorf("%d of %d deliveries were promised ahead; want most", kept, delivered)
	}
	t.Logf("%d of %d deliveries promised ahead", kept, delivered)
}

// streamedOneAtATime: streams whose deliveries the world schedules one at a time, due at once
// (chunkDelay 0) or apart, each ending in a done, an end (noDone) or a failure, one of them
// going on after an abort; a user action falls due with the first.
func streamedOneAtATime() []*sim.Scenario {
	at5, at12 := int64(5), int64(12)
	text := func(s string) []loop.Block { return loop.Text(s) }
	call := []loop.Block{loop.TextContent{Text: "let me"}, loop.ToolCall{ID: "a", Name: "work", Arguments: map[string]any{"x": "yz"}}}
	work := sim.Behaviour{Duration: 4, Result: loop.ToolResult{Content: loop.Text("done")}}
	prompt := []loop.Message{&loop.UserMessage{Text: "go"}}
	return []*sim.Scenario{
		{Name: "one-at-a-time", Prompts: prompt, Tools: []sim.ToolSpec{{Name: "work", Behaviour: work}},
			User: []sim.UserAction{{At: &at5, Steer: []loop.Message{&loop.UserMessage{Text: "also"}}}},
			Responses: []sim.Response{
				{Content: call, Delay: 5, DeltaSize: 1},
				{Content: text("abcdefghij"), DeltaSize: 2, ChunkDelay: 3, NoDone: true},
				{Content: text("klmnop"), DeltaSize: 1, StreamError: "boom"},
			}},
		{Name: "one-at-a-time-abort", Prompts: prompt,
			User: []sim.UserAction{{At: &at12, Abort: true}},
			Responses: []sim.Response{
				{Content: text("abcdefghij"), DeltaSize: 1, ChunkDelay: 2, IgnoresAbort: true},
				{Content: text("klmnopqrst"), DeltaSize: 1, ChunkDelay: 2},
			}},
	}
}

// abortInHookSameTime: tools a and b settle at the same time, b honours an abort, and
// afterToolCall(a) aborts the run; the abort, answered with the hook's call, cancels b's
// result, which was already due (found by a review: Due promised it).
func abortInHookSameTime() *sim.Scenario {
	work := sim.Behaviour{Duration: 10, Result: loop.ToolResult{Content: loop.Text("done")}}
	b := work
	b.OnAbort = &sim.AbortReaction{Throw: "b stopped"}
	return &sim.Scenario{Name: "abort-in-hook-same-time", Prompts: []loop.Message{&loop.UserMessage{Text: "go"}},
		Tools:     []sim.ToolSpec{{Name: "work", Behaviour: work}},
		ToolCalls: map[string]sim.Behaviour{"b": b},
		Hooks:     sim.Hooks{AfterToolCall: &sim.ToolScript[sim.AfterAnswer]{ByToolCall: map[string]sim.AfterAnswer{"a": {Abort: true}}}},
		Responses: []sim.Response{
			{Content: []loop.Block{loop.ToolCall{ID: "a", Name: "work"}, loop.ToolCall{ID: "b", Name: "work"}}},
			{Content: loop.Text("never streamed")},
		}}
}

// corpus is every curated scenario and generated ones (hooks that rewrite contexts,
// steering, aborts, errors).
func corpus(t *testing.T) []*sim.Scenario {
	t.Helper()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	out := scenarios.Scenarios(files)
	for i := range 300 {
		out = append(out, explore.GenerateScenario(explore.RunSeed(11, i)))
	}
	return out
}
