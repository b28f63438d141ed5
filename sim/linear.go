package sim

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// The linear form of a
//
// A run's requests send ever longer contexts of the same messages, and a streamed response
// delivers ever longer partial messages, each twice (the streamEvent delivery and the
// message_update event). Written in full, a trace grows with the square of the run. The
// trace is therefore written in a linear form: an entry may leave out what an earlier entry
// already holds, and say so in its "link" member:
//
//   - A stream call whose context begins with the first Keep messages of the context of the
//     previous stream call (Extends, its seq) writes only the messages after those in
//     data.messages: {"extends":12,"keep":5}. When the context does not begin as the previous
//     request's did (transformContext dropped or rewrote a message), it is written in full.
//     A link whose keep equals the length of that earlier context shows the transcript's
//     append-only rule at work. The calls of the hooks given the context whole, their answers
//     that return it and the run's new messages they are given are linked alike, each to the
//     previous call of the same hook (contexts.go). agent_end's messages and the run end's,
//     the run's messages whole, are linked alike (Extends, Keep) to the last stream call's
//     context, which they begin with.
//   - A streamEvent delivery whose partial message is the partial of an earlier streamEvent
//     delivery of the same stream (Advances, its seq) advanced by this event leaves out
//     data.partial: {"advances":40}. Advancing follows pi-ai's streaming: text_start and
//     thinking_start append an empty block; text_delta and thinking_delta append the delta to
//     block contentIndex's text or thinking; text_end, thinking_end and toolcall_delta leave
//     the partial as it was; toolcall_end makes block contentIndex the event's toolCall.
//     Any other change is written in full.
//   - A message_update event whose assistantMessageEvent.partial and message are both the
//     partial message of an earlier entry (Repeats, its seq: the delivery it reports) leaves
//     both out: {"repeats":41}; when its assistantMessageEvent is that delivery's data (the
//     event delivered, partial and all), it leaves that out too.
//   - An event that holds one message leaves it out when an earlier entry holds the same
//     (Repeats, its seq): a message_start whose message is the partial of the last
//     streamEvent delivery that carried one (an assistant message starts as the stream's
//     partial); a message_end whose message is that of the last message_start, when that one
//     is written in full; a turn_end whose message is that of the last message_end of an
//     assistant message. {"repeats":40}.
//
// Whether an entry is linked, and how, is decided from the bytes of the full entries alone
// (messages are compared by their canonical JSON), so the linear form is a function of the
// full trace, and Expand is its inverse: two runs have byte-identical JSON lines exactly when
// their full traces are identical. Nothing is abbreviated by a digest, so no collision can
// make two different traces equal.

// linearizer is the world's memory of what the trace already holds: the message lists of the
// last call of each name that sends a context (contexts.go), and the partial messages of the
// streams.
type linearizer struct {
	// inFull writes every entry in full (tests compare it with the expanded linear form).
	inFull bool

	// lists holds the message lists of the last recorded call of each name that sends a
	// context (contexts.go), but the stream calls' context: streamList, which every request
	// reads and replaces, and agent_end and the run's end read (runListKey), kept apart from
	// the map (list, setList).
	lists      map[listKey]listAt
	streamList listAt

	// last is the last streamEvent delivery that carried a partial, of any stream.
	last partialAt
	// written is what the last deliveries of streams wrote that the next may write again.
	written streamWrites

	// start is the last message_start event, when its message is written in full (seq 0
	// otherwise); end the last message_end event of an assistant message (Link.Repeats).
	start, end messageAt
}

// messageAt is the message of an event recorded at seq, which Link.Repeats may name: as a
// value (nil when given as JSON), as canonical JSON when known, and the size of that JSON.
type messageAt struct {
	seq  int
	msg  loop.Message
	enc  []byte
	size int64
}

// partialAt is a partial message recorded at entry seq: as a value, as canonical JSON
// when the world wrote the delivery's JSON, and the size of that JSON.
type partialAt struct {
	seq  int
	msg  *loop.AssistantMessage
	enc  []byte
	size int64
	// ev is the event delivered, data the delivery's data in full when the world wrote it,
	// full its size (a message_update that repeats the whole event leaves it out).
	ev   *loop.StreamEvent
	data []byte
	full int64
}

// lastRecorded reports whether the trace's last entry is the one of that seq and kind (and
// not the budget's verdict, which takes the same seq).
func (w *world) lastRecorded(seq int, kind string) bool {
	n := len(w.trace.Entries)
	return n > 0 && w.trace.Entries[n-1].Seq == seq && w.trace.Entries[n-1].Kind == kind
}

