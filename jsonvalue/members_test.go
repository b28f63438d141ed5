package jsonvalue

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// TestArrayAtLikeReadsWhatItSkips holds ArrayAtLike to what the array at path is: its bytes
// are the canonical form of the value there, its elements those of that value, whatever like
// holds (the elements of a list met before, some the same, some changed, some more or fewer;
// nothing). The lists lie at depths 1 and 2, after members and before others.
func TestArrayAtLikeReadsWhatItSkips(t *testing.T) {
	sameSeen := 0
	rapid.Check(t, func(t *rapid.T) {
		list := func(label string) []any {
			out := []any{}
			for _, m := range rapid.SliceOfN(jsonObject(), 0, 5).Draw(t, label) {
				out = append(out, m)
			}
			return out
		}
		msgs := list("messages")
		doc := map[string]any{"apiKey": "k", "messages": msgs, "zeta": list("zeta")}
		path := []string{"messages"}
		if rapid.Bool().Draw(t, "nested") {
			doc = map[string]any{"context": doc, "a": msgs}
			path = []string{"context", "messages"}
		}
		obj := canonicalOf(doc)
		var like [][]byte
		for i, m := range msgs {
			switch rapid.IntRange(0, 3).Draw(t, "like") {
			case 0:
				like = append(like, canonicalOf(jsonObject().Draw(t, "other")))
			default:
				like = append(like, canonicalOf(m))
				sameSeen++
			}
			if i == len(msgs)-1 && rapid.Bool().Draw(t, "longer like") {
				like = append(like, canonicalOf(jsonObject().Draw(t, "extra")))
			}
		}
		if rapid.IntRange(0, 4).Draw(t, "no like") == 0 {
			like = nil
		}
		start, end, elems, ok := ArrayAtLike(obj, like, path...)
		if !ok {
			t.Fatalf("no array at %v in %s", path, obj)
		}
		if want := canonicalOf(msgs); !bytes.Equal(obj[start:end], want) {
			t.Fatalf("the array at %v: %s, want %s", path, obj[start:end], want)
		}
		if len(elems) != len(msgs) {
			t.Fatalf("%d elements, want %d", len(elems), len(msgs))
		}
		for i, m := range msgs {
			if want := canonicalOf(m); !bytes.Equal(elems[i], want) {
				t.Fatalf("element %d: %s, want %s", i, elems[i], want)
			}
		}
	})
	if sameSeen == 0 {
		t.Fatal("like never held an element of the list: the test checks nothing")
	}
	for _, bad := range []string{`{"messages":{}}`, `{"messages":[{"a":1}`, `{"messages":[{"a":1}x]}`, `{"other":[]}`, `[]`} {
		if _, _, _, ok := ArrayAtLike([]byte(bad), [][]byte{[]byte(`{"a":1}`)}, "messages"); ok {
			t.Errorf("%s: an array found", bad)
		}
	}
}

// canonicalOf is the canonical JSON of a Go value, as the world writes it.
func canonicalOf(v any) []byte { return AppendValue(nil, v) }
