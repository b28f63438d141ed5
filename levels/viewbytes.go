package levels

import (
	"bytes"
	"hash/maphash"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// The core view of canonical JSON (trace.Entry.Canonical), made on its bytes: members left
// out, texts replaced, declarations dropped from lists, the rest copied as it is. It writes
// what decoding the payload and writing its view again writes (viewer.value), which it is
// tested against: canonical JSON is one value's only form.

// viewMemoBytes is the least length of an object the view remembers: a run's contexts repeat
// their messages, which are made once.
const viewMemoBytes = 64

// memoView is what the view made of an object (raw), and whether it is a declaration.
type memoView struct {
	raw, out    []byte
	declaration bool
}

// viewMemo holds what the view made of the objects of a trace's canonical payloads, by the
// hash of their bytes. It keeps the payloads' bytes and the views' (both left as they are
// while it is in use) instead of copies.
type viewMemo struct {
	seed    maphash.Seed
	objects map[uint64][]memoView
}

// get is what the view made of raw, when it was made before.
func (m *viewMemo) get(raw []byte) (memoView, uint64, bool) {
	if m.objects == nil {
		m.seed, m.objects = maphash.MakeSeed(), map[uint64][]memoView{}
	}
	h := maphash.Bytes(m.seed, raw)
	for _, v := range m.objects[h] {
		if bytes.Equal(v.raw, raw) {
			return v, h, true
		}
	}
	return memoView{}, h, false
}

// span is one member of an object: its key (quoted, as written) and its value.
type span struct{ key, value []byte }

// canonicalView appends the core view of the canonical JSON value b to out; ok is false when
// b is not compact JSON (the caller decodes it then).
func (v *viewer) canonicalView(out, b []byte) ([]byte, bool) {
	out, _, ok := v.appendView(out, b, false, false)
	return out, ok
}

// appendView appends the view of value b, nested as for viewer.value; declaration says b is a
// system message that only declares tools, which it leaves out (appends nothing) when drop.
func (v *viewer) appendView(out, b []byte, nested, drop bool) (_ []byte, declaration, ok bool) {
	if len(b) == 0 {
		return out, false, false
	}
	switch b[0] {
	case '{':
		if nested || len(b) < viewMemoBytes {
			return v.object(out, b, nested, drop)
		}
		m, h, ok := v.memo.get(b)
		switch {
		case ok && m.declaration && drop:
			return out, true, true
		case ok:
			return append(out, m.out...), m.declaration, true
		}
		start := len(out)
		if out, declaration, ok = v.object(out, b, false, drop); ok && !(declaration && drop) {
			// the view's bytes, which nothing writes over: out only grows
			v.memo.objects[h] = append(v.memo.objects[h], memoView{b, out[start:len(out):len(out)], declaration})
		}
		return out, declaration, ok
	case '[':
		out, ok = v.array(out, b)
		return out, false, ok
	}
	return append(out, b...), false, true
}

// array appends the view of array b, leaving out the declarations of a list of messages.
func (v *viewer) array(out, b []byte) ([]byte, bool) {
	out = append(out, '[')
	if len(b) == 2 && b[1] == ']' {
		return append(out, ']'), true
	}
	declarations := !v.follows["R-DECL-WHEN"]
	first := true
	for i := 1; ; {
		end, ok := jsonvalue.SkipValue(b, i)
		if !ok || end >= len(b) {
			return out, false
		}
		mark := len(out)
		if !first {
			out = append(out, ',')
		}
		var declaration bool
		if out, declaration, ok = v.appendView(out, b[i:end], false, declarations); !ok {
			return out, false
		}
		if declaration && declarations {
			out = out[:mark] // its comma: nothing else was written
		} else {
			first = false
		}
		switch b[end] {
		case ',':
			i = end + 1
		case ']':
			return append(out, ']'), end == len(b)-1
		default:
			return out, false
		}
	}
}

// members splits the compact object b into its members.
func members(b []byte, into []span) ([]span, bool) {
	ok := jsonvalue.EachMember(b, func(key, value []byte) { into = append(into, span{key, value}) })
	return into, ok
}

// object appends the view of object b, and says whether it is a declaration (appending
// nothing then when drop).
func (v *viewer) object(out, b []byte, nested, drop bool) (_ []byte, declaration, ok bool) {
	var buf [24]span
	ms, ok := members(b, buf[:0])
	if !ok {
		return out, false, false
	}
	var role, isError []byte
	for _, m := range ms {
		switch string(m.key) {
		case `"role"`:
			role = m.value
		case `"isError"`:
			isError = m.value
		}
	}
	declaration = declarationOnlyBytes(ms, role)
	if declaration && drop {
		return out, true, true
	}
	message := role != nil && string(role) != "null"
	assistant := string(role) == `"assistant"`
	failed := nested || string(isError) == "true"
	result := !v.follows["R-TOOL-ERROR-RESULT"]
	out = append(out, '{')
	first := true
	for _, m := range ms {
		k := m.key[1 : len(m.key)-1]
		if v.leavesOut(string(k), message, assistant, failed) || failed && nested && result && string(k) == "isError" {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, m.key...)
		out = append(out, ':')
		switch {
		case failed && result && string(k) == "content",
			result && string(k) == "error" && m.value[0] == '"' && len(m.value) > 2:
			out = append(out, `"`+errorText+`"`...)
		default:
			if out, _, ok = v.appendView(out, m.value, failed && string(k) == "result", false); !ok {
				return out, false, false
			}
		}
	}
	return append(out, '}'), declaration, true
}

// declarationOnlyBytes is declarationOnly of an object's members.
func declarationOnlyBytes(ms []span, role []byte) bool {
	if string(role) != `"system"` {
		return false
	}
	declares := false
	for _, m := range ms {
		switch string(m.key) {
		case `"toolsAdded"`, `"toolsRemoved"`:
			declares = declares || string(m.value) != "null"
		case `"content"`:
			if m.value[0] == '"' && len(m.value) > 2 {
				return false
			}
		case `"sections"`:
			if string(m.value) != "null" {
				return false
			}
		}
	}
	return declares
}
