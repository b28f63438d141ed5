package sim

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/turnstile-dev/turnstile/loop"
)

// Calls that send a context whole, in the linear form.
//
// A stream call, and the calls of the hooks that are given the context (transformContext,
// convertToLlm, prepareRequest, prepareNextTurn, finishTurn), send it whole every time; so do
// the hooks' answers that return it, and prepareNextTurn and finishTurn send the run's new
// messages whole too. Each of those message lists is written in the linear form as the list
// it extends, of the last call of the same name that had that list (its first Keep messages),
// followed by the messages after them: Link.Extends and Keep for the context, NewExtends and
// NewKeep for the new messages, AnswerExtends and AnswerKeep for the answer's. Whether a list
// is linked is decided from the lists' canonical bytes alone, as every link of the linear
// form is.

// contextPaths says where a call of one name holds its message lists: the context's messages
// in its data, the run's new messages in its data (nil: none), the messages in its answer
// (nil: none).
type contextPaths struct{ messages, newMessages, answer []string }

// contextCalls are the calls that send a context, by contextName.
var contextCalls = map[string]contextPaths{
	CallStream:           {messages: []string{"messages"}},
	HookTransformContext: {messages: []string{"messages"}, answer: []string{"messages"}},
	HookConvertToLLM:     {messages: []string{"messages"}, answer: []string{"messages"}},
	HookPrepareRequest:   {messages: []string{"context", "messages"}, answer: []string{"context", "messages"}},
	HookPrepareNextTurn: {messages: []string{"turn", "context", "messages"}, newMessages: []string{"turn", "newMessages"},
		answer: []string{"context", "messages"}},
	HookFinishTurn: {messages: []string{"turn", "context", "messages"}, newMessages: []string{"turn", "newMessages"}},
}

// contextName is the name under which the linear form links c to the previous call of the
// same name ("" when c sends no context): stream, or the hook's name.
func contextName(c Call) string {
	name := c.Name
	switch c.Kind {
	case CallStream:
		name = CallStream
	case CallHook:
	default:
		return ""
	}
	if _, ok := contextCalls[name]; !ok {
		return ""
	}
	return name
}

// Which of a call's message lists.
const (
	listMessages = iota
	listNewMessages
	listAnswer
)

// listKey names one message list of the calls of one name.
type listKey struct {
	name string
	list int
}

// listAt is a message list recorded at entry seq: its messages' canonical JSON.
type listAt struct {
	seq  int
	encs [][]byte
}

// pendingList is a list of a call about to be recorded, to remember once it is.
type pendingList struct {
	key  listKey
	encs [][]byte
}

