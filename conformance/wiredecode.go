package conformance

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/turnstile-dev/turnstile/jsonscan"
	"github.com/turnstile-dev/turnstile/sim"
)

// Decoding a line in one pass.
//
// ParseMessage needs each line twice: as a generic value (objects, arrays, strings,
// json.Number, bools, nil, as jsonschema.UnmarshalJSON decodes it) for the protocol check, and
// as a Message, whose payloads (call.data, notification.data) are the bytes the line holds.
// Decoding the line twice with encoding/json was most of the harness's CPU on a run through
// the protocol. decodeWire does both in one pass over the bytes for the lines an adapter
// writes all the time (call, notify, idle, stopped) and reports false for anything it is not
// certain to decode exactly as encoding/json would: an escaped surrogate, bytes that are not
// UTF-8, a key written twice, a member a Message would read under another spelling, a value
// of an unexpected type. ParseMessage then decodes the line as before, so the verdicts and
// error messages are unchanged. TestConformsNeverAcceptsWhatTheSchemaRejects holds the two
// to each other on every line the adapters write and on some 2,000 mutants of them,
// TestWireDecodingAgreesWithEncodingJSON on lines written otherwise.

// wireDecoder reads one JSON value from in, keeping the bytes of call.data and
// notification.data (the payloads a Message keeps as raw bytes).
type wireDecoder struct {
	in    []byte
	pos   int
	depth int
	// path is the keys from the top object to the value being read.
	path []string
	// callData and noteData are the bytes of call.data and notification.data (copies: the
	// line's buffer may be reused).
	callData, noteData []byte
	// memo, when set, holds the values of message objects read in earlier lines.
	memo *wireMemo
}

// wireMemo maps the bytes of an object met at the depth of messages (a context's, an
// event's) to the value decoding them gave: an adapter writes the same messages again and
// again, a whole context each request. Decoding an object depends on its bytes alone (the
// captured payloads are higher up, and the memo keeps away from the depth limit), so bytes
// met again give the same value; the values are shared between lines, which only the
// protocol check reads. A Process keeps one for a session.
type wireMemo struct {
	values map[string]any
	// bytes is the size of the keys held, bounded by maxWireMemoBytes.
	bytes int
}

// Objects shorter than minWireMemoBytes are decoded each time; the memo stops growing at
// maxWireMemoBytes.
const (
	minWireMemoBytes = 64
	maxWireMemoBytes = 64 << 20
)

// memoDepths are the depths at which objects go through the memo: a notification's
// data.message (4) and a call's data.messages[i] or data.context.messages[i] (5, 6).
func memoDepth(depth int) bool { return depth >= 4 && depth <= 6 }

// maxWireDepth bounds nesting; deeper lines go to encoding/json (whose own limit is 10,000).
const maxWireDepth = 500

// decodeWire decodes a line as ParseMessage's two decodings would, and reports whether it
// could.
func decodeWire(line []byte, memo *wireMemo) (any, Message, bool) {
	d := wireDecoder{in: line, memo: memo}
	v, ok := d.value()
	if !ok {
		return nil, Message{}, false
	}
	d.space()
	if d.pos != len(d.in) {
		return nil, Message{}, false
	}
	m, ok := d.message(v)
	return v, m, ok
}

// message is the Message encoding/json would decode from the line whose generic value is v,
// for the four kinds of line an adapter writes during a run, each with exactly its members.
func (d *wireDecoder) message(v any) (Message, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Message{}, false
	}
	typ, ok := obj["type"].(string)
	if !ok {
		return Message{}, false
	}
	m := Message{Type: typ}
	session, ok := wireInt(obj["session"])
	if !ok {
		return Message{}, false
	}
	m.Session = int(session)
	switch typ {
	case TypeIdle, TypeStopped:
		return m, len(obj) == 2
	case TypeCall:
		c, ok := obj["call"].(map[string]any)
		if !ok || len(obj) != 4 {
			return Message{}, false
		}
		if m.ID, ok = wireInt(obj["id"]); !ok {
			return Message{}, false
		}
		call := &sim.Call{Data: d.callData}
		if !onlyKeys(c, "kind", "name", "data") || !optionalString(c, "kind", &call.Kind) || !optionalString(c, "name", &call.Name) {
			return Message{}, false
		}
		m.Call = call
		return m, true
	case TypeNotify:
		n, ok := obj["notification"].(map[string]any)
		if !ok || len(obj) != 3 {
			return Message{}, false
		}
		note := &sim.Notification{Data: d.noteData}
		if !onlyKeys(n, "kind", "data") || !optionalString(n, "kind", &note.Kind) {
			return Message{}, false
		}
		m.Notification = note
		return m, true
	}
	return Message{}, false
}

