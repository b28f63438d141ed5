package sim_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// jsonPort hides the world behind a plain Port, so the reference talks to it in JSON, the
// way it does over the protocol.
type jsonPort struct{ sim.Port }

// viaJSON is the reference reached through a jsonPort.
type viaJSON struct{ *sim.Reference }

func (v viaJSON) Start(setup sim.Setup, port sim.Port) error {
	return v.Reference.Start(setup, jsonPort{port})
}

// TestValuesAndJSONGiveTheSameTrace checks that the in-process shortcut (payloads passed as
// Go values and encoded by the world) records exactly what JSON payloads record, in the
// curated suite and generated runs (hooks rewriting contexts, steering, aborts, errors).
func TestValuesAndJSONGiveTheSameTrace(t *testing.T) {
	list := suiteAndGenerated(t, 11, 300)
	for _, sc := range list {
		direct, err := sim.Run(sc, sim.NewReference())
		if err != nil {
			t.Fatal(err)
		}
		viaWire, err := sim.Run(sc, viaJSON{sim.NewReference()})
		if err != nil {
			t.Fatal(err)
		}
		a, b := direct.JSONL(), viaWire.JSONL()
		if !bytes.Equal(a, b) {
			t.Errorf("%s: values and JSON differ (- JSON, + values):\n%s", sc.Name, trace.Compare(viaWire, direct, trace.Strict).Text(2))
		}
	}
}

// counting is the reference behind a wrapper that counts the deliveries it is given.
type counting struct {
	*sim.Reference
	n *int
}

func (c counting) Deliver(d sim.Delivery) error {
	*c.n++
	return c.Reference.Deliver(d)
}

// TestAWrappedReferenceIsGivenEveryDelivery: the reference takes its next delivery itself
// when it is alone and the world would give it that delivery next, but not behind a wrapper,
// which must see every delivery; the traces are the same either way.
func TestAWrappedReferenceIsGivenEveryDelivery(t *testing.T) {
	sc := &sim.Scenario{Name: "deltas", Prompts: []loop.Message{&loop.UserMessage{Text: "go"}},
		Tools: []sim.ToolSpec{{Name: "a", Behaviour: sim.Behaviour{Result: loop.ToolResult{Content: loop.Text("ok")}}}},
		Responses: []sim.Response{
			{Content: []loop.Block{loop.ToolCall{ID: "t1", Name: "a", Arguments: map[string]any{}}}},
			{Content: loop.Text("twenty characters ok"), DeltaSize: 1},
		}}
	direct, err := sim.Run(sc, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	wrapped, err := sim.Run(sc, counting{sim.NewReference(), &n})
	if err != nil {
		t.Fatal(err)
	}
	deliveries := 0
	for _, e := range wrapped.Entries {
		if e.Kind == trace.KindDeliver {
			deliveries++
		}
	}
	if n != deliveries || n < 20 {
		t.Errorf("the wrapper was given %d deliveries; the trace records %d", n, deliveries)
	}
	if a, b := direct.JSONL(), wrapped.JSONL(); !bytes.Equal(a, b) {
		t.Errorf("direct and wrapped differ:\n%s", trace.Compare(wrapped, direct, trace.Strict).Text(2))
	}
}

// setupKeeper is the reference keeping the setup it was started with.
type setupKeeper struct {
	*sim.Reference
	setup *sim.Setup
}

func (k setupKeeper) Start(setup sim.Setup, port sim.Port) error {
	*k.setup = setup
	return k.Reference.Start(setup, port)
}

// TestDefaultModelLeavesTheModelOut checks that an Agent given no model (feature
// defaultModel) is set up without one, on the wire too, and that the reference's Agent then
// asks for pi's DEFAULT_MODEL; a scenario naming no model gets sim.DefaultModel.
func TestDefaultModelLeavesTheModelOut(t *testing.T) {
	for _, c := range []struct {
		defaultModel bool
		wire         string // the setup's "model" member, "" for none
		requested    string // the stream call's model id
	}{
		{false, `{"id":"faux-1","api":"faux","provider":"faux"}`, "faux-1"},
		{true, "", "unknown"},
	} {
		sc := &sim.Scenario{
			Name:      "default-model",
			Agent:     &sim.AgentScript{DefaultModel: c.defaultModel},
			Responses: []sim.Response{{Content: []loop.Block{loop.TextContent{Text: "ok"}}}},
			User:      []sim.UserAction{{At: new(int64), Op: &sim.AgentOp{Op: trace.OpPrompt, Text: "hi"}}},
		}
		var setup sim.Setup
		tr, err := sim.Run(sc, setupKeeper{sim.NewReference(), &setup})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(setup)
		if err != nil {
			t.Fatal(err)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			t.Fatal(err)
		}
		if got := string(members["model"]); got != c.wire {
			t.Errorf("defaultModel %v: the setup's model is %q, want %q", c.defaultModel, got, c.wire)
		}
		if want := "model=" + c.requested; !strings.Contains(string(tr.Timeline()), want) {
			t.Errorf("defaultModel %v: no request with %s:\n%s", c.defaultModel, want, tr.Timeline())
		}
	}
}