// deliveryData is the trace's data of a delivery about to be released, with its link, the
// bytes the link leaves out of the entry in full (recordLinked), and the size of the
// canonical JSON of its partial message (0: none). For a stream event it also writes the
// delivery's JSON, unless the implementation reads values only.
func (w *world) deliveryData(s *scheduled) (data json.RawMessage, link *trace.Link, leftOut, partial int64) {
	d, ev := &s.delivery, s.event
	if d.Kind != trace.DeliverStreamEvent || ev == nil {
		return d.Data, nil, 0, 0
	}
	if len(d.Data) == 0 && !w.valuesOnly {
		d.Data = w.enc.valueBytes(ev)
	}
	if prev, ok := w.partialOf(s); ok && !w.lin.inFull && ev.Partial != nil && (s.stream.advancedFrom(s, prev.msg) || advances(prev.msg, ev)) {
		partial = advancedSize(prev, ev, d.Data, w.enc.heads)
		return w.shortEvent(ev), w.newLink(trace.Link{Advances: prev.seq}), memberSize("partial", partial), partial
	}
	data = d.Data
	if len(data) == 0 {
		data, partial = w.fullEvent(ev)
		return data, nil, 0, partial
	}
	if ev.Partial != nil {
		partial = partialSize(data, ev.Partial)
	}
	return data, nil, 0, partial
}

// streamWrites are the data of the last delta event written without its partial, and of the
// last start event.
type streamWrites struct {
	delta shortDelta
	start startEvent
}

// startEvent is the data of a start event, whose partial is head with no content, of size
// size: a start whose partial has the same head (identicalHeads) writes the same bytes.
type startEvent struct {
	head *loop.AssistantMessage
	data []byte
	size int64
}

// shortDelta is a delta event's data without its partial, which its type, block and delta
// make whole.
type shortDelta struct {
	typ   loop.StreamEventType
	ci    int
	delta string
	data  []byte
}

// fullEvent is stream event ev's data, with its partial, and the size of that partial (0:
// none). A start like the last one written (a stream's first partial is its head alone, the
// same for every request made at the same time) is that one's bytes, shared.
func (w *world) fullEvent(ev *loop.StreamEvent) ([]byte, int64) {
	c := &w.lin.written.start
	start := ev.Type == loop.StreamStart && ev.Partial != nil && len(ev.Partial.Content) == 0
	if start && c.head != nil && identicalHeads(ev.Partial, c.head) {
		return c.data, c.size
	}
	n := 0 // the partial's size, as the event is written
	data := w.enc.sized(func(b []byte) []byte { return writeStreamEvent(b, ev, true, &n, w.enc.heads) })
	if start {
		*c = startEvent{head: ev.Partial, data: data, size: int64(n)}
	}
	return data, int64(n)
}

// shortEvent is stream event ev's data without its partial (a delivery that advances the
// last partial). A delta like the last one written is that one's bytes, shared: a run of tool
// calls streams the same "{}" delta for every call.
func (w *world) shortEvent(ev *loop.StreamEvent) []byte {
	switch ev.Type {
	case loop.StreamTextDelta, loop.StreamThinkingDelta, loop.StreamToolCallDelta:
		c := &w.lin.written.delta
		if c.data == nil || c.typ != ev.Type || c.ci != ev.ContentIndex || c.delta != ev.Delta {
			*c = shortDelta{typ: ev.Type, ci: ev.ContentIndex, delta: ev.Delta,
				data: w.enc.sized(func(b []byte) []byte { return appendStreamEventWith(b, ev, false) })}
		}
		return c.data
	}
	return w.enc.sized(func(b []byte) []byte { return writeStreamEvent(b, ev, false, nil, w.enc.heads) })
}

// partialSize is the size of the canonical JSON of a stream event's partial message p: read
// from data, the event's JSON, when it is written, else counted by writing p.
func partialSize(data []byte, p *loop.AssistantMessage) int64 {
	if start, end, ok := jsonvalue.MemberValue(data, "partial"); ok {
		return int64(end - start)
	}
	bufs := comparisons.Get().(*[2][]byte)
	bufs[0] = appendMessage(bufs[0][:0], p)
	n := len(bufs[0])
	comparisons.Put(bufs)
	return int64(n)
}

