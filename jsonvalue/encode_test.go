package jsonvalue

import (
	"encoding/json"
	"testing"
)

// TestAppendStringIsEncodingJSONs: every string is written as json.Marshal writes it, the
// plain ones by the fast path and the others (quotes, escapes, HTML, control, non-ASCII and
// invalid UTF-8) by encoding/json.
func TestAppendStringIsEncodingJSONs(t *testing.T) {
	for _, s := range []string{"", "plain text 123", `a"b`, `back\slash`, "<b>&amp;</b>", "tab\there\nnl", "\x00\x1f", "é ü 日本", "\u2028\u2029", "\xff\xfe bad", "ok"} {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("%q: got %s, want %s", s, got[1:], want)
		}
	}
}
