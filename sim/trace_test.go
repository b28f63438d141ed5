package sim

import (
	"encoding/json"
	"testing"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestJSONLMatchesMarshal checks the reflection-free JSONL writes each entry the world
// records exactly as json.Marshal does.
func TestJSONLMatchesMarshal(t *testing.T) {
	payloads := []string{
		"", `{}`, `{"a":1,"b":[true,null,"x"]}`, `"<b>&amp;"`, `{"k":"a\u2028b"}`, "{\"k\":\"a\u2028b\"}",
		`{"k":"…"}`, `{ "spaced" : 1 }`, "[1,\n2]", `{"s":"q\"uote\\"}`, `"tab\tin"`, `1e+21`, "not json",
	}
	for _, d := range payloads {
		for _, a := range payloads {
			w := newWorld(&Scenario{Name: "s"})
			w.now = 12
			w.record(trace.Entry{Kind: trace.KindCall, Name: "hook<x>", Target: "t&1", Data: jsonvalue.Canonical([]byte(d)), Answer: jsonvalue.Canonical([]byte(a)), Error: "e\u2028"})
			w.record(trace.Entry{Kind: trace.KindEnd, Name: "run"})
			var want []byte
			for _, e := range w.trace.Entries {
				line, err := json.Marshal(e)
				if err != nil {
					t.Fatal(err)
				}
				want = append(append(want, line...), '\n')
			}
			if got := w.trace.JSONL(); string(got) != string(want) {
				t.Errorf("data %q answer %q:\n got %s\nwant %s", d, a, got, want)
			}
		}
	}
}
