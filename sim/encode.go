package sim

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unsafe"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// appendCanonical appends the canonical JSON of v — exactly jsonvalue.Canonical(json.Marshal(v)) —
// without reflection for the loop's types, which make up nearly all of a  Members are
// written in sorted key order by construction; TestValuesAndJSONGiveTheSameTrace keeps this
// in step with the types' MarshalJSON.
func appendCanonical(b []byte, v any) []byte { return (*encoder)(nil).value(b, v) }

// encoder writes canonical JSON like appendCanonical, remembering the encoding of each
// transcript message it writes as part of a list of messages (a context, a run's new
// messages), by identity: a run's requests send ever longer contexts of the same messages, and
// each is then encoded once. Messages are not changed once they are in a transcript (pi's
// append-only rule); TestValuesAndJSONGiveTheSameTrace compares every curated and many
// generated runs with their encoding from JSON. A nil *encoder remembers nothing.
type encoder struct {
	memo memoTable
	// writing is set while sized writes (a write it makes meanwhile, nested, gets a buffer
	// of its own); pending are the messages the write has put in the memo's place so far, by
	// their offsets in it, remembered once the write is over and its bytes are where they stay.
	writing bool
	nested  int
	pending []pendingMemo
	// arena is the chunk that sized writes into, one entry after the other: a run records
	// thousands of entries, and a chunk is one allocation for hundreds of them, written in
	// place and never copied.
	arena []byte
	// spent is what the arena's earlier chunks hold; entries, when set, is the trace the
	// arena's bytes go to, whose room (made for the entries expected) says how many more
	// entries the run will record (nextChunk).
	spent   int
	entries *[]trace.Entry
	// room, when set, gives the arena its chunks (RunIn).
	room *Room
	// heads writes the assistant messages of stream events and of the transcript.
	heads *headCache
	// frame is the last stream call's JSON around its messages (streamCallWith).
	frame callFrame
	// result is the last tool result written and its JSON (toolResult), none when its JSON
	// is empty (its room outlives a run, release).
	result lastResult
	// ids are the last toolCallId and toolName pairs written and their members' JSON
	// (toolIDs), each at its id's slot (idSlot).
	ids [4]toolIDsJSON
}

// idSlot is where a cache of four entries keeps what it remembers of tool call id: the ids
// of a run's parallel calls mostly differ in their first or last byte.
func idSlot(id string) int {
	if id == "" {
		return 0
	}
	return int(id[0]+5*id[len(id)-1]) & 3
}

// lastResult is a tool result written and its JSON.
type lastResult struct {
	r   loop.ToolResult
	enc []byte
}

// toolIDsJSON is a toolCallId and toolName pair and the JSON of their members, none when its
// JSON is empty (its room outlives a run, release).
type toolIDsJSON struct {
	id, name string
	enc      []byte
}

// toolResult writes r (appendToolResult), from the last one's JSON when it holds the same bits:
// a tool's executions mostly settle with the same result (its script's), which its end event
// reports again, and the values it shares are never changed once written.
func (e *encoder) toolResult(b []byte, r *loop.ToolResult) []byte {
	if e == nil {
		return appendToolResult(b, r)
	}
	if len(e.result.enc) > 0 && identicalResults(&e.result.r, r) {
		return append(b, e.result.enc...)
	}
	start := len(b)
	b = appendToolResult(b, r)
	e.result.r = *r
	e.result.enc = append(e.result.enc[:0], b[start:]...)
	return b
}

// toolResultMessage writes a tool result message (appendMessage); e, when not nil, writes its
// content and details from the last tool result's JSON when the message holds that result's
// (the loop makes the message of the result it reports), and its ids through toolIDs.
func (e *encoder) toolResultMessage(b []byte, x *loop.ToolResultMessage) []byte {
	var o obj
	if head := e.resultHead(x.Content, x.Details); head != nil {
		o = obj{b: append(b, head...)} // {"content":…,"details":…
	} else {
		o = open(b)
		o = o.key("content")
		if x.Content == nil {
			o.b = append(o.b, "[]"...)
		} else {
			o.b = appendBlocks(o.b, x.Content)
		}
		if x.Details != nil {
			o = o.any("details", x.Details)
		}
	}
	if x.DurationMs != nil {
		o = o.num("durationMs", *x.DurationMs)
	}
	o = o.boolean("isError", x.IsError)
	o = o.lit(roleToolResult)
	o = o.num("timestamp", x.Timestamp)
	o = e.toolIDs(o, x.ToolCallID, x.ToolName)
	if x.Usage != nil {
		o = o.key("usage")
		o.b = appendUsage(o.b, x.Usage)
	}
	return o.close()
}

// resultHead is the JSON of an object's content and details members, {"content":…,"details":…
// without its end, taken from the last tool result written when its content and details are
// these (the same slice and value, by their words) and it has no other member; nil when not.
func (e *encoder) resultHead(content []loop.Block, details any) []byte {
	if e == nil || len(e.result.enc) == 0 || content == nil || details == nil {
		return nil
	}
	r := &e.result.r
	if r.IsError || r.StructuredContent != nil || r.Terminate || r.TerminateSet || r.Usage != nil ||
		!identicalBlockSlices(r.Content, content) ||
		*(*ifaceWords)(unsafe.Pointer(&r.Details)) != *(*ifaceWords)(unsafe.Pointer(&details)) {
		return nil
	}
	return e.result.enc[:len(e.result.enc)-1] // {"content":…,"details":…}, its brace left off
}

// identicalBlockSlices reports whether a and b are the same slice: the same array, length
// and capacity.
func identicalBlockSlices(a, b []loop.Block) bool {
	return len(a) == len(b) && cap(a) == cap(b) && (len(a) == 0 || &a[0] == &b[0]) && (a == nil) == (b == nil)
}

// toolIDs writes the toolCallId and toolName members, from a recent pair's JSON when they
// are the same strings: an execution's start and end events, its call and its result
// message all name them, and parallel executions interleave (a pair kept at idSlot).
func (e *encoder) toolIDs(o obj, id, name string) obj {
	if e == nil {
		return o.str("toolCallId", id).str("toolName", name)
	}
	c := &e.ids[idSlot(id)]
	if len(c.enc) == 0 || !eqStr(c.id, id) || !eqStr(c.name, name) {
		if c.enc == nil { // its room made once, not grown member by member
			c.enc = make([]byte, 0, len(`"toolCallId":,"toolName":`)+jsonvalue.StringSize(id)+jsonvalue.StringSize(name)+16)
		}
		ids := obj{b: c.enc[:0], first: true}.str("toolCallId", id).str("toolName", name)
		c.id, c.name, c.enc = id, name, ids.b
	}
	return o.litBytes(c.enc)
}

