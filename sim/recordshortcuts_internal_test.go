package sim

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// drawBlock is a content block of any kind, drawn from a few values so that equal ones come up.
func drawBlock(t *rapid.T, label string) loop.Block {
	args := map[string]any{"i": 1.0}
	switch rapid.IntRange(0, 4).Draw(t, label) {
	case 0:
		return loop.TextContent{Text: rapid.SampledFrom([]string{"", "a", "ab"}).Draw(t, label+"-text")}
	case 1:
		return loop.ThinkingContent{Thinking: rapid.SampledFrom([]string{"", "t"}).Draw(t, label+"-thinking"),
			Redacted: rapid.Bool().Draw(t, label+"-redacted")}
	case 2:
		return loop.ToolCall{ID: "t1", Name: "a", Arguments: args}
	case 3:
		return loop.ToolCall{ID: "t1", Name: "a", Arguments: map[string]any{"i": rapid.SampledFrom([]float64{1, 2}).Draw(t, label+"-i")}}
	default:
		return loop.ToolCall{ID: rapid.SampledFrom([]string{"t1", "t2"}).Draw(t, label+"-id"), Name: "a"}
	}
}

// drawAssistant is an assistant message with a few blocks and some of its head set.
func drawAssistant(t *rapid.T) *loop.AssistantMessage {
	m := &loop.AssistantMessage{API: "faux", Model: rapid.SampledFrom([]string{"m", "n"}).Draw(t, "model"),
		StopReason: loop.StopReason(rapid.SampledFrom([]string{"pending", "stop"}).Draw(t, "stop")),
		Timestamp:  rapid.Int64Range(0, 1).Draw(t, "timestamp")}
	if rapid.Bool().Draw(t, "content") {
		m.Content = []loop.Block{}
		for i := range rapid.IntRange(0, 3).Draw(t, "blocks") {
			_ = i
			m.Content = append(m.Content, drawBlock(t, "block"))
		}
	}
	return m
}

// TestSameMessageAgreesWithTheEncoding: sameMessage says an assistant message is the same as
// another exactly when their canonical JSON is, whether the other is the message itself, a
// copy sharing its blocks (loop.ShallowCopy, as message_update's), a copy with blocks boxed
// anew, or one changed in its head or a block.
func TestSameMessageAgreesWithTheEncoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := drawAssistant(t)
		var b *loop.AssistantMessage
		switch rapid.IntRange(0, 5).Draw(t, "how") {
		case 0:
			b = a
		case 1:
			b = loop.ShallowCopy(a).(*loop.AssistantMessage)
		case 2: // the same blocks boxed anew
			c := *a
			if a.Content != nil {
				c.Content = make([]loop.Block, len(a.Content))
				for i, blk := range a.Content {
					switch x := blk.(type) {
					case loop.TextContent:
						c.Content[i] = loop.TextContent{Text: x.Text}
					case loop.ToolCall:
						c.Content[i] = loop.ToolCall{ID: x.ID, Name: x.Name, Arguments: x.Arguments}
					default:
						c.Content[i] = blk
					}
				}
			}
			b = &c
		case 3: // a block changed, or one more
			b = loop.ShallowCopy(a).(*loop.AssistantMessage)
			if len(b.Content) > 0 && rapid.Bool().Draw(t, "change") {
				b.Content[rapid.IntRange(0, len(b.Content)-1).Draw(t, "at")] = drawBlock(t, "changed")
			} else {
				b.Content = append(b.Content, drawBlock(t, "added"))
			}
		case 4: // the head changed
			b = loop.ShallowCopy(a).(*loop.AssistantMessage)
			b.Model = rapid.SampledFrom([]string{"m", "n"}).Draw(t, "other-model")
			b.StopReason = loop.StopReason(rapid.SampledFrom([]string{"pending", "stop"}).Draw(t, "other-stop"))
		default:
			b = drawAssistant(t)
		}
		want := bytes.Equal(appendMessage(nil, a), appendMessage(nil, b))
		if got := sameMessage(a, b); got != want {
			t.Fatalf("sameMessage = %v, the encodings equal = %v:\n%s\n%s", got, want, appendMessage(nil, a), appendMessage(nil, b))
		}
	})
}

