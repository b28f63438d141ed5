package conformance

// Conforms and SchemaAccepts expose the plain protocol check and the schema itself to the
// tests that hold one to the other.
var Conforms = conforms

func SchemaAccepts(v any) bool {
	s, err := compiledSchema()
	return err == nil && s.Validate(v) == nil
}

// DecodeWire exposes the one-pass decoding of a line to the test that holds it to
// encoding/json; memo (nil: none) is shared by the lines a test decodes, as a session's are.
func DecodeWire(line []byte, memo *WireMemo) (any, Message, bool) { return decodeWire(line, memo) }

// WireMemo is a session's memo of decoded messages.
type WireMemo = wireMemo