// identicalResults reports whether a and b hold the same bits (padding included, which can
// only make it false): then they write the same JSON.
func identicalResults(a, b *loop.ToolResult) bool {
	x := unsafe.Slice((*byte)(unsafe.Pointer(a)), unsafe.Sizeof(*a))
	y := unsafe.Slice((*byte)(unsafe.Pointer(b)), unsafe.Sizeof(*b))
	return bytes.Equal(x, y)
}

// headsOrNil is e's head cache, nil for a nil encoder.
func (e *encoder) headsOrNil() *headCache {
	if e == nil {
		return nil
	}
	return e.heads
}

// headCache remembers how the last few assistant messages written read around their content:
// a stream's partials, its final message and the message the loop ends it with share all
// their other fields, and a run's streams mostly do too, so each is written once and its
// bytes copied after, only the content written each time.
type headCache struct {
	heads [4]loop.AssistantMessage // content left out
	// before and after are a head's JSON up to its content's value, and from after it.
	before, after [4][]byte
	n, next       int
	// calls are the last tool call blocks written, in a content or a toolcall_end event, with
	// their JSON, each at its id's slot (idSlot): a streamed call's end, the partials after,
	// the response's final message and the message the loop ends with all hold it (toolCall).
	calls [4]callJSON
	// args is the JSON of the arguments of the last calls written (argsCache).
	args argsCache
}

// argsCache remembers the JSON of the arguments maps of the last tool calls written, by the
// map's identity, with the call's id: a call's arguments are written again in the partials and
// messages that hold it, its tool_execution_start and its tool call, and a map is not changed
// once a call holding it is written (sameCallJSON). The maps kept stay alive, so an address
// is never another map's.
type argsCache struct {
	ids  [8]string
	maps [8]map[string]any
	enc  [8][]byte
	next int
}

// json is the JSON of m, the arguments (not empty) of tool call id: remembered when the same
// map was written before, else written and remembered. The bytes are the cache's, to copy.
func (c *argsCache) json(id string, m map[string]any) []byte {
	for i := range c.maps {
		if c.maps[i] != nil && sameMap(c.maps[i], m) {
			return c.enc[i]
		}
	}
	i := c.next
	c.next = (i + 1) % len(c.maps)
	c.ids[i], c.maps[i] = id, m
	c.enc[i] = jsonvalue.AppendMap(c.enc[i][:0], m, appendCanonical)
	return c.enc[i]
}

// callArguments writes a tool call's arguments m (not empty), through the cache when h is not
// nil.
func (h *headCache) callArguments(b []byte, id string, m map[string]any) []byte {
	if h == nil {
		return jsonvalue.AppendMap(b, m, appendCanonical)
	}
	return append(b, h.args.json(id, m)...)
}

// knownArguments writes args, the arguments an execution of tool call id is given (which may
// be nil), from a call's arguments' JSON when they are the same map, or the same scalars as call
// id's (the loop's validated copy of them: then the same JSON); else written, not remembered.
func (h *headCache) knownArguments(b []byte, id string, args map[string]any) []byte {
	if h != nil && len(args) > 0 {
		c := &h.args
		for i := range c.maps {
			if m := c.maps[i]; m != nil && (sameMap(m, args) || c.ids[i] == id && sameScalarMaps(m, args)) {
				return append(b, c.enc[i]...)
			}
		}
	}
	return appendCanonical(b, args)
}

// sameScalarMaps reports whether a and b hold the same keys with equal strings, numbers,
// booleans or nulls, which write the same JSON; false when either holds any other value.
func sameScalarMaps(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || !sameScalar(x, y) {
			return false
		}
	}
	return true
}

// sameScalar reports whether x and y are the same string, float64 (0 and -0 both write 0),
// bool or nil; false for any other value.
func sameScalar(x, y any) bool {
	switch x := x.(type) {
	case nil:
		return y == nil
	case string:
		s, ok := y.(string)
		return ok && x == s
	case float64:
		f, ok := y.(float64)
		return ok && x == f
	case bool:
		v, ok := y.(bool)
		return ok && x == v
	}
	return false
}

// assistant writes m's canonical JSON (appendMessage), its head from the cache when a head
// remembered has the same bits (identicalHeads: then the same JSON); nil h remembers nothing.
func (h *headCache) assistant(b []byte, m *loop.AssistantMessage) []byte {
	if h == nil {
		return appendMessage(b, m)
	}
	for i := range h.n {
		if mayBeIdentical(m, &h.heads[i]) && identicalHeads(m, &h.heads[i]) {
			b = append(b, h.before[i]...)
			b = h.content(b, m.Content)
			return append(b, h.after[i]...)
		}
	}
	start := len(b)
	var at [2]int
	b = appendAssistant(b, m, &at)
	i := h.next
	h.next = (h.next + 1) % len(h.heads)
	h.n = max(h.n, i+1)
	h.heads[i] = *m
	h.heads[i].Content = nil
	h.before[i] = append(h.before[i][:0], b[start:start+at[0]]...)
	h.after[i] = append(h.after[i][:0], b[start+at[1]:]...)
	return b
}

// memoTable maps messages of the memoable types, by identity (their two words), to their
// encodings: a table of open addressing hashed on the message's address, where a map keyed
// by the interface hashes its type and value through the runtime at every look-up (several
// a message: it is written once, then met again in the next context and the run's end).
// Its keys keep their messages alive, as a map's would.
type memoTable struct {
	keys  []ifaceWords // the zero key: an empty slot (a memoable message has a type word)
	vals  [][]byte
	n     int
	shift uint // 64 minus log2(len(keys))
}

// memoSize is the size of a memo's tables with room for n messages.
func memoSize(n int) int {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return size
}

// init makes room for n messages.
func (t *memoTable) init(n int) {
	size := memoSize(n)
	t.keys, t.vals, t.n = make([]ifaceWords, size), make([][]byte, size), 0
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
}

// slot is where the search for key k starts.
func (t *memoTable) slot(k ifaceWords) int {
	return int((uint64(uintptr(k.data)) * 0x9e3779b97f4a7c15) >> t.shift)
}

// get is m's encoding, if the table holds it.
func (t *memoTable) get(m loop.Message) ([]byte, bool) {
	if len(t.keys) == 0 {
		return nil, false
	}
	k, mask := messageWords(m), len(t.keys)-1
	for i := t.slot(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			return t.vals[i], true
		case ifaceWords{}:
			return nil, false
		}
	}
}

