package trace

import (
	"encoding/json"
	"testing"
)

func TestFirstDifference(t *testing.T) {
	decode := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		want, got, path string
		wantAbsent      bool
		gotAbsent       bool
	}{
		{`{"a":1,"b":{"c":[1,2]}}`, `{"a":1,"b":{"c":[1,3]}}`, "b.c[1]", false, false},
		{`{"a":1}`, `{"a":1,"z":false}`, "z", true, false},
		{`{"a":1,"m":2}`, `{"a":1}`, "m", false, true},
		{`[1,2]`, `[1,2,3]`, "", false, false},
		{`"x"`, `"y"`, "", false, false},
		// Identity first: two tool results swapped differ in their toolCallId, which says why
		// their texts differ too; a block of another type, in its type.
		{`{"role":"toolResult","content":[{"type":"text","text":"a"}],"toolCallId":"t1"}`, `{"role":"toolResult","content":[{"type":"text","text":"b"}],"toolCallId":"t2"}`, "toolCallId", false, false},
		{`{"content":[{"text":"a","type":"text"}]}`, `{"content":[{"thinking":"a","type":"thinking"}]}`, "content[0].type", false, false},
	}
	for _, c := range cases {
		d, ok := FirstDifference(decode(c.want), decode(c.got), nil)
		if !ok || d.Path != c.path || d.WantAbsent != c.wantAbsent || d.GotAbsent != c.gotAbsent {
			t.Errorf("%s vs %s: %+v, %v", c.want, c.got, d, ok)
		}
	}
	if _, ok := FirstDifference(decode(`{"a":[1]}`), decode(`{"a":[1]}`), nil); ok {
		t.Error("equal values differ")
	}
}