// TestSameEventAgreesWithTheEncoding: sameEvent says a stream event is the one delivered
// exactly when their canonical JSON but for the partial is, whether it is a copy (message_update's),
// a copy with another partial, or an event changed in a field; never for done and error.
func TestSameEventAgreesWithTheEncoding(t *testing.T) {
	types := []loop.StreamEventType{loop.StreamStart, loop.StreamTextStart, loop.StreamTextDelta, loop.StreamTextEnd,
		loop.StreamToolCallDelta, loop.StreamToolCallEnd, loop.StreamDone, loop.StreamError}
	rapid.Check(t, func(t *rapid.T) {
		call := loop.ToolCall{ID: "t1", Name: "a"}
		d := &loop.StreamEvent{Type: rapid.SampledFrom(types).Draw(t, "type"), ContentIndex: rapid.IntRange(0, 1).Draw(t, "index"),
			Delta: rapid.SampledFrom([]string{"", "x"}).Draw(t, "delta"), Content: rapid.SampledFrom([]string{"", "y"}).Draw(t, "content"),
			Partial: &loop.AssistantMessage{Model: "m"}}
		if d.Type == loop.StreamToolCallEnd {
			d.ToolCall = &call
		}
		a := new(loop.StreamEvent)
		*a = *d
		switch rapid.IntRange(0, 4).Draw(t, "how") {
		case 1:
			a.Partial = &loop.AssistantMessage{Model: "n"}
		case 2:
			a.Delta = rapid.SampledFrom([]string{"", "x", "z"}).Draw(t, "other-delta")
		case 3:
			a.ContentIndex = rapid.IntRange(0, 1).Draw(t, "other-index")
		case 4:
			if a.ToolCall != nil {
				other := call
				other.Name = rapid.SampledFrom([]string{"a", "b"}).Draw(t, "other-name")
				a.ToolCall = &other
			}
		}
		want := d.Type != loop.StreamDone && d.Type != loop.StreamError &&
			bytes.Equal(appendStreamEventWith(nil, a, false), appendStreamEventWith(nil, d, false))
		if got := sameEvent(a, d); got != want {
			t.Fatalf("sameEvent = %v, want %v: %s, %s", got, want, appendStreamEventWith(nil, a, false), appendStreamEventWith(nil, d, false))
		}
	})
}

// TestToolSettlementIsWrittenAsEachExecutionWould: the settlement of a scenario's tool,
// written once a run and shared, has the data and value a settlement written for the one
// execution has, for a result, a throw and a result of nothing.
func TestToolSettlementIsWrittenAsEachExecutionWould(t *testing.T) {
	sc := &Scenario{Name: "tools", Tools: []ToolSpec{
		{Name: "a", Behaviour: Behaviour{Result: loop.ToolResult{Content: loop.Text("ok"), Details: map[string]any{"k": 1.0}}}},
		{Name: "b", Behaviour: Behaviour{Throw: "no"}},
		{Name: "c", Behaviour: Behaviour{Resolves: "undefined"}},
	}}
	w := newWorld(sc)
	for i := range sc.Tools {
		b := sc.Tools[i].Behaviour
		fresh := w.settlement(&b.Result, b.Throw, b.Resolves)
		for range 2 {
			got := w.toolSettlement(i)
			if !bytes.Equal(got.data, fresh.data) || (got.value == nil) != (fresh.value == nil) {
				t.Fatalf("tool %d: %s (%v), want %s (%v)", i, got.data, got.value, fresh.data, fresh.value)
			}
			if got.value != nil && !bytes.Equal(appendCanonical(nil, got.value), appendCanonical(nil, fresh.value)) {
				t.Fatalf("tool %d: value %v, want %v", i, got.value, fresh.value)
			}
		}
	}
}

