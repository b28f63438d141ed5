package sim

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
)

// FuzzHookAnswers holds the hooks' answers written on their data's canonical JSON
// (transformAnswer, contextAnswerJSON, convertCanonical) to what json.Marshal writes of the
// data decoded, byte for byte, and the tool call's id read there to encoding/json's.
func FuzzHookAnswers(f *testing.F) {
	msgs := `[{"content":"hi","role":"user","timestamp":1},{"content":"note","role":"custom","timestamp":2},` +
		`{"content":[{"text":"a<b & \u2028","type":"text"}],"role":"assistant","stopReason":"stop","usage":{"cost":{"total":1.5e-7}}},` +
		`{"content":"x","role":"notify"},{"content":1,"role":"custom"},{"role":"u\u0073er"},{"role":7},{}]`
	f.Add([]byte(msgs), []byte(`["read","write"]`), 2, true, false)
	f.Add([]byte(`[{"role":"user"},3,null,"s",[]]`), []byte(`["read"]`), 0, true, false)
	f.Add([]byte(msgs), []byte(`null`), 0, false, true)
	f.Add([]byte(`[]`), []byte(`[]`), 1, true, false)
	f.Add([]byte(`[{"content":"hi & <bye>","role":"user","timestamp":1},{"content":[{"text":"a","type":"text"}],"role":"toolResult","toolCallId":"c1","toolName":"read","isError":false,"timestamp":2}]`), []byte(`["read"]`), 1, false, true)
	f.Add([]byte(`null`), []byte(`["a",1]`), -1, false, false)
	f.Add([]byte(`{"a":1}`), []byte(`"x"`), 5, true, true)
	f.Add([]byte(`[{"role":"system","content":"","toolsAdded":[{"name":"read"}]},{"role":"toolResult","content":[],"isError":false}]`), []byte(`["r\u00e9"]`), 1, true, false)
	seeded := []byte(msgs) // read on the canonical JSON, not left to convertDecoded
	f.Fuzz(func(t *testing.T, messages, tools []byte, n int, keepCustom, changeTools bool) {
		list := jsonvalue.Canonical(messages)
		if a, ok := convertCanonical(list, keepCustom); ok || bytes.Equal(messages, seeded) {
			if want := convertDecoded(list, keepCustom); !bytes.Equal(a.Data, want.Data) || a.Error != want.Error {
				t.Fatalf("convert %s: %s, want %s", list, a.Data, want.Data)
			}
		}
		if got, want := transformAnswer(list, n), answerJSON(map[string]any{"messages": keepLast(list, n)}); !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("transformContext %s: %s, want %s", list, got.Data, want.Data)
		}
		in := hookData(jsonvalue.Canonical([]byte(`{"toolCall":{"id":` + string(jsonvalue.Canonical(tools)) + `}}`)))
		var id string
		_ = json.Unmarshal(hookData(in.member("toolCall")).member("id"), &id)
		if got := toolCallID(in); got != id {
			t.Fatalf("toolCallID of %s: %q, want %q", in, got, id)
		}
		given := jsonvalue.Canonical([]byte(`{"messages":` + string(list) + `,"tools":` + string(jsonvalue.Canonical(tools)) + `}`))
		change := &ContextChange{KeepLast: n}
		if changeTools {
			change.Tools = []string{"b", "a<"}
		}
		decoded, _ := loop.DecodeMessages(list)
		model := &loop.Model{ID: "m<1>", Name: "n", API: "faux", Provider: string(tools)}
		for _, c := range []struct {
			given    json.RawMessage
			change   *ContextChange
			model    *loop.Model
			level    loop.ThinkingLevel
			messages []loop.Message
		}{{given, change, nil, "", nil}, {given, change, model, "high", decoded}, {given, nil, nil, "low", []loop.Message{}},
			{given, nil, model, "", nil}, {list, change, nil, "", decoded}, {nil, change, nil, "", []loop.Message{nil}}} {
			got := contextAnswerJSON(c.given, c.change, c.model, c.level, c.messages)
			want := answerJSON(contextAnswer(c.given, c.change, c.model, c.level, c.messages))
			if !bytes.Equal(got.Data, want.Data) || got.Error != want.Error {
				t.Fatalf("context %s, change %+v, level %q, %d messages: %s, want %s", c.given, c.change, c.level, len(c.messages), got.Data, want.Data)
			}
		}
	})
}
