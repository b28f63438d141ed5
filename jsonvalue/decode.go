// Package jsonvalue decodes JSON text into the Go values encoding/json gives an any
// (map[string]any, []any, string, float64 or json.Number, bool, nil) in one pass, several
// times faster than encoding/json, for the JSON this project reads all the time: protocol
// lines and trace entries.
//
// It decodes only what it is certain to decode exactly as encoding/json would and reports
// false for anything else (a key written twice, an escaped surrogate, bytes that are not
// UTF-8, nesting deeper than MaxDepth, a number out of float64's range), which the caller
// leaves to encoding/json. A Memo shares the values of the objects met again, looked up by
// their bytes before they are decoded; End finds where an object or array ends without
// decoding it. AppendString writes a string as encoding/json does.
package jsonvalue

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MaxDepth bounds nesting; deeper text is reported undecodable (encoding/json's own limit
// is 10,000).
const MaxDepth = 500

// Decoder holds the options of a decoding; the zero Decoder decodes numbers as float64,
// without a memo.
type Decoder struct {
	// UseNumber decodes numbers as json.Number (their text), as json.Decoder.UseNumber does.
	UseNumber bool
	// Memo, when set, shares the values of the objects met again that open at a depth from
	// MemoFrom to MemoTo (the top value is at depth 1, its members' and elements' values at 2,
	// …), and of the elements an array of such objects shares with a long array met before
	// (Memo.ArrayPrefix: a context repeats the one before it). The values are shared by every
	// decoding through the Memo: whoever reads them must not change them. A Memo holds the
	// values of one way of reading numbers: the first decoding through it decides, and a
	// decoding that reads numbers otherwise does not use it.
	Memo             *Memo[any]
	MemoFrom, MemoTo int
	// Capture, when set, is called with each member of an object at depth 1 or 2: the keys
	// from the top value to the member, and the member value's bytes (valid only during
	// the call).
	Capture func(path []string, value []byte)
}

// Decode decodes data, the whole of which must be one JSON value; ok is false when it is
// not, or holds anything encoding/json might decode otherwise.
func (o *Decoder) Decode(data []byte) (v any, ok bool) {
	d := decoding{Decoder: o, in: data}
	v, ok = d.value()
	if !ok {
		return nil, false
	}
	d.space()
	if d.pos != len(d.in) {
		return nil, false
	}
	return v, true
}

// DecodeAny is data decoded as encoding/json decodes it into an any: by the decoder where it
// can, else by encoding/json (nil when data is not JSON). With UseNumber, text the decoder
// leaves is nil (encoding/json would give float64s).
func (o *Decoder) DecodeAny(data []byte) any {
	if v, ok := o.Decode(data); ok {
		return v
	}
	if o.UseNumber {
		return nil
	}
	var v any
	_ = json.Unmarshal(data, &v)
	return v
}

// decoding is one pass over in.
type decoding struct {
	*Decoder
	in    []byte
	pos   int
	depth int
	// deepest is the greatest depth reached, kept for the memo (an object's nesting).
	deepest int
	// path is the keys from the top value to the value being read, kept for Capture.
	path []string
}

func (d *decoding) space() {
	for d.pos < len(d.in) {
		switch d.in[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoding) value() (any, bool) {
	d.space()
	if d.pos >= len(d.in) {
		return nil, false
	}
	switch c := d.in[d.pos]; {
	case c == '{':
		if d.Memo != nil && d.depth+1 >= d.MemoFrom && d.depth+1 <= d.MemoTo {
			return d.memoized()
		}
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		return d.strValue()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	for _, lit := range []struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(d.in)-d.pos >= len(lit.text) && string(d.in[d.pos:d.pos+len(lit.text)]) == lit.text {
			d.pos += len(lit.text)
			return lit.v, true
		}
	}
	return nil, false
}

// memoized reads the object at d.pos through the memo: decoding an object depends on its
// bytes alone (the depth limit aside, which the memo keeps away from), so bytes met again
// give the same value.
func (d *decoding) memoized() (any, bool) {
	numbers := d.numbers()
	if d.Memo.numbers == 0 {
		d.Memo.numbers = numbers
	}
	if d.Capture != nil && d.depth < 2 || d.Memo.numbers != numbers {
		return d.object()
	}
	if n, nesting, v, ok := d.Memo.object(d.in, d.pos); ok && d.depth+nesting <= MaxDepth {
		d.pos += n
		return v, true
	}
	start, deepest := d.pos, d.deepest
	d.deepest = d.depth
	v, ok := d.object()
	nesting := d.deepest - d.depth
	d.deepest = max(deepest, d.deepest)
	if raw := d.in[start:d.pos]; ok && len(raw) >= MinMemoBytes && d.Memo.sighted(raw) {
		d.Memo.rememberObject(raw, nesting, v, 3*len(raw)) // a decoded value weighs some three times its text
	}
	return v, ok
}

func (d *decoding) object() (any, bool) {
	if d.depth++; d.depth > MaxDepth {
		return nil, false
	}
	d.deepest = max(d.deepest, d.depth)
	defer func() { d.depth-- }()
	d.pos++ // {
	m := map[string]any{}
	d.space()
	if d.pos < len(d.in) && d.in[d.pos] == '}' {
		d.pos++
		return m, true
	}
	capture := d.Capture != nil && d.depth <= 2
	highest, first := "", true
	for {
		d.space()
		if d.pos >= len(d.in) || d.in[d.pos] != '"' {
			return nil, false
		}
		key, _, ok := d.str()
		if !ok {
			return nil, false
		}
		// A key above every one before it (canonical JSON sorts them) repeats none.
		if !first && key <= highest {
			if _, dup := m[key]; dup {
				return nil, false
			}
		} else {
			highest = key
		}
		first = false
		d.space()
		if d.pos >= len(d.in) || d.in[d.pos] != ':' {
			return nil, false
		}
		d.pos++
		d.space()
		start := d.pos
		if capture {
			d.path = append(d.path, key)
		}
		v, ok := d.value()
		if capture {
			if ok {
				d.Capture(d.path, d.in[start:d.pos])
			}
			d.path = d.path[:len(d.path)-1]
		}
		if !ok {
			return nil, false
		}
		m[key] = v
		if more, ok := d.separator('}'); !ok || !more {
			return m, ok
		}
	}
}

// separator reads what follows a member or an element: a comma (more: true) or the closing
// bracket (more: false); ok is false for anything else.
func (d *decoding) separator(closing byte) (more, ok bool) {
	d.space()
	if d.pos >= len(d.in) {
		return false, false
	}
	switch d.in[d.pos] {
	case ',':
		d.pos++
		return true, true
	case closing:
		d.pos++
		return false, true
	}
	return false, false
}

func (d *decoding) array() (any, bool) {
	if d.depth++; d.depth > MaxDepth {
		return nil, false
	}
	d.deepest = max(d.deepest, d.depth)
	defer func() { d.depth-- }()
	// An array whose elements open at the memo's depths (a context's messages) is looked up
	// whole: a context repeats the one before it and adds to its end, and the elements they
	// share are taken without reading them again.
	whole := d.Memo != nil && d.depth+1 >= d.MemoFrom && d.depth+1 <= d.MemoTo
	if whole && d.Memo.numbers == 0 {
		d.Memo.numbers = d.numbers()
	}
	whole = whole && d.Memo.numbers == d.numbers()
	start := d.pos
	list := []any{}
	var taken []any // the remembered elements the array began with
	if whole {
		if n, made, ok := d.Memo.ArrayPrefix(d.in, d.pos, d.depth); ok {
			taken = made.([]any)
			list = append(make([]any, 0, len(taken)+4), taken...)
			d.pos += n
			if d.in[d.pos] == ']' {
				d.pos++
				return list, true
			}
		}
	}
	d.pos++ // '[', or the ',' after the elements taken whole
	d.space()
	if d.pos < len(d.in) && d.in[d.pos] == ']' && len(list) == 0 {
		d.pos++
		return list, true
	}
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		list = append(list, v)
		end := d.pos
		more, ok := d.separator(']')
		if !ok || !more {
			if ok && whole {
				d.Memo.PutArray(d.in[start:end], d.depth, func(prev any) any {
					// The remembered list this one began with grows in place: nothing else
					// holds it (ArrayPrefix's readers copy it). Any other is not reused.
					if shared, ok := prev.([]any); ok && sameSlice(shared, taken) {
						return any(append(shared, list[len(shared):]...))
					}
					return any(slices.Clone(list))
				})
			}
			return list, ok
		}
	}
}

// sameSlice reports whether a and b are the same non-empty slice: the same array, the same
// length.
func sameSlice[E any](a, b []E) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// numbers is how this decoding reads numbers, as a Memo records it.
func (d *decoding) numbers() int8 {
	if d.UseNumber {
		return 2
	}
	return 1
}

// strValue reads a string as a value: the strings traces repeat most come boxed already, so
// that decoding them allocates nothing.
func (d *decoding) strValue() (any, bool) {
	s, boxed, ok := d.str()
	if !ok {
		return nil, false
	}
	if boxed != nil {
		return boxed, true
	}
	return s, true
}

// str reads a string, and gives it boxed too when it is one of the interned; escaped
// surrogates and bytes that are not UTF-8 are left to encoding/json.
func (d *decoding) str() (s string, boxed any, ok bool) {
	d.pos++ // "
	start := d.pos
	// Most strings are printable ASCII without escapes, skipped a table lookup a byte (on
	// locals, which the compiler keeps in registers: the loop is hot).
	in, pos := d.in, d.pos
	for pos < len(in) && plainASCII[in[pos]] {
		pos++
	}
	d.pos = pos
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		switch {
		case c == '"':
			raw := d.in[start:d.pos]
			d.pos++
			if v, ok := internedOf(raw); ok {
				return v.(string), v, true
			}
			return string(raw), nil, true
		case c == '\\':
			s, ok := d.escaped(start)
			return s, nil, ok
		case c < 0x20:
			return "", nil, false
		case c < utf8.RuneSelf:
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.in[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", nil, false
			}
			d.pos += size
		}
	}
	return "", nil, false
}

// escaped reads the rest of a string holding escapes, from its start.
func (d *decoding) escaped(start int) (string, bool) {
	b := append([]byte(nil), d.in[start:d.pos]...)
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(b), true
		case c == '\\':
			if d.pos+1 >= len(d.in) {
				return "", false
			}
			e := d.in[d.pos+1]
			d.pos += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				if d.pos+4 > len(d.in) {
					return "", false
				}
				r, err := strconv.ParseUint(string(d.in[d.pos:d.pos+4]), 16, 32)
				if err != nil || r >= 0xD800 && r <= 0xDFFF {
					return "", false
				}
				d.pos += 4
				b = utf8.AppendRune(b, rune(r))
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.in[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			b = append(b, d.in[d.pos:d.pos+size]...)
			d.pos += size
		}
	}
	return "", false
}

