package sim

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// split is the pieces cutter cuts s into.
func split(s string, size int) []string {
	var c cutter
	c.reset(s, size)
	var out []string
	for {
		p, last := c.next()
		out = append(out, p)
		if last {
			return out
		}
	}
}

// TestSplitCutsRunesAndStreamsPrefixes: a cutter cuts by runes (invalid UTF-8 as U+FFFD, as a
// conversion to runes does), and the streamed texts are the deltas concatenated.
func TestSplitCutsRunesAndStreamsPrefixes(t *testing.T) {
	for _, s := range []string{"", "x", "héllo wörld", strings.Repeat("ab€", 50), "a\xffb\xfe€c", "\xff"} {
		for _, size := range []int{-1, 0, 1, 2, 3, 7, 1000} {
			var want []string
			if r := []rune(s); size <= 0 || len(r) <= size {
				want = []string{s}
			} else {
				for i := 0; i < len(r); i += size {
					want = append(want, string(r[i:min(i+size, len(r))]))
				}
			}
			got := split(s, size)
			if !slices.Equal(got, want) {
				t.Errorf("split(%q, %d) = %q, want %q", s, size, got, want)
			}
			acc, at, concat := "", 0, ""
			for _, d := range got {
				at += len(d)
				concat += d
				if p := prefix(s, at, d, &acc); p != concat {
					t.Errorf("split(%q, %d): streamed %q, want %q", s, size, p, concat)
				}
			}
			if utf8.ValidString(s) && concat != s {
				t.Errorf("split(%q, %d) pieces make %q", s, size, concat)
			}
		}
	}
}