// advancedSize is the size of the canonical JSON of ev's partial, prev's advanced by ev
// (advances): from prev's size where the event's change tells it (a stream of n deltas then
// costs O(n), not O(n²)), else as partialSize. A call's arguments are written through h
// (callArguments).
func advancedSize(prev partialAt, ev *loop.StreamEvent, data []byte, h *headCache) int64 {
	if len(data) > 0 {
		return partialSize(data, ev.Partial)
	}
	old := prev.msg.Content
	switch ev.Type {
	case loop.StreamTextStart, loop.StreamThinkingStart:
		empty := trace.EmptyTextBlock
		if ev.Type == loop.StreamThinkingStart {
			empty = trace.EmptyThinkingBlock
		}
		if len(old) > 0 {
			return prev.size + int64(len(empty)) + 1
		}
		return prev.size + int64(len(empty))
	case loop.StreamTextEnd, loop.StreamThinkingEnd, loop.StreamToolCallDelta:
		return prev.size
	case loop.StreamToolCallEnd:
		// Block contentIndex replaced by the event's call (advances): the content's JSON is its
		// blocks' joined by commas. A call with no arguments ends as it started.
		ci := ev.ContentIndex
		if c, ok := old[ci].(loop.ToolCall); ok && ev.ToolCall != nil && sameCallJSON(&c, ev.ToolCall) {
			return prev.size
		}
		return prev.size - blockSize(old[ci], h) + blockSize(ev.Partial.Content[ci], h)
	case loop.StreamTextDelta:
		if b, ok := old[ev.ContentIndex].(loop.TextContent); ok && appendsAlone(b.Text) {
			return prev.size + deltaSize(ev.Delta)
		}
	case loop.StreamThinkingDelta:
		if b, ok := old[ev.ContentIndex].(loop.ThinkingContent); ok && appendsAlone(b.Thinking) {
			return prev.size + deltaSize(ev.Delta)
		}
	}
	return partialSize(nil, ev.Partial)
}

// blockSize is the size of b's canonical JSON (appendBlock), a tool call's arguments written
// through h.
func blockSize(b loop.Block, h *headCache) int64 {
	if x, ok := b.(loop.ToolCall); ok {
		return int64(encodedSize(func(buf []byte) []byte { return appendToolCallWith(buf, &x, h) }))
	}
	return int64(encodedSize(func(buf []byte) []byte { return appendBlock(buf, b) }))
}

// encodedSize is the length of what write writes, written into a pooled buffer.
func encodedSize(write func([]byte) []byte) int {
	bufs := comparisons.Get().(*[2][]byte)
	bufs[0] = write(bufs[0][:0])
	n := len(bufs[0])
	comparisons.Put(bufs)
	return n
}

// deltaSize is the size s adds to a JSON string (appendsAlone): its JSON string's, quotes
// left out.
func deltaSize(s string) int64 {
	plain := true // written as it is: printable ASCII that canonical JSON does not escape
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	if plain {
		return int64(len(s))
	}
	bufs := comparisons.Get().(*[2][]byte)
	bufs[0] = jsonvalue.AppendString(bufs[0][:0], s)
	n := len(bufs[0]) - 2
	comparisons.Put(bufs)
	return int64(n)
}

// appendsAlone reports whether s ends in a whole rune (or is empty), so that the JSON string
// of s followed by any text is that of s followed by that of the text: how invalid UTF-8 is
// written depends on the bytes after it.
func appendsAlone(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n == 0 || r != utf8.RuneError || n > 1
}

// memberSize is the size of a member of a canonical object, of a value of size n, with the
// comma that parts it from the member next to it (an object the linear form shortens holds
// others).
func memberSize(key string, n int64) int64 {
	return int64(len(key)) + int64(len(`"":,`)) + n
}

// delivered remembers the partial of a stream event delivery once it is recorded at seq;
// size is the size of its canonical JSON, full that of the delivery's data in full.
func (w *world) delivered(s *scheduled, seq int, size, full int64) {
	d, ev := &s.delivery, s.event
	if s.stream != nil && s.stream.finished {
		// No event of the stream comes after: its partial is let go.
		s.stream.last = partialAt{}
		return
	}
	if d.Kind != trace.DeliverStreamEvent || ev == nil || ev.Partial == nil || !w.lastRecorded(seq, trace.KindDeliver) {
		return
	}
	p := partialAt{seq: seq, msg: ev.Partial, size: size, ev: ev, full: full}
	if len(d.Data) > 0 {
		if start, end, ok := jsonvalue.MemberValue(d.Data, "partial"); ok {
			p.enc = d.Data[start:end]
			p.data = d.Data
		}
	}
	w.lin.last = p
	if s.stream != nil {
		s.stream.last = p
	}
}

