package sim

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"unsafe"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// How the world writes context calls in the linear form: trace/lists.go.

// contextName is the name under which the linear form links c to the previous call of the
// same name ("" when c sends no context): stream, or the hook's name.
func contextName(c *Call) string {
	name := c.Name
	switch c.Kind {
	case trace.CallStream:
		name = trace.CallStream
	case trace.CallHook:
	default:
		return ""
	}
	if !trace.SendsContext(name) {
		return ""
	}
	return name
}

// listKey names one message list of the calls of one name.
type listKey struct {
	name string
	list trace.List
}

// list is the list remembered under key (its seq 0: none).
func (l *linearizer) list(key listKey) listAt {
	if key == runListKey {
		return l.streamList
	}
	return l.lists[key]
}

// setList remembers at under key.
func (l *linearizer) setList(key listKey, at listAt) {
	if key == runListKey {
		l.streamList = at
		return
	}
	if l.lists == nil {
		l.lists = map[listKey]listAt{}
	}
	l.lists[key] = at
}

// listAt is a message list recorded at entry seq: its messages' canonical JSON and, when
// they were given as values, the messages; ends[i] is the size of encs[0] to encs[i]
// together, so that what a link to the list leaves out is known without adding it up.
type listAt struct {
	seq  int
	encs [][]byte
	msgs []loop.Message
	ends []int64
	// memoable is how many of msgs, from the first, are of memoable types (counted once, as
	// they join the list).
	memoable int
}

// pendingList is a list of a call about to be recorded, to remember once it is: the first
// keep messages of the list remembered under key, followed by those of tail (and, given as
// values, tailMsgs).
type pendingList struct {
	key      listKey
	keep     int
	tail     [][]byte
	tailMsgs []loop.Message
	values   bool
}

// remember keeps a call's lists once the call is recorded at seq. A list is written over
// the one it replaces, from keep on: a run's contexts share their beginnings, and each
// request then adds its new messages rather than a whole list.
func (w *world) remember(seq int, lists []pendingList) {
	if len(lists) == 0 || !w.lastRecorded(seq, trace.KindCall) {
		return
	}
	for _, l := range lists {
		prev := w.lin.list(l.key)
		if l.key == runListKey && cap(prev.encs) == 0 {
			prev = w.roomForContexts(l.values)
		}
		at := listAt{seq: seq, encs: append(prev.encs[:l.keep], l.tail...), ends: prev.ends[:l.keep]}
		end := int64(0)
		if l.keep > 0 {
			end = at.ends[l.keep-1]
		}
		for _, e := range l.tail {
			end += int64(len(e))
			at.ends = append(at.ends, end)
		}
		if l.values && len(prev.msgs) >= l.keep {
			at.msgs = append(prev.msgs[:l.keep], l.tailMsgs...)
			at.memoable = min(prev.memoable, l.keep)
			if at.memoable == l.keep {
				for at.memoable < len(at.msgs) && memoableType(messageWords(at.msgs[at.memoable]).typ) {
					at.memoable++
				}
			}
		}
		w.lin.setList(l.key, at)
	}
}

// roomForContexts is an empty list with room for the messages the run's transcript is
// expected to hold (and, with values, for the messages themselves): the stream calls'
// contexts grow to it, one request at a time.
func (w *world) roomForContexts(values bool) listAt {
	n := min(expectedMessages(w.sc), 1<<12)
	at := listAt{encs: make([][]byte, 0, n), ends: make([]int64, 0, n)}
	if values {
		at.msgs = make([]loop.Message, 0, n)
	}
	return at
}

// keepOfMessages is how many of msgs begin the list prev, compared by their canonical JSON
// (0 when there is no earlier list); a message that is the one at the same place in prev
// encodes alike (the encoder's memo), and is not looked up.
func (w *world) keepOfMessages(msgs []loop.Message, prev listAt) int {
	if prev.seq == 0 {
		return 0
	}
	n := min(len(msgs), len(prev.encs))
	keep := sameMemoables(msgs[:min(n, len(prev.msgs))], prev.msgs, prev.memoable)
	for keep < n {
		m := msgs[keep]
		if !(keep < len(prev.msgs) && sameMemoable(m, prev.msgs[keep])) && !bytes.Equal(w.enc.encoded(m), prev.encs[keep]) {
			break
		}
		keep++
	}
	return keep
}

// sameMemoable reports whether a and b are the same message of a type the encoder's memo
// holds (memoable): the same type and pointer, their two words compared as they are (the
// runtime's interface equality is a call, and a type switch several comparisons, for every
// message of every context: the square of a run's length).
func sameMemoable(a, b loop.Message) bool {
	x, y := messageWords(a), messageWords(b)
	return x == y && memoableType(x.typ)
}

