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
				if got := advancedSize(prev, &ev, nil, nil); got != want {
					t.Fatalf("event %d (%s): advanced size %d, want %d", i, ev.Type, got, want)
				}
			}
			prev = partialAt{seq: i + 1, msg: ev.Partial, size: want}
		}
	})
}

// TestStreamPartialsAreThePartsSoFarAndStaySo: each event's partial is the response's head
// with the blocks before its contentIndex whole and its own block as streamed so far (empty
// at its start, its deltas joined, whole at its end), as pi-ai's faux provider streams it;
// and no partial changes once an event carried it (the source makes a new one for a change
// and hands the last one again for none).
func TestStreamPartialsAreThePartsSoFarAndStaySo(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		resp := drawResponse(t)
		resp.NoStart = rapid.Bool().Draw(t, "noStart")
		final := finalMessage(resp, ModelSetup{ID: "m", API: "a", Provider: "p"}, 7)
		src := newStreamSource(resp, final)
		var evs []loop.StreamEvent
		var written []string
		acc := ""
		for {
			var ev loop.StreamEvent
			if !src.next(&ev) {
				break
			}
			evs = append(evs, ev)
			if ev.Partial == nil {
				written = append(written, "")
				continue
			}
			want := emptyPartial(final)
			if ev.Type != loop.StreamStart {
				i := ev.ContentIndex
				want.Content = append(want.Content, final.Content[:i]...)
				var cur loop.Block
				switch ev.Type {
				case loop.StreamTextStart, loop.StreamThinkingStart, loop.StreamToolCallStart:
					acc = ""
				case loop.StreamTextDelta, loop.StreamThinkingDelta, loop.StreamToolCallDelta:
					acc += ev.Delta
				}
				switch b := final.Content[i].(type) {
				case loop.TextContent:
					cur = loop.TextContent{Text: acc}
				case loop.ThinkingContent:
					cur = loop.ThinkingContent{Thinking: acc}
				case loop.ToolCall:
					cur = loop.ToolCall{ID: b.ID, Name: b.Name, Arguments: map[string]any{}}
				}
				if ev.Type == loop.StreamTextEnd || ev.Type == loop.StreamThinkingEnd || ev.Type == loop.StreamToolCallEnd {
					cur = final.Content[i]
				}
				want.Content = append(want.Content, cur)
			}
			got, exp := string(appendMessage(nil, ev.Partial)), string(appendMessage(nil, want))
			if got != exp {
				t.Fatalf("event %d (%s): partial %s, want %s", len(evs)-1, ev.Type, got, exp)
			}
			written = append(written, got)
		}
		for i, ev := range evs {
			if ev.Partial != nil && string(appendMessage(nil, ev.Partial)) != written[i] {
				t.Fatalf("event %d (%s): partial changed to %s after it was carried", i, ev.Type, appendMessage(nil, ev.Partial))
			}
		}
	})
}

// TestAdvancesAnEventThatLeavesThePartial: a text or thinking end and a tool call's delta
// advance the last partial exactly when the event's partial has its JSON, whether it is that
// partial itself (the shortcut) or a copy of it, or another message.
func TestAdvancesAnEventThatLeavesThePartial(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		resp := drawResponse(t)
		final := finalMessage(resp, ModelSetup{ID: "m", API: "a", Provider: "p"}, 7)
		var prev *loop.AssistantMessage
		for i, ev := range streamEvents(resp, final) {
			if prev != nil && (ev.Type == loop.StreamTextEnd || ev.Type == loop.StreamThinkingEnd || ev.Type == loop.StreamToolCallDelta) {
				other := loop.ShallowCopy(prev).(*loop.AssistantMessage)
				other.Model += "x" // another head
				for _, next := range []*loop.AssistantMessage{ev.Partial, prev, loop.ShallowCopy(prev).(*loop.AssistantMessage), other} {
					e := ev
					e.Partial = next
					want := string(appendMessage(nil, prev)) == string(appendMessage(nil, next))
					if got := advances(prev, &e); got != want {
						t.Fatalf("event %d (%s): advances %v, want %v", i, ev.Type, got, want)
					}
				}
			}
			if ev.Partial != nil {
				prev = ev.Partial
			}
		}
	})
}

