package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// abortedText is the errorMessage of a response cut short by an abort, as in pi-ai's
// providers.
const abortedText = "Request was aborted"

// streamRequest is what the world needs of a stream call's data: {model, messages,
// thinkingLevel, apiKey}.
type streamRequest struct {
	Model ModelSetup `json:"model"`
}

// openStream answers a provider request with the next scripted response, scheduling its
// events. value is the in-process form of data, when there is one.
func (w *world) openStream(data json.RawMessage, value any) Answer {
	var model ModelSetup
	if sc, ok := value.(*streamCall); ok {
		model = sc.Model
	} else if m, ok := value.(map[string]any); ok {
		model, _ = m["model"].(ModelSetup)
	} else {
		var req streamRequest // only here: decoding into it allocates it
		if err := json.Unmarshal(data, &req); err != nil {
			w.requests++
			w.fail("protocol", fmt.Sprintf("request %d: bad stream call: %v", w.requests, err))
			return Answer{Error: "bad stream call: " + err.Error()}
		}
		model = req.Model
	}
	return w.openStreamFor(model)
}

// openStreamFor is openStream for a request naming model.
func (w *world) openStreamFor(model ModelSetup) Answer {
	w.requests++
	n := w.requests
	var resp *Response
	switch {
	case n <= len(w.sc.Responses):
		resp = &w.sc.Responses[n-1]
	case w.sc.ExtraResponse != nil:
		resp = w.sc.ExtraResponse
	default:
		text := fmt.Sprintf("request %d was not scripted", n)
		w.fail("script", text)
		return Answer{Error: text}
	}
	if resp.OpenError != "" {
		return Answer{Error: resp.OpenError}
	}
	s := w.streamRuns.next(&streamRunChunks, 16)
	s.id, s.resp = strconv.Itoa(n), resp
	s.pending = s.first[:0]
	// The streams that finished are let go: only those open are looked at (by an abort).
	w.streams = slices.DeleteFunc(w.streams, func(s *streamRun) bool { return s.finished })
	w.streams = append(w.streams, s)
	final := finalMessage(resp, model, w.now)
	s.final = final
	answer := Answer{Data: w.enc.sized(func(b []byte) []byte { // {"stream": id}; the id is digits
		b = append(b, `{"stream":"`...)
		b = append(b, s.id...)
		return append(b, `"}`...)
	})}
	t := w.now + resp.Delay
	if w.aborted && !resp.IgnoresAbort {
		ev := abortedEvent(s.partialSoFar())
		w.pushStreamEvent(s, t, &ev)
		return answer
	}
	// The events are scheduled one at a time, the next when one is released, all in the
	// scheduling order of the first (streamRun.seq): a million deltas are never held at once.
	s.source = newStreamSource(resp, final)
	s.src = &s.source
	switch {
	case resp.StreamError != "":
		s.tail = &Delivery{Kind: trace.DeliverStreamFail, Data: w.enc.valueBytes(map[string]string{"error": resp.StreamError})}
	case resp.NoDone:
		s.tail = &Delivery{Kind: trace.DeliverStreamEnd, Data: w.enc.valueBytes(map[string]any{"message": final})}
	}
	w.seq++
	s.seq, s.at = w.seq, t
	w.scheduleNext(s)
	return answer
}

// partialSoFar is the partial message of the last event released, or the empty one before
// the first (emptyPartial).
func (s *streamRun) partialSoFar() *loop.AssistantMessage {
	if s.partial == nil {
		return emptyPartial(s.final)
	}
	return s.partial
}

// emptyPartial is the partial message a stream starts with: its final message with no
// content yet, pending.
func emptyPartial(final *loop.AssistantMessage) *loop.AssistantMessage {
	partial := *final // a copy without room for final's blocks (loop.ShallowCopy's), which it has none of
	partial.Content = []loop.Block{}
	partial.StopReason = loop.StopPending
	return &partial
}

// pushStreamEvent schedules a stream event out of the stream's order (an abort's); releasing
// it updates the stream's partial. Its JSON is written when it is released (deliveryData).
func (w *world) pushStreamEvent(s *streamRun, t int64, ev *loop.StreamEvent) {
	sch := w.at(t, Delivery{Kind: trace.DeliverStreamEvent, Target: s.id, Now: t})
	sch.stream, sch.event = s, ev
	s.pending = append(s.pending, sch)
}

