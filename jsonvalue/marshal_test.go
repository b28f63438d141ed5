package jsonvalue_test

import (
	"encoding/json"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// TestAppendMarshalIsMarshal: AppendMarshal writes json.Marshal's text, for the values decoded
// JSON holds (numbers as float64 or json.Number) and others, and fails where it fails.
func TestAppendMarshalIsMarshal(t *testing.T) {
	floats := rapid.OneOf(rapid.Float64(), rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1e-7, 1e21, 1e20, 123456789, 1e-6, -2.5e-10, math.Inf(1), math.NaN()}))
	strs := rapid.OneOf(rapid.String(), rapid.SampledFrom([]string{"<&>", "\u2028\u2029", "a\"b\\\n", "\x00\x1f", "\xff"}))
	numbers := rapid.SampledFrom([]json.Number{"1", "1.0", "-0", "1e5", "1E+05", "", "x", "01", "2.50"})
	var value func(t *rapid.T, depth int) any
	value = func(t *rapid.T, depth int) any {
		switch k := rapid.IntRange(0, 8).Draw(t, "kind"); {
		case k == 0 || depth > 3 && k > 5:
			return nil
		case k == 1:
			return rapid.Bool().Draw(t, "bool")
		case k == 2:
			return strs.Draw(t, "string")
		case k == 3:
			return floats.Draw(t, "float")
		case k == 4:
			return numbers.Draw(t, "number")
		case k == 5:
			return []int{1, 2} // not decoded JSON: json.Marshal writes it
		case k == 6:
			n := rapid.IntRange(0, 3).Draw(t, "len")
			out := make([]any, n)
			for i := range out {
				out[i] = value(t, depth+1)
			}
			if n == 0 && rapid.Bool().Draw(t, "nil list") {
				return []any(nil)
			}
			return out
		}
		n := rapid.IntRange(0, 3).Draw(t, "members")
		if n == 0 && rapid.Bool().Draw(t, "nil map") {
			return map[string]any(nil)
		}
		out := map[string]any{}
		for range n {
			out[strs.Draw(t, "key")] = value(t, depth+1)
		}
		return out
	}
	rapid.Check(t, func(t *rapid.T) {
		v := value(t, 0)
		want, err := json.Marshal(v)
		got, ok := jsonvalue.AppendMarshal(nil, v)
		if ok != (err == nil) || ok && string(got) != string(want) {
			t.Fatalf("%#v: %q (ok %v), json.Marshal %q (%v)", v, got, ok, want, err)
		}
	})
}
