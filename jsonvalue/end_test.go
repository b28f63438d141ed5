package jsonvalue

import (
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

func TestEnd(t *testing.T) {
	cases := []struct {
		in           string
		end, nesting int
		ok           bool
	}{
		{`{}`, 2, 1, true},
		{`[]x`, 2, 1, true},
		{`{"a":[1,{"b":2}]},`, 17, 3, true},
		{`{"a":"}\"{]"} `, 13, 1, true},
		{`{"a":"\\"}`, 10, 1, true},
		{`{"a":[}`, 0, 0, false},
		{`{"a":"}`, 0, 0, false},
		{`"x"`, 0, 0, false},
		{``, 0, 0, false},
	}
	for _, c := range cases {
		end, nesting, ok := End([]byte(c.in), 0)
		if end != c.end || nesting != c.nesting || ok != c.ok {
			t.Errorf("End(%s) = %d, %d, %v; want %d, %d, %v", c.in, end, nesting, ok, c.end, c.nesting, c.ok)
		}
	}
}

// TestEndOfEncodedValues: the extent of any object or array encoding/json writes, followed by
// anything, is exactly its text.
func TestEndOfEncodedValues(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := map[string]any{"s": rapid.String().Draw(t, "s"), "l": []any{rapid.String().Draw(t, "t"), map[string]any{}}}
		text, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		tail := rapid.SampledFrom([]string{"", ",", "]", "}", `"`}).Draw(t, "tail")
		end, nesting, ok := End(append(text, tail...), 0)
		if !ok || end != len(text) || nesting != 3 {
			t.Fatalf("End(%s%s) = %d, %d, %v; want %d, 3, true", text, tail, end, nesting, ok, len(text))
		}
	})
}