// TestSameCallJSONWritesTheSame: two calls sameCallJSON says are the same write the same JSON,
// and varied pairs that write the same JSON with no arguments, or the same arguments map, are
// said to be.
func TestSameCallJSONWritesTheSame(t *testing.T) {
	shared := map[string]any{"k": "v"}
	rapid.Check(t, func(t *rapid.T) {
		call := func(name string) *loop.ToolCall {
			c := &loop.ToolCall{ID: rapid.SampledFrom([]string{"a", "b"}).Draw(t, name+"id"), Name: "t",
				ThoughtSignature: rapid.SampledFrom([]string{"", "s"}).Draw(t, name+"sig"),
				Namespace:        rapid.SampledFrom([]string{"", "n"}).Draw(t, name+"ns"),
				ArgumentsError:   rapid.SampledFrom([]string{"", "e"}).Draw(t, name+"err")}
			switch rapid.IntRange(0, 3).Draw(t, name+"args") {
			case 1:
				c.Arguments = map[string]any{}
			case 2:
				c.Arguments = map[string]any{"k": "v"} // equal to shared, not the same map
			case 3:
				c.Arguments = shared
			}
			return c
		}
		x, y := call("x"), call("y")
		same := string(appendToolCall(nil, x)) == string(appendToolCall(nil, y))
		told := len(x.Arguments) == 0 && len(y.Arguments) == 0 || sameMap(x.Arguments, y.Arguments)
		if got := sameCallJSON(x, y); got != (same && told) {
			t.Fatalf("%+v, %+v: %v, want %v", x, y, got, same && told)
		}
	})
}

// TestShortEventIsTheEventWithoutItsPartial: the data of an advancing delivery is its event
// written without its partial, whether a delta is written anew or is the last one's bytes.
func TestShortEventIsTheEventWithoutItsPartial(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(&Scenario{})
		types := rapid.SampledFrom([]loop.StreamEventType{loop.StreamTextDelta, loop.StreamThinkingDelta, loop.StreamToolCallDelta, loop.StreamTextEnd, loop.StreamToolCallEnd})
		for i := range rapid.IntRange(1, 20).Draw(t, "events") {
			ev := loop.StreamEvent{Type: types.Draw(t, "type"), ContentIndex: rapid.IntRange(0, 1).Draw(t, "ci"),
				Delta: rapid.SampledFrom([]string{"{}", "a", "b<", ""}).Draw(t, "delta"), Content: "c",
				ToolCall: &loop.ToolCall{ID: "x", Name: "t"}}
			if got, want := string(w.shortEvent(&ev)), string(appendStreamEventWith(nil, &ev, false)); got != want {
				t.Fatalf("event %d: %s, want %s", i, got, want)
			}
		}
	})
}

// TestFullEventIsTheEventWithItsPartial: a delivery written in full is its event with its
// partial, and the partial's size, whether a start is written anew or is the last one's
// bytes (starts whose heads differ in one field, or have content, are written anew).
func TestFullEventIsTheEventWithItsPartial(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(&Scenario{})
		for i := range rapid.IntRange(1, 12).Draw(t, "events") {
			p := &loop.AssistantMessage{API: "a", Provider: "p", Model: rapid.SampledFrom([]string{"m", "n"}).Draw(t, "model"),
				Timestamp: rapid.Int64Range(0, 1).Draw(t, "ts"), StopReason: loop.StopPending}
			switch rapid.IntRange(0, 2).Draw(t, "content") {
			case 1:
				p.Content = []loop.Block{}
			case 2:
				p.Content = []loop.Block{loop.TextContent{Text: "x"}}
			}
			ev := loop.StreamEvent{Type: rapid.SampledFrom([]loop.StreamEventType{loop.StreamStart, loop.StreamTextStart}).Draw(t, "type"), Partial: p}
			n := 0
			want := string(writeStreamEvent(nil, &ev, true, &n, nil))
			got, size := w.fullEvent(&ev)
			if string(got) != want || size != int64(n) {
				t.Fatalf("event %d: %s (partial %d), want %s (%d)", i, got, size, want, n)
			}
		}
	})
}

