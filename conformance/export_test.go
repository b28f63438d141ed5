package conformance

// Conforms and SchemaAccepts expose the plain protocol check and the schema itself to the
// tests that hold one to the other.
var Conforms = conforms

func SchemaAccepts(v any) bool {
	s, err := compiledSchema()
	return err == nil && s.Validate(v) == nil
}

// DecodeWire exposes the one-pass decoding of a line to the test that holds it to
// encoding/json.
var DecodeWire = decodeWire
