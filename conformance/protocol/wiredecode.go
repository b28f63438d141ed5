package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// Decoding a line in one pass.
//
// ParseMessage needs each line twice: as a generic value (objects, arrays, strings,
// json.Number, bools, nil, as jsonschema.UnmarshalJSON decodes it) for the protocol check, and
// as a Message, whose payloads (call.data, notification.data) are the bytes the line holds.
// Decoding the line twice with encoding/json was most of the harness's CPU on a run through
// the protocol. decodeWire does both in one pass over the bytes (jsonvalue, numbers kept as
// their text, the payloads' bytes captured) for the lines an adapter writes all the time
// (call, notify, idle, stopped) and reports false for anything it is not certain to decode
// exactly as encoding/json would: an escaped surrogate, bytes that are not UTF-8, a key
// written twice, a member a Message would read under another spelling, a value of an
// unexpected type. ParseMessage then decodes the line as before, so the verdicts and
// error messages are unchanged. TestConformsNeverAcceptsWhatTheSchemaRejects holds the two
// to each other on every line the adapters write and on some 2,000 mutants of them,
// TestWireDecodingAgreesWithEncodingJSON on lines written otherwise.

// wireMemo maps the bytes of an object met again at the depth of messages (a context's, an
// event's) to the value decoding them gave: an adapter writes the same messages again and
// again, a whole context each request. A Process keeps one for a session; the values are
// shared between its lines, which only the protocol check reads.
type wireMemo = jsonvalue.Memo[any]

// decodeWire decodes a line as ParseMessage's two decodings would, and reports whether it
// could; with ownLine the message's payloads may point into line, which nobody changes. Objects at the depths of messages go through memo (nil: none): a notification's
// data.message (4), a call's data.messages[i] (5), data.context.messages[i] (6) and
// data.turn.context.messages[i] (7); so do the lists of those messages, a stream call's
// context taking the messages it shares with the one before whole.
func decodeWire(line []byte, memo *wireMemo, ownLine bool) (any, Message, bool) {
	var callData, noteData []byte
	d := jsonvalue.Decoder{UseNumber: true, Memo: memo, MemoFrom: 4, MemoTo: 7,
		Capture: func(path []string, value []byte) {
			if len(path) != 2 || path[1] != "data" {
				return
			}
			// The payloads point into a line the message may keep (ownLine); else they are
			// copies, as the line's buffer may be reused.
			if ownLine {
				value = value[:len(value):len(value)]
			} else {
				value = bytes.Clone(value)
			}
			switch path[0] {
			case "call":
				callData = value
			case "notification":
				noteData = value
			}
		}}
	v, ok := d.Decode(line)
	if !ok {
		return nil, Message{}, false
	}
	m, ok := wireMessage(v, callData, noteData)
	return v, m, ok
}

// wireMessage is the Message encoding/json would decode from the line whose generic value is v,
// for the four kinds of line an adapter writes during a run, each with exactly its members.
func wireMessage(v any, callData, noteData []byte) (Message, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Message{}, false
	}
	typ, ok := obj["type"].(string)
	if !ok {
		return Message{}, false
	}
	m := Message{Type: typ}
	session, ok := wireInt(obj["session"])
	if !ok {
		return Message{}, false
	}
	m.Session = int(session)
	switch typ {
	case TypeIdle, TypeStopped:
		return m, len(obj) == 2
	case TypeCall:
		c, ok := obj["call"].(map[string]any)
		if standing, marked := obj["standing"]; marked {
			m.Standing = standing == true
			if !m.Standing {
				return Message{}, false
			}
		}
		if members := 4 + boolInt(m.Standing); !ok || len(obj) != members {
			return Message{}, false
		}
		if m.ID, ok = wireInt(obj["id"]); !ok {
			return Message{}, false
		}
		call := &sim.Call{Data: callData}
		if !onlyKeys(c, "kind", "name", "data") || !optionalString(c, "kind", &call.Kind) || !optionalString(c, "name", &call.Name) {
			return Message{}, false
		}
		m.Call = call
		if call.Kind == trace.CallStream {
			m.streamModel = streamModelOf(c["data"])
		}
		return m, true
	case TypeNotify:
		n, ok := obj["notification"].(map[string]any)
		if !ok || len(obj) != 3 {
			return Message{}, false
		}
		note := &sim.Notification{Data: noteData}
		if !onlyKeys(n, "kind", "data") || !optionalString(n, "kind", &note.Kind) {
			return Message{}, false
		}
		m.Notification = note
		return m, true
	}
	return Message{}, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// streamModelOf is what encoding/json reads of the "model" member of a stream call's data,
// given as decoded (without a key written twice): the value of the one key that matches
// "model" as encoding/json matches keys (exactly or by case folding), whose id, api and
// provider are each read the same way, a string or null. nil when it is not certain: two
// keys match one name (encoding/json would take the last in the text, and the world reads the
// canonical text, whose keys are sorted), a value of another type (an error).
func streamModelOf(data any) *sim.ModelSetup {
	obj, ok := data.(map[string]any)
	if !ok {
		return nil
	}
	v, ok := foldedMember(obj, "model")
	if !ok {
		return nil
	}
	var model sim.ModelSetup
	if v == nil {
		return &model
	}
	fields, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	for name, field := range map[string]*string{"id": &model.ID, "api": &model.API, "provider": &model.Provider} {
		v, ok := foldedMember(fields, name)
		if !ok {
			return nil
		}
		switch s := v.(type) {
		case string:
			*field = s
		case nil:
		default:
			return nil
		}
	}
	return &model
}

// foldedMember is the value of the member of obj whose key matches name as encoding/json
// matches a key to a field (strings.EqualFold), nil when none does; ok is false when several
// do.
func foldedMember(obj map[string]any, name string) (v any, ok bool) {
	found := false
	for k, x := range obj {
		if strings.EqualFold(k, name) {
			if found {
				return nil, false
			}
			v, found = x, true
		}
	}
	return v, true
}

// wireInt is a json.Number written as a plain integer of at most 15 digits.
func wireInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || !isPositiveInt(n) {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

// onlyKeys reports whether obj has no key but those.
func onlyKeys(obj map[string]any, keys ...string) bool {
	n := 0
	for _, k := range keys {
		if _, ok := obj[k]; ok {
			n++
		}
	}
	return n == len(obj)
}

// optionalString sets *out to member key of obj when it is a string; false when it is
// present as anything else.
func optionalString(obj map[string]any, key string, out *string) bool {
	v, present := obj[key]
	if !present {
		return true
	}
	s, ok := v.(string)
	*out = s
	return ok
}