// upcoming is a stream's delivery taken from its source and not yet scheduled: an event
// (isEvent), or the end or failure after its last.
type upcoming struct {
	d       Delivery
	ev      loop.StreamEvent
	isEvent bool
}

// streamSlot holds a scheduled delivery of a stream and its event, and the partial that
// event's partial advances, known from the way its source made it (nil when not known).
type streamSlot struct {
	s        scheduled
	ev       loop.StreamEvent
	advances *loop.AssistantMessage
}

// pullTo is the stream's next delivery from its source into d and, for an event (isEvent),
// ev, with the partial it advances in *advances when its source made it so (nil otherwise);
// after its last event, the end or failure; false when nothing is left.
func (s *streamRun) pullTo(d *Delivery, ev *loop.StreamEvent, advances **loop.AssistantMessage) (isEvent, ok bool) {
	if s.src != nil {
		from := s.src.carried
		if s.src.next(ev) {
			d.Kind = trace.DeliverStreamEvent
			if s.src.advanced {
				*advances = from
			} else if *advances != nil {
				*advances = nil
			}
			return true, true
		}
		s.src = nil
	}
	if s.tail != nil {
		*d, s.tail, *advances = *s.tail, nil, nil
		return false, true
	}
	return false, false
}

// advancedFrom reports whether p, a delivery of the stream, is an event whose partial its
// source made by advancing prev (streamSlot.advances).
func (s *streamRun) advancedFrom(p *scheduled, prev *loop.AssistantMessage) bool {
	for i := range s.slots {
		if &s.slots[i].s == p {
			return s.slots[i].advances == prev && prev != nil
		}
	}
	return false
}

// pull is the stream's next delivery from its source (pullTo), for Due to look ahead at.
func (s *streamRun) pull() (upcoming, bool) {
	var u upcoming
	var advances *loop.AssistantMessage
	isEvent, ok := s.pullTo(&u.d, &u.ev, &advances)
	u.isEvent = isEvent
	return u, ok
}

// stop drops what the stream has not scheduled yet (an abort cuts it short).
func (s *streamRun) stop() { s.src, s.tail, s.ahead = nil, nil, nil }

// after is the time of the stream's delivery after one at time at, an event or not, once it
// scheduled events: an event comes a chunk delay after the previous one; its end or failure
// with its last event.
func (s *streamRun) after(at int64, events int, isEvent bool) int64 {
	if isEvent && events > 0 {
		return at + s.resp.ChunkDelay
	}
	return at
}

// scheduleNext schedules the stream's next delivery, if any, in one of its two slots: the
// other holds the delivery released last, which its release may still read. The next is the
// first that Due looked ahead at, else the source's next event, written into the slot
// itself, else the stream's end or failure.
func (w *world) scheduleNext(s *streamRun) {
	slot := &s.slots[s.slot]
	var d Delivery
	isEvent := true
	switch {
	case len(s.ahead) > 0:
		u := &s.ahead[0]
		setEvent(&slot.ev, &u.ev)
		slot.advances = nil
		d, isEvent = u.d, u.isEvent
		*u = upcoming{}
		s.ahead = s.ahead[1:]
	default:
		var ok bool
		if isEvent, ok = s.pullTo(&d, &slot.ev, &slot.advances); !ok {
			return
		}
		if !isEvent {
			slot.ev = loop.StreamEvent{}
		}
	}
	s.at = s.after(s.at, s.events, isEvent)
	var ev *loop.StreamEvent
	if isEvent {
		s.events++
		ev = &slot.ev
	}
	s.slot ^= 1
	d.Target, d.Now = s.id, s.at
	slot.s.set(s.at, s.seq, &d, s, ev)
	w.schedule.push(&slot.s)
	s.pending = append(s.pending, &slot.s)
	w.due.valid = false
}