// partialOf is the last partial of s's stream that a delivery recorded (every stream event
// is scheduled with its stream).
func (w *world) partialOf(s *scheduled) (partialAt, bool) {
	if s.stream == nil {
		return partialAt{}, false
	}
	return s.stream.last, s.stream.last.seq != 0
}

// updateData is the trace's data of a message_update event given as a value, linked to the
// delivery it repeats when it does, with the bytes the link leaves out.
func (w *world) updateData(ev *loop.Event) (json.RawMessage, *trace.Link, int64) {
	last := &w.lin.last
	if w.lin.inFull || last.seq == 0 || ev.AssistantEvent == nil || ev.AssistantEvent.Partial == nil ||
		!sameMessage(ev.AssistantEvent.Partial, last.msg) || !sameMessage(ev.Message, last.msg) {
		return w.enc.eventBytes(ev), nil, 0
	}
	if sameEvent(ev.AssistantEvent, last.ev) {
		return updateAlone, w.newLink(trace.Link{Repeats: last.seq}), repeatedEventSize(*last)
	}
	return w.enc.sized(func(b []byte) []byte {
		o := open(b)
		o = o.key("assistantMessageEvent")
		o.b = appendStreamEventWith(o.b, ev.AssistantEvent, false)
		o = o.lit(typeMessageUpdate) // updateData's events are message_update's
		return o.close()
	}), w.newLink(trace.Link{Repeats: last.seq}), repeatedSize(last.size)
}

// repeatedSize is what a message_update event linked to the delivery it repeats leaves out,
// its partial of size n twice: assistantMessageEvent.partial and message.
func repeatedSize(n int64) int64 { return memberSize("partial", n) + memberSize("message", n) }

// updateAlone is the data of a message_update event that repeats the whole event delivered
// (its assistantMessageEvent the delivery's data, its message the partial); startAlone and
// endAlone those of a message_start and a message_end that repeat their message, shared.
var (
	updateAlone = constant(`{"type":"message_update"}`)
	startAlone  = constant(`{"type":"message_start"}`)
	endAlone    = constant(`{"type":"message_end"}`)
)

// repeatedEventSize is what a message_update event that repeats the whole event delivered
// leaves out: the delivery's data in full, and its partial.
func repeatedEventSize(p partialAt) int64 {
	return memberSize("assistantMessageEvent", p.full) + memberSize("message", p.size)
}

// sameEvent reports whether a, a stream event whose partial is the delivered one's, has the
// canonical JSON of d, the event delivered: the same event, or the same but for the partial
// (an event written with its partial: a done or error event holds none).
func sameEvent(a, d *loop.StreamEvent) bool {
	if a == nil || d == nil || a.Type == loop.StreamDone || a.Type == loop.StreamError {
		return false
	}
	if a == d || identicalEvents(a, d) {
		return true // the event delivered, or a copy of it (message_update's)
	}
	x, y := *a, *d
	x.Partial, y.Partial = nil, nil
	if x == y {
		return true // a copy of the event delivered: the same fields encode alike
	}
	return sameEncoding(func(b []byte) []byte { return appendStreamEventWith(b, a, false) },
		func(b []byte) []byte { return appendStreamEventWith(b, d, false) })
}

// identicalEvents reports whether a and b hold the same bits in every field but their partial
// (padding included, which can only make it false): then they write the same JSON but for it.
func identicalEvents(a, b *loop.StreamEvent) bool {
	x := unsafe.Slice((*byte)(unsafe.Pointer(a)), unsafe.Sizeof(*a))
	y := unsafe.Slice((*byte)(unsafe.Pointer(b)), unsafe.Sizeof(*b))
	return bytes.Equal(x[:partialOffset], y[:partialOffset]) && bytes.Equal(x[partialEnd:], y[partialEnd:])
}

// partialOffset and partialEnd are where a StreamEvent's Partial lies in its memory.
const (
	partialOffset = unsafe.Offsetof(loop.StreamEvent{}.Partial)
	partialEnd    = partialOffset + unsafe.Sizeof(loop.StreamEvent{}.Partial)
)

