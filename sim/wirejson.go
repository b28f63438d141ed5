package sim

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
)

// The served reference's JSON (a port other than the simulator's own world): its calls' and
// notifications' data written as json.Marshal writes them, byte for byte, without reflection
// for the values it sends (maps of the loop's types, lists of messages), and the stream
// events delivered to it read by hand. TestServedPayloadsAreJSONMarshal holds the writing to
// json.Marshal on the curated suite and generated runs.

// wireJSON is v as json.Marshal writes it.
func (r *Reference) wireJSON(v any) ([]byte, error) {
	if r.wireByReflection {
		return json.Marshal(v)
	}
	if r.wire == nil {
		r.wire = &wireWriter{memo: map[loop.Message][]byte{}}
	}
	if b, ok := r.wire.value(make([]byte, 0, 512), v); ok {
		return b, nil
	}
	return json.Marshal(v)
}

// eventJSON is an event as json.Marshal writes it.
func (r *Reference) eventJSON(e *loop.Event) ([]byte, error) {
	if r.wireByReflection {
		return json.Marshal(*e)
	}
	return loop.MarshalEvent(e)
}

// wireWriter writes values as json.Marshal does, remembering the bytes of each message it
// writes as part of a list by identity: a session's requests send ever longer contexts of the
// same messages, which are not changed once in a transcript (the world's encoder relies on it
// as well).
type wireWriter struct {
	memo map[loop.Message][]byte
}

// value appends v as json.Marshal writes it; ok is false where json.Marshal fails.
// The types the served reference sends beyond decoded JSON's, each a case; the rest are
// jsonvalue.AppendMarshal's.
func (w *wireWriter) value(b []byte, v any) (_ []byte, ok bool) {
	switch x := v.(type) {
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case loop.ThinkingLevel:
		return jsonvalue.AppendString(b, string(x)), true
	case ModelSetup:
		return appendModelSetupJSON(b, x), true
	case map[string]any:
		return jsonvalue.AppendMarshalMap(b, x, w.value)
	case map[string]string:
		return jsonvalue.AppendMarshalMap(b, x, appendString)
	case []string:
		return jsonvalue.AppendMarshalList(b, x, appendString)
	case []any:
		return jsonvalue.AppendMarshalList(b, x, w.value)
	case []loop.Message:
		size := len(x) + 2 // the list's bytes as far as the memo knows them: one growth
		for _, m := range x {
			if memoable(m) {
				size += len(w.memo[m])
			}
		}
		return jsonvalue.AppendMarshalList(slices.Grow(b, size), x, w.message)
	case []*loop.ToolResultMessage:
		return jsonvalue.AppendMarshalList(b, x, func(b []byte, m *loop.ToolResultMessage) ([]byte, bool) {
			if m == nil {
				return append(b, "null"...), true
			}
			return w.message(b, m)
		})
	case *loop.AssistantMessage:
		data, err := loop.MarshalMessage(x)
		return appendMarshaled(b, data, err)
	}
	return jsonvalue.AppendMarshal(b, v)
}

// appendModelSetupJSON appends m as json.Marshal writes it: its fields in their order.
func appendModelSetupJSON(b []byte, m ModelSetup) []byte {
	b = jsonvalue.AppendString(append(b, `{"id":`...), m.ID)
	b = jsonvalue.AppendString(append(b, `,"api":`...), m.API)
	return append(jsonvalue.AppendString(append(b, `,"provider":`...), m.Provider), '}')
}

// readAssistant reads an assistant message by hand; ok is false for any other message and
// what loop.ReadMessage leaves to encoding/json.
func readAssistant(r *jsonvalue.Reader) (*loop.AssistantMessage, bool) {
	m, ok := loop.ReadMessage(r)
	a, isAssistant := m.(*loop.AssistantMessage)
	return a, ok && isAssistant
}

// message appends a message of a list, from the memo when it has been written before.
func (w *wireWriter) message(b []byte, m loop.Message) ([]byte, bool) {
	if !memoable(m) || messageWords(m).data == nil {
		data, err := loop.MarshalMessage(m)
		return appendMarshaled(b, data, err)
	}
	if enc, ok := w.memo[m]; ok {
		return append(b, enc...), true
	}
	enc, err := loop.MarshalMessage(m)
	if err != nil {
		return b, false
	}
	w.memo[m] = enc
	return append(b, enc...), true
}

// appendString appends s as a JSON string, for AppendMarshalMap and AppendMarshalList.
func appendString(b []byte, s string) ([]byte, bool) { return jsonvalue.AppendString(b, s), true }

// appendMarshaled appends what a marshaler wrote; ok is false when it failed.
func appendMarshaled(b, data []byte, err error) ([]byte, bool) {
	if err != nil {
		return b, false
	}
	return append(b, data...), true
}

// readStreamEvent reads a stream event delivery's data by hand, as encoding/json reads it
// into a loop.StreamEvent; ok is false when it is left to encoding/json (a key it does not
// read here or met twice, a message loop.ReadMessage leaves or not an assistant's, a tool
// call, null).
func readStreamEvent(data []byte) (ev loop.StreamEvent, ok bool) {
	var (
		r      jsonvalue.Reader
		seen   jsonvalue.Seen
		errMsg *loop.AssistantMessage
	)
	r.Reset(data)
	ok = r.Object(func(key []byte) bool {
		var bit jsonvalue.Seen
		var ok bool
		switch string(key) {
		case "type":
			var s string
			s, ok = r.String()
			bit, ev.Type = 1, loop.StreamEventType(s)
		case "contentIndex":
			var n int64
			n, ok = r.Int64()
			bit, ev.ContentIndex = 2, int(n)
			ok = ok && int64(ev.ContentIndex) == n
		case "delta":
			bit = 4
			ev.Delta, ok = r.String()
		case "content":
			bit = 8
			ev.Content, ok = r.String()
		case "reason":
			var s string
			s, ok = r.String()
			bit, ev.Reason = 16, loop.StopReason(s)
		case "partial":
			bit = 32
			ev.Partial, ok = readAssistant(&r)
		case "message":
			bit = 64
			ev.Message, ok = readAssistant(&r)
		case "error":
			bit = 128
			errMsg, ok = readAssistant(&r)
		}
		return ok && seen.First(bit)
	})
	if !ok || !r.Done() {
		return loop.StreamEvent{}, false
	}
	if ev.Type == loop.StreamError {
		ev.Message = errMsg
	}
	return ev, true
}
