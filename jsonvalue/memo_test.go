package jsonvalue

import (
	"fmt"
	"testing"
)

// TestMemoRemembersWhatIsMetAgain: an object is worth remembering the second time its bytes
// are met, and what is put is got back; objects met once (a growing partial message) are not
// kept, only their sighting.
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
}