// sameMemoables is how many of a's messages begin b as sameMemoable says, the first known of
// b being known memoable: their words compared as memory (a context begins with every message
// of the last, at every request), then the types of those not known looked at, once a run of
// the same type.
func sameMemoables(a, b []loop.Message, known int) int {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	x := unsafe.Slice((*ifaceWords)(unsafe.Pointer(&a[0])), n)
	y := unsafe.Slice((*ifaceWords)(unsafe.Pointer(&b[0])), n)
	same := n
	bx := unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), n*int(unsafe.Sizeof(ifaceWords{})))
	by := unsafe.Slice((*byte)(unsafe.Pointer(&y[0])), n*int(unsafe.Sizeof(ifaceWords{})))
	if !bytes.Equal(bx, by) {
		same = 0
		for same < n && x[same] == y[same] {
			same++
		}
	}
	var typ unsafe.Pointer // the last type found memoable
	for i := min(known, same); i < same; i++ {
		if t := x[i].typ; t != typ {
			if !memoableType(t) {
				return i
			}
			typ = t
		}
	}
	return same
}

// memoableType reports whether typ is the type word of a message of a memoable type.
func memoableType(typ unsafe.Pointer) bool {
	return typ == memoableTypes[0] || typ == memoableTypes[1] || typ == memoableTypes[2] ||
		typ == memoableTypes[3] || typ == memoableTypes[4]
}

// ifaceWords is the layout of an interface value: its first word (for a loop.Message the
// itab of its dynamic type, one per type) and its data's.
type ifaceWords struct{ typ, data unsafe.Pointer }

// messageWords is m's two words.
func messageWords(m loop.Message) ifaceWords { return *(*ifaceWords)(unsafe.Pointer(&m)) }

// memoableTypes are the type words of loop.Message values of the memoable types, the
// assistant's and the tool results' first (the most of a context).
var memoableTypes = [5]unsafe.Pointer{
	messageWords((*loop.AssistantMessage)(nil)).typ,
	messageWords((*loop.ToolResultMessage)(nil)).typ,
	messageWords((*loop.UserMessage)(nil)).typ,
	messageWords((*loop.SystemMessage)(nil)).typ,
	messageWords((*loop.CustomMessage)(nil)).typ,
}

// keptSize is what a link to the first keep messages of the list prev leaves out of a list
// of n messages: their canonical JSON, with the commas after them (but the last's when no
// message follows).
func keptSize(prev listAt, keep, n int) int64 {
	if keep == 0 {
		return 0
	}
	size := prev.ends[keep-1] + int64(keep)
	if keep == n {
		size--
	}
	return size
}

// owned is encs, slices of the data of the call they came in, copied into a buffer of their
// own: a remembered list keeps its messages for the run (each is met again in every later
// context), and as slices they would keep every request's whole data, growing with the
// square of the run.
func owned(encs [][]byte) [][]byte {
	size := 0
	for _, e := range encs {
		size += len(e)
	}
	buf := make([]byte, 0, size)
	out := make([][]byte, len(encs))
	for i, e := range encs {
		start := len(buf)
		buf = append(buf, e...)
		out[i] = buf[start:len(buf):len(buf)]
	}
	return out
}

// keepOf is how many of encs begin the list prev (0 when there is no earlier list).
func keepOf(encs [][]byte, prev listAt) int {
	if prev.seq == 0 {
		return 0
	}
	keep := 0
	for keep < len(encs) && keep < len(prev.encs) && bytes.Equal(encs[keep], prev.encs[keep]) {
		keep++
	}
	return keep
}

// setListLink sets the link members of one list.
func (w *world) setListLink(link **trace.Link, list trace.List, extends, keep int) {
	if keep == 0 {
		return
	}
	if *link == nil {
		*link = w.newLink(trace.Link{})
	}
	switch list {
	case trace.ListMessages:
		(*link).Extends, (*link).Keep = extends, keep
	case trace.ListNewMessages:
		(*link).NewExtends, (*link).NewKeep = extends, keep
	case trace.ListAnswer:
		(*link).AnswerExtends, (*link).AnswerKeep = extends, keep
	}
}