// TestStreamCallFrameWritesAsTheMap: a stream call written through one encoder, its frame
// (what surrounds the messages) kept from the last call while the members but the messages
// stay, and its messages given as values or as their encodings, is the call's map written
// plainly, whatever changes from one call to the next.
func TestStreamCallFrameWritesAsTheMap(t *testing.T) {
	msgs := []loop.Message{&loop.UserMessage{Text: "go"}, &loop.AssistantMessage{Model: "m", Content: loop.Text("a")},
		&loop.ToolResultMessage{ToolCallID: "t1", ToolName: "a", Content: loop.Text("ok")}}
	rapid.Check(t, func(t *rapid.T) {
		e := newEncoder()
		for i := range rapid.IntRange(1, 6).Draw(t, "calls") {
			_ = i
			x := &streamCall{APIKey: rapid.SampledFrom([]string{"", "k", "<"}).Draw(t, "key"),
				Model:         ModelSetup{ID: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "id"), API: "faux", Provider: "faux"},
				ThinkingLevel: loop.ThinkingLevel(rapid.SampledFrom([]string{"off", "high"}).Draw(t, "level")),
				Messages:      msgs[:rapid.IntRange(0, len(msgs)).Draw(t, "messages")]}
			if rapid.Bool().Draw(t, "options") {
				x.Options = map[string]any{"temperature": 0.5}
			}
			want := appendCanonical(nil, x.asMap())
			var got []byte
			if rapid.Bool().Draw(t, "encoded") {
				encs := make([][]byte, len(x.Messages))
				for i, m := range x.Messages {
					encs[i] = appendMessage(nil, m)
				}
				got = e.streamCallWith(nil, x, nil, encs)
			} else {
				got = e.streamCall(nil, x, x.Messages)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("call %d:\n%s\nwant\n%s", i, got, want)
			}
		}
	})
}

// TestRecordEventEntryRecordsAsRecordEntry: events and calls recorded straight into the
// trace's room (recordEventEntry, recordCallEntry) make the trace, the budget's counts and
// verdict that recording each as an entry makes, whatever the budgets (entries, bytes reached
// early or late), the room the trace was made with, answers, links and the world closing.
func TestRecordEventEntryRecordsAsRecordEntry(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := &Scenario{Name: "events"}
		budget := Budget{Entries: rapid.IntRange(1, 12).Draw(t, "entries"), Bytes: rapid.Int64Range(100, 3000).Draw(t, "bytes")}
		room := rapid.IntRange(0, 12).Draw(t, "room")
		fast, plain := newWorld(sc), newWorld(sc)
		for _, w := range []*world{fast, plain} {
			w.budget = budget.Or(DefaultBudget)
			w.trace.Entries = make([]trace.Entry, 0, room)
		}
		for i := range rapid.IntRange(0, 16).Draw(t, "events") {
			name := rapid.SampledFrom([]string{"message_update", "turn_start", "é\u2028"}).Draw(t, "name")
			target := rapid.SampledFrom([]string{"", "t1", "<>"}).Draw(t, "target")
			data := []byte(rapid.SampledFrom([]string{`{"type":"x"}`, `{"a":"` + strings.Repeat("b", 200) + `"}`}).Draw(t, "data"))
			var link *trace.Link
			leftOut := int64(0)
			if rapid.Bool().Draw(t, "linked") {
				link, leftOut = &trace.Link{Repeats: 1}, rapid.Int64Range(0, 500).Draw(t, "leftOut")
			}
			now := int64(i * 7)
			closing := rapid.IntRange(0, 20).Draw(t, "close") == 0
			for _, w := range []*world{fast, plain} {
				w.now = now
				if closing {
					w.closed = true
				}
			}
			if rapid.Bool().Draw(t, "call") {
				var answer []byte
				if rapid.Bool().Draw(t, "answered") {
					answer = []byte(rapid.SampledFrom([]string{`{}`, `{"messages":[]}`, `{"a":"` + strings.Repeat("c", 300) + `"}`}).Draw(t, "answer"))
				}
				fast.recordCallEntry(name, target, data, answer, link, leftOut)
				plain.recordEntry(&trace.Entry{Kind: trace.KindCall, Name: name, Target: target, Data: data, Answer: answer, Link: link}, leftOut)
			} else {
				fast.recordEventEntry(name, target, data, link, leftOut)
				plain.recordEntry(&trace.Entry{Kind: trace.KindEvent, Name: name, Target: target, Data: data, Link: link}, leftOut)
			}
		}
		if !reflect.DeepEqual(fast.trace.Entries, plain.trace.Entries) {
			t.Fatalf("entries differ:\n%v\n%v", fast.trace.Entries, plain.trace.Entries)
		}
		if fast.bound != plain.bound || fast.bytes != plain.bytes || fast.sized != plain.sized || !reflect.DeepEqual(fast.over, plain.over) {
			t.Fatalf("counts differ: bound %d/%d, bytes %d/%d, sized %d/%d, over %v/%v", fast.bound, plain.bound, fast.bytes, plain.bytes,
				fast.sized, plain.sized, fast.over, plain.over)
		}
	})
}

