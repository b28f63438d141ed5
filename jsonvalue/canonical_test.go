package jsonvalue

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestCanonical pins the canonical form: sorted keys, no space, encoding/json's string
// escaping, JavaScript's number formatting — so Go and JavaScript producers agree.
func TestCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":1,"a":[true,null,{"d":"x","c":2}]}`, `{"a":[true,null,{"c":2,"d":"x"}],"b":1}`},
		{` { "a" : 1 } `, `{"a":1}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`1e-7`, `1e-7`},
		{`1e-07`, `1e-7`},
		{`0.000001`, `0.000001`},
		{`1e21`, `1e+21`},
		{`1e+21`, `1e+21`},
		{`123456789012345680000`, `123456789012345680000`},
		{`42.0`, `42`},
		{`-0`, `0`},
		{`0.30000000000000004`, `0.30000000000000004`},
		{`"a<b>&"`, `"a\u003cb\u003e\u0026"`},
		{`"\u00e9t\u00e9"`, `"été"`},
		{`"été"`, `"été"`},
		{`"tab\there"`, `"tab\there"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{`{"x":`, `"{\"x\":"`},
		{`nul`, `"nul"`},
		{`[1,]`, `"[1,]"`},
	}
	for _, c := range cases {
		if got := string(Canonical([]byte(c.in))); got != c.want {
			t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestCanonicalMemoChangesNothing holds the world's memo of canonical objects to Canonical:
// documents that repeat objects (as contexts repeat messages), written alike or not, with
// strings that hold brackets and escaped quotes, and documents that are not JSON after an
// object the memo holds.
func TestCanonicalMemoChangesNothing(t *testing.T) {
	msg := `{"role":"user","content":[{"type":"text","text":"a \"}{\" b ]["}],"timestamp":1}`
	docs := []string{
		`{"messages":[` + msg + `]}`,
		`{"messages":[` + msg + `,` + msg + `],"model":{"id":"m","name":"a model with a long name"}}`,
		`{"message":` + msg + `,"type":"message_end"}`,
		`{"messages":[ ` + msg + ` , {"role":"assistant","content":[],"stopReason":"stop","usage":{"input":1}}]}`,
		`{"messages":[` + msg + `,]}`,
		`{"messages":[` + msg,
		`{"messages":[` + msg[:len(msg)-1] + `]}`,
		`{"messages":[{"b":2,"a":1,"padding":"................................................"},{"a":1,"b":2,"padding":"................................................"}]}`,
		`{"messages":[{"b":2,"a":1,"padding":"................................................"}],"x":{"b":2,"a":1,"padding":"................................................"}}`,
		`{"messages":[{"a":1,"a":2,"padding":"................................................"}]}`,
		`[[{"deep":[[[[[[1]]]]]],"padding":"..................................................."}]]`,
	}
	var memo CanonicalMemo
	for round := range 2 {
		for _, d := range docs {
			got, _ := CanonicalWith([]byte(d), false, &memo)
			if want := Canonical([]byte(d)); !bytes.Equal(got, want) {
				t.Errorf("round %d: %s\nwith the memo %s\nwithout      %s", round, d, got, want)
			}
		}
	}
	if memo.Len() == 0 {
		t.Fatal("the memo remembered nothing: the test checks nothing")
	}
	rapid.Check(t, func(t *rapid.T) {
		var memo CanonicalMemo
		pool := rapid.SliceOfN(jsonObject(), 1, 4).Draw(t, "pool")
		for range rapid.IntRange(1, 6).Draw(t, "docs") {
			picks := rapid.SliceOf(rapid.IntRange(0, len(pool)-1)).Draw(t, "picks")
			msgs := make([]any, len(picks))
			for i, p := range picks {
				msgs[i] = pool[p]
			}
			doc := map[string]any{"messages": msgs, "message": pool[0]}
			var raw []byte
			if rapid.Bool().Draw(t, "indent") {
				raw, _ = json.MarshalIndent(doc, "", " ")
			} else {
				raw, _ = json.Marshal(doc)
			}
			if cut := rapid.IntRange(0, 3).Draw(t, "cut"); cut > 0 {
				raw = raw[:len(raw)-cut] // not JSON
			}
			got, _ := CanonicalWith(raw, false, &memo)
			if want := Canonical(raw); !bytes.Equal(got, want) {
				t.Fatalf("%s\nwith the memo %s\nwithout      %s", raw, got, want)
			}
		}
	})
}

// jsonObject draws message-like objects, some long enough for the memo.
func jsonObject() *rapid.Generator[map[string]any] {
	text := rapid.StringMatching(`[a-z"{}\[\]\\ é<]{0,80}`)
	return rapid.Custom(func(t *rapid.T) map[string]any {
		o := map[string]any{"role": rapid.SampledFrom([]string{"user", "assistant"}).Draw(t, "role")}
		var content []any
		for range rapid.IntRange(0, 3).Draw(t, "blocks") {
			content = append(content, map[string]any{"type": "text", "text": text.Draw(t, "text")})
		}
		o["content"] = content
		o["n"] = rapid.Float64Range(-1e22, 1e22).Draw(t, "n")
		return o
	})
}

// TestCanonicalArraysTakenWholeChangeNothing holds the memo's long arrays (a context that
// begins with the last one is not read again) to Canonical: contexts that grow, that change
// a message the last one had, that drop its last message, that continue it with whitespace,
// whose last number's digits go on, and that are cut short (not JSON), each long enough to be
// remembered whole.
func TestCanonicalArraysTakenWholeChangeNothing(t *testing.T) {
	taken := 0
	rapid.Check(t, func(t *rapid.T) {
		var memo CanonicalMemo
		pad := strings.Repeat(".", 300)
		var msgs []any
		for range rapid.IntRange(2, 8).Draw(t, "contexts") {
			switch rapid.IntRange(0, 5).Draw(t, "change") {
			case 0, 1: // grows
				for range rapid.IntRange(1, 3).Draw(t, "added") {
					m := jsonObject().Draw(t, "message")
					m["padding"] = pad
					msgs = append(msgs, m)
				}
			case 2: // a message changes
				if len(msgs) > 0 {
					i := rapid.IntRange(0, len(msgs)-1).Draw(t, "changed")
					msgs = append(msgs[:i:i], append([]any{map[string]any{"role": "user", "padding": pad}}, msgs[i+1:]...)...)
				}
			case 3: // the last one goes
				if len(msgs) > 0 {
					msgs = msgs[: len(msgs)-1 : len(msgs)-1]
				}
			case 4: // a number ends the list, or its digits go on (1e2, then 1e21: the bytes
				// of the last list begin those of this one, but not at an element's end, and
				// the canonical text of 1e2, 100, does not begin that of 1e21, 1e+21)
				var last any
				if len(msgs) > 0 {
					last = msgs[len(msgs)-1]
				}
				if n, ok := last.(json.RawMessage); ok && len(n) < 5 {
					msgs = append(msgs[:len(msgs)-1:len(msgs)-1], append(slices.Clone(n), '1'))
				} else {
					msgs = append(msgs, json.RawMessage(rapid.SampledFrom([]string{"1e2", "1.0", "12"}).Draw(t, "number")))
				}
			}
			raw, _ := json.Marshal(map[string]any{"apiKey": "k", "messages": msgs, "model": map[string]any{"id": "m"}})
			if rapid.IntRange(0, 5).Draw(t, "spaced") == 0 {
				raw = bytes.ReplaceAll(raw, []byte(`},{"`), []byte(`} , {"`))
			}
			if cut := rapid.IntRange(0, 8).Draw(t, "cut"); cut > 5 {
				raw = raw[:len(raw)-(cut-5)]
			}
			start := bytes.Index(raw, []byte(`"messages":`)) + len(`"messages":`)
			if _, _, ok := memo.ArrayPrefix(raw, start, 1); ok {
				taken++
			}
			got, _ := CanonicalWith(raw, false, &memo)
			if want := Canonical(raw); !bytes.Equal(got, want) {
				t.Fatalf("%s\nwith the memo %s\nwithout      %s", raw, got, want)
			}
		}
	})
	if taken == 0 {
		t.Fatal("no context began with one remembered whole: the test checks nothing")
	}
	t.Logf("%d contexts began with one remembered whole", taken)
}

// FuzzAppendValueOfDecoded: a value decoded from canonical JSON (as a trace's entries are)
// is written by AppendValue as json.Marshal writes it, byte for byte.
func FuzzAppendValueOfDecoded(f *testing.F) {
	for _, s := range []string{`{"b":[1,-2.5,1e21,1e-7,0.000001,123456789012345678901,-0,null,true],"a":"x<y>&\u2028\u00e9\ud83d\ude00"}`,
		`[{"content":[{"text":"hi","type":"text"}],"role":"user","timestamp":1733400000000}]`, `"\u0000\u001f\"\\/"`, `1.5e300`, `{}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Decoder
		v, ok := d.Decode(Canonical(data))
		if !ok {
			return
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if got := AppendValue(nil, v); !bytes.Equal(got, want) {
			t.Fatalf("%s decoded: AppendValue %s, json.Marshal %s", Canonical(data), got, want)
		}
	})
}
