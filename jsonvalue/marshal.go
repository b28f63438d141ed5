package jsonvalue

import (
	"encoding/json"
	"math"
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

// AppendMarshalMap is AppendMap with a value writer that can fail, as json.Marshal can: ok is
// false when one did (what was written is then to be dropped).
func AppendMarshalMap[V any](b []byte, m map[string]V, value func([]byte, V) ([]byte, bool)) (_ []byte, ok bool) {
	ok = true
	return AppendMap(b, m, whileOK(&ok, value)), ok
}

// AppendMarshalList is AppendList with an item writer that can fail: ok is false when one did.
func AppendMarshalList[T any](b []byte, xs []T, item func([]byte, T) ([]byte, bool)) (_ []byte, ok bool) {
	ok = true
	return AppendList(b, xs, whileOK(&ok, item)), ok
}

// whileOK is write as a writer that cannot fail: once write has failed (*ok false) it writes
// nothing more.
func whileOK[T any](ok *bool, write func([]byte, T) ([]byte, bool)) func([]byte, T) []byte {
	return func(b []byte, x T) []byte {
		if *ok {
			b, *ok = write(b, x)
		}
		return b
	}
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