// linkUpdateJSON links a message_update event given as canonical JSON to the delivery it
// repeats, when it does, with the bytes the link leaves out.
func (w *world) linkUpdateJSON(data json.RawMessage) (json.RawMessage, *trace.Link, int64) {
	last := w.lin.last
	if w.lin.inFull || last.seq == 0 || last.enc == nil {
		return data, nil, 0
	}
	evStart, evEnd, ok := jsonvalue.MemberValue(data, "assistantMessageEvent")
	if !ok || data[evStart] != '{' {
		return data, nil, 0
	}
	ame := data[evStart:evEnd]
	pStart, pEnd, ok := jsonvalue.MemberValue(ame, "partial")
	if !ok || !bytes.Equal(ame[pStart:pEnd], last.enc) {
		return data, nil, 0
	}
	mStart, mEnd, ok := jsonvalue.MemberValue(data, "message")
	if !ok || !bytes.Equal(data[mStart:mEnd], last.enc) {
		return data, nil, 0
	}
	if last.data != nil && bytes.Equal(ame, last.data) {
		// The whole event is the delivery's.
		return jsonvalue.WithoutMember(jsonvalue.WithoutMember(data, "message"), "assistantMessageEvent"),
			w.newLink(trace.Link{Repeats: last.seq}), repeatedEventSize(last)
	}
	short := jsonvalue.WithoutMember(data, "message")
	evStart, evEnd, _ = jsonvalue.MemberValue(short, "assistantMessageEvent")
	out := make([]byte, 0, len(short))
	out = append(out, short[:evStart]...)
	out = append(out, jsonvalue.WithoutMember(short[evStart:evEnd], "partial")...)
	out = append(out, short[evEnd:]...)
	return out, w.newLink(trace.Link{Repeats: last.seq}), repeatedSize(int64(len(last.enc)))
}

// advances reports whether ev's partial is prev advanced by ev, as the linear form's
// advancing says (see Link), comparing as the canonical JSON would. The event's type is
// looked at first: most events of a stream that does not advance are a tool call's start,
// and an event that leaves the partial as it was carries the last one itself.
func advances(prev *loop.AssistantMessage, ev *loop.StreamEvent) bool {
	next := ev.Partial
	if prev == nil || next == nil {
		return false
	}
	ci := ev.ContentIndex
	grow := 0
	switch ev.Type {
	case loop.StreamTextStart, loop.StreamThinkingStart:
		grow = 1
		if ci != len(prev.Content) {
			return false
		}
	case loop.StreamTextDelta, loop.StreamThinkingDelta, loop.StreamToolCallEnd:
		if ci < 0 || ci >= len(prev.Content) {
			return false
		}
	case loop.StreamTextEnd, loop.StreamThinkingEnd, loop.StreamToolCallDelta:
		if next == prev {
			return true // the same message: the same JSON
		}
		ci = -1
	default:
		return false
	}
	if !sameHead(prev, next) || len(next.Content) != len(prev.Content)+grow {
		return false
	}
	for j := range prev.Content {
		if j != ci && !sameBlock(prev.Content[j], next.Content[j]) {
			return false
		}
	}
	switch ev.Type {
	case loop.StreamTextStart:
		return encodesAs(func(b []byte) []byte { return appendBlock(b, next.Content[ci]) }, trace.EmptyTextBlock)
	case loop.StreamThinkingStart:
		return encodesAs(func(b []byte) []byte { return appendBlock(b, next.Content[ci]) }, trace.EmptyThinkingBlock)
	case loop.StreamTextDelta:
		p, ok1 := prev.Content[ci].(loop.TextContent)
		n, ok2 := next.Content[ci].(loop.TextContent)
		return ok1 && ok2 && p.TextSignature == n.TextSignature && extendedBy(p.Text, n.Text, ev.Delta)
	case loop.StreamThinkingDelta:
		p, ok1 := prev.Content[ci].(loop.ThinkingContent)
		n, ok2 := next.Content[ci].(loop.ThinkingContent)
		return ok1 && ok2 && p.Redacted == n.Redacted && p.ThinkingSignature == n.ThinkingSignature && extendedBy(p.Thinking, n.Thinking, ev.Delta)
	case loop.StreamToolCallEnd:
		if ev.ToolCall == nil {
			return false
		}
		if n, ok := next.Content[ci].(loop.ToolCall); ok && sameCallJSON(ev.ToolCall, &n) {
			return true
		}
		return sameBlock(*ev.ToolCall, next.Content[ci])
	}
	return true
}

