package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// world is the scripted environment of one run: the virtual clock, the schedule of
// deliveries, the scripts, the user's queues and the  It is driven by one goroutine at
// a time (the driver, or the implementation's running task calling through the Port).
type world struct {
	sc       *Scenario
	now      int64
	seq      int64
	schedule schedule
	trace    trace.Trace
	enc      *encoder
	// lin is what the trace holds already, for its linear form; valuesOnly is set when the
	// implementation reads deliveries' values and not their JSON (the in-process reference).
	lin        linearizer
	valuesOnly bool
	// ref is the implementation when it is the in-process reference itself (not wrapped,
	// whose wrapper must see every delivery): it may take its deliveries itself
	// (releaseEventFor).
	ref *Reference
	// memo remembers the canonical form of the messages an implementation sends as JSON.
	memo jsonvalue.CanonicalMemo

	steering *loop.Queue
	followUp *loop.Queue

	requests  int
	hookCalls map[string]*int // the calls of each hook so far
	hookWaits int             // delayed hook answers so far (their waits are h1, h2, …)
	streams   []*streamRun
	tools     []*toolRun
	aborted   bool
	ended     bool
	closed    bool

	// budget is the scenario's, with defaults; over is set once a budget stopped the run.
	// The bytes budget counts the trace's JSON lines in full (every entry expanded, as
	// consumers hold it): bytes is that size of the entries before sized, plus what the links
	// of all entries leave out (exactBytes counts the rest when it is needed), and bound a
	// bound on it, counted cheaply for every entry (lineBound).
	budget Budget
	bytes  int64
	sized  int
	bound  int64
	over   *BudgetError

	triggerSeen []int
	fired       []bool

	// links, happenings, streamRuns and toolRuns are the chunks new links, scheduled
	// happenings, streams and tool executions are taken from: a run links most of its entries
	// and schedules a delivery for most, and a chunk is one allocation for many (newLink,
	// recycled). All but the links' are given to the next run once this one is over (recycle).
	links      []trace.Link
	happenings recycled[scheduled]
	streamRuns recycled[streamRun]
	toolRuns   recycled[toolRun]
	// room, when set, is the memory the trace is written in (RunIn).
	room *Room

	// spare is the room for a stream call's lists to remember (streamCallData).
	spare streamSpare
	// toolEnds are the settlements of the scenario's tools, by index, once written
	// (toolSettlement).
	toolEnds []settlement

	// agent is set in Agent scenarios.
	agent *agentWorld
	// toolCallOutcomes counts the outcomes of a runToolCall scenario.
	toolCallOutcomes int
	// due is what Due found last; abortsInHooks is set when a hook's answer may abort the
	// run, cancelling deliveries in the middle of a call (Due then promises nothing).
	due           dueOrder
	abortsInHooks bool
}

// streamRun is an open provider stream on the world's side.
type streamRun struct {
	id      string
	resp    *Response
	partial *loop.AssistantMessage // the last event's released; nil before (partialSoFar)
	// last is the last of its deliveries that carried a partial, as the trace recorded it
	// (world.delivered); seq 0 before the first and once the stream is finished.
	last     partialAt
	final    *loop.AssistantMessage
	finished bool
	// pending are its deliveries scheduled, at most two (the next, and an abort's event):
	// first holds them, taken from the stream's own memory.
	pending []*scheduled
	first   [2]*scheduled

	// src yields the events not scheduled yet (source, or nil once it has none) and tail is
	// the end or failure after the last (StreamError, NoDone); ahead holds the next ones Due
	// looked at, with their JSON. One delivery of the stream is scheduled at a time, in a
	// slot, at time at; every one takes scheduling order seq, the stream's (none is scheduled
	// while another of it is).
	src    *streamSource
	source streamSource
	tail   *Delivery
	ahead  []upcoming
	seq    int64
	at     int64
	events int // the events scheduled so far
	slots  [2]streamSlot
	slot   int // the slot the next goes in
}

// toolRun is a running tool execution on the world's side.
type toolRun struct {
	id       string
	b        Behaviour
	settled  bool
	pending  []*scheduled
	finished bool
	// first holds pending's first deliveries (most executions have only their result).
	first [2]*scheduled
}

