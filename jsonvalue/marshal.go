package jsonvalue

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// AppendMarshal appends v as json.Marshal writes it, without reflection for the values
// decoded JSON holds (nil, bool, string, float64, json.Number, map[string]any, []any); ok is
// false where json.Marshal fails. Other values go through json.Marshal.
func AppendMarshal(b []byte, v any) (_ []byte, ok bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		return AppendString(b, x), true
	case json.Number:
		if x != "" && (x[0] == '-' || x[0] >= '0' && x[0] <= '9') && json.Valid([]byte(x)) {
			return append(b, x...), true
		}
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			return AppendMarshalFloat(b, x), true
		}
	case map[string]any:
		return AppendMarshalMap(b, x, AppendMarshal)
	case []any:
		return AppendMarshalList(b, x, AppendMarshal)
	}
	data, err := json.Marshal(v)
	return append(b, data...), err == nil
}

// AppendMarshalMap appends m as json.Marshal writes a map: null when nil, else its members
// in the order of their keys' bytes, each value written by value; ok is false when value fails.
func AppendMarshalMap[V any](b []byte, m map[string]V, value func([]byte, V) ([]byte, bool)) (_ []byte, ok bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(AppendString(b, k), ':')
		if b, ok = value(b, m[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// AppendMarshalList appends xs as json.Marshal writes a slice: null when nil, else each item
// written by item; ok is false when item fails.
func AppendMarshalList[T any](b []byte, xs []T, item func([]byte, T) ([]byte, bool)) (_ []byte, ok bool) {
	if xs == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = item(b, x); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// AppendMarshalFloat appends a finite float64 as encoding/json writes it: as ECMAScript does, but
// for the exponent's form.
func AppendMarshalFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
