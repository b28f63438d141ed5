package levels

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// followSets are the sets of followed conventions the view is checked under: none, the
// declarations, and the rest of those the view reads.
var followSets = []map[string]bool{
	nil,
	{"R-DECL-WHEN": true, "R-POLL-B": true, "R-PROVIDER-OPTIONS": true},
	{"R-TOOL-ERROR-RESULT": true, "R-STREAM-THINKING-LEVEL": true, "R-TIME-STAMP": true, "R-TIME-DURATION": true},
}

// sameView fails t when the view v makes on the bytes of canonical payload data differs from
// the view of its decoded value d.
func sameView(t interface{ Fatalf(string, ...any) }, v *viewer, data []byte, d any) {
	if len(data) == 0 {
		return
	}
	got, _ := v.canonicalView(nil, data)
	if want := jsonvalue.AppendValue(nil, v.value(d, false)); !bytes.Equal(got, want) {
		t.Fatalf("follows %v, the view of\n%s\non its bytes\n%s\ndecoded\n%s", v.follows, data, got, want)
	}
}

// decode is canonical payload data decoded, nil when absent.
func decode(t interface{ Fatalf(string, ...any) }, data []byte) any {
	var d any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
	}
	return d
}

// TestViewOnBytesIsViewOfValues: on every entry of the suite's reference traces, the core
// view made on the bytes (one viewer a trace, its memo serving the contexts' messages) is the
// view made by decoding, and so is which entries it drops.
func TestViewOnBytesIsViewOfValues(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	entries, remembered := 0, 0
	for _, f := range files {
		tr, err := sim.Run(f.Scenario, sim.NewReference())
		if err != nil {
			t.Fatal(err)
		}
		viewers := make([]*viewer, len(followSets))
		for i, follows := range followSets {
			viewers[i] = &viewer{follows: follows}
		}
		for _, e := range tr.Expanded().Entries {
			if !e.Canonical {
				t.Fatalf("%s: entry %d is not canonical", f.Scenario.Name, e.Seq)
			}
			entries++
			data, answer := decode(t, e.Data), decode(t, e.Answer)
			decoded := e
			decoded.Canonical = false
			for _, v := range viewers {
				sameView(t, v, e.Data, data)
				sameView(t, v, e.Answer, answer)
				if v.drops(e) != v.drops(decoded) {
					t.Fatalf("%s: entry %d: drops %v on its bytes, %v decoded", f.Scenario.Name, e.Seq, v.drops(e), v.drops(decoded))
				}
			}
		}
		remembered += len(viewers[0].memo.objects)
	}
	if entries < 10_000 || remembered < 1_000 {
		t.Fatalf("%d entries, %d objects remembered, want the whole suite's", entries, remembered)
	}
}

// TestViewOnBytesIsViewOfValuesRandom: the same on random values made of the members the
// view reads (roles, isError, results, declarations, lists of messages).
func TestViewOnBytesIsViewOfValuesRandom(t *testing.T) {
	keys := []string{"role", "isError", "result", "content", "details", "error", "toolsAdded", "toolsRemoved",
		"sections", "thinkingLevel", "timestamp", "durationMs", "api", "provider", "usage", "message", "messages", "x"}
	scalars := []any{nil, true, false, "", "system", "assistant", "user", "an error", 0.0, 1.5, 1e21, "<&>\u2028é", strings.Repeat("long enough for the memo ", 3)}
	var value func(t *rapid.T, depth int) any
	value = func(t *rapid.T, depth int) any {
		switch k := rapid.IntRange(0, 3).Draw(t, "kind"); {
		case k == 3 && depth <= 4:
			// a message: declarations, results, errors, each member there or not
			out := map[string]any{"role": rapid.SampledFrom([]any{"system", "assistant", "toolResult", nil}).Draw(t, "role")}
			for _, key := range []string{"toolsAdded", "toolsRemoved", "content", "sections", "isError", "details", "timestamp"} {
				if rapid.Bool().Draw(t, key) {
					out[key] = rapid.SampledFrom([]any{nil, "", "text", true, []any{}, []any{"a"}, []any{value(t, depth+1), value(t, depth+1)}}).Draw(t, key+" value")
				}
			}
			return out
		case k == 0 || depth > 4:
			return rapid.SampledFrom(scalars).Draw(t, "scalar")
		case k == 1:
			n := rapid.IntRange(0, 4).Draw(t, "len")
			out := make([]any, n)
			for i := range out {
				out[i] = value(t, depth+1)
			}
			return out
		}
		n := rapid.IntRange(0, 6).Draw(t, "members")
		out := map[string]any{}
		for range n {
			out[rapid.SampledFrom(keys).Draw(t, "key")] = value(t, depth+1)
		}
		return out
	}
	rapid.Check(t, func(rt *rapid.T) {
		x := value(rt, 0)
		raw, err := json.Marshal(x)
		if err != nil {
			rt.Fatal(err)
		}
		data := jsonvalue.Canonical(raw)
		for _, follows := range followSets {
			v := &viewer{follows: follows}
			sameView(rt, v, data, decode(rt, data))
			e := trace.Entry{Kind: trace.KindEvent, Name: "message_end", Data: data, Canonical: true}
			decoded := e
			decoded.Canonical = false
			if v.drops(e) != v.drops(decoded) {
				rt.Fatalf("%s: drops %v on its bytes, %v decoded", data, v.drops(e), v.drops(decoded))
			}
		}
	})
}

// TestViewMemoServesADeclarationInAndOutOfLists: a declaration a list leaves out, met again
// where it stays (an event's message), and the other way round, through one viewer.
func TestViewMemoServesADeclarationInAndOutOfLists(t *testing.T) {
	decl := `{"content":"","role":"system","toolsAdded":[{"description":"reads a file from the disk","name":"read"}]}`
	inList := []byte(`{"messages":[` + decl + `,{"content":"hi","role":"user"}]}`)
	alone := []byte(`{"message":` + decl + `}`)
	for _, order := range [][][]byte{{inList, alone, inList}, {alone, inList, alone}} {
		v := &viewer{}
		for _, data := range order {
			sameView(t, v, data, decode(t, data))
		}
	}
}
