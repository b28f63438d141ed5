package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sync"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
)

// The linear form of a trace.
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
//     previous call of the same hook (contexts.go).
//   - A streamEvent delivery whose partial message is the partial of an earlier streamEvent
//     delivery of the same stream (Advances, its seq) advanced by this event leaves out
//     data.partial: {"advances":40}. Advancing follows pi-ai's streaming: text_start and
//     thinking_start append an empty block; text_delta and thinking_delta append the delta to
//     block contentIndex's text or thinking; text_end, thinking_end and toolcall_delta leave
//     the partial as it was; toolcall_end makes block contentIndex the event's toolCall.
//     Any other change is written in full.
//   - A message_update event whose assistantMessageEvent.partial and message are both the
//     partial message of an earlier entry (Repeats, its seq: the delivery it reports) leaves
//     both out: {"repeats":41}.
//
// Whether an entry is linked, and how, is decided from the bytes of the full entries alone
// (messages are compared by their canonical JSON), so the linear form is a function of the
// full trace, and Expand is its inverse: two runs have byte-identical JSON lines exactly when
// their full traces are identical. Nothing is abbreviated by a digest, so no collision can
// make two different traces equal.

// Link says what an entry of the linear form leaves out and where it is found; nil when the
// entry is written in full. Its members are the seq numbers of earlier entries.
type Link struct {
	// Advances: a streamEvent delivery's partial is the partial of this delivery advanced by
	// the event.
	Advances int `json:"advances,omitempty"`
	// AnswerExtends and AnswerKeep: a context hook's answer messages are the first
	// AnswerKeep messages of this earlier call's answer, followed by those written (see
	// contexts.go; the members are in the order of their names, so the line stays canonical).
	AnswerExtends int `json:"answerExtends,omitempty"`
	AnswerKeep    int `json:"answerKeep,omitempty"`
	// Extends and Keep: a stream call's (or a context hook's) context messages are the first
	// Keep messages of this earlier call's, followed by those written.
	Extends int `json:"extends,omitempty"`
	Keep    int `json:"keep,omitempty"`
	// NewExtends and NewKeep: a prepareNextTurn or finishTurn call's turn.newMessages are the
	// first NewKeep of this earlier call's, followed by those written.
	NewExtends int `json:"newExtends,omitempty"`
	NewKeep    int `json:"newKeep,omitempty"`
	// Repeats: a message_update event's assistantMessageEvent.partial and message are the
	// partial of this entry.
	Repeats int `json:"repeats,omitempty"`
}

// appendLink writes a link as json.Marshal writes it.
func appendLink(b []byte, l *Link) []byte {
	o := open(b)
	if l.Advances != 0 {
		o.num("advances", int64(l.Advances))
	}
	if l.AnswerExtends != 0 {
		o.num("answerExtends", int64(l.AnswerExtends))
	}
	if l.AnswerKeep != 0 {
		o.num("answerKeep", int64(l.AnswerKeep))
	}
	if l.Extends != 0 {
		o.num("extends", int64(l.Extends))
	}
	if l.Keep != 0 {
		o.num("keep", int64(l.Keep))
	}
	if l.NewExtends != 0 {
		o.num("newExtends", int64(l.NewExtends))
	}
	if l.NewKeep != 0 {
		o.num("newKeep", int64(l.NewKeep))
	}
	if l.Repeats != 0 {
		o.num("repeats", int64(l.Repeats))
	}
	return o.close()
}

// linearizer is the world's memory of what the trace already holds: the message lists of the
// last call of each name that sends a context (contexts.go), and the partial messages of the
// streams.
type linearizer struct {
	// inFull writes every entry in full (tests compare it with the expanded linear form).
	inFull bool

	// lists holds the message lists of the last recorded call of each name that sends a
	// context (contexts.go).
	lists map[listKey]listAt

	// partials holds, by stream id, the last streamEvent delivery that carried a partial.
	partials map[string]partialAt
	// last is the last streamEvent delivery that carried a partial, of any stream.
	last partialAt
}

// partialAt is a partial message recorded at entry seq: as a value, and as canonical JSON
// when the world wrote the delivery's JSON.
type partialAt struct {
	seq int
	msg *loop.AssistantMessage
	enc []byte
}

