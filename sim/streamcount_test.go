package sim_test

import (
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestStreamEventCountIsTheStreamsLength: the count the loader bounds a run's end with is
// the number of events the simulator streams, for every response of the curated suite and
// for each way a response can be cut.
func TestStreamEventCountIsTheStreamsLength(t *testing.T) {
	var resps []sim.Response
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		resps = append(resps, f.Scenario.Responses...)
	}
	content := []loop.Block{
		loop.ThinkingContent{Thinking: "thé\xffx"},
		loop.TextContent{Text: "héllo wörld"},
		loop.TextContent{Text: ""},
		loop.ToolCall{ID: "c1", Name: "t", Arguments: map[string]any{"a": "b", "n": 12.5}},
		loop.ToolCall{ID: "c2", Name: "t"},
	}
	for _, size := range []int{0, 1, 2, 3, 100} {
		for _, cut := range []sim.Response{{}, {NoStart: true}, {NoDone: true}, {StreamError: "boom"}, {ErrorEvent: true}} {
			cut.Content, cut.DeltaSize = content, size
			resps = append(resps, cut)
		}
	}
	for i := range resps {
		want := len(sim.StreamEvents(&resps[i], sim.DefaultModel, 0))
		if got := sim.StreamEventCount(&resps[i]); got != want {
			t.Errorf("response %d (%+v): count %d, stream has %d events", i, resps[i], got, want)
		}
	}
}