// remember keeps a call's lists once the call is recorded at seq.
func (w *world) remember(seq int, lists []pendingList) {
	if len(lists) == 0 || !w.lastRecorded(seq, KindCall) {
		return
	}
	if w.lin.lists == nil {
		w.lin.lists = map[listKey]listAt{}
	}
	for _, l := range lists {
		w.lin.lists[l.key] = listAt{seq: seq, encs: l.encs}
	}
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
func setListLink(link **Link, list, extends, keep int) {
	if keep == 0 {
		return
	}
	if *link == nil {
		*link = &Link{}
	}
	switch list {
	case listMessages:
		(*link).Extends, (*link).Keep = extends, keep
	case listNewMessages:
		(*link).NewExtends, (*link).NewKeep = extends, keep
	case listAnswer:
		(*link).AnswerExtends, (*link).AnswerKeep = extends, keep
	}
}

// contextData is the data of a call that sends a context (contextName) in the linear form,
// with its link, and the lists to remember once the entry is recorded; full is the data in
// full (a hook's answer is computed from it), nil when the data leaves something out and
// wantFull is not set.
func (w *world) contextData(c Call, name string, wantFull bool) (full, data json.RawMessage, link *Link, lists []pendingList) {
	if w.lin.inFull {
		data = w.canonicalData(c.Data, c.Value)
		return data, data, nil, nil
	}
	paths := contextCalls[name]
	dataPaths := [][]string{paths.messages, paths.newMessages}
	if root, ok := c.Value.(map[string]any); ok && len(c.Data) == 0 {
		if _, ok := messagesAt(root, paths.messages); ok {
			short := any(root)
			for list, path := range dataPaths {
				msgs, ok := messagesAt(root, path)
				if !ok {
					continue
				}
				key := listKey{name, list}
				prev := w.lin.lists[key]
				encs := make([][]byte, len(msgs))
				for i, msg := range msgs {
					encs[i] = w.enc.encoded(msg) // remembered by the encoder: the same slice each time
				}
				keep := keepOf(encs, prev)
				lists = append(lists, pendingList{key, encs})
				if keep > 0 {
					setListLink(&link, list, prev.seq, keep)
					short = withMessagesAt(short, path, msgs[keep:])
				}
			}
			if link == nil {
				data = w.enc.valueBytes(root)
				return data, data, nil, lists
			}
			if wantFull {
				full = w.enc.valueBytes(root)
			}
			return full, w.enc.valueBytes(short), link, lists
		}
	}
	data = w.canonicalData(c.Data, c.Value)
	type cut struct {
		start, end, keep int
		encs             [][]byte
	}
	var cuts []cut
	for list, path := range dataPaths {
		key := listKey{name, list}
		prev := w.lin.lists[key]
		start, end, encs, ok := arrayAtLike(data, prev.encs, path...)
		if !ok {
			continue
		}
		lists = append(lists, pendingList{key: key, encs: encs})
		if keep := keepOf(encs, prev); keep > 0 {
			setListLink(&link, list, prev.seq, keep)
			cuts = append(cuts, cut{start, end, keep, encs})
		}
	}
	// The list that lies later in the data first, so that the earlier one's offsets hold.
	slices.SortFunc(cuts, func(a, b cut) int { return b.start - a.start })
	short := data
	for _, k := range cuts {
		short = withListFrom(short, k.start, k.end, k.encs, k.keep)
	}
	return data, short, link, lists
}

// answerData is a context hook's answer (canonical JSON) in the linear form, its link
// members set on link (which may be nil), and the list to remember.
func (w *world) answerData(name string, answer json.RawMessage, link *Link) (json.RawMessage, *Link, []pendingList) {
	path := contextCalls[name].answer
	if w.lin.inFull || path == nil || len(answer) == 0 {
		return answer, link, nil
	}
	key := listKey{name, listAnswer}
	prev := w.lin.lists[key]
	start, end, encs, ok := arrayAtLike(answer, prev.encs, path...)
	if !ok {
		return answer, link, nil
	}
	remembered := []pendingList{{key: key, encs: encs}}
	keep := keepOf(encs, prev)
	if keep == 0 {
		return answer, link, remembered
	}
	setListLink(&link, listAnswer, prev.seq, keep)
	return withListFrom(answer, start, end, encs, keep), link, remembered
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

// arrayAt is where the array at path lies in the canonical JSON object obj, and its elements.
func arrayAt(obj []byte, path ...string) (start, end int, elems [][]byte, ok bool) {
	return arrayAtLike(obj, nil, path...)
}

// arrayAtLike is arrayAt for an array that may begin with the elements like (those of the
// same list met before, a context being the last one and more): an element that has the
// bytes of its counterpart in like is that one, found by comparing bytes instead of reading
// it; the others are read. Neither the objects around the array nor the array itself is
// read past its end.
func arrayAtLike(obj []byte, like [][]byte, path ...string) (start, end int, elems [][]byte, ok bool) {
	if len(path) == 0 {
		return 0, 0, nil, false
	}
	for _, key := range path {
		if _, start, ok = memberStart(obj, start, key); !ok {
			return 0, 0, nil, false
		}
	}
	if start >= len(obj) || obj[start] != '[' {
		return 0, 0, nil, false
	}
	i := start + 1
	if i < len(obj) && obj[i] == ']' {
		return start, i + 1, [][]byte{}, true
	}
	for {
		var next int
		if k := len(elems); k < len(like) && hasValue(obj, i, like[k]) {
			elems, next = append(elems, like[k]), i+len(like[k])
		} else {
			if next, ok = skipValue(obj, i); !ok {
				return 0, 0, nil, false
			}
			elems = append(elems, obj[i:next])
		}
		if next >= len(obj) {
			return 0, 0, nil, false
		}
		switch obj[next] {
		case ',':
			i = next + 1
		case ']':
			return start, next + 1, elems, true
		default:
			return 0, 0, nil, false
		}
	}
}

// hasValue reports whether the canonical JSON value at obj[i:] is v: its bytes, followed by
// the end of an element.
func hasValue(obj []byte, i int, v []byte) bool {
	end := i + len(v)
	return end < len(obj) && (obj[end] == ',' || obj[end] == ']') && bytes.Equal(obj[i:end], v)
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

// listPath is where entry e, a call, holds the given list (nil: it holds none).
func listPath(e *Entry, list int) []string {
	if e.Kind != KindCall {
		return nil
	}
	paths, ok := contextCalls[e.Name]
	if !ok {
		return nil
	}
	return [][]string{paths.messages, paths.newMessages, paths.answer}[list]
}

// listIn is the list at path in decoded JSON.
func listIn(d map[string]any, path []string) ([]any, bool) {
	for _, key := range path[:len(path)-1] {
		next, ok := d[key].(map[string]any)
		if !ok {
			return nil, false
		}
		d = next
	}
	list, ok := d[path[len(path)-1]].([]any)
	return list, ok
}

// setListIn sets the list at path in decoded JSON, where listIn found one.
func setListIn(d map[string]any, path []string, list []any) {
	for _, key := range path[:len(path)-1] {
		d = d[key].(map[string]any)
	}
	d[path[len(path)-1]] = list
}
