package loop

import "encoding/json"

// ToolDeclaration is what the model is told about a tool: its name, description and JSON
// Schema parameters. It is what ToolsAdded holds.
type ToolDeclaration struct {
	Name                string         `json:"name"`
	Description         string         `json:"description"`
	Parameters          map[string]any `json:"parameters"`
	ConstrainedSampling any            `json:"constrainedSampling,omitempty"`
}

// ToolReference names a tool, as ToolsRemoved holds it.
type ToolReference struct {
	Name string `json:"name"`
}

// sameDeclaration reports whether two declarations tell the model the same thing (pi's
// declarationsEqual). pi compares JSON texts, which keep JavaScript's key order; Go maps have
// none, so here two schemas that differ only in key order are equal.
func sameDeclaration(a, b ToolDeclaration) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// cloneJSON deep-copies a JSON value through encoding/json, as pi's
// JSON.parse(JSON.stringify(x)) does.
func cloneJSON[T any](v T) T {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out T
	if json.Unmarshal(data, &out) != nil {
		return v
	}
	return out
}
