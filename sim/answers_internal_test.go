package sim

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestMessagesAnswersReadByHand: an answer {messages} read by hand gives what decoding it
// through encoding/json gives, and anything else is left to encoding/json.
func TestMessagesAnswersReadByHand(t *testing.T) {
	for _, c := range []struct {
		raw    string
		byHand bool
	}{
		{`{"messages":[]}`, true},
		{`{}`, true},
		{`{"messages":[{"content":"s","role":"user","timestamp":1},{"content":[{"text":"x","type":"text"}],"role":"user","timestamp":2}]}`, true},
		{`{"messages":null}`, false},
		{`{"Messages":[]}`, false},
		{`{"messages":[],"messages":[]}`, false},
		{`{"messages":[{"role":"custom","x":1}]}`, false},
		{`{"messages":[]} {}`, false},
	} {
		got, ok := readMessagesAnswer([]byte(c.raw))
		if ok != c.byHand {
			t.Errorf("%s: read by hand %v, want %v", c.raw, ok, c.byHand)
		}
		if !ok {
			continue
		}
		var out struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := decodeAnswer("h", []byte(c.raw), &out); err != nil {
			t.Fatal(err)
		}
		want, err := decodeMessages(out.Messages)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: by hand %#v, through encoding/json %#v", c.raw, got, want)
		}
	}
}