// extendedBy reports whether next is prev followed by delta.
func extendedBy(prev, next, delta string) bool {
	return len(next) == len(prev)+len(delta) && next[:len(prev)] == prev && next[len(prev):] == delta
}

// sameMessage reports whether two messages have the same canonical JSON.
func sameMessage(a loop.Message, b *loop.AssistantMessage) bool {
	if x, ok := a.(*loop.AssistantMessage); ok && x != nil && b != nil {
		if x == b {
			return true
		}
		heads := identicalHeads(x, b)
		if heads && identicalBlocks(x.Content, b.Content) {
			return true // a copy of the message (message_update's is the partial's)
		}
		if !heads && !sameHead(x, b) || len(x.Content) != len(b.Content) {
			return false
		}
		for i := range x.Content {
			if !sameBlock(x.Content[i], b.Content[i]) {
				return false
			}
		}
		return true
	}
	return sameEncoding(func(buf []byte) []byte { return appendMessage(buf, a) }, func(buf []byte) []byte { return appendMessage(buf, b) })
}

// sameHead reports whether two assistant messages agree in the canonical JSON of everything
// but their content: field by field, and by their JSON where the fields differ (pointers to
// equal values, numbers written alike).
func sameHead(a, b *loop.AssistantMessage) bool {
	if identicalHeads(a, b) {
		return true
	}
	if eqStr(a.API, b.API) && eqStr(a.Provider, b.Provider) && eqStr(a.Model, b.Model) && eqStr(a.ResponseModel, b.ResponseModel) &&
		eqStr(a.ResponseID, b.ResponseID) && eqStr(a.ProviderThinkingLevel, b.ProviderThinkingLevel) &&
		eqStr(a.ThinkingLevel, b.ThinkingLevel) && eqStr(string(a.StopReason), string(b.StopReason)) &&
		eqStr(a.ErrorMessage, b.ErrorMessage) && eqStr(a.RawStopReason, b.RawStopReason) && a.EndTurn == b.EndTurn &&
		a.Timestamp == b.Timestamp && a.DurationMs == b.DurationMs && sameUsage(&a.Usage, &b.Usage) {
		return true
	}
	return sameHeadEncoding(a, b)
}

// identicalHeads reports whether a and b hold the same bits in every field but their content
// (padding included, which can only make it false): then they write the same JSON but for it,
// as the pointers they share point to values never changed once a message is written (the
// encoder's memo relies on it too). A partial is a copy of the last one with its
// content changed (the loop's message_update reports a copy of the one delivered), so this one
// comparison of memory is the answer for nearly every event of a stream.
func identicalHeads(a, b *loop.AssistantMessage) bool {
	x, y := assistantBytes(a), assistantBytes(b)
	return bytes.Equal(x[:contentOffset], y[:contentOffset]) && bytes.Equal(x[contentEnd:], y[contentEnd:])
}

// identicalBlocks reports whether a and b hold the same blocks as interface values, type and
// data words alike (and are both nil or neither): the same JSON, as a boxed block is never
// changed. A copied message's content (loop.ShallowCopy) copies the blocks' words, so one
// comparison of memory answers for a message_update's message.
func identicalBlocks(a, b []loop.Block) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	size := len(a) * int(unsafe.Sizeof(ifaceWords{}))
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), size), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), size))
}

// contentOffset and contentEnd are where an AssistantMessage's Content lies in its memory,
// its first member (identicalHeads compares what follows it).
const (
	contentOffset = unsafe.Offsetof(loop.AssistantMessage{}.Content)
	contentEnd    = contentOffset + unsafe.Sizeof(loop.AssistantMessage{}.Content)
)

// assistantBytes is m's memory.
func assistantBytes(m *loop.AssistantMessage) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(m)), unsafe.Sizeof(*m))
}

// sameHeadEncoding is sameHead by the messages' JSON, in a function of its own: the copies it
// makes would otherwise take stack space sameHead clears at every call.
func sameHeadEncoding(a, b *loop.AssistantMessage) bool {
	x, y := *a, *b
	x.Content, y.Content = nil, nil
	return sameEncoding(func(b []byte) []byte { return appendMessage(b, &x) }, func(b []byte) []byte { return appendMessage(b, &y) })
}

