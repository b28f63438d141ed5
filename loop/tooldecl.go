package loop

import (
	"encoding/json"
	"math"
	"unicode/utf8"
)

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
	if plainDeclaration(a) && plainDeclaration(b) {
		return a.Name == b.Name && a.Description == b.Description &&
			(a.ConstrainedSampling == nil) == (b.ConstrainedSampling == nil) && // omitted when nil
			equalJSON(a.Parameters, b.Parameters) && equalJSON(a.ConstrainedSampling, b.ConstrainedSampling)
	}
	// Anything else (other Go types, text that is not UTF-8): compared by the JSON texts.
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// plainDeclaration reports whether d is made only of plain JSON values (plainJSON), which
// compare as their texts do and come back equal from a JSON round trip.
func plainDeclaration(d ToolDeclaration) bool {
	return utf8.ValidString(d.Name) && utf8.ValidString(d.Description) && plainJSON(d.Parameters) && plainJSON(d.ConstrainedSampling)
}

// plainJSON reports whether v is made only of what encoding/json decodes into: maps, slices,
// UTF-8 strings, finite float64s, booleans and nil.
func plainJSON(v any) bool {
	switch x := v.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(x)
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !plainJSON(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// equalJSON compares two plain JSON values as their texts: a nil map or slice is null, 0 and
// -0 differ.
func equalJSON(a, b any) bool {
	if isNull(a) || isNull(b) {
		return isNull(a) && isNull(b)
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !equalJSON(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// isNull reports whether encoding/json writes v as null.
func isNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return x == nil
	case []any:
		return x == nil
	}
	return false
}

// cloneDeclaration is cloneJSON(d), copied by hand when d holds only what a JSON round trip
// keeps as it is (valid UTF-8, finite numbers as float64, maps and slices of those): the loop
// declares tool changes every turn.
func cloneDeclaration(d ToolDeclaration) ToolDeclaration {
	if !utf8.ValidString(d.Name) || !utf8.ValidString(d.Description) {
		return cloneJSON(d)
	}
	params, ok := copyJSON(d.Parameters)
	if !ok {
		return cloneJSON(d)
	}
	constrained, ok := copyJSON(d.ConstrainedSampling)
	if !ok {
		return cloneJSON(d)
	}
	out := ToolDeclaration{Name: d.Name, Description: d.Description, ConstrainedSampling: constrained}
	if params != nil {
		out.Parameters = params.(map[string]any)
	}
	return out
}

// copyJSON deep-copies v when a JSON round trip would give it back equal (ok); any other
// value (an int, a NaN, a string that is not UTF-8, a struct...) is not copied.
func copyJSON(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool:
		return x, true
	case string:
		return x, utf8.ValidString(x)
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case map[string]any:
		if x == nil {
			return nil, true
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := copyJSON(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		if x == nil {
			return nil, true
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := copyJSON(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
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