// wireInt is a json.Number written as a plain integer of at most 15 digits.
func wireInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || !isPositiveInt(n) {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

// onlyKeys reports whether obj has no key but those.
func onlyKeys(obj map[string]any, keys ...string) bool {
	n := 0
	for _, k := range keys {
		if _, ok := obj[k]; ok {
			n++
		}
	}
	return n == len(obj)
}

// optionalString sets *out to member key of obj when it is a string; false when it is
// present as anything else.
func optionalString(obj map[string]any, key string, out *string) bool {
	v, present := obj[key]
	if !present {
		return true
	}
	s, ok := v.(string)
	*out = s
	return ok
}

func (d *wireDecoder) space() {
	for d.pos < len(d.in) {
		switch d.in[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *wireDecoder) value() (any, bool) {
	d.space()
	if d.pos >= len(d.in) {
		return nil, false
	}
	switch c := d.in[d.pos]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		return d.str()
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

func (d *wireDecoder) object() (any, bool) {
	if d.memo != nil && memoDepth(d.depth+1) {
		return d.memoized()
	}
	return d.decodeObject()
}

// memoized reads the object at d.pos through the memo.
func (d *wireDecoder) memoized() (any, bool) {
	end, nesting, ok := jsonscan.End(d.in, d.pos)
	if !ok || end-d.pos < minWireMemoBytes || d.depth+nesting > maxWireDepth {
		return d.decodeObject()
	}
	if v, ok := d.memo.values[string(d.in[d.pos:end])]; ok {
		d.pos = end
		return v, true
	}
	start := d.pos
	v, ok := d.decodeObject()
	if !ok || d.pos != end {
		return v, ok
	}
	if m := d.memo; m.bytes < maxWireMemoBytes {
		if m.values == nil {
			m.values = map[string]any{}
		}
		m.values[string(d.in[start:end])] = v
		m.bytes += end - start
	}
	return v, true
}

func (d *wireDecoder) decodeObject() (any, bool) {
	if d.depth++; d.depth > maxWireDepth {
		return nil, false
	}
	defer func() { d.depth-- }()
	d.pos++ // {
	m := map[string]any{}
	d.space()
	if d.pos < len(d.in) && d.in[d.pos] == '}' {
		d.pos++
		return m, true
	}
	for {
		d.space()
		if d.pos >= len(d.in) || d.in[d.pos] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		key := k.(string)
		if _, dup := m[key]; dup {
			return nil, false
		}
		d.space()
		if d.pos >= len(d.in) || d.in[d.pos] != ':' {
			return nil, false
		}
		d.pos++
		d.space()
		start := d.pos
		d.path = append(d.path, key)
		v, ok := d.value()
		d.path = d.path[:len(d.path)-1]
		if !ok {
			return nil, false
		}
		if key == "data" && len(d.path) == 1 {
			switch d.path[0] {
			case "call":
				d.callData = append([]byte(nil), d.in[start:d.pos]...)
			case "notification":
				d.noteData = append([]byte(nil), d.in[start:d.pos]...)
			}
		}
		m[key] = v
		d.space()
		if d.pos >= len(d.in) {
			return nil, false
		}
		switch d.in[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *wireDecoder) array() (any, bool) {
	if d.depth++; d.depth > maxWireDepth {
		return nil, false
	}
	defer func() { d.depth-- }()
	d.pos++ // [
	list := []any{}
	d.space()
	if d.pos < len(d.in) && d.in[d.pos] == ']' {
		d.pos++
		return list, true
	}
	d.path = append(d.path, "[]")
	defer func() { d.path = d.path[:len(d.path)-1] }()
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		list = append(list, v)
		d.space()
		if d.pos >= len(d.in) {
			return nil, false
		}
		switch d.in[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return list, true
		default:
			return nil, false
		}
	}
}

// str reads a string; escaped surrogates and bytes that are not UTF-8 are left to
// encoding/json.
func (d *wireDecoder) str() (any, bool) {
	d.pos++ // "
	start := d.pos
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		switch {
		case c == '"':
			s := string(d.in[start:d.pos])
			d.pos++
			return s, true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return nil, false
		case c < utf8.RuneSelf:
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.in[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			d.pos += size
		}
	}
	return nil, false
}

// escaped reads the rest of a string holding escapes, from its start.
func (d *wireDecoder) escaped(start int) (any, bool) {
	b := append([]byte(nil), d.in[start:d.pos]...)
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(b), true
		case c == '\\':
			if d.pos+1 >= len(d.in) {
				return nil, false
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
					return nil, false
				}
				r, err := strconv.ParseUint(string(d.in[d.pos:d.pos+4]), 16, 32)
				if err != nil || r >= 0xD800 && r <= 0xDFFF {
					return nil, false
				}
				d.pos += 4
				b = utf8.AppendRune(b, rune(r))
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.in[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			b = append(b, d.in[d.pos:d.pos+size]...)
			d.pos += size
		}
	}
	return nil, false
}

// number reads a number as JSON's grammar writes it, kept as its text.
func (d *wireDecoder) number() (any, bool) {
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
	if d.pos < len(d.in) && (d.in[d.pos] == 'e' || d.in[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.in) && (d.in[d.pos] == '+' || d.in[d.pos] == '-') {
			d.pos++
		}
		if !digits() {
			return nil, false
		}
	}
	return json.Number(d.in[start:d.pos]), true
}
