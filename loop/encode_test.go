package loop

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// sameJSON checks that m written by hand, where it is, is what encoding/json writes.
func sameJSON(t *testing.T, m Message) {
	t.Helper()
	got, ok := messageJSON(m)
	if !ok {
		return
	}
	var want []byte
	var err error
	switch x := m.(type) {
	case *SystemMessage:
		want, err = x.marshalJSON()
	case *UserMessage:
		want, err = x.marshalJSON()
	case *AssistantMessage:
		want, err = x.marshalJSON()
	case *ToolResultMessage:
		want, err = x.marshalJSON()
	}
	if err != nil {
		t.Fatalf("%#v: written by hand as %s, but encoding/json fails: %v", m, got, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%#v:\nby hand       %s\nencoding/json %s", m, got, want)
	}
}

// FuzzMessageJSON holds the writing by hand to encoding/json's, on every message the decoding
// seeds and their mutations decode to.
func FuzzMessageJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := decodeMessageJSON(data); err == nil {
			sameJSON(t, m)
		}
	})
}

// TestMessageJSONOfGoValues: values decoding never gives (an int, a NaN, a nil map, pointers
// to zero, HTML and invalid UTF-8 in strings, numbers at the exponent's bounds) are written as
// encoding/json writes them, or left to it.
func TestMessageJSONOfGoValues(t *testing.T) {
	zero, yes := int64(0), true
	section := "<b>&"
	for _, m := range []Message{
		&UserMessage{Text: "a<b>&c\u2028\xff"},
		&UserMessage{Blocks: []Block{}},
		&SystemMessage{Blocks: Text("x"), Sections: map[string]*string{"b": &section, "a": nil}, ToolsAdded: []ToolDeclaration{{Name: "t"}, {Name: "u", Parameters: map[string]any{}, ConstrainedSampling: []any{}}}, ToolsRemoved: []ToolReference{{}}},
		&AssistantMessage{},
		&AssistantMessage{Content: []Block{ToolCall{ID: "c"}, ThinkingContent{Redacted: true}, ImageContent{}}, EndTurn: &yes, DurationMs: &zero,
			Usage: Usage{CacheWrite1h: &zero, Reasoning: &zero, Cost: Cost{Input: 1e-7, Output: 1e21, CacheRead: 123456789.125, CacheWrite: -0.000001, Total: 1e20, TotalFromProvider: true}}},
		&AssistantMessage{Usage: Usage{Cost: Cost{Total: math.NaN()}}},
		&AssistantMessage{Usage: Usage{Cost: Cost{Total: math.Copysign(0, -1)}}},
		&ToolResultMessage{Details: map[string]any{"i": 3, "n": nil}},
		&ToolResultMessage{Details: map[string]any(nil), Usage: &Usage{}, IsError: true, Content: []Block{TextContent{Text: "t", TextSignature: "s"}}},
		&ToolResultMessage{Details: []any{1.5, "x", true, nil, map[string]any{"z": 1e-9, "a": []any{}}}},
		&ToolResultMessage{Content: []Block{ToolCall{Arguments: map[string]any{"x": math.Inf(1)}}}},
	} {
		sameJSON(t, m)
	}
	if _, ok := messageJSON(&ToolResultMessage{Details: map[string]any{"x": math.NaN()}}); ok {
		t.Error("a NaN in details written by hand, not left to encoding/json's error")
	}
	if _, ok := messageJSON(&UserMessage{Text: "hi"}); !ok {
		t.Error("a plain user message left to encoding/json")
	}
}

// TestMarshalMessageIsJSONMarshal: MarshalMessage gives json.Marshal's bytes, a nil message and
// a nil pointer included.
func TestMarshalMessageIsJSONMarshal(t *testing.T) {
	for _, m := range []Message{nil, (*UserMessage)(nil), (*AssistantMessage)(nil), &UserMessage{Text: "<a>"},
		&ToolResultMessage{Details: map[string]any{"i": 3}}, &CustomMessage{Fields: map[string]any{"role": "x"}}} {
		got, err1 := MarshalMessage(m)
		want, err2 := json.Marshal(m)
		if !bytes.Equal(got, want) || (err1 == nil) != (err2 == nil) {
			t.Errorf("%#v: %s (%v), json.Marshal %s (%v)", m, got, err1, want, err2)
		}
	}
}
