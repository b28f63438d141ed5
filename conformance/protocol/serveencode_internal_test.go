package protocol

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/sim"
)

// jsonText draws JSON text: values json.Marshal wrote, sometimes spaced or cut, with the
// characters it escapes, or any bytes.
func jsonText(t *rapid.T) []byte {
	leaf := rapid.SampledFrom([]any{nil, true, false, 0.0, -1.5e-9, 1e21, 123, "", "a\"b\\c", "<&>", "\u2028", "é\x01", "\xff"})
	var value func(depth int) any
	value = func(depth int) any {
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 1:
			if depth < 4 {
				n := rapid.IntRange(0, 3).Draw(t, "len")
				out := make([]any, n)
				for i := range out {
					out[i] = value(depth + 1)
				}
				return out
			}
		case 2:
			if depth < 4 {
				out := map[string]any{}
				for range rapid.IntRange(0, 3).Draw(t, "members") {
					out[rapid.SampledFrom([]string{"a", "<k>", "role", "x y"}).Draw(t, "key")] = value(depth + 1)
				}
				return out
			}
		}
		return leaf.Draw(t, "leaf")
	}
	data, err := json.Marshal(value(0))
	if err != nil {
		t.Fatal(err)
	}
	switch rapid.IntRange(0, 5).Draw(t, "change") {
	case 0:
		data = rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")
	case 1:
		i := rapid.IntRange(0, len(data)).Draw(t, "at")
		data = append(data[:i:i], append([]byte(rapid.SampledFrom([]string{" ", "\n", "<", "\u2028", "\"", ",", "}", "0", "-", "\\u12"}).Draw(t, "insert")), data[i:]...)...)
	case 2:
		data = data[:rapid.IntRange(0, len(data)).Draw(t, "cut")]
	case 3:
		data = bytes.ReplaceAll(data, []byte(`\u003c`), []byte("<"))
	}
	return data
}

// TestWireReadyIsWhatMarshalWrites: data wireReady accepts is what json.Marshal writes of it
// as a json.RawMessage, and it accepts whatever json.Marshal wrote.
func TestWireReadyIsWhatMarshalWrites(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		data := jsonText(t)
		marshalled, err := json.Marshal(json.RawMessage(data))
		if wireReady(data) && (err != nil || !bytes.Equal(marshalled, data)) {
			t.Fatalf("wireReady(%q), json.Marshal gives %q, %v", data, marshalled, err)
		}
		if err == nil && !wireReady(marshalled) {
			t.Fatalf("json.Marshal wrote %q, which wireReady refuses", marshalled)
		}
	})
}

// TestCallAndNotifyLinesAreMarshal: the served side's call and notification lines are
// json.Marshal's, byte for byte, or the message fails to encode as it does.
func TestCallAndNotifyLinesAreMarshal(t *testing.T) {
	byHand, all := 0, 0
	defer func() {
		if all > 0 && byHand < all/10 { // about a third are, the rest not in json.Marshal's form
			t.Errorf("only %d of %d lines written by hand", byHand, all)
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		data := jsonText(t)
		if rapid.IntRange(0, 5).Draw(t, "nil") == 0 {
			data = nil
		}
		m := Message{Type: TypeCall, ID: rapid.Int64Range(0, 3).Draw(t, "id"), Session: rapid.IntRange(0, 2).Draw(t, "session")}
		kind := rapid.SampledFrom([]string{"stream", "hook", "event", "<&>"}).Draw(t, "kind")
		if rapid.Bool().Draw(t, "notify") {
			m.Type, m.Notification = TypeNotify, &sim.Notification{Kind: kind, Data: data}
		} else {
			m.Call = &sim.Call{Kind: kind, Name: rapid.SampledFrom([]string{"", "beforeToolCall", "a\"b"}).Draw(t, "name"), Data: data}
			m.Standing = rapid.Bool().Draw(t, "standing")
		}
		if rapid.IntRange(0, 5).Draw(t, "other") == 0 {
			m.Error = "also an error" // not a call's field: json.Marshal writes it
		}
		want, werr := json.Marshal(m)
		all++
		if _, ok := callOrNotifyLine(&m); ok {
			byHand++
		}
		got, gerr := encode(m)
		if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, append(want, '\n')) {
			t.Fatalf("%+v: encode gives %q, %v; json.Marshal %q, %v", m, got, gerr, want, werr)
		}
	})
}
