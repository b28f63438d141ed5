package sim

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
)

// TestDeltaSizeAddsUpWhereTheTextAppendsAlone: the JSON string of s followed by d is as long
// as s's plus deltaSize(d) whenever appendsAlone(s), invalid UTF-8 included; and a text
// ending in a cut rune is not said to append alone.
func TestDeltaSizeAddsUpWhereTheTextAppendsAlone(t *testing.T) {
	size := func(s string) int64 { return int64(len(jsonvalue.AppendString(nil, s))) }
	pieces := rapid.SampledFrom([]string{"a", "é", "€", "\xe2", "\x82", "\xac", "\xff", "\xf0\x9f", "\x98\x80", "<", "\"", "\n", "\u2028"})
	rapid.Check(t, func(t *rapid.T) {
		var s, d string
		for _, p := range rapid.SliceOf(pieces).Draw(t, "s") {
			s += p
		}
		for _, p := range rapid.SliceOf(pieces).Draw(t, "d") {
			d += p
		}
		if appendsAlone(s) && size(s+d) != size(s)+deltaSize(d) {
			t.Fatalf("%q + %q: %d, want %d + %d", s, d, size(s+d), size(s), deltaSize(d))
		}
	})
	if appendsAlone("a\xe2\x82") || !appendsAlone("a\xe2\x82\xac") || !appendsAlone("") || appendsAlone("\xff") {
		t.Fatal("appendsAlone misjudges a text's last rune")
	}
}

// jsonOnly hides the world behind a plain Port, so that the reference sends its payloads as
// JSON, as over the protocol.
type jsonOnly struct{ Port }

// viaJSONOnly is the reference reached through jsonOnly.
type viaJSONOnly struct{ *Reference }

func (v viaJSONOnly) Start(setup Setup, port Port) error {
	return v.Reference.Start(setup, jsonOnly{port})
}

// TestRememberedListsHoldOnlyTheirMessages: the message lists the linear form remembers
// hold each message in a buffer of its size, not a slice of the data of the call it came in
// (a whole context), which a run would otherwise keep for every request: memory growing with
// the square of the run.
func TestRememberedListsHoldOnlyTheirMessages(t *testing.T) {
	sc := &Scenario{
		Name:          "endless-tools",
		Prompts:       []loop.Message{&loop.UserMessage{Text: "go"}},
		Tools:         []ToolSpec{{Name: "noop", Behaviour: Behaviour{Result: loop.ToolResult{Content: loop.Text("done")}}}},
		Hooks:         Hooks{FinishTurn: &Script[FinishAnswer]{Default: FinishAnswer{Action: loop.DecisionContinue}}},
		ExtraResponse: &Response{Content: []loop.Block{loop.ToolCall{ID: "tool-1", Name: "noop", Arguments: map[string]any{}}}},
		Budget:        Budget{Requests: 20},
	}
	for how, impl := range map[string]Implementation{"values": NewReference(), "JSON": viaJSONOnly{NewReference()}} {
		w := newWorld(sc)
		if _, err := w.run(impl, false); err == nil {
			t.Fatalf("%s: the endless run ended", how)
		}
		lists := map[listKey]listAt{}
		for key, l := range w.lin.lists {
			lists[key] = l
		}
		if w.lin.streamList.seq != 0 {
			lists[runListKey] = w.lin.streamList
		}
		if len(lists) < 2 {
			t.Fatalf("%s: %d lists remembered, want the stream calls' and finishTurn's", how, len(lists))
		}
		for key, l := range lists {
			for i, enc := range l.encs {
				if cap(enc) != len(enc) {
					t.Fatalf("%s: list %v, message %d: %d bytes in a slice of capacity %d (of the call's data)", how, key, i, len(enc), cap(enc))
				}
			}
		}
	}
}
