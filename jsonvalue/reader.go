package jsonvalue

import (
	"strconv"
)

// Reader reads JSON text value by value, for decoding into Go types by hand what
// encoding/json would decode into them, without its reflection. Each read reports false where
// the text is not what encoding/json is certain to decode the same way (anything the package
// leaves to encoding/json, and any value of another kind than asked for, null included); the
// caller then leaves the whole text to encoding/json, which decodes it or gives its error.
type Reader struct {
	d decoding
}

// NewReader is a reader of data; a Reader holds no memo and reads numbers as float64 in Value.
func NewReader(data []byte) *Reader {
	r := &Reader{}
	r.Reset(data)
	return r
}

// Reset makes r read data from its start.
func (r *Reader) Reset(data []byte) {
	r.d = decoding{Decoder: &plainDecoder, in: data}
}

// plainDecoder is the options of a Reader's values: no memo, numbers as float64.
var plainDecoder Decoder

// Peek is the first byte of the next value, 0 at the end of the text.
func (r *Reader) Peek() byte {
	r.d.space()
	if r.d.pos >= len(r.d.in) {
		return 0
	}
	return r.d.in[r.d.pos]
}

// Done reports whether nothing but white space is left: the text was one value.
func (r *Reader) Done() bool {
	r.d.space()
	return r.d.pos == len(r.d.in)
}

// Object reads an object, calling member with each key (unescaped ASCII keys only) for it to
// read the member's value. Object does not look for a key written twice (encoding/json keeps
// the last): a caller that reads into a struct refuses a field met again.
func (r *Reader) Object(member func(key []byte) bool) bool {
	d := &r.d
	if r.Peek() != '{' {
		return false
	}
	if d.depth++; d.depth > MaxDepth {
		return false
	}
	d.pos++
	d.space()
	if d.pos < len(d.in) && d.in[d.pos] == '}' {
		d.pos++
		d.depth--
		return true
	}
	for {
		key, ok := r.key()
		if !ok {
			return false
		}
		d.space()
		if d.pos >= len(d.in) || d.in[d.pos] != ':' {
			return false
		}
		d.pos++
		if !member(key) {
			return false
		}
		more, ok := d.separator('}')
		if !ok {
			return false
		}
		if !more {
			d.depth--
			return true
		}
	}
}

// key reads an object's key: its bytes, when it holds no escape.
func (r *Reader) key() ([]byte, bool) {
	d := &r.d
	d.space()
	if d.pos >= len(d.in) || d.in[d.pos] != '"' {
		return nil, false
	}
	start := d.pos + 1
	i := start
	for i < len(d.in) && plainASCII[d.in[i]] {
		i++
	}
	if i >= len(d.in) || d.in[i] != '"' {
		return nil, false
	}
	d.pos = i + 1
	return d.in[start:i], true
}

// Array reads an array, calling elem for each element for it to read the element.
func (r *Reader) Array(elem func() bool) bool {
	d := &r.d
	if r.Peek() != '[' {
		return false
	}
	if d.depth++; d.depth > MaxDepth {
		return false
	}
	d.pos++
	d.space()
	if d.pos < len(d.in) && d.in[d.pos] == ']' {
		d.pos++
		d.depth--
		return true
	}
	for {
		if !elem() {
			return false
		}
		more, ok := d.separator(']')
		if !ok {
			return false
		}
		if !more {
			d.depth--
			return true
		}
	}
}

// String reads a string.
func (r *Reader) String() (string, bool) {
	if r.Peek() != '"' {
		return "", false
	}
	s, _, ok := r.d.str()
	return s, ok
}

// Bool reads true or false.
func (r *Reader) Bool() (v, ok bool) {
	d := &r.d
	switch r.Peek() {
	case 't':
		if len(d.in)-d.pos >= 4 && string(d.in[d.pos:d.pos+4]) == "true" {
			d.pos += 4
			return true, true
		}
	case 'f':
		if len(d.in)-d.pos >= 5 && string(d.in[d.pos:d.pos+5]) == "false" {
			d.pos += 5
			return false, true
		}
	}
	return false, false
}

// Null reads null, when it is the next value; it reads nothing otherwise.
func (r *Reader) Null() bool {
	d := &r.d
	if r.Peek() == 'n' && len(d.in)-d.pos >= 4 && string(d.in[d.pos:d.pos+4]) == "null" {
		d.pos += 4
		return true
	}
	return false
}

// number reads a number's text, as JSON's grammar writes it.
func (r *Reader) number() ([]byte, bool) {
	if c := r.Peek(); c != '-' && (c < '0' || c > '9') {
		return nil, false
	}
	start := r.d.pos
	if _, ok := r.d.number(); !ok {
		return nil, false
	}
	return r.d.in[start:r.d.pos], true
}

// Int64 reads a number into an int64, as encoding/json does: an integer in its range.
func (r *Reader) Int64() (int64, bool) {
	text, ok := r.number()
	if !ok {
		return 0, false
	}
	if len(text) < 19 {
		n, neg := int64(0), false
		for i, c := range text {
			switch {
			case c >= '0' && c <= '9':
				n = n*10 + int64(c-'0')
			case c == '-' && i == 0:
				neg = true
			default:
				return 0, false // a fraction or an exponent
			}
		}
		if neg {
			n = -n
		}
		return n, true
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	return n, err == nil
}

// Float64 reads a number into a float64, as encoding/json does.
func (r *Reader) Float64() (float64, bool) {
	text, ok := r.number()
	if !ok {
		return 0, false
	}
	if n, ok := smallInt(text); ok {
		return float64(n), true
	}
	f, err := strconv.ParseFloat(string(text), 64)
	return f, err == nil
}

// Value reads any value as encoding/json decodes it into an any (Decoder's values).
func (r *Reader) Value() (any, bool) {
	return r.d.value()
}

// Seen is the set of an object's keys a hand reader has read, a bit each. encoding/json
// keeps the last of a key met twice; a reader that must decode as it does, or refuse, refuses
// the second (First).
type Seen uint32

// First records bit and reports whether it was not recorded before.
func (s *Seen) First(bit Seen) bool {
	if *s&bit != 0 {
		return false
	}
	*s |= bit
	return true
}