// set makes enc m's encoding; m is of a memoable type.
func (t *memoTable) set(m loop.Message, enc []byte) {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	k, mask := messageWords(m), len(t.keys)-1
	i := t.slot(k)
	for t.keys[i] != k && t.keys[i] != (ifaceWords{}) {
		i = (i + 1) & mask
	}
	if t.keys[i] != k {
		t.keys[i] = k
		t.n++
	}
	t.vals[i] = enc
}

// grow doubles the table's room, its entries placed again.
func (t *memoTable) grow() {
	keys, vals := t.keys, t.vals
	t.init(max(len(keys), 8)) // twice the room: init doubles what it is asked for
	mask := len(t.keys) - 1
	for j, k := range keys {
		if k == (ifaceWords{}) {
			continue
		}
		i := t.slot(k)
		for t.keys[i] != (ifaceWords{}) {
			i = (i + 1) & mask
		}
		t.keys[i], t.vals[i] = k, vals[j]
		t.n++
	}
}

// callJSON is a tool call written, the words of the block it was last met boxed in (none for
// an event's call), and its JSON; none when its JSON is empty (its room outlives a run,
// release).
type callJSON struct {
	call loop.ToolCall
	box  ifaceWords
	enc  []byte
}

// content writes an assistant message's content (appendAssistantContent), its tool calls
// through toolCall.
func (h *headCache) content(b []byte, content []loop.Block) []byte {
	if content == nil {
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for i, blk := range content {
		if i > 0 {
			b = append(b, ',')
		}
		if x, ok := blk.(loop.ToolCall); ok {
			b = h.toolCall(b, &x, *(*ifaceWords)(unsafe.Pointer(&content[i])))
		} else {
			b = appendBlock(b, blk)
		}
	}
	return append(b, ']')
}

// toolCall writes a tool call block (appendToolCall), met in box (none: zero), from the JSON of
// the one remembered at its id's slot when it is the same boxed block (a copied message's) or
// the same call (sameCallJSON); else written and remembered there.
func (h *headCache) toolCall(b []byte, x *loop.ToolCall, box ifaceWords) []byte {
	c := &h.calls[idSlot(x.ID)]
	if len(c.enc) > 0 && (box.typ != nil && c.box == box || sameCallJSON(&c.call, x)) {
		if box.typ != nil {
			c.box = box
		}
		return append(b, c.enc...)
	}
	start := len(b)
	b = appendToolCallWith(b, x, h)
	c.call, c.box = *x, box
	c.enc = append(c.enc[:0], b[start:]...)
	return b
}

// sameCallJSON reports whether two tool calls write the same JSON as far as their fields
// tell: the same strings, and the same arguments map or none on either side (nil or empty,
// both {}); a map is not changed once a call holding it is written.
func sameCallJSON(a, b *loop.ToolCall) bool {
	return eqStr(a.ID, b.ID) && eqStr(a.Name, b.Name) && eqStr(a.ThoughtSignature, b.ThoughtSignature) &&
		eqStr(a.Namespace, b.Namespace) && eqStr(a.ArgumentsError, b.ArgumentsError) &&
		(len(a.Arguments) == 0 && len(b.Arguments) == 0 || sameMap(a.Arguments, b.Arguments))
}

// mayBeIdentical is false when a and b differ in fields that tell a stream's partials, its
// final message and the loop's copy of it apart (stop reason, thinking level, timestamp),
// compared cheaply: then identicalHeads is false too, and its comparison of the whole
// heads is left out.
func mayBeIdentical(a, b *loop.AssistantMessage) bool {
	return a.Timestamp == b.Timestamp && len(a.ThinkingLevel) == len(b.ThinkingLevel) && len(a.StopReason) == len(b.StopReason) &&
		(len(a.StopReason) == 0 || a.StopReason[0] == b.StopReason[0])
}

// pendingMemo is a message written at offsets start to end of the write in progress.
type pendingMemo struct {
	m          loop.Message
	start, end int
}

// arenaChunk is the largest size of an encoder's arena chunks. The first chunk is firstChunk
// and each next one twice the last: a generated run records a few kilobytes, a long one
// megabytes. A write starts in a new chunk when fewer than arenaReserve bytes are left of the
// last; a write that outgrows its chunk moves, by append, to a buffer of its own.
const (
	arenaChunk   = 32 << 10
	firstChunk   = 2 << 10
	arenaReserve = 512
)

// eventBytes is e's canonical JSON, in a slice of its own.
func (enc *encoder) eventBytes(e *loop.Event) []byte {
	return enc.sized(func(b []byte) []byte { return enc.event(b, e) })
}

// valueBytes is v's canonical JSON, in a slice of its own.
func (e *encoder) valueBytes(v any) []byte {
	if m, ok := v.(map[string]any); ok && m != nil && len(m) == 0 {
		return emptyObject // a queue's poll
	}
	return e.sized(func(b []byte) []byte { return e.value(b, v) })
}

// sized is what write appends to an empty buffer, in a slice of just that length (and
// capacity: an append to it copies), written in place at the end of the arena (a trace entry
// is written once and kept).
func (e *encoder) sized(write func([]byte) []byte) []byte {
	if e.writing {
		e.nested++
		b := write(nil)
		e.nested--
		return b
	}
	if cap(e.arena)-len(e.arena) < arenaReserve {
		e.arena = e.newChunk(e.nextChunk())
	}
	start := len(e.arena)
	tail := e.arena[start:start]
	e.writing = true
	b := write(tail)
	e.writing = false
	if len(b) > 0 && cap(b) == cap(tail) && &b[0] == &tail[:1][0] {
		e.arena = e.arena[:start+len(b)] // written in place
	}
	out := b[:len(b):len(b)]
	if len(e.pending) > 0 {
		for _, p := range e.pending {
			e.memo.set(p.m, out[p.start:p.end:p.end])
		}
		clear(e.pending)
		e.pending = e.pending[:0]
	}
	return out
}

// kept is a copy of p in a slice of its own: in the arena when p is small and no write is in
// progress (which writes at the arena's end).
func (e *encoder) kept(p []byte) []byte {
	n := len(p)
	if n == 0 || n > arenaChunk/4 || e.writing {
		return append(make([]byte, 0, n), p...)
	}
	if len(e.arena)+n > cap(e.arena) {
		size := e.nextChunk()
		for size < n {
			size *= 2
		}
		e.arena = e.newChunk(size)
	}
	start := len(e.arena)
	e.arena = append(e.arena, p...)
	return e.arena[start:len(e.arena):len(e.arena)] // full: an append to it copies
}

// newChunk is a new chunk of the arena, of size bytes, the last one's bytes counted as spent:
// the room's, when the run has one.
func (e *encoder) newChunk(size int) []byte {
	e.spent += len(e.arena)
	if e.room != nil {
		return e.room.chunk(size)
	}
	return make([]byte, 0, size)
}

// nextChunk is the size of the arena's next chunk: twice the last, from firstChunk up to
// arenaChunk, but no more than the entries the run is expected to record yet take at the
// rate the earlier ones took (and a reserve), so that the last chunk is not mostly left
// unused.
func (e *encoder) nextChunk() int {
	size := min(arenaChunk, max(firstChunk, 2*cap(e.arena)))
	if e.entries != nil {
		done, left := len(*e.entries), cap(*e.entries)-len(*e.entries)
		if spent := e.spent + len(e.arena); done > 0 && left > 0 {
			size = max(firstChunk, min(size, spent*left/done+arenaReserve))
		}
	}
	return size
}

// emptyObject is the canonical JSON of an empty object, shared (constant).
var emptyObject = constant(`{}`)

// constant is the bytes of s to share between entries, full (an append to them copies): an
// entry's data is read, never written.
func constant(s string) []byte {
	b := []byte(s)
	return b[:len(b):len(b)]
}

func newEncoder() *encoder { return newEncoderFor(0) }

// encoders keeps the encoders of runs that are over (release) for the next runs: their memo's
// tables, buffers and the room left in their arena's last chunk are a run's to reuse.
var encoders sync.Pool

// newEncoderFor is an encoder whose memo has room for messages: one a run gave back, when
// its memo's room is about that, or a new one.
func newEncoderFor(messages int) *encoder {
	if e, ok := encoders.Get().(*encoder); ok {
		if size := memoSize(messages); len(e.memo.keys) < size || len(e.memo.keys) > 4*size {
			e.memo.init(messages)
		}
		return e
	}
	return newFreshEncoder(messages)
}

// newFreshEncoder is an encoder that no run has used, its memo with room for messages.
func newFreshEncoder(messages int) *encoder {
	e := &encoder{heads: &headCache{}}
	e.memo.init(messages)
	return e
}

// release gives the encoder to a later run (newEncoderFor), once its run is over and writes
// nothing more: it forgets all it remembered, keeping its room (the memo's tables, the heads'
// buffers, the arena's last chunk, whose bytes written are the trace's and stay as they are;
// but not a room's chunk, which its room's next run writes over).
func (e *encoder) release() {
	clear(e.memo.keys)
	clear(e.memo.vals)
	e.memo.n = 0
	clear(e.pending)
	h := e.heads
	calls := h.calls
	for i := range calls {
		calls[i] = callJSON{enc: calls[i].enc[:0]}
	}
	*h = headCache{before: h.before, after: h.after, calls: calls}
	ids := e.ids
	for i := range ids {
		ids[i] = toolIDsJSON{enc: ids[i].enc[:0]}
	}
	arena := e.arena[len(e.arena):]
	if e.room != nil {
		arena = nil
	}
	*e = encoder{memo: e.memo, pending: e.pending[:0], arena: arena, heads: h, ids: ids,
		result: lastResult{enc: e.result.enc[:0]}}
	encoders.Put(e)
}

// messages writes a list of messages, each from the memo when it has been written before.
func (e *encoder) messages(b []byte, list []loop.Message) []byte {
	if e == nil {
		return jsonvalue.AppendList(b, list, appendMessage)
	}
	size := len(list) + 2
	for _, m := range list {
		if memoable(m) {
			enc, _ := e.memo.get(m)
			size += len(enc)
		}
	}
	return jsonvalue.AppendList(slices.Grow(b, size), list, e.message)
}

// message writes m, remembering its encoding when it is one of the loop's message types.
func (e *encoder) message(b []byte, m loop.Message) []byte {
	if !memoable(m) {
		return appendMessage(b, m)
	}
	if enc, ok := e.memo.get(m); ok {
		return append(b, enc...)
	}
	start := len(b)
	if a, ok := m.(*loop.AssistantMessage); ok && a != nil {
		b = e.heads.assistant(b, a)
	} else if r, ok := m.(*loop.ToolResultMessage); ok && r != nil {
		b = e.toolResultMessage(b, r)
	} else {
		b = appendMessage(b, m)
	}
	if e.writing && e.nested == 0 {
		// b is the write's own buffer, from its start: the message's bytes there are
		// remembered once they stay where they are (sized).
		e.pending = append(e.pending, pendingMemo{m: m, start: start, end: len(b)})
	} else {
		e.memo.set(m, e.kept(b[start:]))
	}
	return b
}

// transcript writes m, a message of the transcript (ending, or in a turn's end), through the
// memo: the same message is written again in the turn's end, the next request's context and
// the run's end.
func (e *encoder) transcript(b []byte, m loop.Message) []byte {
	if e == nil {
		return appendMessage(b, m)
	}
	return e.message(b, m)
}

// encoded is the canonical JSON of m, from the memo when it has been written before; the
// memo's own bytes, not to be changed.
func (e *encoder) encoded(m loop.Message) []byte {
	write := func(b []byte) []byte { return appendMessage(b, m) }
	if !memoable(m) {
		return e.sized(write)
	}
	if enc, ok := e.memo.get(m); ok {
		return enc
	}
	enc := e.sized(write)
	e.memo.set(m, enc)
	return enc
}

// memoable reports whether m is one of the loop's message types, all pointers, which can key
// the memo.
func memoable(m loop.Message) bool { return memoableType(messageWords(m).typ) }

// value is appendCanonical, with the lists of messages inside v written through the memo.
// Kept whole: one case per JSON value kind, a table.
func (e *encoder) value(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case string:
		return jsonvalue.AppendString(b, x)
	case float64:
		return jsonvalue.AppendNumber(b, x)
	case int:
		return jsonvalue.AppendNumber(b, float64(x))
	case int64:
		return jsonvalue.AppendNumber(b, float64(x))
	case json.RawMessage:
		if len(x) == 0 {
			return append(b, "null"...)
		}
		return append(b, jsonvalue.Canonical(x)...)
	case map[string]any:
		return jsonvalue.AppendMap(b, x, e.value)
	case []any:
		return jsonvalue.AppendList(b, x, e.value)
	case []string:
		return jsonvalue.AppendList(b, x, jsonvalue.AppendString)
	case loop.Event:
		return e.event(b, &x)
	case loop.StreamEvent:
		return appendStreamEvent(b, &x)
	case *loop.StreamEvent:
		if x == nil {
			return append(b, "null"...)
		}
		return appendStreamEvent(b, x)
	case []loop.Message:
		return e.messages(b, x)
	case loop.Message:
		return appendMessage(b, x)
	case ModelSetup: // every stream call's
		return appendModel(b, x)
	case *streamCall:
		return e.streamCall(b, x, x.Messages)
	case *toolCall: // written as the map of the same members would be
		o := open(b)
		o = o.key("args")
		o.b = e.headsOrNil().knownArguments(o.b, x.ID, x.Args)
		o = e.toolIDs(o, x.ID, x.Name)
		return o.close()
	case loop.ThinkingLevel:
		return jsonvalue.AppendString(b, string(x))
	case loop.ToolResult:
		return e.toolResult(b, &x)
	case *loop.ToolResult:
		if x == nil {
			return append(b, "null"...)
		}
		return e.toolResult(b, x)
	case Outcome: // encodevalues.go: the Agent's and the hooks' own types
		return e.outcome(b, &x)
	case wireOp:
		return appendWireOp(b, &x)
	case []*loop.ToolResultMessage:
		return appendToolResults(b, x)
	case loop.ToolCall:
		return appendToolCall(b, &x)
	case map[string]string:
		return appendStrings(b, x)
	case *AgentSetup:
		if x == nil {
			return append(b, "null"...)
		}
		return appendAgentSetup(b, x)
	case *loop.Identity:
		if x == nil {
			return append(b, "null"...)
		}
		return e.identity(b, x)
	}
	data, err := json.Marshal(v)
	if err != nil {
		quoted, _ := json.Marshal("unencodable: " + err.Error())
		return append(b, quoted...)
	}
	return append(b, jsonvalue.Canonical(data)...)
}