// set makes p a stream's scheduled delivery d at time at, in scheduling order seq, of stream
// and (nil for an end or failure) event ev: what scheduled{at: at, seq: seq, delivery: *d,
// stream: stream, event: ev} is, storing only the members that differ from the delivery the
// slot held before (its stream's, two deliveries back). A stream's slots are refilled at every
// event, and storing a pointer while the collector marks runs the write barrier.
func (p *scheduled) set(at, seq int64, d *Delivery, stream *streamRun, ev *loop.StreamEvent) {
	p.at, p.seq, p.cancelled, p.index = at, seq, false, 0
	q := &p.delivery
	if !sameString(q.Kind, d.Kind) {
		q.Kind = d.Kind
	}
	q.Now = d.Now
	if !sameString(q.Target, d.Target) {
		q.Target = d.Target
	}
	if q.Data != nil || d.Data != nil {
		q.Data = d.Data
	}
	if q.Value != nil || d.Value != nil {
		q.Value = d.Value
	}
	if p.internal != nil {
		p.internal = nil
	}
	if p.onRelease != nil {
		p.onRelease = nil
	}
	if p.stream != stream {
		p.stream = stream
	}
	if p.tool != nil {
		p.tool = nil
	}
	if p.event != ev {
		p.event = ev
	}
}

// setEvent is *dst = *src, storing only the members that differ (scheduled.set).
func setEvent(dst, src *loop.StreamEvent) {
	if !sameString(string(dst.Type), string(src.Type)) {
		dst.Type = src.Type
	}
	dst.ContentIndex = src.ContentIndex
	if !sameString(dst.Delta, src.Delta) {
		dst.Delta = src.Delta
	}
	if !sameString(dst.Content, src.Content) {
		dst.Content = src.Content
	}
	if dst.ToolCall != src.ToolCall {
		dst.ToolCall = src.ToolCall
	}
	if dst.Partial != src.Partial {
		dst.Partial = src.Partial
	}
	if !sameString(string(dst.Reason), string(src.Reason)) {
		dst.Reason = src.Reason
	}
	if dst.Message != src.Message {
		dst.Message = src.Message
	}
}

// sameString reports whether a and b are the same string header (the same bytes in memory).
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// released takes the stream's next delivery, d, as released: its partial becomes the
// stream's, and the stream is finished after its last event or after an end or failure.
func (s *streamRun) released(d *scheduled) {
	n := copy(s.pending, s.pending[1:]) // at most two: the next one, and an abort's event
	s.pending[n] = nil
	s.pending = s.pending[:n]
	ev := d.event
	if ev == nil {
		s.finished = true
		return
	}
	if ev.Partial != nil {
		s.partial = ev.Partial
	}
	if ev.Type == loop.StreamDone || ev.Type == loop.StreamError {
		s.finished = true
	}
}

// finalMessage is the scripted response's final assistant message.
func finalMessage(resp *Response, model ModelSetup, now int64) *loop.AssistantMessage {
	stop := resp.StopReason
	if stop == "" {
		stop = loop.StopStop
		if hasToolCall(resp.Content) {
			stop = loop.StopToolUse
		}
	}
	usage := loop.Usage{}
	if resp.Usage != nil {
		usage = *resp.Usage
	}
	content := resp.Content
	if content == nil {
		content = []loop.Block{}
	}
	return &loop.AssistantMessage{
		Content: content, API: model.API, Provider: model.Provider, Model: model.ID,
		Usage: usage, StopReason: stop, ErrorMessage: resp.ErrorMessage, Timestamp: now,
	}
}

// hasToolCall reports whether content holds a tool call (loop.ToolCalls, without making the
// list).
func hasToolCall(content []loop.Block) bool {
	for _, b := range content {
		if _, ok := b.(loop.ToolCall); ok {
			return true
		}
	}
	return false
}

// StreamEvents is the whole event stream the simulator delivers for a response to a request
// to model at virtual time now, for benchmarks and tools that replay it without the world.
func StreamEvents(resp *Response, model loop.Model, now int64) []loop.StreamEvent {
	return streamEvents(resp, finalMessage(resp, ModelSetup{ID: model.ID, API: model.API, Provider: model.Provider}, now))
}

// StreamEventCount is len(StreamEvents(resp, …)), counted without building the events (a
// text streamed one character a delta makes a million of them, each with its partial).
func StreamEventCount(resp *Response) int {
	n := 0
	if !resp.NoStart {
		n++
	}
	for _, b := range resp.Content {
		switch b := b.(type) {
		case loop.ThinkingContent:
			n += 2 + pieces(b.Thinking, resp.DeltaSize)
		case loop.TextContent:
			n += 2 + pieces(b.Text, resp.DeltaSize)
		case loop.ToolCall:
			n += 2 + pieces(argumentsJSON(b.Arguments), resp.DeltaSize)
		}
	}
	if !resp.NoDone && resp.StreamError == "" {
		n++
	}
	return n
}

