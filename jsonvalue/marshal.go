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
		if x == nil {
			return append(b, "null"...), true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(AppendString(b, k), ':')
			if b, ok = AppendMarshal(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = AppendMarshal(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	data, err := json.Marshal(v)
	return append(b, data...), err == nil
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