// lastRecorded reports whether the trace's last entry is the one of that seq and kind (and
// not the budget's verdict, which takes the same seq).
func (w *world) lastRecorded(seq int, kind string) bool {
	n := len(w.trace.Entries)
	return n > 0 && w.trace.Entries[n-1].Seq == seq && w.trace.Entries[n-1].Kind == kind
}

// deliveryData is the trace's data of a delivery about to be released, with its link. For a
// stream event it also writes the delivery's JSON, unless the implementation reads values
// only.
func (w *world) deliveryData(d *Delivery) (json.RawMessage, *Link) {
	ev, ok := d.Value.(loop.StreamEvent)
	if d.Kind != DeliverStreamEvent || !ok {
		return d.Data, nil
	}
	if len(d.Data) == 0 && !w.valuesOnly {
		d.Data = w.enc.valueBytes(ev)
	}
	if prev, ok := w.lin.partials[d.Target]; ok && !w.lin.inFull && ev.Partial != nil && advances(prev.msg, &ev) {
		return w.enc.sized(func(b []byte) []byte { return appendStreamEventWith(b, &ev, false) }), &Link{Advances: prev.seq}
	}
	if len(d.Data) > 0 {
		return d.Data, nil
	}
	return w.enc.valueBytes(ev), nil
}

// delivered remembers the partial of a stream event delivery once it is recorded at seq.
func (w *world) delivered(d *Delivery, seq int) {
	ev, ok := d.Value.(loop.StreamEvent)
	if d.Kind != DeliverStreamEvent || !ok || ev.Partial == nil || !w.lastRecorded(seq, KindDeliver) {
		return
	}
	p := partialAt{seq: seq, msg: ev.Partial}
	if len(d.Data) > 0 {
		if start, end, ok := memberValue(d.Data, "partial"); ok {
			p.enc = d.Data[start:end]
		}
	}
	if w.lin.partials == nil {
		w.lin.partials = map[string]partialAt{}
	}
	w.lin.partials[d.Target] = p
	w.lin.last = p
}

// updateData is the trace's data of a message_update event given as a value, linked to the
// delivery it repeats when it does.
func (w *world) updateData(ev loop.Event) (json.RawMessage, *Link) {
	last := w.lin.last
	if w.lin.inFull || last.seq == 0 || ev.AssistantEvent == nil || ev.AssistantEvent.Partial == nil ||
		!sameMessage(ev.AssistantEvent.Partial, last.msg) || !sameMessage(ev.Message, last.msg) {
		return w.enc.eventBytes(ev), nil
	}
	return w.enc.sized(func(b []byte) []byte {
		o := open(b)
		o.key("assistantMessageEvent")
		o.b = appendStreamEventWith(o.b, ev.AssistantEvent, false)
		o.str("type", string(ev.Type))
		return o.close()
	}), &Link{Repeats: last.seq}
}

// linkUpdateJSON links a message_update event given as canonical JSON to the delivery it
// repeats, when it does.
func (w *world) linkUpdateJSON(data json.RawMessage) (json.RawMessage, *Link) {
	last := w.lin.last
	if w.lin.inFull || last.seq == 0 || last.enc == nil {
		return data, nil
	}
	evStart, evEnd, ok := memberValue(data, "assistantMessageEvent")
	if !ok || data[evStart] != '{' {
		return data, nil
	}
	ame := data[evStart:evEnd]
	pStart, pEnd, ok := memberValue(ame, "partial")
	if !ok || !bytes.Equal(ame[pStart:pEnd], last.enc) {
		return data, nil
	}
	mStart, mEnd, ok := memberValue(data, "message")
	if !ok || !bytes.Equal(data[mStart:mEnd], last.enc) {
		return data, nil
	}
	short := withoutMember(data, "message")
	evStart, evEnd, _ = memberValue(short, "assistantMessageEvent")
	out := make([]byte, 0, len(short))
	out = append(out, short[:evStart]...)
	out = append(out, withoutMember(short[evStart:evEnd], "partial")...)
	out = append(out, short[evEnd:]...)
	return out, &Link{Repeats: last.seq}
}