// argumentsJSON is the JSON a tool call's arguments stream as: encoding/json's, "{}" for
// none. No arguments, the commonest, are the same string every time, not marshalled.
func argumentsJSON(args map[string]any) string {
	if len(args) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(args)
	return string(b)
}

// startArguments is the empty arguments a tool call starts streaming with: the call's own map
// when it is empty (the final message shares it already), else a new one.
func startArguments(args map[string]any) map[string]any {
	if args != nil && len(args) == 0 {
		return args
	}
	return map[string]any{}
}

// pieces is the number of pieces a cutter cuts s into.
func pieces(s string, size int) int {
	if size <= 0 {
		return 1
	}
	return max(1, (utf8.RuneCountInString(s)+size-1)/size)
}

// abortedEvent is the error event of a stream cut short by an abort (pi-ai's faux
// createAbortedMessage: the partial so far, stopReason aborted).
func abortedEvent(partial *loop.AssistantMessage) loop.StreamEvent {
	m := loop.ShallowCopy(partial).(*loop.AssistantMessage)
	m.StopReason = loop.StopAborted
	m.ErrorMessage = abortedText
	return loop.StreamEvent{Type: loop.StreamError, Reason: loop.StopAborted, Message: m}
}

// streamEvents streams a response the way pi-ai's faux provider does: start, then per block
// its start, deltas and end, then done or error. Each event carries the partial so far, its
// own, or the last event's when it left it as it was (a tool call's delta).
func streamEvents(resp *Response, final *loop.AssistantMessage) []loop.StreamEvent {
	src := newStreamSource(resp, final)
	out := make([]loop.StreamEvent, 0, streamEventsAbout(resp, final))
	var ev loop.StreamEvent
	for src.next(&ev) {
		out = append(out, ev)
	}
	return out
}

// streamSource yields the events of streamEvents one at a time, so that the world holds one
// event of a stream at a time: a response streamed in a million deltas, each event with its
// own partial, is never held whole.
type streamSource struct {
	resp    *Response
	final   *loop.AssistantMessage
	partial *loop.AssistantMessage // the partial so far, which each event carries (grow)
	step    sourceStep
	block   int    // the block of final.Content being streamed
	cut     cutter // its text (a tool call's arguments as JSON) cut into deltas
	at      int    // the bytes of its text streamed so far
	acc     string // its text streamed so far (prefix)
	// carried is the partial the last event yielded carried; advanced is set when that event
	// advanced the one carried before it, as the linear form's advancing says, by its own
	// change alone (no block was added without an event between them).
	carried  *loop.AssistantMessage
	advanced bool
}

// sourceStep is what a streamSource yields next.
type sourceStep uint8

const (
	stepStart    sourceStep = iota // the stream's start
	stepBlock                      // the start of the block, or the stream's end past the last
	stepDelta                      // the block's next delta
	stepBlockEnd                   // the block's end
	stepEnd                        // done or error
	stepOver                       // nothing more
)

// newStreamSource is the source of a response's events, with final as its final message.
func newStreamSource(resp *Response, final *loop.AssistantMessage) streamSource {
	return streamSource{resp: resp, final: final, partial: emptyPartial(final)}
}

// partialRoom is a partial message with room for its first blocks, one allocation.
type partialRoom struct {
	m      loop.AssistantMessage
	blocks [2]loop.Block
}

// grow makes the partial so far a copy of it with n more blocks (zero, for the step to set)
// and returns its content: a partial an event carried is never changed, so a change makes a
// new one and an event that changes nothing carries the last one again.
func (g *streamSource) grow(n int) []loop.Block { return g.growIn(new(partialRoom), n) }

// growIn is grow making the copy in c, its blocks too when they fit.
func (g *streamSource) growIn(c *partialRoom, n int) []loop.Block {
	old := g.partial.Content
	size := len(old) + n
	c.m = *g.partial
	if size <= len(c.blocks) {
		copy(c.blocks[:], old)
		c.m.Content = c.blocks[:size:size]
	} else {
		c.m.Content = make([]loop.Block, size)
		copy(c.m.Content, old)
	}
	g.partial = &c.m
	return c.m.Content
}