// TestHasToolCallIsToolCallsNonEmpty: hasToolCall agrees with loop.ToolCalls' list.
func TestHasToolCallIsToolCallsNonEmpty(t *testing.T) {
	call := loop.ToolCall{ID: "c", Name: "t"}
	for _, content := range [][]loop.Block{nil, {}, loop.Text("x"), {call}, {loop.TextContent{Text: "x"}, call},
		{loop.ThinkingContent{Thinking: "t"}, loop.ImageContent{Data: "AA=="}}, {call, call}} {
		if got, want := hasToolCall(content), len(loop.ToolCalls(content)) > 0; got != want {
			t.Errorf("hasToolCall(%v) = %v, want %v", content, got, want)
		}
	}
}

// TestSourceAdvancesOnlyWhereAdvancesSays: an event the source says advanced the partial
// the last event carried does advance it (advances, which the linear form otherwise asks),
// for varied streams, blocks added without an event among them; and most such events of
// plain streams are known so.
func TestSourceAdvancesOnlyWhereAdvancesSays(t *testing.T) {
	known := 0
	rapid.Check(t, func(t *rapid.T) {
		resp := drawResponse(t)
		resp.NoStart = rapid.Bool().Draw(t, "noStart")
		final := finalMessage(resp, ModelSetup{ID: "m", API: "a", Provider: "p"}, 7)
		src := newStreamSource(resp, final)
		for i := 0; ; i++ {
			before := src.carried
			var ev loop.StreamEvent
			if !src.next(&ev) {
				break
			}
			if src.advanced {
				known++
				if !advances(before, &ev) {
					t.Fatalf("event %d (%s): said to advance the last partial, which it does not", i, ev.Type)
				}
			}
			if ev.Partial != nil && src.carried != ev.Partial {
				t.Fatalf("event %d (%s): carries a partial the source does not note", i, ev.Type)
			}
		}
	})
	if known == 0 {
		t.Fatal("no event was known to advance")
	}
}

// TestEmptyPartialIsTheFinalWithNothingYet: a stream's first partial is a copy of its final
// message (loop.ShallowCopy's) with no content, pending, and leaves the final as it was.
func TestEmptyPartialIsTheFinalWithNothingYet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		resp := drawResponse(t)
		resp.ErrorMessage = rapid.SampledFrom([]string{"", "boom"}).Draw(t, "error")
		final := finalMessage(resp, ModelSetup{ID: "m", API: "a", Provider: "p"}, rapid.Int64Range(0, 9).Draw(t, "now"))
		before := string(appendMessage(nil, final))
		want := loop.ShallowCopy(final).(*loop.AssistantMessage)
		want.Content, want.StopReason = []loop.Block{}, loop.StopPending
		got := emptyPartial(final)
		if string(appendMessage(nil, got)) != string(appendMessage(nil, want)) || got.Content == nil || got == final {
			t.Fatalf("empty partial %s, want %s", appendMessage(nil, got), appendMessage(nil, want))
		}
		if string(appendMessage(nil, final)) != before {
			t.Fatal("the final message changed")
		}
	})
}

// TestNoArgumentsIsEmpty: a streamed call starts with empty arguments, never nil (JSON
// ports write a nil map as null), the call's own map only when that is empty.
func TestNoArgumentsIsEmpty(t *testing.T) {
	empty := map[string]any{}
	for _, args := range []map[string]any{nil, empty, {"a": 1.0}} {
		got := startArguments(args)
		if got == nil || len(got) != 0 || (len(args) > 0 && sameMap(got, args)) {
			t.Errorf("startArguments(%v) = %v", args, got)
		}
	}
	if !sameMap(startArguments(empty), empty) {
		t.Error("an empty map is not shared")
	}
}
