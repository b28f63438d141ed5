package sim

import (
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/trace"
)

// TestLineBoundIsAtLeastTheLine: the bytes budget counts entries exactly only once their
// bound nears it, so the bound must never be short, whatever the strings hold (every byte,
// invalid UTF-8, U+2028, characters json.Marshal escapes) and however large seq and t are.
func TestLineBoundIsAtLeastTheLine(t *testing.T) {
	var every strings.Builder
	for c := range 256 {
		every.WriteByte(byte(c))
	}
	texts := []string{"", "event", "message_update", every.String(), "\xff\xfe\xfd", "\u2028\u2029", `<>&"\`, "\x00\x01\n", "é€😀"}
	for _, s := range texts {
		for _, n := range []struct {
			seq int
			t   int64
		}{{1, 0}, {1 << 62, -1 << 63}, {999, 1 << 62}} {
			for _, link := range []*trace.Link{nil, {Repeats: 3}} {
				e := trace.Entry{Seq: n.seq, T: n.t, Kind: s, Name: s, Target: s, Error: s, Data: []byte(`{"a":1}`), Answer: []byte(`[]`), Link: link}
				for _, leftOut := range []int64{0, 1234} {
					if b, full := lineBound(&e, leftOut), fullLineSize(&e, leftOut); b < full {
						t.Errorf("lineBound %d < fullLineSize %d for strings %q, seq %d, t %d, link %v", b, full, s, n.seq, n.t, link)
					}
				}
			}
		}
	}
}