// drawText is a string with characters canonical JSON writes as they are, escapes, invalid
// UTF-8 among them.
func drawText(t *rapid.T, label string) string {
	var s string
	for _, p := range rapid.SliceOfN(rapid.SampledFrom([]string{"a", "é", "<", "\"", "\n", "\xff", "\u2028", "😀"}), 0, 4).Draw(t, label) {
		s += p
	}
	return s
}

// drawToolCall is a tool call with any of its members set.
func drawToolCall(t *rapid.T, label string) loop.ToolCall {
	c := loop.ToolCall{ID: drawText(t, label+"-id"), Name: drawText(t, label+"-name")}
	switch rapid.IntRange(0, 2).Draw(t, label+"-args") {
	case 1:
		c.Arguments = map[string]any{}
	case 2:
		c.Arguments = map[string]any{drawText(t, label+"-key"): drawText(t, label+"-value"), "n": 1.5}
	}
	if rapid.Bool().Draw(t, label+"-optional") {
		c.ArgumentsError, c.Namespace, c.ThoughtSignature = drawText(t, label+"-error"), drawText(t, label+"-ns"), drawText(t, label+"-sig")
	}
	return c
}

// TestToolCallEndSizeIsThePartials: the size of a partial advanced by toolcall_end, counted
// from the last partial's and the sizes of the block it replaces and of the one replacing it
// (blockSize), is the size of the partial written, whatever the blocks hold.
func TestToolCallEndSizeIsThePartials(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prev := &loop.AssistantMessage{API: "faux", Model: drawText(t, "model")}
		for range rapid.IntRange(1, 3).Draw(t, "blocks") {
			if rapid.Bool().Draw(t, "text") {
				prev.Content = append(prev.Content, loop.TextContent{Text: drawText(t, "text-body")})
			} else {
				prev.Content = append(prev.Content, drawToolCall(t, "call"))
			}
		}
		i := rapid.IntRange(0, len(prev.Content)-1).Draw(t, "index")
		call := drawToolCall(t, "end")
		next := loop.ShallowCopy(prev).(*loop.AssistantMessage)
		next.Content[i] = call
		ev := &loop.StreamEvent{Type: loop.StreamToolCallEnd, ContentIndex: i, ToolCall: &call, Partial: next}
		p := partialAt{seq: 1, msg: prev, size: int64(len(appendMessage(nil, prev)))}
		if got, want := advancedSize(p, ev, nil, nil), int64(len(appendMessage(nil, next))); got != want {
			t.Fatalf("size %d, want %d: %s", got, want, appendMessage(nil, next))
		}
		for _, b := range next.Content {
			if got, want := blockSize(b, nil), int64(len(appendBlock(nil, b))); got != want {
				t.Fatalf("blockSize %d, want %d: %s", got, want, appendBlock(nil, b))
			}
		}
	})
}

// TestConstantMembersAreAsWritten: each constant member obj.lit writes is what obj.str (or
// obj.any) writes for its key and value, first in an object and after another member; and
// the type member of every event type is.
func TestConstantMembersAreAsWritten(t *testing.T) {
	for _, c := range []struct {
		member, key string
		value       any
	}{
		{typeText, "type", "text"}, {typeThinking, "type", "thinking"}, {typeImage, "type", "image"},
		{typeToolCall, "type", "toolCall"}, {roleUser, "role", "user"}, {roleSystem, "role", "system"},
		{roleAssistant, "role", "assistant"}, {roleToolResult, "role", "toolResult"},
		{noArguments, "arguments", map[string]any{}}, {noArgs, "args", map[string]any(nil)},
	} {
		for _, first := range []bool{true, false} {
			lit, plain := open(nil), open(nil)
			if !first {
				lit, plain = lit.str("a", "b"), plain.str("a", "b")
			}
			got := lit.lit(c.member).close()
			want := plain.any(c.key, c.value).close()
			if v, ok := c.value.(map[string]any); ok && v == nil {
				want = plain.any(c.key, map[string]any{}).close() // argsOrEmpty
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %s, want %s", c.member, got, want)
			}
		}
	}
	types := []loop.EventType{loop.AgentStart, loop.AgentEnd, loop.TurnStart, loop.TurnEnd, loop.MessageStart, loop.MessageUpdate,
		loop.MessageEnd, loop.ToolExecutionStart, loop.ToolExecutionUpdate, loop.ToolExecutionEnd, "other", "é\u2028"}
	for _, typ := range []loop.StreamEventType{loop.StreamStart, loop.StreamTextStart, loop.StreamTextDelta, loop.StreamTextEnd,
		loop.StreamThinkingStart, loop.StreamThinkingDelta, loop.StreamThinkingEnd, loop.StreamToolCallStart,
		loop.StreamToolCallDelta, loop.StreamToolCallEnd, loop.StreamDone, loop.StreamError, "other", "é\u2028"} {
		got := open(nil).member(streamTypeMember(typ), "type", string(typ)).close()
		if want := open(nil).str("type", string(typ)).close(); !bytes.Equal(got, want) {
			t.Errorf("stream event type %q: %s, want %s", typ, got, want)
		}
	}
	for _, r := range []loop.StopReason{loop.StopStop, loop.StopLength, loop.StopToolUse, loop.StopError, loop.StopAborted,
		loop.StopPending, "", "é\u2028"} {
		got := open(nil).str("a", "b").member(reasonMember(r), "reason", string(r)).close()
		if want := open(nil).str("a", "b").str("reason", string(r)).close(); !bytes.Equal(got, want) {
			t.Errorf("stop reason %q: %s, want %s", r, got, want)
		}
	}
	for _, typ := range types {
		if got, want := open(nil).eventType(typ).close(), open(nil).str("type", string(typ)).close(); !bytes.Equal(got, want) {
			t.Errorf("event type %q: %s, want %s", typ, got, want)
		}
	}
}

