package sim

import "testing"

// TestSizedWritesAreTheirOwn: what the encoder writes through its scratch buffer comes out in
// a slice of its own (a later write does not change it), also when a write writes another
// inside it.
func TestSizedWritesAreTheirOwn(t *testing.T) {
	e := newEncoder()
	first := e.valueBytes(map[string]any{"a": "one"})
	var inner []byte
	outer := e.sized(func(b []byte) []byte {
		inner = e.valueBytes([]any{"two", 2.0})
		return append(b, `"outer"`...)
	})
	second := e.valueBytes(map[string]any{"b": "three, longer than the first"})
	for _, c := range []struct{ got, want string }{
		{string(first), `{"a":"one"}`}, {string(inner), `["two",2]`}, {string(outer), `"outer"`},
		{string(second), `{"b":"three, longer than the first"}`},
	} {
		if c.got != c.want {
			t.Errorf("%s, want %s", c.got, c.want)
		}
	}
	if cap(first) != len(first) {
		t.Errorf("capacity %d for %d bytes: not copied out at its size", cap(first), len(first))
	}
}