// sameStreamed reports whether a text or thinking block streamed so far is the block whole
// (one streamed whole, unsigned, ends as it is: its partial is left as it was).
func sameStreamed(so, whole loop.Block) bool {
	switch w := whole.(type) {
	case loop.TextContent:
		s, ok := so.(loop.TextContent)
		return ok && s == w
	case loop.ThinkingContent:
		s, ok := so.(loop.ThinkingContent)
		return ok && s == w
	}
	return false
}

// callRoom is a partial and the tool call its toolcall_end event points to, one allocation.
type callRoom struct {
	partialRoom
	call loop.ToolCall
}

// carry notes that the event yielded carries the partial so far, and advances the partial
// the last event carried when its own change is an advancing one and before, the partial
// before that change, is the one the last event carried.
func (g *streamSource) carry(before *loop.AssistantMessage, advancing bool) {
	g.advanced = advancing && before == g.carried && before != nil
	g.carried = g.partial
}

// set makes the partial so far a copy of it with block i b (grow).
func (g *streamSource) set(i int, b loop.Block) { g.grow(0)[i] = b }

// add makes the partial so far a copy of it with b added (grow).
func (g *streamSource) add(b loop.Block) {
	c := g.grow(1)
	c[len(c)-1] = b
}

// begin starts cutting text, the block's, into deltas.
func (g *streamSource) begin(text string) {
	g.cut.reset(text, g.resp.DeltaSize)
	g.at, g.acc = 0, ""
	g.step = stepDelta
}

// next sets *ev to the stream's next event; false when there is none.
// Kept whole: the stream's steps as one state machine.
func (g *streamSource) next(ev *loop.StreamEvent) bool {
	for {
		switch g.step {
		case stepStart:
			g.step = stepBlock
			if !g.resp.NoStart {
				*ev = loop.StreamEvent{Type: loop.StreamStart, Partial: g.partial}
				g.carry(nil, false)
				return true
			}
		case stepBlock:
			i := g.block
			if i == len(g.final.Content) {
				g.step = stepEnd
				continue
			}
			before := g.partial
			switch b := g.final.Content[i].(type) {
			case loop.ThinkingContent:
				g.add(loop.ThinkingContent{})
				g.begin(b.Thinking)
				*ev = loop.StreamEvent{Type: loop.StreamThinkingStart, ContentIndex: i, Partial: g.partial}
				g.carry(before, true)
				return true
			case loop.TextContent:
				g.add(loop.TextContent{})
				g.begin(b.Text)
				*ev = loop.StreamEvent{Type: loop.StreamTextStart, ContentIndex: i, Partial: g.partial}
				g.carry(before, true)
				return true
			case loop.ToolCall:
				g.add(loop.ToolCall{ID: b.ID, Name: b.Name, Arguments: startArguments(b.Arguments)})
				g.begin(argumentsJSON(b.Arguments))
				*ev = loop.StreamEvent{Type: loop.StreamToolCallStart, ContentIndex: i, Partial: g.partial}
				g.carry(before, false) // not an advance: a call's start is written in full
				return true
			default:
				g.add(b)
				g.block++
			}
		case stepDelta:
			i := g.block
			d, last := g.cut.next()
			if last {
				g.step = stepBlockEnd
			}
			// The text so far is a prefix of the block's: sharing its bytes keeps a k-delta
			// response O(k), not O(k²), and equal partials cheap to compare.
			before := g.partial
			switch b := g.final.Content[i].(type) {
			case loop.ThinkingContent:
				g.at += len(d)
				g.set(i, loop.ThinkingContent{Thinking: prefix(b.Thinking, g.at, d, &g.acc)})
				*ev = loop.StreamEvent{Type: loop.StreamThinkingDelta, ContentIndex: i, Delta: d, Partial: g.partial}
			case loop.TextContent:
				g.at += len(d)
				g.set(i, loop.TextContent{Text: prefix(b.Text, g.at, d, &g.acc)})
				*ev = loop.StreamEvent{Type: loop.StreamTextDelta, ContentIndex: i, Delta: d, Partial: g.partial}
			default:
				*ev = loop.StreamEvent{Type: loop.StreamToolCallDelta, ContentIndex: i, Delta: d, Partial: g.partial}
			}
			g.carry(before, true)
			return true
		case stepBlockEnd:
			i := g.block
			b := g.final.Content[i]
			g.block++
			g.step = stepBlock
			before := g.partial
			if call, ok := b.(loop.ToolCall); ok {
				r := &callRoom{call: call}
				g.growIn(&r.partialRoom, 0)[i] = b
				*ev = loop.StreamEvent{Type: loop.StreamToolCallEnd, ContentIndex: i, ToolCall: &r.call, Partial: g.partial}
				g.carry(before, true)
				return true
			}
			same := sameStreamed(g.partial.Content[i], b)
			if !same {
				g.set(i, b) // a signature, or a text whose invalid bytes became U+FFFD: not known to advance
			}
			g.carry(before, same)
			switch b := b.(type) {
			case loop.ThinkingContent:
				*ev = loop.StreamEvent{Type: loop.StreamThinkingEnd, ContentIndex: i, Content: b.Thinking, Partial: g.partial}
			case loop.TextContent:
				*ev = loop.StreamEvent{Type: loop.StreamTextEnd, ContentIndex: i, Content: b.Text, Partial: g.partial}
			}
			return true
		case stepEnd:
			g.step = stepOver
			resp, final := g.resp, g.final
			if resp.NoDone || resp.StreamError != "" {
				return false
			}
			g.advanced = false
			if resp.ErrorEvent || final.StopReason == loop.StopError || final.StopReason == loop.StopAborted {
				*ev = loop.StreamEvent{Type: loop.StreamError, Reason: final.StopReason, Message: final}
			} else {
				*ev = loop.StreamEvent{Type: loop.StreamDone, Reason: final.StopReason, Message: final}
			}
			return true
		default:
			return false
		}
	}
}