// contextData is the data of a call that sends a context (contextName) in the linear form,
// with its link, the bytes the link leaves out, and the lists to remember once the entry is
// recorded; full is the data in full (a hook's answer is computed from it), nil when the
// data leaves something out and wantFull is not set.
func (w *world) contextData(c *Call, name string, wantFull bool) (full, data json.RawMessage, link *trace.Link, leftOut int64, lists []pendingList) {
	if w.lin.inFull {
		data = w.canonicalData(c.Data, c.Value)
		return data, data, nil, 0, nil
	}
	if sc, ok := c.Value.(*streamCall); ok && len(c.Data) == 0 {
		return w.streamCallData(sc, name)
	}
	dataLists := []trace.List{trace.ListMessages, trace.ListNewMessages}
	if root, ok := c.Value.(map[string]any); ok && len(c.Data) == 0 {
		if _, ok := messagesAt(root, trace.CallListPath(name, trace.ListMessages)); ok {
			short := any(root)
			for _, list := range dataLists {
				path := trace.CallListPath(name, list)
				msgs, ok := messagesAt(root, path)
				if !ok {
					continue
				}
				key := listKey{name, list}
				prev := w.lin.list(key)
				keep := w.keepOfMessages(msgs, prev)
				tail := make([][]byte, len(msgs)-keep)
				for i, msg := range msgs[keep:] {
					tail[i] = w.enc.encoded(msg) // remembered by the encoder: the same slice each time
				}
				lists = append(lists, pendingList{key: key, keep: keep, tail: tail, tailMsgs: msgs[keep:], values: true})
				if keep > 0 {
					w.setListLink(&link, list, prev.seq, keep)
					short = withMessagesAt(short, path, msgs[keep:])
					leftOut += keptSize(prev, keep, len(msgs))
				}
			}
			if link == nil {
				data = w.enc.valueBytes(root)
				return data, data, nil, 0, lists
			}
			if wantFull {
				full = w.enc.valueBytes(root)
			}
			return full, w.enc.valueBytes(short), link, leftOut, lists
		}
	}
	data = w.canonicalData(c.Data, c.Value)
	type cut struct {
		start, end, keep int
		encs             [][]byte
	}
	var cuts []cut
	for _, list := range dataLists {
		path := trace.CallListPath(name, list)
		key := listKey{name, list}
		prev := w.lin.list(key)
		start, end, encs, ok := jsonvalue.ArrayAtLike(data, prev.encs, path...)
		if !ok {
			continue
		}
		keep := keepOf(encs, prev)
		lists = append(lists, pendingList{key: key, keep: keep, tail: owned(encs[keep:])})
		if keep > 0 {
			w.setListLink(&link, list, prev.seq, keep)
			cuts = append(cuts, cut{start, end, keep, encs})
			leftOut += keptSize(prev, keep, len(encs))
		}
	}
	// The list that lies later in the data first, so that the earlier one's offsets hold.
	slices.SortFunc(cuts, func(a, b cut) int { return b.start - a.start })
	short := data
	for _, k := range cuts {
		short = withListFrom(short, k.start, k.end, k.encs, k.keep)
	}
	return data, short, link, leftOut, lists
}

// streamCallData is contextData of a stream call given as a *streamCall.
func (w *world) streamCallData(sc *streamCall, name string) (full, data json.RawMessage, link *trace.Link, leftOut int64, lists []pendingList) {
	key := listKey{name, trace.ListMessages}
	prev := w.lin.list(key)
	msgs := sc.Messages
	keep := w.keepOfMessages(msgs, prev)
	spare := w.spare
	w.spare = streamSpare{} // taken until the call is recorded (recordCall gives it back)
	tail := slices.Grow(spare.tail[:0], len(msgs)-keep)
	for _, msg := range msgs[keep:] {
		tail = append(tail, w.enc.encoded(msg))
	}
	lists = append(spare.lists[:0], pendingList{key: key, keep: keep, tail: tail, tailMsgs: msgs[keep:], values: true})
	if keep == 0 {
		data = w.enc.valueBytes(sc)
		return data, data, nil, 0, lists
	}
	w.setListLink(&link, trace.ListMessages, prev.seq, keep)
	short := w.enc.sized(func(b []byte) []byte { return w.enc.streamCallWith(b, sc, nil, tail) })
	return nil, short, link, keptSize(prev, keep, len(msgs)), lists
}

// streamSpare is the room a stream call's lists to remember are made in: remember copies what
// they hold, so one room serves every request of a run, rather than two allocations each.
// What it holds stays alive until overwritten: messages and encodings the run holds anyway.
type streamSpare struct {
	tail  [][]byte
	lists []pendingList
}

// giveBack keeps the room of a stream call's lists, once recorded, for the next call's.
func (w *world) giveBack(lists []pendingList) {
	w.spare = streamSpare{tail: lists[0].tail[:0], lists: lists[:0]}
}

