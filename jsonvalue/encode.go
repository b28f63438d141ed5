package jsonvalue

import (
	"slices"
	"unicode/utf8"
)

// plainByte marks the bytes encoding/json writes as they are inside a string.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendString appends s as encoding/json writes a string (HTML characters escaped, as
// json.Marshal does): the plain bytes as they are, \" \\ \b \f \n \r \t by their short
// escapes, the other control characters and < > & as \u00xx, invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 as \u2028 and \u2029.
func AppendString(out []byte, s string) []byte {
	// Most strings written are short and plain (ids, names, roles): scan them in a tight
	// loop and copy them whole; the loop below escapes from the first byte that is not.
	i := 0
	for i < len(s) && plainByte[s[i]] {
		i++
	}
	if i == len(s) {
		out = append(out, '"')
		out = append(out, s...)
		return append(out, '"')
	}
	out = append(out, '"')
	start := 0
	for i < len(s) {
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			out = append(out, s[start:i]...)
			switch c {
			case '"', '\\':
				out = append(out, '\\', c)
			case '\b':
				out = append(out, '\\', 'b')
			case '\f':
				out = append(out, '\\', 'f')
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, s[start:i]...)
			out = append(out, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			out = append(out, s[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', hexDigit[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

const hexDigit = "0123456789abcdef"

// AppendMap appends m as a JSON object (nil as null), its keys in byte order (as encoding/json
// and canonical JSON order them), each value written by item.
func AppendMap[V any](b []byte, m map[string]V, item func([]byte, V) []byte) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	if len(m) == 0 { // a tool call's arguments, a result's details: not iterated
		return append(b, "{}"...)
	}
	var small [8]string // most maps are small: their keys sorted without allocating
	keys := small[:0]
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
		b = item(b, m[k])
	}
	return append(b, '}')
}

// AppendList appends list as a JSON array (nil as null), each item written by item.
func AppendList[T any](b []byte, list []T, item func([]byte, T) []byte) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, x)
	}
	return append(b, ']')
}

// StringSize is the length of s as AppendString writes it, quotes included; s is written only
// when a byte of it is escaped. It ORs a table's flags over four bytes at a time (Trace.JSONL
// sizes every entry's strings).
func StringSize(s string) int {
	var esc uint8
	rest := s
	for len(rest) >= 4 {
		b := rest[:4]
		esc |= escapeByte[b[0]] | escapeByte[b[1]] | escapeByte[b[2]] | escapeByte[b[3]]
		rest = rest[4:]
	}
	for i := 0; i < len(rest); i++ {
		esc |= escapeByte[rest[i]]
	}
	if esc != 0 {
		return len(AppendString(nil, s))
	}
	return len(s) + 2
}

// escapeByte is 1 for the bytes plainByte says a string escapes, 0 for the others.
var escapeByte = func() (t [256]uint8) {
	for c, plain := range plainByte {
		if !plain {
			t[c] = 1
		}
	}
	return t
}()
