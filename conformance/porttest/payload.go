package porttest

import (
	"encoding/json"
	"reflect"
	"unicode/utf8"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
)

// payloadJSON is json.Marshal(v): the loop's events are written by hand (loop.MarshalEvent),
// and what a value that writes its own JSON (a json.Marshaler) writes is taken as it is when
// it is already in json.Marshal's form, instead of being compacted and escaped again (a
// request's whole context, an event's message, at every call).
func payloadJSON(v any) ([]byte, error) {
	switch x := v.(type) {
	case loop.Event:
		return loop.MarshalEvent(&x)
	case json.Marshaler:
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && rv.IsNil() {
			break // json.Marshal writes null
		}
		if b, err := x.MarshalJSON(); err == nil && jsonvalue.MarshalForm(b) {
			return b, nil
		}
	}
	return json.Marshal(v)
}

// eventType is the type member of an event's JSON data, as encoding/json reads it.
func eventType(event any, data []byte) string {
	if e, ok := event.(loop.Event); ok && utf8.ValidString(string(e.Type)) {
		return string(e.Type) // what its JSON says, as MarshalEvent wrote it
	}
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(data, &head)
	return head.Type
}