// answerData is a context hook's answer (canonical JSON) in the linear form, its link
// members set on link (which may be nil), the bytes they leave out, and the list to remember.
func (w *world) answerData(name string, answer json.RawMessage, link *trace.Link) (json.RawMessage, *trace.Link, int64, []pendingList) {
	path := trace.CallListPath(name, trace.ListAnswer)
	if w.lin.inFull || path == nil || len(answer) == 0 {
		return answer, link, 0, nil
	}
	key := listKey{name, trace.ListAnswer}
	prev := w.lin.list(key)
	start, end, encs, ok := jsonvalue.ArrayAtLike(answer, prev.encs, path...)
	if !ok {
		return answer, link, 0, nil
	}
	keep := keepOf(encs, prev)
	remembered := []pendingList{{key: key, keep: keep, tail: owned(encs[keep:])}}
	if keep == 0 {
		return answer, link, 0, remembered
	}
	w.setListLink(&link, trace.ListAnswer, prev.seq, keep)
	return withListFrom(answer, start, end, encs, keep), link, keptSize(prev, keep, len(encs)), remembered
}

// messagesAt is the message list at path in a call's data given as values.
func messagesAt(v any, path []string) ([]loop.Message, bool) {
	if len(path) == 0 {
		return nil, false
	}
	for _, key := range path[:len(path)-1] {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		v = m[key]
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	msgs, ok := m[path[len(path)-1]].([]loop.Message)
	return msgs, ok
}

// withMessagesAt is v with the list at path replaced by msgs, the maps on the way copied.
func withMessagesAt(v any, path []string, msgs []loop.Message) any {
	m := maps.Clone(v.(map[string]any))
	if len(path) == 1 {
		m[path[0]] = msgs
	} else {
		m[path[0]] = withMessagesAt(m[path[0]], path[1:], msgs)
	}
	return m
}

// withListFrom is the canonical JSON obj with the array at [start, end), whose elements are
// encs, holding only the elements from keep on.
func withListFrom(obj []byte, start, end int, encs [][]byte, keep int) []byte {
	size := start + 2 + len(obj) - end
	for _, e := range encs[keep:] {
		size += len(e) + 1
	}
	short := make([]byte, 0, size)
	short = append(short, obj[:start]...)
	short = append(short, '[')
	for i, e := range encs[keep:] {
		if i > 0 {
			short = append(short, ',')
		}
		short = append(short, e...)
	}
	short = append(short, ']')
	return append(short, obj[end:]...)
}

// runListKey is the list agent_end's messages and the run end's are linked to (Extends,
// Keep): the last stream call's context, which a run's messages begin with.
var runListKey = listKey{trace.CallStream, trace.ListMessages}

// runMessagesData is the data of agent_end or of the run's end, whose messages msgs are given
// as values, in the linear form: write writes the data with the messages it is given, the
// messages after those the last stream call's context begins with when it does (linked,
// with the bytes the link leaves out), else all of them.
func (w *world) runMessagesData(msgs []loop.Message, write func(b []byte, msgs []loop.Message) []byte) (json.RawMessage, *trace.Link, int64) {
	prev := w.lin.list(runListKey)
	keep := 0
	if !w.lin.inFull {
		keep = w.keepOfMessages(msgs, prev)
	}
	if keep == 0 {
		return w.enc.sized(func(b []byte) []byte { return write(b, msgs) }), nil, 0
	}
	var link *trace.Link
	w.setListLink(&link, trace.ListMessages, prev.seq, keep)
	return w.enc.sized(func(b []byte) []byte { return write(b, msgs[keep:]) }), link, keptSize(prev, keep, len(msgs))
}

// linkRunMessagesJSON is runMessagesData for data given as canonical JSON.
func (w *world) linkRunMessagesJSON(data json.RawMessage) (json.RawMessage, *trace.Link, int64) {
	prev := w.lin.list(runListKey)
	if w.lin.inFull || prev.seq == 0 {
		return data, nil, 0
	}
	start, end, encs, ok := jsonvalue.ArrayAtLike(data, prev.encs, "messages")
	if !ok {
		return data, nil, 0
	}
	keep := keepOf(encs, prev)
	if keep == 0 {
		return data, nil, 0
	}
	var link *trace.Link
	w.setListLink(&link, trace.ListMessages, prev.seq, keep)
	return withListFrom(data, start, end, encs, keep), link, keptSize(prev, keep, len(encs))
}

// endData is the data of the run's end (given as canonical JSON or, in-process, as a value)
// in the linear form, with its link and the bytes the link leaves out.
func (w *world) endData(data json.RawMessage, value any) (json.RawMessage, *trace.Link, int64) {
	if root, ok := value.(map[string]any); ok && len(data) == 0 {
		if msgs, ok := messagesAt(root, []string{"messages"}); ok {
			return w.runMessagesData(msgs, func(b []byte, tail []loop.Message) []byte {
				return w.enc.value(b, withMessagesAt(root, []string{"messages"}, tail))
			})
		}
	}
	return w.linkRunMessagesJSON(w.canonicalData(data, value))
}