// TestToolResultFromTheLastIsAsWritten: tool results written through one encoder, from the
// last one's JSON when they hold its bits, are each as appendToolResult writes it: the same
// result again, a copy, one with another content, details, flag or usage.
func TestToolResultFromTheLastIsAsWritten(t *testing.T) {
	content := loop.Text("ok")
	details := map[string]any{"k": 1.0}
	rapid.Check(t, func(t *rapid.T) {
		e := newEncoder()
		last := loop.ToolResult{Content: content, Details: details}
		for i := range rapid.IntRange(1, 8).Draw(t, "results") {
			r := last
			switch rapid.IntRange(0, 5).Draw(t, "how") {
			case 1:
				r.Content = loop.Text(rapid.SampledFrom([]string{"ok", "no"}).Draw(t, "text"))
			case 2:
				r.Details = rapid.SampledFrom([]any{nil, details, map[string]any{}}).Draw(t, "details")
			case 3:
				r.IsError = !r.IsError
			case 4:
				r.Usage = &loop.Usage{Input: 1}
			case 5:
				r.Terminate, r.TerminateSet = rapid.Bool().Draw(t, "terminate"), true
			}
			if got, want := e.toolResult(nil, &r), appendToolResult(nil, &r); !bytes.Equal(got, want) {
				t.Fatalf("result %d: %s, want %s", i, got, want)
			}
			last = r
		}
	})
}

// TestMemoTableIsAMap: the encoder's memo table answers as a map keyed by the messages would,
// whatever messages are set, set again and looked up, across its growing.
func TestMemoTableIsAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := make([]loop.Message, rapid.IntRange(1, 200).Draw(t, "messages"))
		for i := range msgs {
			switch i % 3 {
			case 0:
				msgs[i] = &loop.AssistantMessage{}
			case 1:
				msgs[i] = &loop.ToolResultMessage{}
			default:
				msgs[i] = &loop.UserMessage{}
			}
		}
		var table memoTable
		if rapid.Bool().Draw(t, "made") {
			table.init(rapid.IntRange(0, 50).Draw(t, "room"))
		}
		want := map[loop.Message][]byte{}
		for step := range rapid.IntRange(0, 400).Draw(t, "steps") {
			m := msgs[rapid.IntRange(0, len(msgs)-1).Draw(t, "message")]
			if rapid.Bool().Draw(t, "set") {
				enc := []byte{byte(step)}
				table.set(m, enc)
				want[m] = enc
			}
			got, ok := table.get(m)
			w, wok := want[m]
			if ok != wok || !bytes.Equal(got, w) {
				t.Fatalf("step %d: %v %v, want %v %v", step, got, ok, w, wok)
			}
		}
		if table.n != len(want) {
			t.Fatalf("%d entries, want %d", table.n, len(want))
		}
		for m, w := range want {
			if got, ok := table.get(m); !ok || !bytes.Equal(got, w) {
				t.Fatalf("%p: %v %v, want %v", m, got, ok, w)
			}
		}
	})
}

