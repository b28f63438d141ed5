package sim

import "encoding/json"

// SetWireByReflection makes the served reference write its data through json.Marshal (on)
// or by hand (off), for tests comparing the two.
func SetWireByReflection(on bool) { wireByReflection = on }

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
