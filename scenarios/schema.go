package scenarios

import _ "embed"

// schemaJSON is the JSON Schema of scenario files, for editors.
//
//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema of scenario files.
func Schema() []byte { return schemaJSON }
