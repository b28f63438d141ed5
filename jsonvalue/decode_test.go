package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// unmarshal is what encoding/json gives an any.
func unmarshal(data []byte, useNumber bool) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if useNumber {
		dec.UseNumber()
	}
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // more than one value
	}
	return v, true
}

// TestDecodeIsEncodingJSON: what Decode decodes, it decodes as encoding/json does, numbers as
// float64 or as json.Number; text written otherwise (spaces, escapes, keys twice, bytes that
// are not UTF-8, surrogates, bad numbers) is decoded alike or left to encoding/json.
func TestDecodeIsEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"a":1,"b":[true,false,null],"c":{"d":"e"},"f":-1.5e3,"g":"\u00e9\n\"x\"","h":"é","i":[],"j":{}}`,
		`[]`, `"s"`, `0`, `-0`, ` {"a" : [ 1 , 2 ] } ` + "\n", `{"dup":1,"dup":2}`, `{"a":"\ud83d\ude00"}`,
		`{"a":"\xff"}`, "\"a\tb\"", `1e400`, `01`, `1.`, `-`, `1e+5`, `1E-5`, `tru`, `{"bad":`, `[1,]`,
		`{"a":1}x`, `{"a":1} {"b":2}`, ``, `"\u0041\/"`, `123456789012345678901234567890`,
	}
	decoded := 0
	for _, useNumber := range []bool{false, true} {
		for _, in := range inputs {
			got, ok := (&Decoder{UseNumber: useNumber}).Decode([]byte(in))
			if !ok {
				continue
			}
			decoded++
			want, wantOK := unmarshal([]byte(in), useNumber)
			if !wantOK || !reflect.DeepEqual(got, want) {
				t.Errorf("%s (UseNumber %v): decoded %#v, encoding/json %#v (%v)", in, useNumber, got, want, wantOK)
			}
		}
	}
	if decoded < 20 || decoded == 2*len(inputs) {
		t.Errorf("%d of %d decoded: the inputs do not exercise both ways", decoded, 2*len(inputs))
	}
	rapid.Check(t, func(t *rapid.T) {
		v := jsonish(3).Draw(t, "v")
		var text []byte
		if rapid.Bool().Draw(t, "indent") {
			text, _ = json.MarshalIndent(v, " ", "\t")
		} else {
			text, _ = json.Marshal(v)
		}
		useNumber := rapid.Bool().Draw(t, "useNumber")
		got, ok := (&Decoder{UseNumber: useNumber}).Decode(text)
		want, _ := unmarshal(text, useNumber)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decoded %#v (%v), encoding/json %#v", text, got, ok, want)
		}
	})
}

func jsonish(depth int) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		n := 6
		if depth == 0 {
			n = 4
		}
		switch rapid.IntRange(0, n-1).Draw(t, "kind") {
		case 0:
			return nil
		case 1:
			return rapid.Bool().Draw(t, "b")
		case 2:
			return rapid.Float64().Draw(t, "f")
		case 3:
			return rapid.String().Draw(t, "s")
		case 4:
			return rapid.MapOfN(rapid.StringMatching(`[a-z"\\<é]{0,4}`), jsonish(depth-1), 0, 3).Draw(t, "m")
		default:
			return rapid.SliceOfN(jsonish(depth-1), 0, 3).Draw(t, "l")
		}
	})
}

