package jsonvalue

import (
	"fmt"
	"testing"
)

// TestMemoRemembersWhatIsMetAgain: an object is worth remembering the second time its bytes
// are met, and what is put is got back; objects met once (a growing partial message) are not
// kept, only their sighting, unless the memo is eager.
func TestMemoRemembersWhatIsMetAgain(t *testing.T) {
	var m Memo[string]
	a := []byte(`{"role":"user","content":"a"}`)
	if _, ok, remember := m.Get(a); ok || remember {
		t.Fatalf("first sighting: ok %v, remember %v", ok, remember)
	}
	if _, ok, remember := m.Get(a); ok || !remember {
		t.Fatalf("second sighting: ok %v, remember %v", ok, remember)
	}
	m.Put(a, "made of a", 10)
	if v, ok, _ := m.Get(a); !ok || v != "made of a" {
		t.Fatalf("after Put: %q, %v", v, ok)
	}
	var d Decoder
	d.Memo, d.MemoFrom, d.MemoTo = &Memo[any]{}, 1, 1
	for i := range 1000 {
		partial := fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"%0*d"}],"stopReason":"stop"}`, i+1, 0)
		if _, ok := d.Decode([]byte(partial)); !ok {
			t.Fatal(partial)
		}
	}
	if d.Memo.Len() != 0 {
		t.Fatalf("%d objects met once are remembered", d.Memo.Len())
	}
	// An eager memo remembers at the first sighting.
	eager := Memo[string]{Eager: true}
	if _, ok, remember := eager.Get(a); ok || !remember {
		t.Fatalf("eager, first sighting: ok %v, remember %v", ok, remember)
	}
	d.Memo = &Memo[any]{Eager: true}
	for range 2 {
		if _, ok := d.Decode([]byte(`{"role":"assistant","content":[{"type":"text","text":"once, and again"}],"stopReason":"stop"}`)); !ok {
			t.Fatal("not decoded")
		}
		if d.Memo.Len() != 1 {
			t.Fatalf("eager: %d objects remembered after a sighting, want 1", d.Memo.Len())
		}
	}
}

// TestMemoArraysArePrefixesOfWhatFollows: a long array is remembered whole; an array that
// begins with it (its elements, then ',' or ']') is served the longest one remembered at its
// depth, and nothing else is: not a shorter array, not one at another depth, not bytes that
// go on inside an element; an array that extends a remembered one takes its place, and only
// the last four are kept.
func TestMemoArraysArePrefixesOfWhatFollows(t *testing.T) {
	var m Memo[string]
	elem := func(i int) string { return fmt.Sprintf(`{"i":%d,"pad":"%0300d"}`, i, 0) }
	arr := func(n int) string {
		s := "["
		for i := range n {
			if i > 0 {
				s += ","
			}
			s += elem(i)
		}
		return s
	}
	made := func(v string) func(string) string { return func(string) string { return v } }
	m.PutArray([]byte(`[{"short":1}`), 1, made("short"))
	if _, _, ok := m.ArrayPrefix([]byte(`[{"short":1}]`), 0, 1); ok {
		t.Fatal("a short array was remembered")
	}
	m.PutArray([]byte(arr(4)), 1, made("four"))
	var extended string
	m.PutArray([]byte(arr(6)), 1, func(prev string) string { extended = prev; return "six" }) // extends four: takes its place
	if extended != "four" {
		t.Fatalf("six was made from %q; want four, the array it extends", extended)
	}
	if len(m.arrays) != 1 {
		t.Fatalf("%d arrays kept; six should have taken four's place", len(m.arrays))
	}
	in := []byte(`{"messages":` + arr(8) + `]}`)
	at := len(`{"messages":`)
	if n, made, ok := m.ArrayPrefix(in, at, 1); !ok || made != "six" || n != len(arr(6)) {
		t.Fatalf("got %q (%d bytes, %v), want six", made, n, ok)
	}
	if _, _, ok := m.ArrayPrefix(in, at, 2); ok {
		t.Fatal("served at another depth")
	}
	if n, made, ok := m.ArrayPrefix([]byte(arr(6)+"]"), 0, 1); !ok || made != "six" || n != len(arr(6)) {
		t.Fatalf("the same array: %q, %v", made, ok)
	}
	if _, _, ok := m.ArrayPrefix([]byte(arr(5)+`]`), 0, 1); ok {
		t.Fatal("served an array longer than the input's")
	}
	goesOn := arr(6)[:len(arr(6))-1] + `x"}]`
	if _, _, ok := m.ArrayPrefix([]byte(goesOn), 0, 1); ok {
		t.Fatal("served although the last element goes on")
	}
	for i := range 4 {
		m.PutArray([]byte(fmt.Sprintf(`[{"other":%d,"pad":"%01100d"}`, i, 0)), 1, func(prev string) string {
			if prev != "" {
				t.Errorf("other%d was made from %q; it extends nothing", i, prev)
			}
			return fmt.Sprint("other", i)
		})
	}
	if len(m.arrays) != memoArrays {
		t.Fatalf("%d arrays kept, want %d", len(m.arrays), memoArrays)
	}
	if _, _, ok := m.ArrayPrefix(in, at, 1); ok {
		t.Fatal("the oldest array was not let go")
	}
}
