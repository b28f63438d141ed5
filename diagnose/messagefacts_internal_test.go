package diagnose

import (
	"encoding/json"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// TestMessageFactsOnBytesAreDecodedFacts: on canonical JSON, the facts read on the bytes are
// those encoding/json's decoding reads, for messages of every shape: members of other types,
// keys cased otherwise, escaped and non-ASCII texts, blocks that are not objects.
func TestMessageFactsOnBytesAreDecodedFacts(t *testing.T) {
	texts := []any{nil, "", "assistant", "system", "toolResult", "toolCall", "stop", "length", "Tool\u0043all", "é", "a\"b", 3.0, true, []any{}, map[string]any{}}
	keys := []string{"role", "Role", "ROLE", "stopReason", "stopreason", "toolsAdded", "toolsRemoved", "TOOLSADDED", "content", "Content", "type", "Type", "other"}
	var value func(t *rapid.T, depth int) any
	value = func(t *rapid.T, depth int) any {
		switch k := rapid.IntRange(0, 3).Draw(t, "kind"); {
		case k == 0 || depth > 3:
			return rapid.SampledFrom(texts).Draw(t, "leaf")
		case k == 1:
			n := rapid.IntRange(0, 3).Draw(t, "len")
			out := make([]any, n)
			for i := range out {
				out[i] = value(t, depth+1)
			}
			return out
		}
		out := map[string]any{}
		for range rapid.IntRange(0, 5).Draw(t, "members") {
			out[rapid.SampledFrom(keys).Draw(t, "key")] = value(t, depth+1)
		}
		return out
	}
	read := 0
	rapid.Check(t, func(t *rapid.T) {
		var data any = map[string]any{"message": value(t, 0)}
		if rapid.IntRange(0, 9).Draw(t, "top") == 0 {
			data = value(t, 0)
		}
		raw, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		canonical := jsonvalue.Canonical(raw)
		role, stop, declares, calls, ok := messageFactsCompact(canonical)
		if !ok {
			return
		}
		read++
		wr, ws, wd, wc := messageFactsDecoded(canonical)
		if role != wr || stop != ws || declares != wd || calls != wc {
			t.Fatalf("%s: on its bytes %q %q %v %d, decoded %q %q %v %d", canonical, role, stop, declares, calls, wr, ws, wd, wc)
		}
	})
	if read < 10 {
		t.Fatalf("read on the bytes %d times: the check checks nothing", read)
	}
}
