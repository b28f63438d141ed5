package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Canonical re-encodes JSON in one fixed form, so that the same value gives the same bytes
// whoever produced it (Go's encoding/json, JavaScript's JSON.stringify): object keys sorted,
// no insignificant space, strings escaped the way encoding/json escapes them, numbers written
// the way JavaScript writes them. Invalid JSON is returned as a JSON string holding it.
func Canonical(data []byte) json.RawMessage {
	out, _ := CanonicalWith(data, false, nil)
	return out
}

// CanonicalWith is Canonical that also returns, when wantTop, the top-level string members
// of an object, and remembers in memo the canonical form of the objects at the depths of
// messages (a context's, an event's) that are met again: an implementation sends the same
// messages again and again, written the same way, and the canonical form of an object is a
// function of its bytes. memo may be nil.
func CanonicalWith(data []byte, wantTop bool, memo *CanonicalMemo) (json.RawMessage, map[string]string) {
	out, top, err := canonicalize(data, wantTop, memo)
	if err != nil {
		quoted, _ := json.Marshal(string(data))
		return quoted, nil
	}
	return out, top
}

func canonicalize(data []byte, wantTop bool, memo *CanonicalMemo) (json.RawMessage, map[string]string, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, nil
	}
	c := canonicalizer{in: data, memo: memo}
	if wantTop {
		c.top = map[string]string{}
	}
	// About the input's size: canonical JSON of compact JSON is as long, and a context's is
	// tens of kilobytes, which a buffer grown by doubling copies again and again.
	out, err := c.value(make([]byte, 0, len(data)), 0)
	if err != nil {
		return nil, nil, err
	}
	c.space()
	if c.pos != len(c.in) {
		return nil, nil, errBadJSON
	}
	return out, c.top, nil
}

var errBadJSON = errors.New("invalid JSON")

type canonicalizer struct {
	in   []byte
	pos  int
	top  map[string]string
	memo *CanonicalMemo
}

// CanonicalMemo maps the bytes of an object as an implementation wrote it to its canonical
// form.
type CanonicalMemo = Memo[[]byte]

// The memo serves the objects at the depths of messages (an event's message at 1, a
// context's messages at 2 to 4: data.messages, data.context.messages,
// data.turn.context.messages). maxMemoNesting keeps it far from the canonicalizer's depth
// limit, so that a remembered object would have been accepted at any depth it is met again.
const (
	minMemoDepth, maxMemoDepth = 1, 4
	maxMemoNesting             = 1_000
)

// memoized appends the canonical form of the object starting at c.pos, from the memo when it
// holds it.
func (c *canonicalizer) memoized(out []byte, depth int) ([]byte, error) {
	end, nesting, ok := End(c.in, c.pos)
	if !ok || end-c.pos < MinMemoBytes || nesting > maxMemoNesting {
		return c.object(out, depth)
	}
	raw := c.in[c.pos:end]
	enc, ok, remember := c.memo.Get(raw)
	if ok {
		c.pos = end
		return append(out, enc...), nil
	}
	start := len(out)
	out, err := c.object(out, depth)
	if err == nil && remember && c.pos == end {
		enc := slices.Clone(out[start:])
		c.memo.Put(raw, enc, len(enc))
	}
	return out, err
}

func (c *canonicalizer) space() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value appends the canonical form of the next value to out.
func (c *canonicalizer) value(out []byte, depth int) ([]byte, error) {
	if depth > 10_000 {
		return nil, errBadJSON
	}
	c.space()
	if c.pos >= len(c.in) {
		return nil, errBadJSON
	}
	switch ch := c.in[c.pos]; {
	case ch == '{':
		if c.memo != nil && depth >= minMemoDepth && depth <= maxMemoDepth {
			return c.memoized(out, depth)
		}
		return c.object(out, depth)
	case ch == '[':
		return c.array(out, depth)
	case ch == '"':
		s, err := c.str()
		if err != nil {
			return nil, err
		}
		return AppendString(out, s), nil
	case ch == 't':
		return c.literal(out, "true")
	case ch == 'f':
		return c.literal(out, "false")
	case ch == 'n':
		return c.literal(out, "null")
	default:
		return c.number(out)
	}
}

