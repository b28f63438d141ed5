package jsonvalue

import (
	"bytes"
	"encoding/json"
)

// Reading canonical JSON on its bytes: members and elements are found without decoding.

// MemberValue finds member key of the canonical JSON object obj and returns where its value
// lies.
func MemberValue(obj []byte, key string) (start, end int, ok bool) {
	_, start, end, ok = MemberAt(obj, key)
	return start, end, ok
}

// MemberAt finds member key of the canonical JSON object obj and returns where it begins (its
// key) and where its value lies.
func MemberAt(obj []byte, key string) (keyStart, start, end int, ok bool) {
	if keyStart, start, ok = MemberStart(obj, 0, key); !ok {
		return 0, 0, 0, false
	}
	end, ok = SkipValue(obj, start)
	return keyStart, start, end, ok
}

// MemberStart finds member key of the canonical JSON object at obj[at:] and returns where it
// begins (its key) and where its value begins; the members before it are skipped, its value
// is not read.
func MemberStart(obj []byte, at int, key string) (keyStart, start int, ok bool) {
	if at+1 >= len(obj) || obj[at] != '{' {
		return 0, 0, false
	}
	i := at + 1
	for i < len(obj) && obj[i] == '"' {
		kEnd, ok := SkipValue(obj, i)
		if !ok || kEnd >= len(obj) || obj[kEnd] != ':' {
			return 0, 0, false
		}
		if isKey(obj[i:kEnd], key) {
			return i, kEnd + 1, true
		}
		vEnd, ok := SkipValue(obj, kEnd+1)
		if !ok {
			return 0, 0, false
		}
		i = vEnd
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
	return 0, 0, false
}

// isKey reports whether the JSON string s is key.
func isKey(s []byte, key string) bool {
	if len(s) == len(key)+2 && string(s[1:len(s)-1]) == key {
		return true
	}
	if bytes.IndexByte(s, '\\') < 0 {
		return false
	}
	var k string
	return json.Unmarshal(s, &k) == nil && k == key
}

// WithoutMember is the canonical JSON object obj without member key (obj itself when it has
// none).
func WithoutMember(obj []byte, key string) []byte {
	kStart, _, end, ok := MemberAt(obj, key)
	if !ok {
		return obj
	}
	out := make([]byte, 0, len(obj))
	switch {
	case obj[end] == ',':
		out = append(append(out, obj[:kStart]...), obj[end+1:]...)
	case obj[kStart-1] == ',':
		out = append(append(out, obj[:kStart-1]...), obj[end:]...)
	default:
		out = append(append(out, obj[:kStart]...), obj[end:]...)
	}
	return out
}

// EachMember calls f with each member of the compact JSON object obj, key as written (quoted);
// false when obj is not a compact object (nothing but its members, without spaces).
func EachMember(obj []byte, f func(key, value []byte)) bool {
	if len(obj) < 2 || obj[0] != '{' {
		return false
	}
	if string(obj) == "{}" {
		return true
	}
	i := 1
	for i < len(obj) && obj[i] == '"' {
		kEnd, ok := SkipValue(obj, i)
		if !ok || kEnd >= len(obj) || obj[kEnd] != ':' {
			return false
		}
		vEnd, ok := SkipValue(obj, kEnd+1)
		if !ok || vEnd >= len(obj) {
			return false
		}
		f(obj[i:kEnd], obj[kEnd+1:vEnd])
		switch obj[vEnd] {
		case ',':
			i = vEnd + 1
		case '}':
			return vEnd == len(obj)-1
		default:
			return false
		}
	}
	return false
}

// Elements splits a canonical JSON array into its Elements.
func Elements(arr []byte) ([][]byte, bool) {
	if len(arr) < 2 || arr[0] != '[' {
		return nil, false
	}
	if arr[1] == ']' {
		return [][]byte{}, true
	}
	var out [][]byte
	i := 1
	for {
		end, ok := SkipValue(arr, i)
		if !ok || end >= len(arr) {
			return nil, false
		}
		out = append(out, arr[i:end])
		switch arr[end] {
		case ',':
			i = end + 1
		case ']':
			return out, true
		default:
			return nil, false
		}
	}
}

// SkipValue returns where the canonical JSON value starting at i ends.
func SkipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return 0, false
	case '{', '[':
		end, _, ok := End(b, i)
		return end, ok
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j, j > i
}