// TestMemoChangesNothing: decoding through a memo gives what decoding alone gives, for
// documents that repeat objects written alike or otherwise, or break after them; captured
// members are reported as without it.
func TestMemoChangesNothing(t *testing.T) {
	msg := `{"role":"user","content":[{"type":"text","text":"a \"}{\" b ]["}],"timestamp":1}`
	docs := []string{
		`{"messages":[` + msg + `]}`,
		`{"message":` + msg + `,"more":[` + msg + `,` + msg + `]}`,
		`{"messages":[ ` + msg + ` ]}`,
		`{"messages":[` + msg + `,]}`,
		`{"messages":[` + msg,
		`{"messages":[` + msg[:len(msg)-1] + `]}`,
		`{"call":{"data":` + msg + `},"x":[` + msg + `]}`,
	}
	// One memo for each way of reading numbers, and one shared by both (only the first way
	// uses it).
	var byFloat, byNumber, shared Memo[any]
	for _, run := range []struct {
		useNumber bool
		memo      *Memo[any]
	}{{false, &byFloat}, {true, &byNumber}, {false, &shared}, {true, &shared}} {
		useNumber, memo := run.useNumber, run.memo
		for range 2 {
			for _, doc := range docs {
				var plainCaptured, memoCaptured []string
				plain := Decoder{UseNumber: useNumber, Capture: func(p []string, v []byte) { plainCaptured = append(plainCaptured, fmtCapture(p, v)) }}
				memoized := Decoder{UseNumber: useNumber, Memo: memo, MemoFrom: 1, MemoTo: 3,
					Capture: func(p []string, v []byte) { memoCaptured = append(memoCaptured, fmtCapture(p, v)) }}
				want, wantOK := plain.Decode([]byte(doc))
				got, ok := memoized.Decode([]byte(doc))
				if ok != wantOK || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(memoCaptured, plainCaptured) {
					t.Errorf("%s: through the memo %#v (%v) %q, alone %#v (%v) %q", doc, got, ok, memoCaptured, want, wantOK, plainCaptured)
				}
			}
		}
	}
	if byFloat.Len() == 0 || byNumber.Len() == 0 {
		t.Fatal("a memo remembered nothing: the test checks nothing")
	}
}

// TestMemoKeepsTheDepthLimit: a remembered object met again so deep that decoding it would
// pass MaxDepth is not served: the document is left to encoding/json as without the memo.
func TestMemoKeepsTheDepthLimit(t *testing.T) {
	obj := `{"a":{"b":{"c":"` + strings.Repeat("x", MinMemoBytes) + `"}}}`
	d := Decoder{Memo: &Memo[any]{Eager: true}, MemoFrom: 1, MemoTo: MaxDepth}
	if _, ok := d.Decode([]byte(obj)); !ok || d.Memo.Len() == 0 {
		t.Fatalf("the object was not decoded and remembered (%d remembered)", d.Memo.Len())
	}
	for _, k := range []int{MaxDepth - 3, MaxDepth - 2} {
		doc := strings.Repeat("[", k) + obj + strings.Repeat("]", k)
		_, want := (&Decoder{}).Decode([]byte(doc))
		if _, got := d.Decode([]byte(doc)); got != want {
			t.Errorf("inside %d arrays: decoded %v through the memo, %v alone", k, got, want)
		}
		if want != (k+3 <= MaxDepth) {
			t.Fatalf("inside %d arrays: decoded %v alone", k, want)
		}
	}
}

// TestMemoArraysChangeNothing: a context that begins with the one before it takes the
// elements they share whole (the very values decoded before), and decodes as it would alone:
// growing, the same again, shorter, with its last element changed, broken after the shared
// elements, with the digits of its last number going on, with numbers read both ways.
func TestMemoArraysChangeNothing(t *testing.T) {
	// Messages too short for the memo to remember one by one (MinMemoBytes): what they share
	// with the context before comes from the array taken whole.
	msg := func(i int) string { return fmt.Sprintf(`{"role":"user","content":"%03d","timestamp":%d.5}`, i, i) }
	ctx := func(n int, tail string) string {
		var b strings.Builder
		b.WriteString(`{"call":{"data":{"messages":[`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(msg(i))
		}
		return b.String() + tail
	}
	docs := []string{
		ctx(26, `]}}}`), ctx(28, `]}}}`), ctx(28, `]}}}`), ctx(30, `],"x":1}}}`), ctx(27, `]}}}`),
		ctx(30, `,{"role":"assistant"}]}}}`), ctx(30, `,]}}}`), ctx(30, ``), ctx(30, `,`+msg(3)[:20]),
		ctx(31, ` ]}}}`), ctx(32, `]}}}`), ctx(40, `]}}}`),
		// The last list's bytes begin this one's, but not at an element's end: 1e2, then 1e21.
		ctx(40, `,1e2]}}}`), ctx(40, `,1e21]}}}`), ctx(40, `,1e21,7]}}}`), ctx(40, `,1e211]}}}`),
	}
	for _, useNumber := range []bool{false, true} {
		memo := &Memo[any]{}
		var last []any
		shared := 0
		for _, doc := range docs {
			plain := Decoder{UseNumber: useNumber}
			memoized := Decoder{UseNumber: useNumber, Memo: memo, MemoFrom: 5, MemoTo: 5}
			want, wantOK := plain.Decode([]byte(doc))
			got, ok := memoized.Decode([]byte(doc))
			if ok != wantOK || !reflect.DeepEqual(got, want) {
				t.Fatalf("%.80s…: through the memo %v, alone %v (equal: %v)", doc, ok, wantOK, reflect.DeepEqual(got, want))
			}
			if !ok {
				continue
			}
			list := got.(map[string]any)["call"].(map[string]any)["data"].(map[string]any)["messages"].([]any)
			if len(last) > 0 && reflect.ValueOf(list[0]).Pointer() == reflect.ValueOf(last[0]).Pointer() {
				shared++
			}
			last = list
		}
		if shared < 4 {
			t.Errorf("use number %v: %d contexts took the elements of the one before whole; want most", useNumber, shared)
		}
	}
}