// member is one key of an object being written: its key and where its canonical
// "key":value text lies in the output.
type member struct {
	key        string
	start, end int
}

// array canonicalizes the array at c.pos.
func (c *canonicalizer) array(out []byte, depth int) ([]byte, error) {
	// An array of objects the memo serves (a context's messages) that begins with one
	// made before takes what was made of those elements whole, and goes on after them.
	whole := c.memo != nil && depth+1 >= minMemoDepth && depth+1 <= maxMemoDepth
	start, outStart := c.pos, len(out)
	var taken []byte // the remembered canonical elements the array began with
	if whole {
		if n, made, ok := c.memo.ArrayPrefix(c.in, c.pos, depth); ok {
			taken = made
			c.pos += n
			out = append(out, made...)
			if c.in[c.pos] == ']' {
				c.pos++
				return append(out, ']'), nil
			}
			c.pos++
			out = append(out, ',')
		}
	}
	if c.pos == start {
		c.pos++
		out = append(out, '[')
		c.space()
		if c.pos < len(c.in) && c.in[c.pos] == ']' {
			c.pos++
			return append(out, ']'), nil
		}
	}
	for {
		var err error
		if out, err = c.value(out, depth+1); err != nil {
			return nil, err
		}
		end, outEnd := c.pos, len(out)
		c.space()
		if c.pos >= len(c.in) {
			return nil, errBadJSON
		}
		if c.in[c.pos] == ']' {
			c.pos++
			if whole {
				c.memo.PutArray(c.in[start:end], depth, func(prev []byte) []byte {
					// The remembered bytes this array began with grow in place: nothing
					// else holds them (ArrayPrefix's readers copy them). Any others are
					// not reused.
					if len(prev) > 0 && len(prev) == len(taken) && &prev[0] == &taken[0] {
						return append(prev, out[outStart+len(prev):outEnd]...)
					}
					return slices.Clone(out[outStart:outEnd])
				})
			}
			return append(out, ']'), nil
		}
		if c.in[c.pos] != ',' {
			return nil, errBadJSON
		}
		c.pos++
		out = append(out, ',')
	}
}

// object writes the object's members in input order straight into out, then, unless they
// were already sorted, reorders that stretch of out by key.
func (c *canonicalizer) object(out []byte, depth int) ([]byte, error) {
	c.pos++
	out = append(out, '{')
	base := len(out)
	var members []member
	sorted := true
	for {
		c.space()
		if c.pos >= len(c.in) {
			return nil, errBadJSON
		}
		if c.in[c.pos] == '}' && len(members) == 0 {
			c.pos++
			break
		}
		if c.in[c.pos] != '"' {
			return nil, errBadJSON
		}
		key, err := c.str()
		if err != nil {
			return nil, err
		}
		c.space()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return nil, errBadJSON
		}
		c.pos++
		if n := len(members); n > 0 && members[n-1].key >= key {
			sorted = false
		}
		start := len(out)
		out = AppendString(out, key)
		out = append(out, ':')
		valueStart, inStart := len(out), c.pos
		if out, err = c.value(out, depth+1); err != nil {
			return nil, err
		}
		if depth == 0 && c.top != nil && out[valueStart] == '"' {
			var s string
			if json.Unmarshal(c.in[inStart:c.pos], &s) == nil {
				c.top[key] = s
			}
		}
		members = append(members, member{key, start, len(out)})
		c.space()
		if c.pos >= len(c.in) {
			return nil, errBadJSON
		}
		if c.in[c.pos] == '}' {
			c.pos++
			break
		}
		if c.in[c.pos] != ',' {
			return nil, errBadJSON
		}
		c.pos++
		out = append(out, ',')
	}
	if !sorted {
		out = sortMembers(out, base, members)
	}
	return append(out, '}'), nil
}