// scheduled is one future happening: a delivery to the implementation, or a user action on
// the world's own state (internal).
type scheduled struct {
	at        int64
	seq       int64
	delivery  Delivery
	internal  func()
	onRelease func()
	// stream is the stream whose event, end or failure this delivery is (pushStreamDelivery);
	// tool the execution whose update or result it is.
	stream *streamRun
	tool   *toolRun
	// event is the stream event this delivery is, nil for any other: delivery.Value is left
	// unset, and set from it only for an implementation that reads it (valueFor).
	event     *loop.StreamEvent
	cancelled bool
	index     int
}

// schedule is a binary min-heap of happenings by time, then by scheduling order (seq, unique,
// so the order they come out in is fixed). It is container/heap's algorithm written for this
// type: a run releases thousands of deliveries, and the interface calls cost more than the
// comparisons.
type schedule []*scheduled

func (s schedule) less(i, j int) bool {
	if s[i].at != s[j].at {
		return s[i].at < s[j].at
	}
	return s[i].seq < s[j].seq
}

func (s schedule) swap(i, j int) { s[i], s[j] = s[j], s[i]; s[i].index = i; s[j].index = j }

// push adds e.
func (s *schedule) push(e *scheduled) {
	e.index = len(*s)
	*s = append(*s, e)
	h := *s
	for j := len(h) - 1; j > 0; {
		i := (j - 1) / 2 // parent
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

// pop removes and returns the earliest happening; it is then no longer scheduled (index -1).
func (s *schedule) pop() *scheduled {
	h := *s
	n := len(h) - 1
	h.swap(0, n)
	for i := 0; ; {
		j := 2*i + 1 // the first child
		if j >= n {
			break
		}
		if j2 := j + 1; j2 < n && h.less(j2, j) {
			j = j2
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	e := h[n]
	h[n] = nil
	*s = h[:n]
	e.index = -1
	return e
}

func newWorld(sc *Scenario) *world {
	w := &world{
		sc:          sc,
		steering:    loop.NewQueue(sc.SteeringMode),
		followUp:    loop.NewQueue(sc.FollowUpMode),
		hookCalls:   map[string]*int{},
		triggerSeen: make([]int, len(sc.User)),
		fired:       make([]bool, len(sc.User)),
		trace:       trace.Trace{Scenario: sc.Name},
		budget:      sc.Budget.Or(DefaultBudget),
		// The memo holds each message of the transcript, made room for at once, not grown
		// step by step.
		enc: newEncoderFor(min(expectedMessages(sc), 1<<12)),
	}
	if sc.Agent != nil {
		w.agent = &agentWorld{sent: map[string]*sentOp{},
			seen: make([]int, len(sc.Agent.Barriers)), held: make([]bool, len(sc.Agent.Barriers))}
	}
	for i, a := range sc.User {
		if a.At != nil {
			w.scheduleInternal(*a.At, func() { w.perform(i) })
		}
	}
	return w
}

// at schedules a delivery at virtual time t; ties are released in scheduling order.
func (w *world) at(t int64, d Delivery) *scheduled {
	w.seq++
	d.Now = t
	s := w.newHappening(scheduled{at: t, seq: w.seq, delivery: d})
	w.schedule.push(s)
	return s
}

func (w *world) scheduleInternal(t int64, f func()) {
	w.seq++
	w.schedule.push(w.newHappening(scheduled{at: t, seq: w.seq, internal: f}))
}

// happeningChunks, streamRunChunks and toolRunChunks keep chunks of happenings, streams and
// tool executions from one run to the next: a run schedules a delivery for most of its
// entries and opens a stream for each request, and none is looked at once the run is over.
var happeningChunks, streamRunChunks, toolRunChunks sync.Pool

// newHappening is a new scheduled happening, holding s.
func (w *world) newHappening(s scheduled) *scheduled {
	p := w.happenings.next(&happeningChunks, 128)
	*p = s
	return p
}

// recycled hands out values of T from chunks that are given to the next run once this one is
// over.
type recycled[T any] struct {
	chunk []T
	spent [][]T
}

// next is a zero T from the chunk, a new chunk (of size values, or one a run gave back from
// pool) when it is full.
func (r *recycled[T]) next(pool *sync.Pool, size int) *T {
	if len(r.chunk) == cap(r.chunk) {
		if c, ok := pool.Get().(*[]T); ok {
			r.chunk = (*c)[:0]
		} else {
			r.chunk = make([]T, 0, size)
		}
		r.spent = append(r.spent, r.chunk)
	}
	// The room past the chunk's length is zero (made so, or cleared by recycle): taking it
	// writes nothing, where appending a zero T would copy it with the write barrier.
	r.chunk = r.chunk[:len(r.chunk)+1]
	return &r.chunk[len(r.chunk)-1]
}

// recycle clears the chunks handed out and gives them to pool.
func (r *recycled[T]) recycle(pool *sync.Pool) {
	for _, c := range r.spent {
		c = c[:cap(c)]
		clear(c)
		c = c[:0]
		pool.Put(&c)
	}
	r.chunk, r.spent = nil, nil
}

// recycle gives the run's encoder buffers and its chunks of happenings, streams and tool
// executions to the next run, once this one is over: nothing reads them after (the world
// answers nothing once closed, and the trace holds none of them).
func (w *world) recycle() {
	w.closed = true // already, but for a run whose setup failed: the port is the world's no more
	w.enc.release()
	w.happenings.recycle(&happeningChunks)
	w.streamRuns.recycle(&streamRunChunks)
	w.toolRuns.recycle(&toolRunChunks)
}

// newLink is a new link of the trace, holding l.
// A full chunk of links is replaced by a new one, larger up to maxLinkChunk (the first
// already holds a short run's), or by the room's next; a chunk stays alive while anything
// points into it.
func (w *world) newLink(l trace.Link) *trace.Link {
	if len(w.links) == cap(w.links) {
		if w.room != nil {
			w.links = w.room.linkChunk()
		} else {
			w.links = make([]trace.Link, 0, min(2*cap(w.links)+64, maxLinkChunk))
		}
	}
	w.links = append(w.links, l)
	return &w.links[len(w.links)-1]
}

// maxLinkChunk is the most links a chunk holds.
const maxLinkChunk = 128

// performDue carries out the internal happenings due at or before t, in order, leaving
// deliveries scheduled.
func (w *world) performDue(t int64) {
	var keep []*scheduled
	for len(w.schedule) > 0 && w.schedule[0].at <= t {
		s := w.schedule.pop()
		if s.cancelled {
			continue
		}
		if s.internal == nil {
			keep = append(keep, s)
			continue
		}
		w.now = s.at
		s.internal()
	}
	for _, s := range keep {
		w.schedule.push(s)
	}
}

// next pops the earliest live happening.
func (w *world) next() (*scheduled, bool) {
	for len(w.schedule) > 0 {
		s := w.schedule.pop()
		if !s.cancelled {
			return s, true
		}
	}
	return nil, false
}

func (w *world) record(e trace.Entry) { w.recordEntry(&e, 0) }

// recordLinked records e, whose link (if any) leaves out leftOut bytes of the entry in full
// (recordEntry); small enough to be inlined, so that the entry its caller builds is not copied.
func (w *world) recordLinked(e trace.Entry, leftOut int64) { w.recordEntry(&e, leftOut) }

// recordEntry records e, whose link (if any) leaves out leftOut bytes of the entry in full:
// the bytes budget counts the trace in full, which is what the invariants, expect:, the
// timeline and the comparisons hold (trace.Expanded), and which grows with the square of a
// run whose context grows, while the linear form grows linearly. e's Seq, T and Canonical are
// the trace's to set.
func (w *world) recordEntry(e *trace.Entry, leftOut int64) {
	if w.closed || w.over != nil {
		return
	}
	n := len(w.trace.Entries)
	if n >= w.budget.Entries {
		w.exceed("entries", fmt.Sprintf("the trace reached %s %s; budget %s", thousands(int64(n)), pluralS(n, "entry"), thousands(int64(w.budget.Entries))))
		return
	}
	bound := lineBound(e, leftOut)
	if w.bound+bound > w.budget.Bytes { // near the budget: the exact size decides
		e.Seq, e.T = n+1, w.now
		if w.exactBytes()+fullLineSize(e, leftOut) > w.budget.Bytes {
			w.exceed("bytes", fmt.Sprintf("the trace in full reached %s bytes of JSON lines; budget %s", thousands(w.bytes), thousands(w.budget.Bytes)))
			return
		}
	}
	w.bound += bound
	if e.Link != nil {
		w.bytes += leftOut // the rest of its line is counted by exactBytes
	}
	w.appendEntry(e)
}

// recordEventEntry records an event entry, named name, of target and data, whose link leaves
// out leftOut bytes (recordInPlace).
func (w *world) recordEventEntry(name, target string, data json.RawMessage, link *trace.Link, leftOut int64) {
	w.recordInPlace(trace.KindEvent, name, target, data, nil, link, leftOut)
}

// recordCallEntry is recordEventEntry for a call's entry that holds no error, with its answer.
func (w *world) recordCallEntry(name, target string, data, answer json.RawMessage, link *trace.Link, leftOut int64) {
	w.recordInPlace(trace.KindCall, name, target, data, answer, link, leftOut)
}

// recordInPlace is recordEntry for an entry of kind with no error: its members stored in the
// trace's room as they are given (most of a run's entries are events and calls), not built
// into an entry first and copied from it; recordEntry when the trace has no room left or a
// budget is near.
func (w *world) recordInPlace(kind, name, target string, data, answer json.RawMessage, link *trace.Link, leftOut int64) {
	if w.closed || w.over != nil {
		return
	}
	n := len(w.trace.Entries)
	bound := membersBound(kind, name, target, "", data, answer, link, leftOut)
	if n >= w.budget.Entries || n == cap(w.trace.Entries) || w.bound+bound > w.budget.Bytes {
		w.recordEntry(&trace.Entry{Kind: kind, Name: name, Target: target, Data: data, Answer: answer, Link: link}, leftOut)
		return
	}
	w.bound += bound
	if link != nil {
		w.bytes += leftOut // the rest of its line is counted by exactBytes
	}
	w.storeNext(kind, name, target, "", data, answer, link)
}

// appendEntry appends e to the trace, at the next seq and the time now, its payloads
// canonical JSON (every payload the world records is).
func (w *world) appendEntry(e *trace.Entry) {
	n := len(w.trace.Entries)
	if n == cap(w.trace.Entries) {
		e.Seq, e.T, e.Canonical = n+1, w.now, true
		w.trace.Entries = append(w.trace.Entries, *e)
		return
	}
	w.storeNext(e.Kind, e.Name, e.Target, e.Error, e.Data, e.Answer, e.Link)
}

// storeNext stores an entry of these members in the trace's room, at the next seq and the time
// now, its payloads canonical JSON. They are stored one by one, the empty ones not at all, in
// the zeroed room the trace was made with: storing an entry whole copies it with the bulk write
// barrier over all seven pointers whenever the collector marks.
func (w *world) storeNext(kind, name, target, errText string, data, answer json.RawMessage, link *trace.Link) {
	n := len(w.trace.Entries)
	w.trace.Entries = w.trace.Entries[:n+1]
	p := &w.trace.Entries[n]
	p.Seq, p.T, p.Canonical = n+1, w.now, true
	p.Kind, p.Name, p.Data = kind, name, data
	if target != "" {
		p.Target = target
	}
	if answer != nil {
		p.Answer = answer
	}
	if link != nil {
		p.Link = link
	}
	if errText != "" {
		p.Error = errText
	}
}

// exactBytes is the size of the trace's JSON lines in full so far, the entries recorded since
// it was last asked counted now, each once (entries are measured only when the budget is
// near, not as they are recorded).
func (w *world) exactBytes() int64 {
	for i := w.sized; i < len(w.trace.Entries); i++ {
		w.bytes += trace.LineSizeUnlinked(&w.trace.Entries[i])
	}
	w.sized = len(w.trace.Entries)
	return w.bytes
}

// lineBound is at least fullLineSize(e, leftOut), counted without reading e's strings: a
// JSON string writes a byte as six at most (\u003c; an invalid byte as \ufffd, U+2028's three
// as \u2028), and seq and t take 20 bytes each at most.
func lineBound(e *trace.Entry, leftOut int64) int64 {
	return membersBound(e.Kind, e.Name, e.Target, e.Error, e.Data, e.Answer, e.Link, leftOut)
}

// membersBound is lineBound of an entry of these members.
func membersBound(kind, name, target, errText string, data, answer json.RawMessage, link *trace.Link, leftOut int64) int64 {
	n := lineFrame + 6*int64(len(kind)+len(name)+len(target)+len(errText)) + int64(len(data)+len(answer))
	if link != nil {
		n += leftOut
	}
	return n
}

// lineFrame is what lineBound counts of a line but its members' values.
const lineFrame = int64(len(`{"seq":,"t":,"kind":"","name":"","target":"","data":,"answer":,"error":""}`) + 1 + 2*20)

// fullLineSize is the size of e's line in the trace in full: its line without the link,
// with the leftOut bytes the link leaves out.
func fullLineSize(e *trace.Entry, leftOut int64) int64 {
	n := trace.LineSizeUnlinked(e)
	if e.Link != nil {
		n += leftOut
	}
	return n
}

// exceed stops the run on a budget: the trace ends with a fail entry naming it, and the
// world answers nothing more.
func (w *world) exceed(budget, text string) {
	if w.over != nil {
		return
	}
	w.over = &BudgetError{Budget: budget, Text: text}
	w.trace.Entries = append(w.trace.Entries, trace.Entry{Seq: len(w.trace.Entries) + 1, T: w.now, Kind: trace.KindFail, Name: "budget",
		Target: budget, Error: text})
}

func (w *world) fail(name, text string) {
	w.record(trace.Entry{Kind: trace.KindFail, Name: name, Error: text})
}

// Call implements Port.
func (w *world) Call(c Call) Answer {
	if w.closed || w.over != nil {
		return Answer{Error: "the simulation has ended"}
	}
	if c.Kind == trace.CallStream && w.requests >= w.budget.Requests {
		w.exceed("requests", fmt.Sprintf("the run made %s %s; budget %s", thousands(int64(w.requests)), pluralS(w.requests, "request"), thousands(int64(w.budget.Requests))))
		return Answer{Error: "the simulation has ended: " + w.over.Text}
	}
	var cd callData
	w.callData(&c, &cd)
	var a Answer
	switch c.Kind {
	case trace.CallStream:
		a = w.openStream(cd.data, c.Value)
	case trace.CallTool:
		a = w.startTool(cd.data, c.Value)
	case trace.CallHook:
		a = w.hook(c.Name, cd.full, c.Value != nil && len(c.Data) == 0)
	default:
		a = Answer{Error: fmt.Sprintf("unknown call kind %q", c.Kind)}
	}
	w.recordCall(&c, &cd, &a)
	return a
}

// callData is a call's data as the trace records it.
type callData struct {
	// full is the call's data; data what the trace's linear form writes of it, with its link
	// to what the trace holds already, and the lists to remember once the call is recorded.
	full, data json.RawMessage
	link       *trace.Link
	leftOut    int64 // the bytes link leaves out
	lists      []pendingList
	ctxName    string
}

// callData sets cd to c's data as the trace records it (filled in place: a call's data is
// worked out and recorded for every call of a run).
func (w *world) callData(c *Call, cd *callData) {
	cd.ctxName = contextName(c)
	if cd.ctxName != "" {
		cd.full, cd.data, cd.link, cd.leftOut, cd.lists = w.contextData(c, cd.ctxName, c.Kind == trace.CallHook)
	} else {
		cd.data = w.canonicalData(c.Data, c.Value)
		cd.full = cd.data
	}
}

// recordCall records call c, with data cd, answered a, and what follows from it.
func (w *world) recordCall(c *Call, cd *callData, a *Answer) {
	e := trace.Entry{Kind: trace.KindCall, Name: c.Kind, Data: cd.data, Link: cd.link, Error: a.Error}
	leftOut, lists := cd.leftOut, cd.lists
	switch c.Kind {
	case trace.CallHook:
		e.Name = c.Name
		if a.Wait != "" || a.UntilAbort {
			e.Target = a.waitTarget()
		}
	case trace.CallStream:
		e.Target = strconv.Itoa(w.requests)
	}
	if len(a.Data) > 0 {
		answer := a.Data
		// The world's own answers to a request, a tool call and an empty queue's poll are
		// canonical already.
		if c.Kind != trace.CallStream && c.Kind != trace.CallTool && !bytes.Equal(answer, noMessages) {
			answer = jsonvalue.Canonical(answer)
		}
		e.Answer = answer
		if cd.ctxName != "" { // only a context call's answer holds a list (answerData)
			var answerList []pendingList
			var answerLeftOut int64
			e.Answer, e.Link, answerLeftOut, answerList = w.answerData(cd.ctxName, answer, e.Link)
			lists = append(lists, answerList...)
			leftOut += answerLeftOut
		}
	}
	if e.Error == "" {
		w.recordCallEntry(e.Name, e.Target, e.Data, e.Answer, e.Link, leftOut)
	} else {
		w.recordEntry(&e, leftOut)
	}
	if len(lists) > 0 {
		w.remember(len(w.trace.Entries), lists)
		if cd.ctxName == trace.CallStream {
			w.giveBack(lists) // remembered: their room serves the next request (streamCallData)
		}
	}
	if a.Abort {
		// The hook aborts the run before it returns (PROTOCOL.md §13.5).
		w.record(trace.Entry{Kind: trace.KindUser, Name: "abort"})
		w.reactToAbort()
	}
	w.afterCall(c)
}

// Notify implements Port.
func (w *world) Notify(n Notification) {
	if w.closed || w.over != nil {
		return
	}
	switch n.Kind {
	case NotifyEvent:
		if ev, ok := n.Value.(loop.Event); ok && len(n.Data) == 0 {
			w.event(&ev)
			return
		}
		data, top := jsonvalue.CanonicalWith(n.Data, true, &w.memo)
		typ, id := loop.EventType(top["type"]), top["toolCallId"]
		var link *trace.Link
		var leftOut int64
		var msg messageAt
		switch typ {
		case loop.MessageUpdate:
			data, link, leftOut = w.linkUpdateJSON(data)
		case loop.AgentEnd:
			data, link, leftOut = w.linkRunMessagesJSON(data)
		case loop.MessageStart, loop.MessageEnd, loop.TurnEnd:
			data, link, leftOut, msg = w.linkMessageJSON(typ, data)
		}
		w.recordEvent(typ, id, data, link, leftOut, &msg)
	case NotifyEnd:
		data, link, leftOut := w.endData(n.Data, n.Value)
		var end struct {
			Error string `json:"error"`
		}
		if m, ok := n.Value.(map[string]any); ok && len(n.Data) == 0 {
			end.Error, _ = m["error"].(string) // in-process: no need to decode the messages
		} else {
			_ = json.Unmarshal(data, &end)
		}
		w.recordLinked(trace.Entry{Kind: trace.KindEnd, Name: "run", Data: data, Link: link, Error: end.Error}, leftOut)
		w.ended = true
		if w.agent != nil {
			w.fail("protocol", "an end notification in an Agent scenario: an Agent session has no end (its runs settle their prompts; PROTOCOL.md §13.2)")
		}
	case NotifyOutcome:
		var value any
		if len(n.Data) == 0 {
			value = n.Value // in-process: its fields are read without decoding the state
		}
		w.outcome(w.canonicalData(n.Data, n.Value), value)
	default:
		w.fail("protocol", fmt.Sprintf("unknown notification kind %q", n.Kind))
	}
}

// event records a loop event given as a value (Notify, and the in-process reference directly,
// without boxing the event).
func (w *world) event(ev *loop.Event) {
	if w.closed || w.over != nil {
		return
	}
	var data json.RawMessage
	var link *trace.Link
	var leftOut int64
	var msg messageAt
	switch ev.Type {
	case loop.MessageUpdate:
		data, link, leftOut = w.updateData(ev)
	case loop.MessageStart, loop.MessageEnd, loop.TurnEnd:
		data, link, leftOut = w.messageData(ev, &msg)
	case loop.AgentEnd:
		data, link, leftOut = w.runMessagesData(nonNil(ev.Messages), func(b []byte, msgs []loop.Message) []byte {
			o := open(b)
			o = o.key("messages")
			o.b = w.enc.messages(o.b, msgs)
			o = o.str("type", string(loop.AgentEnd))
			return o.close()
		})
	case loop.AgentStart:
		data = agentStartData
	case loop.TurnStart:
		data = turnStartData
	default:
		data = w.enc.eventBytes(ev)
	}
	w.recordEvent(ev.Type, ev.ToolCallID, data, link, leftOut, &msg)
}

// agentStartData and turnStartData are the data of the events that hold nothing but their
// type, shared.
var (
	agentStartData = constant(`{"type":"agent_start"}`)
	turnStartData  = constant(`{"type":"turn_start"}`)
)

// recordEvent records an event entry, whose link leaves out leftOut bytes, and what follows
// from it; msg is the message of a message_start or message_end event.
func (w *world) recordEvent(typ loop.EventType, id string, data json.RawMessage, link *trace.Link, leftOut int64, msg *messageAt) {
	w.recordEventEntry(string(typ), id, data, link, leftOut)
	if typ == loop.MessageStart || typ == loop.MessageEnd {
		w.messageRecorded(typ, msg, link != nil)
	}
	w.eventRecorded(typ, id)
}

// eventRecorded is what follows from an event of type typ, of tool call id, once recorded:
// an Agent session's progress, and the triggers it fires.
func (w *world) eventRecorded(typ loop.EventType, id string) {
	if w.agent != nil {
		w.agentEvent(typ)
	}
	if len(w.sc.User) > 0 { // else no trigger to match
		w.fireTriggers(func(t *Trigger) bool {
			return t.Event == typ && (t.ToolCallID == "" || t.ToolCallID == id)
		})
	}
}

// canonicalData is the canonical form of a payload given as JSON or, in-process, as a value.
func (w *world) canonicalData(data json.RawMessage, value any) json.RawMessage {
	if len(data) == 0 && value != nil {
		return w.enc.valueBytes(value)
	}
	out, _ := jsonvalue.CanonicalWith(data, false, &w.memo)
	return out
}

// afterCall fires the triggers a call matches, once it is recorded.
func (w *world) afterCall(c *Call) {
	if len(w.sc.User) == 0 {
		return // no trigger to match
	}
	switch c.Kind {
	case trace.CallStream:
		n := w.requests
		w.fireTriggers(func(t *Trigger) bool { return t.Request == n && t.Request > 0 })
	case trace.CallHook:
		w.fireTriggers(func(t *Trigger) bool { return t.Hook == c.Name })
	}
}

func (w *world) fireTriggers(match func(*Trigger) bool) {
	for i, a := range w.sc.User {
		if a.On == nil || w.fired[i] || !match(a.On) {
			continue
		}
		w.triggerSeen[i]++
		if w.triggerSeen[i] < max(a.On.Nth, 1) {
			continue
		}
		w.fired[i] = true
		if w.agent != nil {
			w.scheduleOps(i)
			continue
		}
		if a.Abort {
			// An abort reaches the implementation as a delivery, once it is idle, whichever
			// port it uses.
			w.scheduleAbort(w.now)
		}
		w.enqueue(i)
	}
}

// perform carries out a timed user action.
func (w *world) perform(i int) {
	w.fired[i] = true
	if w.agent != nil {
		w.scheduleOps(i)
		return
	}
	if w.sc.User[i].Abort {
		w.scheduleAbort(w.now)
	}
	w.enqueue(i)
}

func (w *world) enqueue(i int) {
	a := w.sc.User[i]
	if len(a.Steer) > 0 {
		w.steering.Enqueue(a.Steer...)
		w.record(trace.Entry{Kind: trace.KindUser, Name: "steer", Data: w.enc.valueBytes(a.Steer)})
	}
	if len(a.FollowUp) > 0 {
		w.followUp.Enqueue(a.FollowUp...)
		w.record(trace.Entry{Kind: trace.KindUser, Name: "followUp", Data: w.enc.valueBytes(a.FollowUp)})
	}
}

func (w *world) scheduleAbort(t int64) {
	s := w.at(t, Delivery{Kind: trace.DeliverAbort})
	s.onRelease = w.reactToAbort
}

// reactToAbort makes open streams and abort-honouring tools settle now.
func (w *world) reactToAbort() {
	w.aborted = true
	for _, s := range w.streams {
		if s.finished || s.resp.IgnoresAbort {
			continue
		}
		for _, p := range s.pending {
			p.cancelled = true
		}
		s.pending = nil
		s.stop()
		ev := abortedEvent(s.partialSoFar())
		w.pushStreamEvent(s, w.now, &ev)
	}
	for _, t := range w.tools {
		if t.finished || t.b.OnAbort == nil {
			continue
		}
		for _, p := range t.pending {
			p.cancelled = true
		}
		t.pending = nil
		w.settleTool(t, w.now, t.b.OnAbort.Result, t.b.OnAbort.Throw, "")
	}
}

// release prepares a popped delivery: updates the world's side of it and records it.
func (w *world) release(s *scheduled) {
	if s.onRelease != nil {
		s.onRelease()
	}
	if s.stream != nil {
		s.stream.released(s)
		w.scheduleNext(s.stream)
	}
	if s.tool != nil {
		s.tool.released(s)
	}
	// The world wrote the delivery's data canonically itself.
	data, link, leftOut, partial := w.deliveryData(s)
	w.recordLinked(trace.Entry{Kind: trace.KindDeliver, Name: s.delivery.Kind, Target: s.delivery.Target, Data: data, Link: link}, leftOut)
	w.delivered(s, len(w.trace.Entries), partial, int64(len(data))+leftOut)
}

// releaseEventFor releases the earliest happening when it is an event of stream id that the
// run's loop (run) would release next: no end, no budget reached, nothing internal or
// cancelled first, not beyond the time budget, not an Agent session. The in-process
// reference's task waiting on that stream takes it itself, as the driver would have
// delivered it (the same entries, in the same order), without two switches of coroutine.
// nil when the driver must take the next step.
func (w *world) releaseEventFor(r *Reference, id string) *scheduled {
	s := w.releasable(r)
	if s == nil || s.event == nil || s.delivery.Target != id {
		return nil
	}
	return w.releaseTop(s)
}

// releaseResultFor is releaseEventFor for the update or result of tool call id, given as a
// value (a tool that throws or resolves nothing is left to the driver).
func (w *world) releaseResultFor(r *Reference, id string) *scheduled {
	s := w.releasable(r)
	if s == nil {
		return nil
	}
	if _, value := s.delivery.Value.(loop.ToolResult); !value || s.delivery.Target != id ||
		(s.delivery.Kind != trace.DeliverToolUpdate && s.delivery.Kind != trace.DeliverToolResult) {
		return nil
	}
	return w.releaseTop(s)
}

// releasable is the earliest happening when the run's loop would release it next, for r,
// the run's implementation itself, to take (releaseEventFor); nil otherwise.
func (w *world) releasable(r *Reference) *scheduled {
	if w.ref != r || w.closed || w.ended || w.over != nil || w.agent != nil || len(w.schedule) == 0 {
		return nil
	}
	s := w.schedule[0]
	if s.cancelled || s.internal != nil || s.at > w.budget.Time {
		return nil
	}
	return s
}

// releaseTop releases s, the earliest happening (releasable).
func (w *world) releaseTop(s *scheduled) *scheduled {
	w.schedule.pop()
	w.now = s.at
	w.release(s)
	return s
}

// delivery is s's delivery as an implementation is given it, with its Value.
func (s *scheduled) valueFor() Delivery {
	d := s.delivery
	if s.event != nil {
		d.Value = *s.event
	}
	return d
}

// setup is what the implementation is told about the scenario.
func (w *world) setup() (Setup, error) {
	sc := w.sc
	model := sc.Model
	switch {
	case sc.Agent != nil && sc.Agent.DefaultModel:
		model = loop.Model{} // left out: the Agent's own default
	case model == (loop.Model{}):
		model = DefaultModel
	}
	s := Setup{
		Scenario:      sc.Name,
		Model:         ModelSetup{ID: model.ID, API: model.API, Provider: model.Provider},
		ThinkingLevel: string(orOff(sc.ThinkingLevel)),
		APIKey:        sc.APIKey,
		ToolExecution: string(orDefault(sc.ToolExecution, loop.Parallel)),
		Hooks:         sc.Hooks.Installed(),
		Entry:         "run",
		StreamOptions: sc.StreamOptions,
		SessionID:     sc.SessionID,
		Identity:      sc.Identity,
		Messages:      []json.RawMessage{},
		Tools:         []ToolSetup{},
		ActiveTools:   []string{},
	}
	if sc.Continue {
		s.Entry = EntryContinue
	}
	if sc.RunToolCall {
		s.Entry = EntryRunToolCall
	}
	if sc.Agent != nil {
		s.Entry, s.Agent = EntryAgent, sc.agentSetup()
		s.Hooks = slices.DeleteFunc(s.Hooks, func(h string) bool { return h == trace.HookSteering || h == trace.HookFollowUp })
	}
	for _, m := range sc.Messages {
		raw, err := loop.MarshalMessage(m)
		if err != nil {
			return s, fmt.Errorf("scenario %s: initial message: %w", sc.Name, err)
		}
		s.Messages = append(s.Messages, raw)
	}
	if !sc.Continue && !sc.RunToolCall && sc.Agent == nil {
		s.Prompts = []json.RawMessage{}
		for _, m := range sc.Prompts {
			raw, err := loop.MarshalMessage(m)
			if err != nil {
				return s, fmt.Errorf("scenario %s: prompt: %w", sc.Name, err)
			}
			s.Prompts = append(s.Prompts, raw)
		}
	}
	for _, t := range sc.Tools {
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object"}
		}
		s.Tools = append(s.Tools, ToolSetup{
			Name: t.Name, Description: t.Description, Parameters: params,
			ExecutionMode: string(t.ExecutionMode), PrepareArguments: t.PrepareArguments,
		})
		if !t.Inactive {
			s.ActiveTools = append(s.ActiveTools, t.Name)
		}
	}
	return s, nil
}

func orOff(l loop.ThinkingLevel) loop.ThinkingLevel {
	if l == "" {
		return loop.ThinkingOff
	}
	return l
}

func orDefault[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}