// advances reports whether ev's partial is prev advanced by ev, as the linear form's
// advancing says (see Link), comparing as the canonical JSON would.
func advances(prev *loop.AssistantMessage, ev *loop.StreamEvent) bool {
	next := ev.Partial
	if prev == nil || next == nil || !sameHead(prev, next) {
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
		ci = -1
	default:
		return false
	}
	if len(next.Content) != len(prev.Content)+grow {
		return false
	}
	for j := range prev.Content {
		if j != ci && !sameBlock(prev.Content[j], next.Content[j]) {
			return false
		}
	}
	switch ev.Type {
	case loop.StreamTextStart:
		return encodesAs(func(b []byte) []byte { return appendBlock(b, next.Content[ci]) }, emptyText)
	case loop.StreamThinkingStart:
		return encodesAs(func(b []byte) []byte { return appendBlock(b, next.Content[ci]) }, emptyThinking)
	case loop.StreamTextDelta:
		p, ok1 := prev.Content[ci].(loop.TextContent)
		n, ok2 := next.Content[ci].(loop.TextContent)
		return ok1 && ok2 && p.TextSignature == n.TextSignature && extendedBy(p.Text, n.Text, ev.Delta)
	case loop.StreamThinkingDelta:
		p, ok1 := prev.Content[ci].(loop.ThinkingContent)
		n, ok2 := next.Content[ci].(loop.ThinkingContent)
		return ok1 && ok2 && p.Redacted == n.Redacted && p.ThinkingSignature == n.ThinkingSignature && extendedBy(p.Thinking, n.Thinking, ev.Delta)
	case loop.StreamToolCallEnd:
		return ev.ToolCall != nil && sameBlock(*ev.ToolCall, next.Content[ci])
	}
	return true
}

var (
	emptyText     = []byte(`{"text":"","type":"text"}`)
	emptyThinking = []byte(`{"thinking":"","type":"thinking"}`)
)

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
		if !sameHead(x, b) || len(x.Content) != len(b.Content) {
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
	if a.API == b.API && a.Provider == b.Provider && a.Model == b.Model && a.ResponseModel == b.ResponseModel &&
		a.ResponseID == b.ResponseID && a.ProviderThinkingLevel == b.ProviderThinkingLevel &&
		a.ThinkingLevel == b.ThinkingLevel && a.Usage == b.Usage && a.StopReason == b.StopReason &&
		a.ErrorMessage == b.ErrorMessage && a.RawStopReason == b.RawStopReason && a.EndTurn == b.EndTurn &&
		a.Timestamp == b.Timestamp && a.DurationMs == b.DurationMs {
		return true
	}
	x, y := *a, *b
	x.Content, y.Content = nil, nil
	return sameEncoding(func(b []byte) []byte { return appendMessage(b, &x) }, func(b []byte) []byte { return appendMessage(b, &y) })
}

// sameBlock reports whether two content blocks have the same canonical JSON.
func sameBlock(a, b loop.Block) bool {
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
		// A streamed tool call's partials share its arguments map until the call ends.
		if y, ok := b.(loop.ToolCall); ok && x.ID == y.ID && x.Name == y.Name && x.ThoughtSignature == y.ThoughtSignature &&
			x.Namespace == y.Namespace && x.ArgumentsError == y.ArgumentsError && sameMap(x.Arguments, y.Arguments) {
			return true
		}
	}
	return sameEncoding(func(buf []byte) []byte { return appendBlock(buf, a) }, func(buf []byte) []byte { return appendBlock(buf, b) })
}

// sameMap reports whether a and b are the same map (or both nil), which then encode alike.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
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

// Expand returns the trace with every entry in full (no links): what the world recorded
// before it wrote the linear form. It is t itself when no entry is linked. An error names
// the first link that does not resolve (possible only in JSON lines read from elsewhere);
// the entries from there on are then left as written.
func (t *Trace) Expand() (*Trace, error) { return t.expand(onBytes) }

// How expand restores links: by decoding the entries' data, on the bytes of canonical entries
// where it can and by decoding elsewhere (Expand), or on the bytes only (tests: an error
// where that cannot be done).
const (
	byDecoding = iota
	onBytes
	onBytesOnly
)

