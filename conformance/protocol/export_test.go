package protocol

import "github.com/turnstile-dev/turnstile/sim"

// Conforms and SchemaAccepts expose the plain protocol check and the schema itself to the
// tests that hold one to the other.
var Conforms = conforms

func SchemaAccepts(v any) bool {
	s, err := compiledSchema()
	return err == nil && s.Validate(v) == nil
}

// DecodeWire exposes the one-pass decoding of a line to the test that holds it to
// encoding/json; memo (nil: none) is shared by the lines a test decodes, as a session's are.
func DecodeWire(line []byte, memo *WireMemo) (any, Message, bool) {
	return decodeWire(line, memo, false)
}

// WireMemo is a session's memo of decoded messages.
type WireMemo = wireMemo

// StreamModel is what the line's decoding told of a stream call's model (nil: nothing), and
// WithoutStreamModel the message without it, as encoding/json decodes it.
func StreamModel(m Message) *sim.ModelSetup { return m.streamModel }

func WithoutStreamModel(m Message) Message {
	m.streamModel = nil
	return m
}

// ReadHarnessLine is the served side's reading of an answer or a delivery by hand.
var ReadHarnessLine = readHarnessLine