// PlainString is the value of member key of obj when it is a JSON string without escapes.
func PlainString(obj []byte, key string) (string, bool) {
	start, end, ok := MemberValue(obj, key)
	if !ok || obj[start] != '"' || bytes.IndexByte(obj[start:end], '\\') >= 0 {
		return "", false
	}
	return string(obj[start+1 : end-1]), true
}

// WithMember is the canonical JSON object obj with member key (absent from it, and coming
// in sorted order where no key is written with an escape) set to value.
func WithMember(obj []byte, key string, value []byte) ([]byte, bool) {
	if len(obj) < 2 || obj[0] != '{' {
		return nil, false
	}
	at := len(obj) - 1 // before the closing brace
	i := 1
	for i < len(obj) && obj[i] == '"' {
		kEnd, ok := SkipValue(obj, i)
		if !ok || kEnd >= len(obj) || obj[kEnd] != ':' {
			return nil, false
		}
		k := obj[i+1 : kEnd-1]
		if bytes.IndexByte(k, '\\') >= 0 {
			return nil, false
		}
		switch c := bytes.Compare(k, []byte(key)); {
		case c == 0:
			return nil, false
		case c > 0:
			at = i
		}
		if at == i {
			break
		}
		vEnd, ok := SkipValue(obj, kEnd+1)
		if !ok {
			return nil, false
		}
		i = vEnd
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
	out := make([]byte, 0, len(obj)+len(key)+len(value)+4)
	if at == len(obj)-1 {
		out = append(out, obj[:at]...)
		if len(obj) > 2 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, key...)
		out = append(out, '"', ':')
		out = append(out, value...)
		return append(out, '}'), true
	}
	out = append(out, obj[:at]...)
	out = append(out, '"')
	out = append(out, key...)
	out = append(out, '"', ':')
	out = append(out, value...)
	out = append(out, ',')
	return append(out, obj[at:]...), true
}

// ArrayAt is where the array at path lies in the canonical JSON object obj, and its Elements.
func ArrayAt(obj []byte, path ...string) (start, end int, elems [][]byte, ok bool) {
	return ArrayAtLike(obj, nil, path...)
}

// ArrayAtLike is ArrayAt for an array that may begin with the Elements like (those of the
// same list met before, a context being the last one and more): an element that has the
// bytes of its counterpart in like is that one, found by comparing bytes instead of reading
// it; the others are read. Neither the objects around the array nor the array itself is
// read past its end.
func ArrayAtLike(obj []byte, like [][]byte, path ...string) (start, end int, elems [][]byte, ok bool) {
	if len(path) == 0 {
		return 0, 0, nil, false
	}
	for _, key := range path {
		if _, start, ok = MemberStart(obj, start, key); !ok {
			return 0, 0, nil, false
		}
	}
	if start >= len(obj) || obj[start] != '[' {
		return 0, 0, nil, false
	}
	i := start + 1
	if i < len(obj) && obj[i] == ']' {
		return start, i + 1, [][]byte{}, true
	}
	for {
		var next int
		if k := len(elems); k < len(like) && hasValue(obj, i, like[k]) {
			elems, next = append(elems, like[k]), i+len(like[k])
		} else {
			if next, ok = SkipValue(obj, i); !ok {
				return 0, 0, nil, false
			}
			elems = append(elems, obj[i:next])
		}
		if next >= len(obj) {
			return 0, 0, nil, false
		}
		switch obj[next] {
		case ',':
			i = next + 1
		case ']':
			return start, next + 1, elems, true
		default:
			return 0, 0, nil, false
		}
	}
}

// hasValue reports whether the canonical JSON value at obj[i:] is v: its bytes, followed by
// the end of an element.
func hasValue(obj []byte, i int, v []byte) bool {
	end := i + len(v)
	return end < len(obj) && (obj[end] == ',' || obj[end] == ']') && bytes.Equal(obj[i:end], v)
}