// expand is Expand, restoring links as how says.
func (t *Trace) expand(how int) (*Trace, error) {
	linked := false
	for i := range t.Entries {
		if t.Entries[i].Link != nil {
			linked = true
			break
		}
	}
	if !linked {
		return t, nil
	}
	out := &Trace{Scenario: t.Scenario, Entries: make([]Entry, len(t.Entries)), Unfired: t.Unfired}
	copy(out.Entries, t.Entries)
	x := expander{entries: out.Entries, bySeq: map[int]int{}, decoded: map[int]map[string]any{}}
	for i := range out.Entries {
		e := &out.Entries[i]
		x.bySeq[e.Seq] = i
		if e.Link == nil || how != byDecoding && x.fastExpand(e) {
			continue
		}
		if how == onBytesOnly {
			return out, fmt.Errorf("entry %d: link %s cannot be restored on the bytes", e.Seq, appendLink(nil, e.Link))
		}
		if err := x.expand(e); err != nil {
			return out, fmt.Errorf("entry %d: %w", e.Seq, err)
		}
	}
	return out, nil
}

// Expanded is Expand for traces whose links are known to resolve (those sim.Run returns):
// on an unresolved link it gives the trace as far as it could expand it.
func (t *Trace) Expanded() *Trace {
	out, _ := t.Expand()
	return out
}

// expander restores linked entries in order; decoded caches the decoded data of entries
// that later entries refer to.
type expander struct {
	entries []Entry
	bySeq   map[int]int
	decoded map[int]map[string]any
}

// data is the decoded (full) data of the earlier entry seq.
func (x *expander) data(seq int) (map[string]any, error) {
	if d, ok := x.decoded[seq]; ok {
		return d, nil
	}
	i, ok := x.bySeq[seq]
	if !ok {
		return nil, fmt.Errorf("the link refers to entry %d, which is not an earlier entry", seq)
	}
	var d map[string]any
	if err := json.Unmarshal(x.entries[i].Data, &d); err != nil || d == nil {
		return nil, fmt.Errorf("the link refers to entry %d, whose data is not an object", seq)
	}
	x.decoded[seq] = d
	return d, nil
}

// partial is the partial message of the earlier entry seq: a delivery's data.partial or an
// event's data.assistantMessageEvent.partial.
func (x *expander) partial(seq int) (map[string]any, error) {
	d, err := x.data(seq)
	if err != nil {
		return nil, err
	}
	if ame, ok := d["assistantMessageEvent"].(map[string]any); ok {
		d = ame
	}
	p, ok := d["partial"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the link refers to entry %d, which holds no partial message", seq)
	}
	return p, nil
}

func (x *expander) expand(e *Entry) error {
	l := e.Link
	if l.AnswerExtends != 0 || l.AnswerKeep != 0 {
		if err := x.expandAnswer(e); err != nil {
			return err
		}
		if l.Advances == 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Repeats == 0 {
			e.Link = nil
			return nil
		}
	}
	var d map[string]any
	if err := json.Unmarshal(e.Data, &d); err != nil || d == nil {
		return fmt.Errorf("a linked entry's data is not an object")
	}
	switch {
	case (l.Extends != 0 || l.NewExtends != 0) && l.Advances == 0 && l.Repeats == 0:
		for _, part := range []struct {
			list, extends, keep int
		}{{listMessages, l.Extends, l.Keep}, {listNewMessages, l.NewExtends, l.NewKeep}} {
			if part.extends == 0 && part.keep == 0 {
				continue
			}
			path := listPath(e, part.list)
			if path == nil {
				return fmt.Errorf("link %s on a %s entry, which sends no such list", appendLink(nil, l), e.Name)
			}
			if part.extends >= e.Seq {
				return fmt.Errorf("the link refers to entry %d, which is not an earlier entry", part.extends)
			}
			base, err := x.data(part.extends)
			if err != nil {
				return err
			}
			prev, ok1 := listIn(base, path)
			own, ok2 := listIn(d, path)
			if !ok1 || !ok2 || part.keep < 1 || part.keep > len(prev) {
				return fmt.Errorf("link keeps %d messages of entry %d, which has %d", part.keep, part.extends, len(prev))
			}
			setListIn(d, path, append(prev[:part.keep:part.keep], own...))
		}
	case l.Advances != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Repeats == 0:
		prev, err := x.partial(l.Advances)
		if err != nil {
			return err
		}
		next, err := advance(prev, d)
		if err != nil {
			return err
		}
		d["partial"] = next
	case l.Repeats != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Advances == 0:
		p, err := x.partial(l.Repeats)
		if err != nil {
			return err
		}
		ame, ok := d["assistantMessageEvent"].(map[string]any)
		if !ok {
			return fmt.Errorf("a repeating entry has no assistantMessageEvent object")
		}
		ame["partial"] = p
		d["message"] = p
	default:
		return fmt.Errorf("link %s is not one the linear form knows", appendLink(nil, l))
	}
	e.Data = appendCanonical(nil, d)
	e.Link = nil
	x.decoded[e.Seq] = d
	return nil
}