// streamCall writes a stream call's data as asMap's map would be, with msgs for its messages.
func (e *encoder) streamCall(b []byte, x *streamCall, msgs []loop.Message) []byte {
	return e.streamCallWith(b, x, msgs, nil)
}

// streamCallWith is streamCall; with encs not nil, the messages are encs, their encodings
// already known (encoded), and are not looked up again. What surrounds the messages is
// written once for the requests that share it (callFrame).
func (e *encoder) streamCallWith(b []byte, x *streamCall, msgs []loop.Message, encs [][]byte) []byte {
	list := func(b []byte) []byte {
		if encs != nil {
			return appendEncoded(b, encs)
		}
		return e.messages(b, msgs)
	}
	if e == nil || x.Options != nil {
		return e.writeStreamCall(b, x, list)
	}
	f := &e.frame
	if !f.holds(x) {
		cut := 0 // where the messages go
		whole := e.writeStreamCall(make([]byte, 0, 256), x, func(b []byte) []byte { cut = len(b); return b })
		*f = callFrame{apiKey: x.APIKey, model: x.Model, level: x.ThinkingLevel, before: whole[:cut:cut], after: whole[cut:]}
	}
	return append(list(append(b, f.before...)), f.after...)
}

// callFrame is a stream call's JSON around its messages, before and after them, for the
// call's members but its messages, which requests mostly share (no options).
type callFrame struct {
	apiKey        string
	model         ModelSetup
	level         loop.ThinkingLevel
	before, after []byte
}

