package sim

import (
	"encoding/json"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/loop"
)

// TestArgumentsJSONIsEncodingJSONs: the arguments a tool call streams are encoding/json's
// JSON of them, "{}" for none (nil or empty), whatever the map holds.
func TestArgumentsJSONIsEncodingJSONs(t *testing.T) {
	for _, args := range []map[string]any{nil, {}, {"a": "b"}, {"n": 12.5, "x": []any{1.0, "<&>"}, "m": map[string]any{}}, {"": nil}} {
		want := "{}"
		if args != nil {
			b, _ := json.Marshal(args)
			want = string(b)
		}
		if got := argumentsJSON(args); got != want {
			t.Errorf("argumentsJSON(%v) = %s, want %s", args, got, want)
		}
	}
}

// drawResponse draws a scripted response: blocks of every kind, signed or not, tool calls
// with and without arguments, cut in deltas of any size.
func drawResponse(t *rapid.T) *Response {
	texts := rapid.SampledFrom([]string{"", "a", "héllo wörld", "a\xffb", "<tag> & \"q\"", "\u2028x", "abcdefghij"})
	var content []loop.Block
	for i, kind := range rapid.SliceOfN(rapid.IntRange(0, 4), 0, 4).Draw(t, "kinds") {
		switch kind {
		case 0:
			content = append(content, loop.TextContent{Text: texts.Draw(t, "text"), TextSignature: rapid.SampledFrom([]string{"", "sig"}).Draw(t, "tsig")})
		case 1:
			content = append(content, loop.ThinkingContent{Thinking: texts.Draw(t, "thinking"), ThinkingSignature: rapid.SampledFrom([]string{"", "s"}).Draw(t, "hsig")})
		case 2:
			var args map[string]any
			switch rapid.IntRange(0, 2).Draw(t, "args") {
			case 1:
				args = map[string]any{}
			case 2:
				args = map[string]any{"q": texts.Draw(t, "arg"), "n": 3.0}
			}
			content = append(content, loop.ToolCall{ID: "c" + string(rune('0'+i)), Name: "t", Arguments: args,
				ThoughtSignature: rapid.SampledFrom([]string{"", "ts"}).Draw(t, "csig")})
		case 3:
			content = append(content, loop.ImageContent{Data: "AA==", MimeType: "image/png"})
		}
	}
	return &Response{Content: content, DeltaSize: rapid.IntRange(0, 4).Draw(t, "deltaSize")}
}

// TestAdvancedSizeIsThePartialsSize: the size the linear form counts for a partial advanced
// from the last one (advancedSize, from that one's size) is the size of its canonical JSON,
// for every event of varied streams that advances its partial.
func TestAdvancedSizeIsThePartialsSize(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		resp := drawResponse(t)
		final := finalMessage(resp, ModelSetup{ID: "m", API: "a", Provider: "p"}, 7)
		var prev partialAt
		for i, ev := range streamEvents(resp, final) {
			if ev.Partial == nil {
				continue
			}
			want := partialSize(nil, ev.Partial)
			if prev.msg != nil && advances(prev.msg, &ev) {
				if got := advancedSize(prev, &ev, nil); got != want {
					t.Fatalf("event %d (%s): advanced size %d, want %d", i, ev.Type, got, want)
				}
			}
			prev = partialAt{seq: i + 1, msg: ev.Partial, size: want}
		}
	})
}