// sortMembers rewrites the members written from base in key order, a repeated key keeping
// its last value, as JSON.parse and encoding/json do.
func sortMembers(out []byte, base int, members []member) []byte {
	region := append([]byte(nil), out[base:]...)
	slices.SortStableFunc(members, func(a, b member) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	out = out[:base]
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue
		}
		if len(out) > base {
			out = append(out, ',')
		}
		out = append(out, region[m.start-base:m.end-base]...)
	}
	return out
}

// str reads a string token and returns its value.
func (c *canonicalizer) str() (string, error) {
	start := c.pos
	c.pos++
	plain := true
	for c.pos < len(c.in) {
		switch ch := c.in[c.pos]; {
		case ch == '"':
			c.pos++
			if plain {
				return string(c.in[start+1 : c.pos-1]), nil
			}
			var s string
			if err := json.Unmarshal(c.in[start:c.pos], &s); err != nil {
				return "", errBadJSON
			}
			return s, nil
		case ch == '\\':
			plain = false
			c.pos += 2
		case ch < 0x20:
			return "", errBadJSON
		default:
			if ch >= utf8.RuneSelf {
				plain = false
			}
			c.pos++
		}
	}
	return "", errBadJSON
}

func (c *canonicalizer) literal(out []byte, word string) ([]byte, error) {
	if !bytes.HasPrefix(c.in[c.pos:], []byte(word)) {
		return nil, errBadJSON
	}
	c.pos += len(word)
	return append(out, word...), nil
}

// number reads a number and writes it as JavaScript's Number.prototype.toString would.
func (c *canonicalizer) number(out []byte) ([]byte, error) {
	start := c.pos
	for c.pos < len(c.in) {
		ch := c.in[c.pos]
		if (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.' || ch == 'e' || ch == 'E' {
			c.pos++
			continue
		}
		break
	}
	text := string(c.in[start:c.pos])
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || text == "" {
		return nil, errBadJSON
	}
	return AppendNumber(out, f), nil
}

// AppendNumber formats f as JavaScript does: plain decimals from 1e-6 up to 1e21,
// exponent notation ("1e+21", "1e-7") outside.
func AppendNumber(out []byte, f float64) []byte {
	if f == 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return append(out, '0')
	}
	abs := math.Abs(f)
	if abs <= 1<<53 && f == math.Trunc(f) {
		// An integer every float64 near it is apart from: its digits are the shortest form.
		return strconv.AppendInt(out, int64(f), 10)
	}
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(out, f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := stringsCut(s, 'e')
	sign := exp[0]
	digits := exp[1:]
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	out = append(out, mant...)
	out = append(out, 'e', sign)
	return append(out, digits...)
}

func stringsCut(s string, sep byte) (string, string, bool) {
	if i := bytes.IndexByte([]byte(s), sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// AppendValue appends the canonical JSON of a decoded value (nil, bool, string, numbers,
// json.RawMessage, map[string]any, []any, []string); other values go through json.Marshal.
func AppendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case string:
		return AppendString(b, x)
	case float64:
		return AppendNumber(b, x)
	case int:
		return AppendNumber(b, float64(x))
	case int64:
		return AppendNumber(b, float64(x))
	case json.RawMessage:
		if len(x) == 0 {
			return append(b, "null"...)
		}
		return append(b, Canonical(x)...)
	case map[string]any:
		return AppendMap(b, x, AppendValue)
	case []any:
		return AppendList(b, x, AppendValue)
	}
	data, err := json.Marshal(v)
	if err != nil {
		quoted, _ := json.Marshal("unencodable: " + err.Error())
		return append(b, quoted...)
	}
	return append(b, Canonical(data)...)
}