// TestToolResultMessageFromTheResultIsAsWritten: tool result messages written through one
// encoder, their content and details from the last result's JSON when they hold its (the
// loop's message of the result it reports) and their ids from the last pair's, are each as
// appendMessage writes them, among results written between, whatever they share or not.
func TestToolResultMessageFromTheResultIsAsWritten(t *testing.T) {
	content := loop.Text("ok")
	details := map[string]any{"k": 1.0}
	rapid.Check(t, func(t *rapid.T) {
		e := newEncoder()
		for i := range rapid.IntRange(1, 10).Draw(t, "writes") {
			r := loop.ToolResult{Content: content, Details: details}
			switch rapid.IntRange(0, 4).Draw(t, "result") {
			case 1:
				r.Content = loop.Text("other")
			case 2:
				r.Details = rapid.SampledFrom([]any{nil, map[string]any{}}).Draw(t, "details")
			case 3:
				r.IsError = true
			case 4:
				r.Usage = &loop.Usage{Output: 2}
			}
			if got, want := e.toolResult(nil, &r), appendToolResult(nil, &r); !bytes.Equal(got, want) {
				t.Fatalf("write %d: result %s, want %s", i, got, want)
			}
			m := &loop.ToolResultMessage{ToolCallID: rapid.SampledFrom([]string{"t1", "t2", "<"}).Draw(t, "id"),
				ToolName: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "name"), Content: r.Content, Details: r.Details,
				IsError: r.IsError, Timestamp: 3}
			switch rapid.IntRange(0, 4).Draw(t, "message") {
			case 4:
				m.Content = loop.Text("different")
			case 1:
				m.Content = append([]loop.Block{}, r.Content...) // an equal copy in an array of its own
			case 2:
				m.Details = map[string]any{"k": 1.0}
			case 3:
				m.Content = nil
			}
			if got, want := e.toolResultMessage(nil, m), appendMessage(nil, m); !bytes.Equal(got, want) {
				t.Fatalf("write %d: message %s, want %s", i, got, want)
			}
			ev := &loop.Event{Type: loop.ToolExecutionEnd, ToolCallID: m.ToolCallID, ToolName: m.ToolName, Result: &r}
			if got, want := e.event(nil, ev), (*encoder)(nil).event(nil, ev); !bytes.Equal(got, want) {
				t.Fatalf("write %d: event %s, want %s", i, got, want)
			}
		}
	})
}

// TestHeadCacheContentIsAsWritten: contents written through a head cache, their tool calls
// from the last call's JSON when it is the same boxed block or the same call (sameCallJSON),
// are each as appendAssistantContent writes them, whatever calls follow each other: the same
// box, a copy, another id, other arguments (the same map, an equal one, an empty one, none).
func TestHeadCacheContentIsAsWritten(t *testing.T) {
	args := map[string]any{"i": 1.0}
	rapid.Check(t, func(t *rapid.T) {
		h := &headCache{}
		var last []loop.Block
		for i := range rapid.IntRange(1, 12).Draw(t, "contents") {
			var content []loop.Block
			switch rapid.IntRange(0, 3).Draw(t, "how") {
			case 0:
				content = last // the same boxes
			case 1:
				content = append([]loop.Block(nil), last...) // copied words
			}
			if content == nil {
				for range rapid.IntRange(0, 3).Draw(t, "blocks") {
					c := loop.ToolCall{ID: rapid.SampledFrom([]string{"t1", "t2", ""}).Draw(t, "id"), Name: "a",
						Arguments: rapid.SampledFrom([]map[string]any{nil, {}, args, {"i": 1.0}, {"i": 2.0}}).Draw(t, "args"),
						Namespace: rapid.SampledFrom([]string{"", "ns"}).Draw(t, "namespace")}
					if rapid.IntRange(0, 4).Draw(t, "text") == 0 {
						content = append(content, loop.TextContent{Text: "x"})
					} else {
						content = append(content, c)
					}
				}
			}
			if got, want := h.content(nil, content), appendAssistantContent(nil, content); !bytes.Equal(got, want) {
				t.Fatalf("content %d: %s, want %s", i, got, want)
			}
			last = content
		}
	})
}

