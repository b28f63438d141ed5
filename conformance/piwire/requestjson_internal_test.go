package piwire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

// TestStreamRequestJSONIsReflections: a stream request written by hand is what encoding/json
// wrote of it by reflection, byte for byte: every message type, a nil and a custom message,
// HTML, invalid UTF-8 and line separators in texts, a model with and without a name, no
// messages, options with a session id, none, and an identity (left to encoding/json).
func TestStreamRequestJSONIsReflections(t *testing.T) {
	msgs := []Message{
		&UserMessage{Text: "a<b>&c\u2028\xff", Timestamp: 1},
		&SystemMessage{Text: "sys"},
		&AssistantMessage{Content: []Block{loop.TextContent{Text: "t"}, loop.ToolCall{ID: "c", Name: "n", Arguments: map[string]any{"x": 1.5}}}, StopReason: "toolUse"},
		&ToolResultMessage{ToolCallID: "c", ToolName: "n", Content: loop.Text("ok"), Details: map[string]any{"d": []any{"<"}}},
		nil,
		&CustomMessage{Fields: map[string]any{"role": "note", "text": "x"}},
	}
	byHand := 0
	for _, r := range []StreamRequest{
		{},
		{Model: Model{ID: "m", API: "a", Provider: "p"}, Messages: msgs, ThinkingLevel: "off", APIKey: "k<"},
		{Model: Model{ID: "m", Name: "named", API: "a", Provider: "p"}, Messages: msgs[:2], Options: &StreamOptions{}},
		{Messages: []Message{}, Options: &StreamOptions{SessionID: "s&1"}},
		{Messages: msgs[3:4], Options: &StreamOptions{SessionID: "s", Identity: &loop.Identity{UserAgent: "short"}}},
	} {
		want, err := r.requestJSONByReflection()
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.MarshalJSON()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%+v:\nby hand    %s (%v)\nreflection %s", r, got, err, want)
		}
		viaJSON, err := json.Marshal(r)
		if err != nil || !bytes.Equal(viaJSON, want) {
			t.Fatalf("%+v:\njson.Marshal %s (%v)\nreflection   %s", r, viaJSON, err, want)
		}
		if _, ok := r.requestJSON(); ok {
			byHand++
		}
	}
	if byHand != 4 {
		t.Errorf("%d of the 5 requests written by hand, want 4 (all but the one with an identity)", byHand)
	}
	// requestJSON writes these fields by name: one added must be written there too.
	for typ, n := range map[reflect.Type]int{reflect.TypeFor[StreamRequest](): 5, reflect.TypeFor[Model](): 4, reflect.TypeFor[StreamOptions](): 2} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, requestJSON writes %d: write the new one", typ, typ.NumField(), n)
		}
	}
}
