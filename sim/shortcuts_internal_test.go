package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"

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

// TestSizedEncodingsAreTheirOwn: the encodings sized copies into shared chunks are each their
// own slice, across chunks and beside the large ones that get an allocation of their own:
// each stays as written while the others are appended to.
func TestSizedEncodingsAreTheirOwn(t *testing.T) {
	e := newEncoder()
	var got [][]byte
	var want []string
	for i := range 400 { // about five chunks, with a large encoding every 50
		s := strings.Repeat(string(rune('a'+i%26)), 1+i%300)
		if i%50 == 49 {
			s = strings.Repeat("L", arenaChunk/4+1)
		}
		got = append(got, e.valueBytes(s))
		want = append(want, `"`+s+`"`)
	}
	for i := range got {
		_ = append(got[i], "XX"...)
	}
	for i := range got {
		if string(got[i]) != want[i] {
			t.Fatalf("encoding %d is %.40q, want %.40q", i, got[i], want[i])
		}
	}
}

// TestStreamIDReadsAnswersAsEncodingJSONDoes: streamID reads a stream answer as encoding/json
// does, escapes, other members, spaces and invalid UTF-8 included, and refuses what it refuses
// (an id that is not a string, a string cut short, bytes after the object).
func TestStreamIDReadsAnswersAsEncodingJSONDoes(t *testing.T) {
	for _, raw := range []string{`{"stream":"1"}`, `{"stream":"123"}`, `{"stream":"é"}`, `{"stream":"a\"b"}`,
		`{"stream":"a\u0041"}`, `{"stream":"1","x":true}`, `{"x":1,"stream":"2"}`, `{ "stream": "3" }`,
		"{\"stream\":\"\xff\"}", `{"stream":""}`, `{"stream":"a\\b"}`, `{"stream":"<&>"}`, `{"stream":"1"} `,
		` {"stream":"1"}`, `{"stream":"1"`, `{"stream":"1"}}`, `{"stream":1}`, ``, `{"stream":"}`, "{\"stream\":\"a\tb\"}",
		`{"stream":"a"b"}`, `{"stream":"a\"}`, `{"stream":"a"}"}`, `{"stream":"9"}x`} {
		var want struct {
			Stream string `json:"stream"`
		}
		wantErr := json.Unmarshal([]byte(raw), &want)
		got, err := streamID([]byte(raw))
		if (err != nil) != (wantErr != nil) || err == nil && got != want.Stream {
			t.Errorf("streamID(%s) = %q, %v; encoding/json: %q, %v", raw, got, err, want.Stream, wantErr)
		}
	}
}

// TestScheduleReleasesInOrder: whatever is pushed and popped, in any interleaving, comes out
// by time and then by scheduling order, each popped happening marked as no longer scheduled,
// and each still scheduled knowing its place in the heap (Due walks it).
func TestScheduleReleasesInOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s schedule
		seq := int64(0)
		var last *scheduled
		for _, push := range rapid.SliceOfN(rapid.Bool(), 1, 200).Draw(t, "steps") {
			if push || len(s) == 0 {
				seq++
				s.push(&scheduled{at: rapid.Int64Range(0, 5).Draw(t, "at"), seq: seq})
				last = nil // a new happening may come before the last one popped
				continue
			}
			e := s.pop()
			if e.index != -1 {
				t.Fatalf("popped happening %d still has index %d", e.seq, e.index)
			}
			if last != nil && (e.at < last.at || e.at == last.at && e.seq < last.seq) {
				t.Fatalf("popped (%d, %d) after (%d, %d)", e.at, e.seq, last.at, last.seq)
			}
			for i, x := range s {
				if x.index != i || (i > 0 && s.less(i, (i-1)/2)) {
					t.Fatalf("the heap is broken at %d", i)
				}
			}
			last = e
		}
	})
}
