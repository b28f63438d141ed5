package trace

import (
	"math"
	"strconv"
	"testing"
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

// TestDecimalLenCountsAsFormatIntWrites: the trace's size counts a number's digits as
// strconv writes them.
func TestDecimalLenCountsAsFormatIntWrites(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 12345, -1, -9, -10, -12345, math.MaxInt64, math.MinInt64} {
		if got, want := decimalLen(v), len(strconv.FormatInt(v, 10)); got != want {
			t.Errorf("decimalLen(%d) = %d, want %d", v, got, want)
		}
	}
}