// streamEventsAbout is a capacity for streamEvents' list: start and done, per block its start,
// its end and a delta, and per text or thinking block a delta for every DeltaSize bytes (a cutter
// cuts runes, so never fewer than it makes; a tool call's arguments cut in several deltas
// may still grow the list).
func streamEventsAbout(resp *Response, final *loop.AssistantMessage) int {
	n := 2
	for _, b := range final.Content {
		size := 0
		switch b := b.(type) {
		case loop.TextContent:
			size = len(b.Text)
		case loop.ThinkingContent:
			size = len(b.Thinking)
		}
		n += 3
		if resp.DeltaSize > 0 {
			n += size / resp.DeltaSize
		}
	}
	return n
}

// prefix is the text streamed so far once delta (ending at byte at of whole) is added to
// *acc: whole[:at], sharing whole's bytes, when the deltas are pieces of whole (valid UTF-8,
// which a cutter cuts without re-encoding); otherwise the deltas concatenated.
func prefix(whole string, at int, delta string, acc *string) string {
	if at <= len(whole) && whole[at-len(delta):at] == delta && (*acc == "" || whole[:at-len(delta)] == *acc) {
		*acc = whole[:at]
		return *acc
	}
	*acc += delta
	return *acc
}

// cutter cuts a text into pieces of size runes, one at a time: one piece when size <= 0 or
// the text is no longer (one empty piece for ""). The pieces of valid UTF-8 are substrings of
// the text; invalid bytes become U+FFFD, as in a conversion to runes.
type cutter struct {
	s         string
	size, off int
	whole     bool // one piece, s itself
	valid     bool
}

// reset starts cutting s.
func (c *cutter) reset(s string, size int) {
	*c = cutter{s: s, size: size, whole: size <= 0 || utf8.RuneCountInString(s) <= size}
	c.valid = c.whole || utf8.ValidString(s)
}

// next is the next piece, and whether it is the last.
func (c *cutter) next() (piece string, last bool) {
	if c.whole {
		c.off = len(c.s)
		return c.s, true
	}
	start := c.off
	for n := 0; n < c.size && c.off < len(c.s); n++ {
		_, w := utf8.DecodeRuneInString(c.s[c.off:])
		c.off += w
	}
	piece = c.s[start:c.off]
	if !c.valid {
		piece = string([]rune(piece))
	}
	return piece, c.off == len(c.s)
}
