package argschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values inside the package are JavaScript-shaped so the port can follow pi-schema line by line: nil (null), bool,
// float64, string, *array, *object, and undefined (an absent property). *object and *array are pointers, so `==`
// compares them by identity as JavaScript's `===` does, which copy-on-write coercion relies on.

// undefinedValue is the type of undefined, JavaScript's value of an absent property.
type undefinedValue struct{}

// undefined is what a lookup of an absent property gives.
var undefined any = undefinedValue{}

// object is a JSON object with JavaScript's key order: array-index keys ascending, then the other keys in insertion
// order.
type object struct {
	keys []string
	vals map[string]any
}

func newObject(capacity int) *object {
	return &object{keys: make([]string, 0, capacity), vals: make(map[string]any, capacity)}
}

// get returns the value of own property k.
func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// at returns the value of k, undefined when k is absent (JavaScript's `o[k]`).
func (o *object) at(k string) any {
	if v, ok := o.vals[k]; ok {
		return v
	}
	return undefined
}

// has reports whether k is an own property (Object.hasOwn).
func (o *object) has(k string) bool {
	_, ok := o.vals[k]
	return ok
}

// clone is the spread copy `{ ...o }`.
func (o *object) clone() *object {
	c := &object{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = v
	}
	return c
}

// set assigns k, adding it where JavaScript would when it is new.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; ok {
		o.vals[k] = v
		return
	}
	o.vals[k] = v
	if !isArrayIndex(k) {
		o.keys = append(o.keys, k)
		return
	}
	n, _ := strconv.ParseUint(k, 10, 64)
	i := 0
	for i < len(o.keys) && isArrayIndex(o.keys[i]) {
		m, _ := strconv.ParseUint(o.keys[i], 10, 64)
		if m > n {
			break
		}
		i++
	}
	o.keys = append(o.keys, "")
	copy(o.keys[i+1:], o.keys[i:])
	o.keys[i] = k
}

// remove deletes k (`delete o[k]`).
func (o *object) remove(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			return
		}
	}
}

// isArrayIndex reports whether k is a canonical array index, which JavaScript orders before other keys.
func isArrayIndex(k string) bool {
	if k == "0" {
		return true
	}
	if k == "" || k[0] < '1' || k[0] > '9' || len(k) > 10 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	n, _ := strconv.ParseUint(k, 10, 64)
	return n < math.MaxUint32
}

// array is a JSON array.
type array struct {
	items []any
}

// isPlainObject is pi-schema's isObject / isPlainObject: a JSON object.
func isPlainObject(v any) bool {
	_, ok := v.(*object)
	return ok
}

// fromGo converts a Go value, as decoded by encoding/json, into the package's values: a deep copy, as
// structuredClone makes. A json.RawMessage is decoded keeping its key order; map keys, which have no order, are
// taken in sorted order. Other values go through encoding/json.
func fromGo(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return x, nil
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int:
		return float64(x), nil
	case int8:
		return float64(x), nil
	case int16:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case uint8:
		return float64(x), nil
	case uint16:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case string:
		return x, nil
	case json.Number:
		return jsonNumber(string(x)), nil
	case json.RawMessage:
		return decodeJSON(x)
	case []any:
		a := &array{items: make([]any, len(x))}
		for i, item := range x {
			c, err := fromGo(item)
			if err != nil {
				return nil, err
			}
			a.items[i] = c
		}
		return a, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := newObject(len(keys))
		for _, k := range keys {
			c, err := fromGo(x[k])
			if err != nil {
				return nil, err
			}
			o.set(k, c)
		}
		return o, nil
	case *object, *array, undefinedValue:
		return x, nil
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return decodeJSON(data)
	}
}

// toGo converts a package value back to encoding/json's shapes; undefined properties are left out, as JSON does.
func toGo(v any) any {
	switch x := v.(type) {
	case *object:
		m := make(map[string]any, len(x.keys))
		for _, k := range x.keys {
			if val := x.vals[k]; val != undefined {
				m[k] = toGo(val)
			}
		}
		return m
	case *array:
		s := make([]any, len(x.items))
		for i, item := range x.items {
			s[i] = toGo(item)
		}
		return s
	case undefinedValue:
		return nil
	default:
		return x
	}
}

// decodeJSON decodes JSON text as JSON.parse does: object keys in JavaScript's order (a repeated key keeps its first
// place and its last value), numbers as the nearest float64.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("invalid JSON: data after the top-level value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObject(4)
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("invalid JSON: %w", err)
				}
				val, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(keyTok.(string), val)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := &array{}
			for dec.More() {
				val, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a.items = append(a.items, val)
			}
			_, err := dec.Token()
			return a, err
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %v", t)
	case json.Number:
		return jsonNumber(string(t)), nil
	default:
		return t, nil
	}
}

// jsonNumber is a JSON number literal as JSON.parse reads it; out of range is ±Infinity.
func jsonNumber(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return math.NaN()
	}
	return f
}