// sameUsage is *a == *b, field by field: the generated comparison calls memequal for the
// counts and a function for the cost, for every event of a stream. A test sets each field in
// turn, so a field added to loop.Usage or loop.Cost and not compared here fails it.
func sameUsage(a, b *loop.Usage) bool {
	return a.Input == b.Input && a.Output == b.Output && a.CacheRead == b.CacheRead && a.CacheWrite == b.CacheWrite &&
		a.CacheWrite1h == b.CacheWrite1h && a.Reasoning == b.Reasoning && a.TotalTokens == b.TotalTokens &&
		a.Cost.Input == b.Cost.Input && a.Cost.Output == b.Cost.Output && a.Cost.CacheRead == b.Cost.CacheRead &&
		a.Cost.CacheWrite == b.Cost.CacheWrite && a.Cost.Total == b.Cost.Total && a.Cost.TotalFromProvider == b.Cost.TotalFromProvider
}

// eqStr is a == b, without the runtime's comparison call for two empty strings (most of a
// message's optional fields, compared for every event of a stream), nor for two that end
// apart (ids of the same length: "t4" and "t5").
func eqStr(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(a)-1] && a == b)
}

// sameBlock reports whether two content blocks have the same canonical JSON.
func sameBlock(a, b loop.Block) bool {
	if *(*ifaceWords)(unsafe.Pointer(&a)) == *(*ifaceWords)(unsafe.Pointer(&b)) {
		return true // the same boxed block (a stream's partials share those not changed)
	}
	switch x := a.(type) {
	case loop.TextContent:
		if y, ok := b.(loop.TextContent); ok && x == y {
			return true
		}
	case loop.ThinkingContent:
		if y, ok := b.(loop.ThinkingContent); ok && x == y {
			return true
		}
	case loop.ImageContent:
		if y, ok := b.(loop.ImageContent); ok && x == y {
			return true
		}
	case loop.ToolCall:
		if y, ok := b.(loop.ToolCall); ok && sameCallJSON(&x, &y) {
			return true
		}
	}
	return sameEncoding(func(buf []byte) []byte { return appendBlock(buf, a) }, func(buf []byte) []byte { return appendBlock(buf, b) })
}

// sameMap reports whether a and b are the same map (or both nil), which then encode alike.
func sameMap(a, b map[string]any) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b)) // a map is a pointer
}

// comparisons holds pairs of buffers that sameEncoding writes into: comparing two values by
// their canonical JSON, as the linear form does for every streamed block, then allocates
// nothing (worlds run on several goroutines at once, so the pairs are pooled).
var comparisons = sync.Pool{New: func() any { return new([2][]byte) }}

// encodesAs reports whether write writes want.
func encodesAs(write func([]byte) []byte, want []byte) bool {
	return sameEncoding(write, func(b []byte) []byte { return append(b, want...) })
}

// sameEncoding reports whether a and b write the same bytes.
func sameEncoding(a, b func([]byte) []byte) bool {
	bufs := comparisons.Get().(*[2][]byte)
	bufs[0], bufs[1] = a(bufs[0][:0]), b(bufs[1][:0])
	same := bytes.Equal(bufs[0], bufs[1])
	comparisons.Put(bufs)
	return same
}

// messageTarget is the earlier entry whose message a message_start, message_end or turn_end
// event may name (Link.Repeats); seq 0 when there is none.
func (w *world) messageTarget(typ loop.EventType) messageAt {
	var t messageAt
	switch typ {
	case loop.MessageStart:
		if l := &w.lin.last; l.seq != 0 {
			t = messageAt{seq: l.seq, enc: l.enc, size: l.size}
			if l.msg != nil {
				t.msg = l.msg
			}
		}
	case loop.MessageEnd:
		t = w.lin.start
	case loop.TurnEnd:
		t = w.lin.end
	}
	if w.lin.inFull {
		return messageAt{}
	}
	return t
}