// TestMayBeIdenticalNeverRejectsIdenticalHeads: the cheap look at a few fields says no only
// for heads that are not identical, whatever the two messages hold.
func TestMayBeIdenticalNeverRejectsIdenticalHeads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := drawAssistant(t)
		a.ThinkingLevel = rapid.SampledFrom([]string{"", "off", "low"}).Draw(t, "level")
		b := loop.ShallowCopy(a).(*loop.AssistantMessage)
		switch rapid.IntRange(0, 3).Draw(t, "how") {
		case 1:
			b.StopReason = loop.StopReason(rapid.SampledFrom([]string{"pending", "stop", "toolUse", ""}).Draw(t, "stop"))
		case 2:
			b.ThinkingLevel = rapid.SampledFrom([]string{"", "off", "low"}).Draw(t, "other-level")
		case 3:
			b.Timestamp = rapid.Int64Range(0, 1).Draw(t, "other-timestamp")
		}
		if identicalHeads(a, b) && !mayBeIdentical(a, b) {
			t.Fatalf("identical heads rejected: %+v, %+v", a, b)
		}
		if !mayBeIdentical(a, b) && bytes.Equal(appendMessage(nil, &loop.AssistantMessage{API: a.API, Model: a.Model, StopReason: a.StopReason,
			ThinkingLevel: a.ThinkingLevel, Timestamp: a.Timestamp}), appendMessage(nil, &loop.AssistantMessage{API: b.API, Model: b.Model,
			StopReason: b.StopReason, ThinkingLevel: b.ThinkingLevel, Timestamp: b.Timestamp})) {
			t.Fatalf("heads that write alike rejected: %+v, %+v", a, b)
		}
	})
}

// TestNumWritesAsAppendNumber: a number member is written as jsonvalue.AppendNumber writes
// its value, one digit, several, negative, and beyond the integers a float holds exactly.
func TestNumWritesAsAppendNumber(t *testing.T) {
	values := []int64{-1 << 62, -1<<53 - 1, -1 << 53, -10, -9, -1, 0, 1, 9, 10, 11, 99, 100, 12345, 1 << 53, 1<<53 + 1, 1 << 62}
	for _, v := range values {
		got := open(nil).num("n", v).close()
		want := append(jsonvalue.AppendNumber([]byte(`{"n":`), float64(v)), '}')
		if !bytes.Equal(got, want) {
			t.Errorf("%d: %s, want %s", v, got, want)
		}
	}
}

// TestEventsAreWrittenAsTheirJSON: an event of each of the loop's types, written by the
// encoder (its type member a constant of the case that writes it), is the canonical form of
// the loop's own JSON of it.
func TestEventsAreWrittenAsTheirJSON(t *testing.T) {
	user := &loop.UserMessage{Text: "go"}
	partial := &loop.AssistantMessage{API: "faux", Model: "m", StopReason: loop.StopPending}
	result := &loop.ToolResult{Content: loop.Text("ok"), Details: map[string]any{}}
	d := int64(3)
	events := []loop.Event{
		{Type: loop.AgentStart}, {Type: loop.AgentEnd, Messages: []loop.Message{user}}, {Type: loop.TurnStart},
		{Type: loop.TurnEnd, Message: partial, ToolResults: []*loop.ToolResultMessage{{ToolCallID: "t1", ToolName: "a"}}},
		{Type: loop.MessageStart, Message: user}, {Type: loop.MessageStart, Message: partial},
		{Type: loop.MessageUpdate, Message: partial, AssistantEvent: &loop.StreamEvent{Type: loop.StreamTextStart, Partial: partial}},
		{Type: loop.MessageEnd, Message: partial},
		{Type: loop.ToolExecutionStart, ToolCallID: "t1", ToolName: "a"},
		{Type: loop.ToolExecutionStart, ToolCallID: "t1", ToolName: "a", Args: map[string]any{"i": 1.0}},
		{Type: loop.ToolExecutionUpdate, ToolCallID: "t1", ToolName: "a", PartialResult: result},
		{Type: loop.ToolExecutionEnd, ToolCallID: "t2", ToolName: "b", Result: result, DurationMs: &d},
		{Type: loop.ToolExecutionEnd, ToolCallID: "t2", ToolName: "b", ResultUndefined: true, IsError: true},
	}
	e := newEncoder()
	for _, ev := range events {
		raw, err := loop.MarshalEvent(&ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range []*encoder{nil, e} {
			if got, want := enc.event(nil, &ev), jsonvalue.Canonical(raw); !bytes.Equal(got, want) {
				t.Errorf("%s: %s, want %s", ev.Type, got, want)
			}
		}
	}
}