func fmtCapture(path []string, v []byte) string {
	b, _ := json.Marshal(path)
	return string(b) + "=" + string(v)
}

// TestDecodeAnyLeavesTheRestToEncodingJSON: what the decoder leaves, encoding/json decodes
// (a key twice: the last value), and text that is not JSON is nil.
func TestDecodeAnyLeavesTheRestToEncodingJSON(t *testing.T) {
	var d Decoder
	if got := d.DecodeAny([]byte(`{"dup":1,"dup":2}`)); !reflect.DeepEqual(got, map[string]any{"dup": 2.0}) {
		t.Errorf("a key twice: %#v", got)
	}
	for _, in := range []string{`{"c":1,"a":2,"c":3}`, `{"a":1,"b":2,"a":3}`, `{"b":1,"a":2,"b":3,"c":4}`} {
		if _, ok := d.Decode([]byte(in)); ok {
			t.Errorf("%s: a key repeated after a lower one was decoded", in)
		}
	}
	if got := d.DecodeAny([]byte(`{"a":[1]}`)); !reflect.DeepEqual(got, map[string]any{"a": []any{1.0}}) {
		t.Errorf("plain: %#v", got)
	}
	if got := d.DecodeAny([]byte(`nul`)); got != nil {
		t.Errorf("not JSON: %#v", got)
	}
}

// TestNumbersOutOfRangeAreLeft: a number no float64 holds is left to the caller in both ways
// of reading numbers (the simulator's canonical form rejects it: a line holding one must not
// be taken for one the harness reads in one pass).
func TestNumbersOutOfRangeAreLeft(t *testing.T) {
	for _, useNumber := range []bool{false, true} {
		d := Decoder{UseNumber: useNumber}
		for text, want := range map[string]bool{`1e400`: false, `-1E+400`: false, `[1,1e309]`: false, `1e308`: true, `123456789012345678901234567890`: true, `1.5e-3`: true, `"1e400"`: true} {
			if _, ok := d.Decode([]byte(text)); ok != want {
				t.Errorf("use number %v: %s decoded %v, want %v", useNumber, text, ok, want)
			}
		}
	}
}

// TestInternedStringsAreFound: each interned string is found, boxed once, and no other is.
func TestInternedStringsAreFound(t *testing.T) {
	n := 0
	for _, slot := range interned {
		if slot.v == nil {
			continue
		}
		n++
		v, ok := internedOf([]byte(slot.s))
		if !ok || v != slot.v || v.(string) != slot.s {
			t.Errorf("%q not found", slot.s)
		}
	}
	if n < 50 {
		t.Fatalf("%d strings interned", n)
	}
	for _, s := range []string{"", "typ", "types", "Type", "tool_call", "assistant ", "faux-2"} {
		if _, ok := internedOf([]byte(s)); ok {
			t.Errorf("%q found", s)
		}
	}
}