// number reads a number as JSON's grammar writes it: its text with UseNumber, else a
// float64 (a number out of its range is left to encoding/json, which rejects it).
func (d *decoding) number() (any, bool) {
	start := d.pos
	digits := func() bool {
		n := 0
		for d.pos < len(d.in) && d.in[d.pos] >= '0' && d.in[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n > 0
	}
	if d.in[d.pos] == '-' {
		d.pos++
	}
	if d.pos < len(d.in) && d.in[d.pos] == '0' {
		d.pos++
	} else if !digits() {
		return nil, false
	}
	if d.pos < len(d.in) && d.in[d.pos] == '.' {
		d.pos++
		if !digits() {
			return nil, false
		}
	}
	exponent := d.pos < len(d.in) && (d.in[d.pos] == 'e' || d.in[d.pos] == 'E')
	if exponent {
		d.pos++
		if d.pos < len(d.in) && (d.in[d.pos] == '+' || d.in[d.pos] == '-') {
			d.pos++
		}
		if !digits() {
			return nil, false
		}
	}
	text := d.in[start:d.pos]
	if d.UseNumber {
		// Out of float64's range only with an exponent or some 309 digits: left to the caller
		// as in the other mode (encoding/json would keep its text, but no float64 reads it:
		// whoever reads it as a number fails).
		if exponent || len(text) > 300 {
			if _, err := strconv.ParseFloat(string(text), 64); err != nil {
				return nil, false
			}
		}
		return json.Number(text), true
	}
	if n, ok := smallInt(text); ok {
		return smallFloats[n], true
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// smallFloats are the float64s 0 to 1023, boxed, which traces repeat (counts, times, indexes):
// decoding them allocates nothing.
var smallFloats = func() (out [1024]any) {
	for i := range out {
		out[i] = float64(i)
	}
	return out
}()

// smallInt reads text, a number's, as an index of smallFloats when it is one: digits alone,
// without a sign, a fraction or an exponent.
func smallInt(text []byte) (int, bool) {
	if len(text) > 4 {
		return 0, false
	}
	n := 0
	for _, c := range text {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n < len(smallFloats)
}

// interned holds the keys and values agent traces and protocol lines repeat most, boxed, so
// that decoding them allocates nothing: an open-addressing table, found by a few of their
// bytes, cheaper to look up than a map, which hashes them all.
var interned = func() (t [internSlots]internedString) {
	for _, s := range []string{"type", "role", "content", "text", "thinking", "toolCall", "id", "name", "arguments",
		"message", "messages", "partial", "contentIndex", "delta", "timestamp", "usage", "input", "output", "cacheRead",
		"cacheWrite", "totalTokens", "cost", "total", "api", "provider", "model", "stopReason", "thinkingLevel",
		"assistant", "user", "system", "toolResult", "toolCallId", "toolName", "isError", "details", "durationMs",
		"result", "args", "assistantMessageEvent", "toolsAdded", "toolsRemoved", "description", "parameters",
		"faux", "faux-1", "pending", "stop", "toolUse", "length", "error", "aborted", "off", "object", "properties",
		"required", "context", "tools", "turn", "toolResults", "newMessages", "terminate", "stream", "reason",
		"call", "notify", "idle", "kind", "data", "session", "notification", "event", "hook", "tool"} {
		h := internHash([]byte(s))
		for t[h].v != nil {
			h = (h + 1) % internSlots
		}
		t[h] = internedString{s, s}
	}
	return t
}()

// internSlots is the size of the interned table, some four times the strings it holds.
const internSlots = 256

// internedString is an interned string and the same boxed.
type internedString struct {
	s string
	v any
}

// internHash is where the interned table holds raw, or starts looking for it.
func internHash(raw []byte) int {
	n := len(raw)
	return (n*7 + int(raw[0])*31 + int(raw[n/2])*11 + int(raw[n-1])*17) % internSlots
}

// internedOf is raw interned and boxed, when it is one of the interned strings.
func internedOf(raw []byte) (any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	for h := internHash(raw); interned[h].v != nil; h = (h + 1) % internSlots {
		if interned[h].s == string(raw) {
			return interned[h].v, true
		}
	}
	return nil, false
}

// plainASCII marks the bytes a string holds as they are: printable ASCII but the quote and
// the backslash.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