// holds reports whether f is the frame of x (which has no options).
func (f *callFrame) holds(x *streamCall) bool {
	return f.before != nil && f.apiKey == x.APIKey && f.model == x.Model && f.level == x.ThinkingLevel
}

// writeStreamCall writes a stream call's data, its messages by messages (an empty list when
// nil), its options through e.
func (e *encoder) writeStreamCall(b []byte, x *streamCall, messages func([]byte) []byte) []byte {
	o := open(b)
	o = o.str("apiKey", x.APIKey)
	o = o.key("messages")
	o.b = messages(o.b)
	o = o.key("model")
	o.b = appendModel(o.b, x.Model)
	if x.Options != nil {
		o = o.key("options")
		o.b = e.value(o.b, x.Options)
	}
	o = o.str("thinkingLevel", string(x.ThinkingLevel))
	return o.close()
}

// appendEncoded writes a list of values already encoded.
func appendEncoded(b []byte, encs [][]byte) []byte {
	size := len(encs) + 1
	for _, enc := range encs {
		size += len(enc)
	}
	b = slices.Grow(b, size)
	b = append(b, '[')
	for i, enc := range encs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, enc...)
	}
	return append(b, ']')
}

func appendModel(b []byte, m ModelSetup) []byte {
	o := open(b)
	o = o.str("api", m.API)
	o = o.str("id", m.ID)
	o = o.str("provider", m.Provider)
	return o.close()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// obj writes members in the order given, which must be sorted. Its methods take and return
// it by value: an obj lives on its writer's stack, and a method storing the buffer through a
// pointer would run the write barrier for each member while the collector marks.
type obj struct {
	b     []byte
	first bool
}

func open(b []byte) obj { return obj{b: append(b, '{'), first: true} }

// key starts a member. Keys here are the loop's own field names, plain ASCII identifiers,
// so they are written without escaping.
func (o obj) key(k string) obj {
	if o.first {
		o.first = false
		o.b = append(o.b, '"')
	} else {
		o.b = append(o.b, ',', '"')
	}
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
	return o
}

// lit writes member, a whole member as canonical JSON ("key":value): a constant one, whose
// key and value are not written piece by piece (nor the value scanned for escapes) every time.
func (o obj) lit(member string) obj {
	if o.first {
		o.first = false
	} else {
		o.b = append(o.b, ',')
	}
	o.b = append(o.b, member...)
	return o
}

// litBytes is lit for a member held as bytes.
func (o obj) litBytes(member []byte) obj {
	if o.first {
		o.first = false
	} else {
		o.b = append(o.b, ',')
	}
	o.b = append(o.b, member...)
	return o
}

// Constant members, as obj.str writes them (TestConstantMembersAreAsWritten).
const (
	typeText       = `"type":"text"`
	typeThinking   = `"type":"thinking"`
	typeImage      = `"type":"image"`
	typeToolCall   = `"type":"toolCall"`
	roleUser       = `"role":"user"`
	roleSystem     = `"role":"system"`
	roleAssistant  = `"role":"assistant"`
	roleToolResult = `"role":"toolResult"`
	noArguments    = `"arguments":{}`
	noArgs         = `"args":{}`
)

// The type members of the loop's events, as obj.str writes them.
const (
	typeAgentStart          = `"type":"` + string(loop.AgentStart) + `"`
	typeAgentEnd            = `"type":"` + string(loop.AgentEnd) + `"`
	typeTurnStart           = `"type":"` + string(loop.TurnStart) + `"`
	typeTurnEnd             = `"type":"` + string(loop.TurnEnd) + `"`
	typeMessageStart        = `"type":"` + string(loop.MessageStart) + `"`
	typeMessageUpdate       = `"type":"` + string(loop.MessageUpdate) + `"`
	typeMessageEnd          = `"type":"` + string(loop.MessageEnd) + `"`
	typeToolExecutionStart  = `"type":"` + string(loop.ToolExecutionStart) + `"`
	typeToolExecutionUpdate = `"type":"` + string(loop.ToolExecutionUpdate) + `"`
	typeToolExecutionEnd    = `"type":"` + string(loop.ToolExecutionEnd) + `"`
)

// eventTypeMember is the type member of an event of type t, as obj.str writes it, for the
// loop's event types ("" for any other).
func eventTypeMember(t loop.EventType) string {
	switch t {
	case loop.AgentStart:
		return typeAgentStart
	case loop.AgentEnd:
		return typeAgentEnd
	case loop.TurnStart:
		return typeTurnStart
	case loop.TurnEnd:
		return typeTurnEnd
	case loop.MessageStart:
		return typeMessageStart
	case loop.MessageUpdate:
		return typeMessageUpdate
	case loop.MessageEnd:
		return typeMessageEnd
	case loop.ToolExecutionStart:
		return typeToolExecutionStart
	case loop.ToolExecutionUpdate:
		return typeToolExecutionUpdate
	case loop.ToolExecutionEnd:
		return typeToolExecutionEnd
	}
	return ""
}

// streamTypeMember is the type member of a stream event of type t, as obj.str writes it, for
// pi-ai's event types ("" for any other).
func streamTypeMember(t loop.StreamEventType) string {
	switch t {
	case loop.StreamStart:
		return `"type":"start"`
	case loop.StreamTextStart:
		return `"type":"text_start"`
	case loop.StreamTextDelta:
		return `"type":"text_delta"`
	case loop.StreamTextEnd:
		return `"type":"text_end"`
	case loop.StreamThinkingStart:
		return `"type":"thinking_start"`
	case loop.StreamThinkingDelta:
		return `"type":"thinking_delta"`
	case loop.StreamThinkingEnd:
		return `"type":"thinking_end"`
	case loop.StreamToolCallStart:
		return `"type":"toolcall_start"`
	case loop.StreamToolCallDelta:
		return `"type":"toolcall_delta"`
	case loop.StreamToolCallEnd:
		return `"type":"toolcall_end"`
	case loop.StreamDone:
		return `"type":"done"`
	case loop.StreamError:
		return `"type":"error"`
	}
	return ""
}

// reasonMember is the reason member of a done or error event for stop reason r, as obj.str
// writes it, for pi-ai's stop reasons ("" for any other).
func reasonMember(r loop.StopReason) string {
	switch r {
	case loop.StopStop:
		return `"reason":"stop"`
	case loop.StopLength:
		return `"reason":"length"`
	case loop.StopToolUse:
		return `"reason":"toolUse"`
	case loop.StopError:
		return `"reason":"error"`
	case loop.StopAborted:
		return `"reason":"aborted"`
	}
	return ""
}

// member writes m, a constant member, when it is not "", else the member key: v.
func (o obj) member(m, key, v string) obj {
	if m != "" {
		return o.lit(m)
	}
	return o.str(key, v)
}

// eventType writes the type member of an event of type t.
func (o obj) eventType(t loop.EventType) obj {
	if m := eventTypeMember(t); m != "" {
		return o.lit(m)
	}
	return o.str("type", string(t))
}

func (o obj) str(k, v string) obj {
	o = o.key(k)
	o.b = jsonvalue.AppendString(o.b, v)
	return o
}

func (o obj) num(k string, v int64) obj {
	o = o.key(k)
	if 0 <= v && v < 10 { // one digit: most counts, indexes and virtual times of a short run
		o.b = append(o.b, byte('0'+v))
	} else if -1<<53 <= v && v <= 1<<53 { // as AppendNumber writes it, without formatting a float
		o.b = strconv.AppendInt(o.b, v, 10)
	} else {
		o.b = jsonvalue.AppendNumber(o.b, float64(v))
	}
	return o
}

func (o obj) any(k string, v any) obj {
	o = o.key(k)
	o.b = appendCanonical(o.b, v)
	return o
}

func (o obj) boolean(k string, v bool) obj {
	o = o.key(k)
	if v {
		o.b = append(o.b, "true"...)
	} else {
		o.b = append(o.b, "false"...)
	}
	return o
}

func (o obj) close() []byte { return append(o.b, '}') }

// event writes a loop event, agent_end's messages through the memo.
func (enc *encoder) event(b []byte, e *loop.Event) []byte { return enc.eventWith(b, e, nil) }

// eventWith is event; when msg is not nil, it is set to where the event's message member's
// value lies in what it writes, from the start of b (message_start, message_end, turn_end).
func (enc *encoder) eventWith(b []byte, e *loop.Event, msg *[2]int) []byte {
	o := open(b)
	// at marks where the message member's value lies once it is written.
	at := func(start int) {
		if msg != nil {
			msg[0], msg[1] = start, len(o.b)
		}
	}
	switch e.Type {
	case loop.AgentEnd:
		o = o.key("messages")
		o.b = enc.messages(o.b, nonNil(e.Messages))
	case loop.TurnEnd:
		o = o.key("message")
		start := len(o.b)
		o.b = enc.transcript(o.b, e.Message)
		at(start)
		o = o.key("toolResults")
		o.b = jsonvalue.AppendList(o.b, nonNil(e.ToolResults), func(b []byte, r *loop.ToolResultMessage) []byte { return enc.transcript(b, r) })
	case loop.MessageEnd:
		o = o.key("message")
		start := len(o.b)
		o.b = enc.transcript(o.b, e.Message)
		at(start)
	case loop.MessageStart:
		// An assistant message starts as a snapshot of its partial, never seen again; the
		// others start as the message that ends, the same.
		o = o.key("message")
		start := len(o.b)
		if a, partial := e.Message.(*loop.AssistantMessage); partial {
			if a == nil {
				o.b = appendMessage(o.b, e.Message)
			} else {
				o.b = enc.headsOrNil().assistant(o.b, a)
			}
		} else {
			o.b = enc.transcript(o.b, e.Message)
		}
		at(start)
	case loop.MessageUpdate:
		o = o.key("assistantMessageEvent")
		if e.AssistantEvent == nil {
			o.b = append(o.b, "null"...)
		} else {
			o.b = appendStreamEvent(o.b, e.AssistantEvent)
		}
		o = o.key("message")
		o.b = appendMessage(o.b, e.Message)
	case loop.ToolExecutionStart:
		if len(e.Args) == 0 {
			o = o.lit(noArgs) // nil or empty: {}
		} else {
			o = o.key("args")
			o.b = enc.headsOrNil().knownArguments(o.b, e.ToolCallID, e.Args)
		}
		o = enc.toolIDs(o, e.ToolCallID, e.ToolName)
	case loop.ToolExecutionUpdate:
		o = o.any("args", argsOrEmpty(e.Args))
		o = o.any("partialResult", e.PartialResult)
		o = enc.toolIDs(o, e.ToolCallID, e.ToolName)
	case loop.ToolExecutionEnd:
		if e.DurationMs != nil {
			o = o.num("durationMs", *e.DurationMs)
		}
		o = o.boolean("isError", e.IsError)
		if !e.ResultUndefined {
			o = o.key("result")
			if e.Result == nil {
				o.b = append(o.b, "null"...)
			} else {
				o.b = enc.toolResult(o.b, e.Result) // often the result delivered, its JSON known
			}
		}
		o = enc.toolIDs(o, e.ToolCallID, e.ToolName)
	}
	o = o.eventType(e.Type)
	return o.close()
}

func argsOrEmpty(a map[string]any) map[string]any {
	if a == nil {
		return map[string]any{}
	}
	return a
}

// nonNil keeps a nil list an empty JSON array, as the loop's own JSON does.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

func appendStreamEvent(b []byte, e *loop.StreamEvent) []byte {
	return appendStreamEventWith(b, e, true)
}

// appendStreamEventWith writes a stream event, leaving its partial out unless withPartial
// (the linear form of a trace).
func appendStreamEventWith(b []byte, e *loop.StreamEvent, withPartial bool) []byte {
	return writeStreamEvent(b, e, withPartial, nil, nil)
}

// writeStreamEvent is appendStreamEventWith; when partialLen is not nil and the partial is
// written, it is set to the length of the partial's JSON. Its assistant messages are written
// through heads (none when nil).
func writeStreamEvent(b []byte, e *loop.StreamEvent, withPartial bool, partialLen *int, heads *headCache) []byte {
	o := open(b)
	switch e.Type {
	case loop.StreamDone:
		o = o.key("message")
		if e.Message == nil {
			o.b = append(o.b, "null"...)
		} else {
			o.b = heads.assistant(o.b, e.Message)
		}
		o = o.member(reasonMember(e.Reason), "reason", string(e.Reason))
	case loop.StreamError:
		o = o.any("error", assistantOrNil(e.Message))
		o = o.member(reasonMember(e.Reason), "reason", string(e.Reason))
	default:
		switch e.Type {
		case loop.StreamTextEnd, loop.StreamThinkingEnd:
			o = o.str("content", e.Content)
		}
		if e.Type != loop.StreamStart {
			o = o.num("contentIndex", int64(e.ContentIndex))
		}
		switch e.Type {
		case loop.StreamTextDelta, loop.StreamThinkingDelta, loop.StreamToolCallDelta:
			o = o.str("delta", e.Delta)
		}
		if withPartial {
			o = o.key("partial")
			if e.Partial == nil {
				o.b = append(o.b, "null"...)
			} else {
				start := len(o.b)
				o.b = heads.assistant(o.b, e.Partial)
				if partialLen != nil {
					*partialLen = len(o.b) - start
				}
			}
		}
		if e.Type == loop.StreamToolCallEnd {
			if e.ToolCall == nil {
				o = o.key("toolCall")
				o.b = append(o.b, "null"...)
			} else {
				o = o.key("toolCall")
				if heads == nil {
					o.b = appendToolCall(o.b, e.ToolCall)
				} else {
					o.b = heads.toolCall(o.b, e.ToolCall, ifaceWords{})
				}
			}
		}
	}
	o = o.member(streamTypeMember(e.Type), "type", string(e.Type))
	return o.close()
}

// assistantOrNil keeps a nil *AssistantMessage a JSON null.
func assistantOrNil(m *loop.AssistantMessage) any {
	if m == nil {
		return nil
	}
	return loop.Message(m)
}

func appendBlocks(b []byte, bs []loop.Block) []byte { return jsonvalue.AppendList(b, bs, appendBlock) }

func appendBlock(b []byte, blk loop.Block) []byte {
	switch x := blk.(type) {
	case loop.TextContent:
		o := open(b)
		o = o.str("text", x.Text)
		if x.TextSignature != "" {
			o = o.str("textSignature", x.TextSignature)
		}
		o = o.lit(typeText)
		return o.close()
	case loop.ThinkingContent:
		o := open(b)
		if x.Redacted {
			o = o.boolean("redacted", true)
		}
		o = o.str("thinking", x.Thinking)
		if x.ThinkingSignature != "" {
			o = o.str("thinkingSignature", x.ThinkingSignature)
		}
		o = o.lit(typeThinking)
		return o.close()
	case loop.ImageContent:
		o := open(b)
		o = o.str("data", x.Data)
		o = o.str("mimeType", x.MimeType)
		o = o.lit(typeImage)
		return o.close()
	case loop.ToolCall:
		return appendToolCall(b, &x)
	}
	data, _ := json.Marshal(blk)
	return append(b, jsonvalue.Canonical(data)...)
}

// appendToolCall writes a tool call block (given by pointer: boxed as a Block, a copy is
// allocated).
func appendToolCall(b []byte, x *loop.ToolCall) []byte { return appendToolCallWith(b, x, nil) }

// appendToolCallWith is appendToolCall, its arguments through h (callArguments).
func appendToolCallWith(b []byte, x *loop.ToolCall, h *headCache) []byte {
	o := open(b)
	if len(x.Arguments) == 0 {
		o = o.lit(noArguments) // nil or empty: {}
	} else {
		o = o.key("arguments")
		o.b = h.callArguments(o.b, x.ID, x.Arguments)
	}
	if x.ArgumentsError != "" {
		o = o.str("argumentsError", x.ArgumentsError)
	}
	o = o.str("id", x.ID)
	o = o.str("name", x.Name)
	if x.Namespace != "" {
		o = o.str("namespace", x.Namespace)
	}
	if x.ThoughtSignature != "" {
		o = o.str("thoughtSignature", x.ThoughtSignature)
	}
	o = o.lit(typeToolCall)
	return o.close()
}

func appendContent(o obj, text string, blocks []loop.Block) obj {
	o = o.key("content")
	if blocks != nil {
		o.b = appendBlocks(o.b, blocks)
	} else {
		o.b = jsonvalue.AppendString(o.b, text)
	}
	return o
}

// appendMessage writes m's canonical JSON. Kept whole: one case per message kind, a table.
func appendMessage(b []byte, m loop.Message) []byte {
	switch x := m.(type) {
	case nil:
		return append(b, "null"...)
	case *loop.UserMessage:
		if x == nil {
			return append(b, "null"...)
		}
		o := open(b)
		o = appendContent(o, x.Text, x.Blocks)
		o = o.lit(roleUser)
		o = o.num("timestamp", x.Timestamp)
		return o.close()
	case *loop.SystemMessage:
		if x == nil {
			return append(b, "null"...)
		}
		o := open(b)
		o = appendContent(o, x.Text, x.Blocks)
		o = o.lit(roleSystem)
		if len(x.Sections) > 0 {
			o = o.key("sections")
			o.b = append(o.b, '{')
			for i, k := range sortedKeys(x.Sections) {
				if i > 0 {
					o.b = append(o.b, ',')
				}
				o.b = jsonvalue.AppendString(o.b, k)
				o.b = append(o.b, ':')
				if v := x.Sections[k]; v == nil {
					o.b = append(o.b, "null"...)
				} else {
					o.b = jsonvalue.AppendString(o.b, *v)
				}
			}
			o.b = append(o.b, '}')
		}
		o = o.num("timestamp", x.Timestamp)
		if len(x.ToolsAdded) > 0 {
			o = o.key("toolsAdded")
			o.b = jsonvalue.AppendList(o.b, x.ToolsAdded, func(b []byte, d loop.ToolDeclaration) []byte {
				t := open(b)
				if d.ConstrainedSampling != nil {
					t = t.any("constrainedSampling", d.ConstrainedSampling)
				}
				t = t.str("description", d.Description)
				t = t.str("name", d.Name)
				if d.Parameters == nil {
					t = t.key("parameters")
					t.b = append(t.b, "null"...)
				} else {
					t = t.any("parameters", d.Parameters)
				}
				return t.close()
			})
		}
		if len(x.ToolsRemoved) > 0 {
			o = o.key("toolsRemoved")
			o.b = jsonvalue.AppendList(o.b, x.ToolsRemoved, func(b []byte, r loop.ToolReference) []byte {
				t := open(b)
				t = t.str("name", r.Name)
				return t.close()
			})
		}
		return o.close()
	case *loop.AssistantMessage:
		if x == nil {
			return append(b, "null"...)
		}
		return appendAssistant(b, x, nil)
	case *loop.ToolResultMessage:
		if x == nil {
			return append(b, "null"...)
		}
		return (*encoder)(nil).toolResultMessage(b, x)
	case *loop.CustomMessage:
		if x == nil {
			return append(b, "null"...)
		}
		return appendCanonical(b, x.Fields)
	}
	data, _ := json.Marshal(m)
	return append(b, jsonvalue.Canonical(data)...)
}

func appendToolResult(b []byte, r *loop.ToolResult) []byte {
	o := open(b)
	o = o.key("content")
	if r.Content == nil {
		o.b = append(o.b, "null"...)
	} else {
		o.b = appendBlocks(o.b, r.Content)
	}
	if r.Details != nil {
		o = o.any("details", r.Details)
	}
	if r.IsError {
		o = o.boolean("isError", true)
	}
	if r.StructuredContent != nil {
		o = o.any("structuredContent", r.StructuredContent)
	}
	if r.Terminate || r.TerminateSet {
		o = o.boolean("terminate", r.Terminate)
	}
	if r.Usage != nil {
		o = o.key("usage")
		o.b = appendUsage(o.b, r.Usage)
	}
	return o.close()
}

// zeroUsage is the canonical JSON of an empty usage, which most scripted messages carry.
var zeroUsage = writeUsage(nil, &loop.Usage{})

func appendUsage(b []byte, u *loop.Usage) []byte {
	if *u == (loop.Usage{}) {
		return append(b, zeroUsage...)
	}
	return writeUsage(b, u)
}

// writeUsage writes u's canonical JSON.
func writeUsage(b []byte, u *loop.Usage) []byte {
	o := open(b)
	o = o.num("cacheRead", u.CacheRead)
	o = o.num("cacheWrite", u.CacheWrite)
	if u.CacheWrite1h != nil {
		o = o.num("cacheWrite1h", *u.CacheWrite1h)
	}
	o = o.key("cost")
	c := open(o.b)
	c = c.key("cacheRead")
	c.b = jsonvalue.AppendNumber(c.b, u.Cost.CacheRead)
	c = c.key("cacheWrite")
	c.b = jsonvalue.AppendNumber(c.b, u.Cost.CacheWrite)
	c = c.key("input")
	c.b = jsonvalue.AppendNumber(c.b, u.Cost.Input)
	c = c.key("output")
	c.b = jsonvalue.AppendNumber(c.b, u.Cost.Output)
	c = c.key("total")
	c.b = jsonvalue.AppendNumber(c.b, u.Cost.Total)
	if u.Cost.TotalFromProvider {
		c = c.boolean("totalFromProvider", true)
	}
	o.b = c.close()
	o = o.num("input", u.Input)
	o = o.num("output", u.Output)
	if u.Reasoning != nil {
		o = o.num("reasoning", *u.Reasoning)
	}
	o = o.num("totalTokens", u.TotalTokens)
	return o.close()
}

// appendAssistant writes an assistant message's canonical JSON; when at is not nil, it is set
// to where the content's value lies in what it writes, from the start of b.
func appendAssistant(b []byte, x *loop.AssistantMessage, at *[2]int) []byte {
	start := len(b)
	o := open(b)
	o = o.str("api", x.API)
	o = o.key("content")
	cs := len(o.b)
	o.b = appendAssistantContent(o.b, x.Content)
	if at != nil {
		at[0], at[1] = cs-start, len(o.b)-start
	}
	if x.DurationMs != nil {
		o = o.num("durationMs", *x.DurationMs)
	}
	if x.EndTurn != nil {
		o = o.boolean("endTurn", *x.EndTurn)
	}
	if x.ErrorMessage != "" {
		o = o.str("errorMessage", x.ErrorMessage)
	}
	o = o.str("model", x.Model)
	o = o.str("provider", x.Provider)
	if x.ProviderThinkingLevel != "" {
		o = o.str("providerThinkingLevel", x.ProviderThinkingLevel)
	}
	if x.RawStopReason != "" {
		o = o.str("rawStopReason", x.RawStopReason)
	}
	if x.ResponseID != "" {
		o = o.str("responseId", x.ResponseID)
	}
	if x.ResponseModel != "" {
		o = o.str("responseModel", x.ResponseModel)
	}
	o = o.lit(roleAssistant)
	o = o.str("stopReason", string(x.StopReason))
	if x.ThinkingLevel != "" {
		o = o.str("thinkingLevel", x.ThinkingLevel)
	}
	o = o.num("timestamp", x.Timestamp)
	o = o.key("usage")
	o.b = appendUsage(o.b, &x.Usage)
	return o.close()
}

// appendAssistantContent writes an assistant message's content ([] for none).
func appendAssistantContent(b []byte, content []loop.Block) []byte {
	if content == nil {
		return append(b, "[]"...)
	}
	return appendBlocks(b, content)
}