// expandAnswer restores a context hook's answer from the earlier answer it extends.
func (x *expander) expandAnswer(e *Entry) error {
	l := e.Link
	i, ok := x.bySeq[l.AnswerExtends]
	if !ok || l.AnswerExtends >= e.Seq {
		return fmt.Errorf("the link refers to entry %d, which is not an earlier entry", l.AnswerExtends)
	}
	path := listPath(e, listAnswer)
	if path == nil {
		return fmt.Errorf("link %s on a %s entry, whose answer holds no messages", appendLink(nil, l), e.Name)
	}
	var base, own map[string]any
	if err := json.Unmarshal(x.entries[i].Answer, &base); err != nil || base == nil {
		return fmt.Errorf("the link refers to entry %d, whose answer is not an object", l.AnswerExtends)
	}
	if err := json.Unmarshal(e.Answer, &own); err != nil || own == nil {
		return fmt.Errorf("a linked entry's answer is not an object")
	}
	prev, ok1 := listIn(base, path)
	mine, ok2 := listIn(own, path)
	if !ok1 || !ok2 || l.AnswerKeep < 1 || l.AnswerKeep > len(prev) {
		return fmt.Errorf("link keeps %d answer messages of entry %d, which has %d", l.AnswerKeep, l.AnswerExtends, len(prev))
	}
	setListIn(own, path, append(prev[:l.AnswerKeep:l.AnswerKeep], mine...))
	e.Answer = appendCanonical(nil, own)
	rest := *l
	rest.AnswerExtends, rest.AnswerKeep = 0, 0
	e.Link = &rest
	return nil
}

// advance is the partial prev advanced by the stream event ev, as the linear form says
// (see Link); prev is left as it is.
func advance(prev, ev map[string]any) (map[string]any, error) {
	typ, _ := ev["type"].(string)
	content, ok := prev["content"].([]any)
	if !ok {
		return nil, fmt.Errorf("the partial to advance has no content list")
	}
	f, _ := ev["contentIndex"].(float64)
	ci := int(f)
	next := maps.Clone(prev)
	switch typ {
	case "text_end", "thinking_end", "toolcall_delta":
		return next, nil
	case "text_start":
		next["content"] = append(content[:len(content):len(content)], map[string]any{"text": "", "type": "text"})
		return next, nil
	case "thinking_start":
		next["content"] = append(content[:len(content):len(content)], map[string]any{"thinking": "", "type": "thinking"})
		return next, nil
	}
	if typ != "text_delta" && typ != "thinking_delta" && typ != "toolcall_end" {
		return nil, fmt.Errorf("a %q event does not advance a partial", typ)
	}
	if ci < 0 || ci >= len(content) || float64(ci) != f {
		return nil, fmt.Errorf("%s at content index %v of a partial with %d blocks", typ, ev["contentIndex"], len(content))
	}
	blocks := append([]any(nil), content...)
	next["content"] = blocks
	switch typ {
	case "text_delta", "thinking_delta":
		key := "text"
		if typ == "thinking_delta" {
			key = "thinking"
		}
		b, ok := blocks[ci].(map[string]any)
		s, ok2 := b[key].(string)
		delta, ok3 := ev["delta"].(string)
		if !ok || !ok2 || !ok3 {
			return nil, fmt.Errorf("%s on a block without %s", typ, key)
		}
		nb := maps.Clone(b)
		nb[key] = s + delta
		blocks[ci] = nb
	case "toolcall_end":
		tc, ok := ev["toolCall"]
		if !ok {
			return nil, fmt.Errorf("toolcall_end without toolCall")
		}
		blocks[ci] = tc
	default:
		return nil, fmt.Errorf("a %q event does not advance a partial", typ)
	}
	return next, nil
}

