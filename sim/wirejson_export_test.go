package sim

import "encoding/json"

// WireByReflection makes r write its served data through json.Marshal, not by hand, for
// tests comparing the two; it returns r.
func WireByReflection(r *Reference) *Reference {
	r.wireByReflection = true
	return r
}

// ReadStreamEvent is readStreamEvent, for tests.
var ReadStreamEvent = readStreamEvent

// DecodeStreamEvent is decodeStreamEvent (encoding/json), for tests.
var DecodeStreamEvent = decodeStreamEvent

// mustJSON is json.Marshal(v), for tests' notifications.
func mustJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}
