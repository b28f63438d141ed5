package loop

import (
	"math"
	"reflect"
	"testing"
)

// TestCloneParametersIsTheJSONRoundTrip: the copy by hand gives what pi's
// JSON.parse(JSON.stringify(x)) gives, and a value it cannot copy so goes the long way.
func TestCloneParametersIsTheJSONRoundTrip(t *testing.T) {
	for _, p := range []map[string]any{
		nil,
		{},
		{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number", "minimum": -0.5}}, "required": []any{"n"}},
		{"a": nil, "b": true, "c": []any{1.0, "x", map[string]any{}}, "d": []any{}},
		{"i": 3},                      // an int becomes a float64
		{"bad": "\xff"},               // U+FFFD
		{"nan": math.NaN()},           // not encodable: the same map back
		{"m": map[string]int{"x": 1}}, // another map type
	} {
		got, want := cloneParameters(p), cloneJSON(p)
		if !reflect.DeepEqual(got, want) && !(p["nan"] != nil) {
			t.Errorf("%v: by hand %#v, through JSON %#v", p, got, want)
		}
		if p != nil && len(p) > 0 && p["nan"] == nil && reflect.ValueOf(got).Pointer() == reflect.ValueOf(p).Pointer() {
			t.Errorf("%v: not copied", p)
		}
	}
}