// memberValue finds member key of the canonical JSON object obj and returns where its value
// lies.
func memberValue(obj []byte, key string) (start, end int, ok bool) {
	_, start, end, ok = memberAt(obj, key)
	return start, end, ok
}

// memberAt finds member key of the canonical JSON object obj and returns where it begins (its
// key) and where its value lies.
func memberAt(obj []byte, key string) (keyStart, start, end int, ok bool) {
	if keyStart, start, ok = memberStart(obj, 0, key); !ok {
		return 0, 0, 0, false
	}
	end, ok = skipValue(obj, start)
	return keyStart, start, end, ok
}

// memberStart finds member key of the canonical JSON object at obj[at:] and returns where it
// begins (its key) and where its value begins; the members before it are skipped, its value
// is not read.
func memberStart(obj []byte, at int, key string) (keyStart, start int, ok bool) {
	if at+1 >= len(obj) || obj[at] != '{' {
		return 0, 0, false
	}
	i := at + 1
	for i < len(obj) && obj[i] == '"' {
		kEnd, ok := skipValue(obj, i)
		if !ok || kEnd >= len(obj) || obj[kEnd] != ':' {
			return 0, 0, false
		}
		if isKey(obj[i:kEnd], key) {
			return i, kEnd + 1, true
		}
		vEnd, ok := skipValue(obj, kEnd+1)
		if !ok {
			return 0, 0, false
		}
		i = vEnd
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
	return 0, 0, false
}

// isKey reports whether the JSON string s is key.
func isKey(s []byte, key string) bool {
	if len(s) == len(key)+2 && string(s[1:len(s)-1]) == key {
		return true
	}
	if bytes.IndexByte(s, '\\') < 0 {
		return false
	}
	var k string
	return json.Unmarshal(s, &k) == nil && k == key
}

// withoutMember is the canonical JSON object obj without member key (obj itself when it has
// none).
func withoutMember(obj []byte, key string) []byte {
	kStart, _, end, ok := memberAt(obj, key)
	if !ok {
		return obj
	}
	out := make([]byte, 0, len(obj))
	switch {
	case obj[end] == ',':
		out = append(append(out, obj[:kStart]...), obj[end+1:]...)
	case obj[kStart-1] == ',':
		out = append(append(out, obj[:kStart-1]...), obj[end:]...)
	default:
		out = append(append(out, obj[:kStart]...), obj[end:]...)
	}
	return out
}

// eachMember calls f with each member of the compact JSON object obj, key as written (quoted);
// false when obj is not a compact object (nothing but its members, without spaces).
func eachMember(obj []byte, f func(key, value []byte)) bool {
	if len(obj) < 2 || obj[0] != '{' {
		return false
	}
	if string(obj) == "{}" {
		return true
	}
	i := 1
	for i < len(obj) && obj[i] == '"' {
		kEnd, ok := skipValue(obj, i)
		if !ok || kEnd >= len(obj) || obj[kEnd] != ':' {
			return false
		}
		vEnd, ok := skipValue(obj, kEnd+1)
		if !ok || vEnd >= len(obj) {
			return false
		}
		f(obj[i:kEnd], obj[kEnd+1:vEnd])
		switch obj[vEnd] {
		case ',':
			i = vEnd + 1
		case '}':
			return vEnd == len(obj)-1
		default:
			return false
		}
	}
	return false
}

// elements splits a canonical JSON array into its elements.
func elements(arr []byte) ([][]byte, bool) {
	if len(arr) < 2 || arr[0] != '[' {
		return nil, false
	}
	if arr[1] == ']' {
		return [][]byte{}, true
	}
	var out [][]byte
	i := 1
	for {
		end, ok := skipValue(arr, i)
		if !ok || end >= len(arr) {
			return nil, false
		}
		out = append(out, arr[i:end])
		switch arr[end] {
		case ',':
			i = end + 1
		case ']':
			return out, true
		default:
			return nil, false
		}
	}
}

// skipValue returns where the canonical JSON value starting at i ends.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return 0, false
	case '{', '[':
		end, _, ok := jsonvalue.End(b, i)
		return end, ok
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j, j > i
}
