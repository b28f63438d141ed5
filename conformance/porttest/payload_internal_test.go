package porttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/piwire"
	"github.com/turnstile-dev/turnstile/loop"
)

// spaced writes valid JSON that json.Marshal compacts.
type spaced struct{}

func (spaced) MarshalJSON() ([]byte, error) { return []byte(`{ "a" : [1, 2] }`), nil }

// html writes a string json.Marshal escapes.
type html struct{}

func (html) MarshalJSON() ([]byte, error) { return []byte(`"<b>"`), nil }

// invalid writes what is no JSON; failing fails.
type invalid struct{}

func (invalid) MarshalJSON() ([]byte, error) { return []byte(`{`), nil }

type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("no") }

// TestPayloadJSONIsJSONMarshal: what the kit writes of a port's payloads and events is what
// json.Marshal writes, byte for byte, or both fail.
func TestPayloadJSONIsJSONMarshal(t *testing.T) {
	var nilRequest *piwire.StreamRequest
	for _, v := range []any{
		loop.Event{Type: loop.MessageEnd, Message: &loop.UserMessage{Text: "<hi>"}},
		loop.Event{Type: loop.AgentEnd},
		&loop.Event{Type: loop.TurnStart},
		piwire.StreamRequest{Messages: []loop.Message{&loop.UserMessage{Text: "a&b"}}},
		&piwire.StreamRequest{},
		nilRequest,
		spaced{}, html{}, invalid{}, failing{},
		map[string]any{"a": spaced{}, "b": []any{1, "x"}},
		struct{ A int }{1},
		nil,
	} {
		got, err := payloadJSON(v)
		want, wantErr := json.Marshal(v)
		if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Errorf("%#v: %s (%v), json.Marshal %s (%v)", v, got, err, want, wantErr)
		}
	}
	for _, e := range []loop.Event{{Type: loop.AgentStart}, {Type: "odd\"<type>"}, {Type: "bad\xff"}} {
		data, err := payloadJSON(e)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			t.Fatal(err)
		}
		if got := eventType(e, data); got != head.Type {
			t.Errorf("eventType of %q: %q, its JSON says %q", e.Type, got, head.Type)
		}
	}
}
