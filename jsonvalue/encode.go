package jsonvalue

import (
	"encoding/json"
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
// json.Marshal does).
func AppendString(out []byte, s string) []byte {
	simple := true
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			simple = false
			break
		}
	}
	if simple {
		out = append(out, '"')
		out = append(out, s...)
		return append(out, '"')
	}
	quoted, _ := json.Marshal(s)
	return append(out, quoted...)
}
