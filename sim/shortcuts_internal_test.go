package sim

import (
	"bytes"
	"math"
	"strconv"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

// TestSameBlockAgreesWithTheEncoding: sameBlock says two blocks are the same exactly when
// their canonical JSON is, whether it takes a shortcut (a tool call sharing its arguments map)
// or compares the encodings.
func TestSameBlockAgreesWithTheEncoding(t *testing.T) {
	args := map[string]any{"i": 1.0}
	call := loop.ToolCall{ID: "t1", Name: "a", Arguments: args}
	blocks := []loop.Block{
		call,
		loop.ToolCall{ID: "t1", Name: "a", Arguments: args},                        // the same map
		loop.ToolCall{ID: "t1", Name: "a", Arguments: map[string]any{"i": 1.0}},    // an equal map
		loop.ToolCall{ID: "t1", Name: "a", Arguments: map[string]any{"i": 2.0}},    // a different map
		loop.ToolCall{ID: "t2", Name: "a", Arguments: args},                        // the same map, another id
		loop.ToolCall{ID: "t1", Name: "b", Arguments: args},                        // another name
		loop.ToolCall{ID: "t1", Name: "a", Arguments: args, ThoughtSignature: "s"}, // a signature
		loop.ToolCall{ID: "t1", Name: "a", Arguments: args, ArgumentsError: "bad"}, // an arguments error
		loop.ToolCall{ID: "t1", Name: "a", Arguments: nil},                         // no map
		loop.ToolCall{ID: "t1", Name: "a", Arguments: map[string]any{}},            // an empty map
		loop.TextContent{Text: "x"},
	}
	for i, a := range blocks {
		for j, b := range blocks {
			want := bytes.Equal(appendBlock(nil, a), appendBlock(nil, b))
			if got := sameBlock(a, b); got != want {
				t.Errorf("blocks %d and %d: sameBlock = %v, their encodings equal = %v", i, j, got, want)
			}
		}
	}
}

// TestSizedEncodingsAreTheirOwn: the encodings sized copies into a shared chunk are each
// their own slice: appending to one leaves the next one as written.
func TestSizedEncodingsAreTheirOwn(t *testing.T) {
	e := newEncoder()
	first := e.valueBytes("a")
	second := e.valueBytes("b")
	_ = append(first, "XX"...)
	if string(first) != `"a"` || string(second) != `"b"` {
		t.Fatalf("after an append to the first: %s, %s", first, second)
	}
}

// TestStreamIDReadsAnswersAsEncodingJSONDoes: the stream answer read on its bytes gives what
// encoding/json gives, and anything else goes through encoding/json.
func TestStreamIDReadsAnswersAsEncodingJSONDoes(t *testing.T) {
	for raw, want := range map[string]string{
		`{"stream":"1"}`:          "1",
		`{"stream":"é"}`:          "é",
		`{"stream":"a\"b"}`:       `a"b`,
		`{"stream":"a\u0041"}`:    "aA",
		`{"stream":"1","x":true}`: "1",
		`{"x":1,"stream":"2"}`:    "2",
		`{ "stream": "3" }`:       "3",
	} {
		got, err := streamID([]byte(raw))
		if err != nil || got != want {
			t.Errorf("streamID(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{`{"stream":"1"`, `{"stream":"1"}}`, `{"stream":1}`, ``} {
		if got, err := streamID([]byte(raw)); err == nil {
			t.Errorf("streamID(%s) = %q, want an error", raw, got)
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
