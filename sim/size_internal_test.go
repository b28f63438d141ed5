package sim

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLinkSizeIsTheLengthOfItsJSON: the budget counts a link's bytes without writing it.
func TestLinkSizeIsTheLengthOfItsJSON(t *testing.T) {
	for _, l := range []Link{{}, {Advances: 7}, {Extends: 12, Keep: 5}, {Repeats: 1234567}, {Advances: 1, Extends: 22, Keep: 333, Repeats: 4444}, {Keep: 9}, {AnswerExtends: 5, AnswerKeep: 17}, {Extends: 3, Keep: 2, AnswerExtends: 3, AnswerKeep: 2},
		{NewExtends: 4, NewKeep: 3}, {Extends: 40, Keep: 30, NewExtends: 40, NewKeep: 7, AnswerExtends: 38, AnswerKeep: 29}} {
		if got, want := linkSize(&l), len(appendLink(nil, &l)); got != want {
			t.Errorf("linkSize(%+v) = %d, its JSON %s has %d bytes", l, got, appendLink(nil, &l), want)
		}
	}
}

// TestSplitCutsRunesAndStreamsPrefixes: split cuts by runes (invalid UTF-8 as U+FFFD, as a
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