// isFiniteNumber is Number.isFinite.
func isFiniteNumber(v any) bool {
	f, ok := v.(float64)
	return ok && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// isInteger is Number.isInteger.
func isInteger(v any) bool {
	f, ok := v.(float64)
	return ok && !math.IsInf(f, 0) && f == math.Trunc(f)
}

// deepEqual is pi-schema's JSON equality (checks.js deepEqual), as const, enum and uniqueItems compare.
func deepEqual(a, b any) bool {
	if a == b {
		return true
	}
	switch x := a.(type) {
	case *array:
		y, ok := b.(*array)
		if !ok || len(x.items) != len(y.items) {
			return false
		}
		for i := range x.items {
			if !deepEqual(x.items[i], y.items[i]) {
				return false
			}
		}
		return true
	case *object:
		y, ok := b.(*object)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		for _, k := range x.keys {
			yv, ok := y.get(k)
			if !ok || !deepEqual(x.vals[k], yv) {
				return false
			}
		}
		return true
	}
	return false
}

// jsNumber is JavaScript's Number.prototype.toString for a float64: shortest round-trip digits, exponent notation
// from 1e21 up and below 1e-6.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mantissa, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k := len(digits)
	n := x + 1 // the decimal point sits after n digits
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		if n-1 >= 0 {
			s += "e+" + strconv.Itoa(n-1)
		} else {
			s += "e-" + strconv.Itoa(1-n)
		}
	}
	return sign + s
}

// isJSSpace reports whether r is JavaScript white space or a line terminator, which trim() and Number() strip.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// jsTrim is String.prototype.trim.
func jsTrim(s string) string {
	return strings.TrimFunc(s, isJSSpace)
}

// jsToNumber is JavaScript's Number(string): trimmed, "" is 0, hex/octal/binary literals, Infinity, decimals;
// anything else is NaN.
func jsToNumber(s string) float64 {
	s = jsTrim(s)
	if s == "" {
		return 0
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			n, ok := new(big.Int).SetString(s[2:], base)
			if !ok || strings.ContainsAny(s[2:], "_+-") {
				return math.NaN()
			}
			f, _ := new(big.Float).SetInt(n).Float64()
			return f
		}
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	if !isDecimalLiteral(s) {
		return math.NaN()
	}
	return jsonNumber(s)
}

// isDecimalLiteral matches StrDecimalLiteral without Infinity: [+-] (digits [. [digits]] | . digits) [e [+-] digits].
func isDecimalLiteral(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	intDigits := digits()
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		fracDigits = digits()
	}
	if intDigits+fracDigits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// jsString is JavaScript's String(v) for the values a schema holds, as template literals and Array.join use it
// (join writes null and undefined as "").
func jsString(v any, inJoin bool) string {
	switch x := v.(type) {
	case nil:
		if inJoin {
			return ""
		}
		return "null"
	case undefinedValue:
		if inJoin {
			return ""
		}
		return "undefined"
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return jsNumber(x)
	case string:
		return x
	case *array:
		parts := make([]string, len(x.items))
		for i, item := range x.items {
			parts[i] = jsString(item, true)
		}
		return strings.Join(parts, ",")
	default:
		return "[object Object]"
	}
}

// jsonStringify is JSON.stringify(v, null, indent) for package values; it returns "undefined" where JSON.stringify
// returns undefined.
func jsonStringify(v any, indent string) string {
	if v == undefined {
		return "undefined"
	}
	var b strings.Builder
	writeJSON(&b, v, indent, "")
	return b.String()
}

func writeJSON(b *strings.Builder, v any, indent, prefix string) {
	switch x := v.(type) {
	case nil, undefinedValue:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			b.WriteString("null")
		} else {
			b.WriteString(jsNumber(x))
		}
	case string:
		writeJSONString(b, x)
	case *array:
		if len(x.items) == 0 {
			b.WriteString("[]")
			return
		}
		inner := prefix + indent
		b.WriteByte('[')
		for i, item := range x.items {
			if i > 0 {
				b.WriteByte(',')
			}
			if indent != "" {
				b.WriteString("\n" + inner)
			}
			writeJSON(b, item, indent, inner)
		}
		if indent != "" {
			b.WriteString("\n" + prefix)
		}
		b.WriteByte(']')
	case *object:
		inner := prefix + indent
		wrote := false
		b.WriteByte('{')
		for _, k := range x.keys {
			val := x.vals[k]
			if val == undefined {
				continue
			}
			if wrote {
				b.WriteByte(',')
			}
			wrote = true
			if indent != "" {
				b.WriteString("\n" + inner)
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			writeJSON(b, val, indent, inner)
		}
		if wrote && indent != "" {
			b.WriteString("\n" + prefix)
		}
		b.WriteByte('}')
	default:
		b.WriteString("null")
	}
}

// writeJSONString quotes s as JSON.stringify does: only '"', '\\' and control characters are escaped.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// codePoints is the length JSON Schema gives a string: its Unicode code points.
func codePoints(s string) int {
	return utf8.RuneCountInString(s)
}

// utf16Len is JavaScript's string length: UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