// sameAsTarget reports whether message m (a value) has the canonical JSON of t's message.
// A message in the transcript is not changed once an event reported it (the encoder's memo
// relies on it too), so the same one is the same JSON; an assistant message that starts is
// its stream's partial, compared as message_update's is (Repeats), and one that ends is
// compared with its start's JSON (the loop may have built it in the same value).
func sameAsTarget(typ loop.EventType, m loop.Message, t *messageAt) bool {
	if t.msg == nil && t.enc == nil {
		return false
	}
	a, assistant := m.(*loop.AssistantMessage)
	switch m.(type) {
	case *loop.UserMessage, *loop.SystemMessage, *loop.ToolResultMessage:
		if typ == loop.MessageStart {
			return false // the target is a stream's partial, an assistant message
		}
		if m == t.msg {
			return true
		}
	case *loop.AssistantMessage:
		b, _ := t.msg.(*loop.AssistantMessage)
		if a != nil && b != nil && typ != loop.MessageEnd {
			return a.StopReason == b.StopReason && sameMessage(a, b) // stopReason is always written
		}
	}
	write := func(buf []byte) []byte { return appendMessage(buf, m) }
	if t.enc != nil {
		return encodesAs(write, t.enc)
	}
	if assistant && typ == loop.MessageEnd {
		return false // t.enc is known for every message_start a message_end may name
	}
	return sameEncoding(write, func(buf []byte) []byte { return appendMessage(buf, t.msg) })
}

// messageData is the data of a message_start, message_end or turn_end event given as a
// value, in the linear form (its message left out when an earlier entry holds it), with the
// link and the bytes it leaves out; m is set to the event's message, for later links.
func (w *world) messageData(ev *loop.Event, m *messageAt) (json.RawMessage, *trace.Link, int64) {
	if t := w.messageTarget(ev.Type); t.seq != 0 && sameAsTarget(ev.Type, ev.Message, &t) {
		var data []byte
		switch ev.Type {
		case loop.MessageStart:
			data = startAlone
		case loop.MessageEnd:
			data = endAlone
		default:
			data = w.enc.sized(func(b []byte) []byte {
				o := open(b)
				if ev.Type != loop.TurnEnd {
					return o.eventType(ev.Type).close()
				}
				o = o.key("toolResults")
				o.b = jsonvalue.AppendList(o.b, nonNil(ev.ToolResults), func(b []byte, r *loop.ToolResultMessage) []byte { return w.enc.transcript(b, r) })
				o = o.lit(typeTurnEnd)
				return o.close()
			})
		}
		*m = messageAt{msg: ev.Message, enc: t.enc, size: t.size}
		if m.msg == nil {
			m.msg = t.msg
		}
		return data, w.newLink(trace.Link{Repeats: t.seq}), memberSize("message", t.size)
	}
	var at [2]int // where the message lies in data, measured as it is written
	data := w.enc.sized(func(b []byte) []byte { return w.enc.eventWith(b, ev, &at) })
	*m = messageAt{msg: ev.Message, enc: data[at[0]:at[1]:at[1]], size: int64(at[1] - at[0])}
	return data, nil, 0
}

// linkMessageJSON is messageData for an event given as canonical JSON.
func (w *world) linkMessageJSON(typ loop.EventType, data json.RawMessage) (json.RawMessage, *trace.Link, int64, messageAt) {
	var m messageAt
	start, end, ok := jsonvalue.MemberValue(data, "message")
	if !ok {
		return data, nil, 0, m
	}
	m.enc, m.size = data[start:end], int64(end-start)
	t := w.messageTarget(typ)
	if t.seq == 0 {
		return data, nil, 0, m
	}
	same := false
	if t.enc != nil {
		same = bytes.Equal(t.enc, m.enc)
	} else if t.msg != nil {
		same = encodesAs(func(b []byte) []byte { return appendMessage(b, t.msg) }, m.enc)
	}
	if !same {
		return data, nil, 0, m
	}
	return jsonvalue.WithoutMember(data, "message"), w.newLink(trace.Link{Repeats: t.seq}), memberSize("message", t.size), m
}

// messageRecorded remembers the message of a message_start or message_end event once it is
// recorded, for the links of later events; linked says the event left its message out.
func (w *world) messageRecorded(typ loop.EventType, msg *messageAt, linked bool) {
	seq := len(w.trace.Entries)
	if w.lin.inFull || !w.lastRecorded(seq, trace.KindEvent) {
		return
	}
	switch typ {
	case loop.MessageStart:
		if linked {
			w.lin.start = messageAt{} // a message_end names no message_start that names another entry
			return
		}
		w.lin.start = *msg
		w.lin.start.seq = seq
	case loop.MessageEnd:
		if roleOf(msg) == "assistant" {
			w.lin.end = *msg
			w.lin.end.seq = seq
		}
	}
}

// roleOf is the role of a remembered message: the value's, or the JSON's plain string.
func roleOf(m *messageAt) string {
	if m.msg != nil {
		return m.msg.Role()
	}
	role, _ := jsonvalue.PlainString(m.enc, "role")
	return role
}
