package trace

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

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
			list          List
			extends, keep int
		}{{ListMessages, l.Extends, l.Keep}, {ListNewMessages, l.NewExtends, l.NewKeep}} {
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
	case l.Repeats != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Advances == 0 && !holdsMessage(e):
		p, err := x.partial(l.Repeats)
		if err != nil {
			return err
		}
		v, has := d["assistantMessageEvent"]
		if !has {
			// The whole event is the delivery's: its data.
			base, err := x.data(l.Repeats)
			if err != nil {
				return err
			}
			if err := wholeEvent(l.Repeats, base, d); err != nil {
				return err
			}
			d["assistantMessageEvent"] = base
			d["message"] = p
			break
		}
		ame, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("a repeating entry has no assistantMessageEvent object")
		}
		ame["partial"] = p
		d["message"] = p
	case l.Repeats != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Advances == 0 && holdsMessage(e):
		if _, ok := d["message"]; ok || l.Repeats >= e.Seq {
			return fmt.Errorf("link %s on a %s entry, which cannot leave its message out", appendLink(nil, l), e.Name)
		}
		base, err := x.data(l.Repeats)
		if err != nil {
			return err
		}
		m, ok := messageIn(base)
		if !ok {
			return fmt.Errorf("the link refers to entry %d, which holds no message", l.Repeats)
		}
		d["message"] = m
	default:
		return fmt.Errorf("link %s is not one the linear form knows", appendLink(nil, l))
	}
	e.Data = jsonvalue.AppendValue(nil, d)
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
	path := listPath(e, ListAnswer)
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
	e.Answer = jsonvalue.AppendValue(nil, own)
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

// ExpandValues is Expand for one linked entry on decoded values, without encoding: data and
// answer are e's own, decoded as encoding/json decodes into an any, and earlier gives an
// earlier entry's data and answer in full by its seq. It returns e's data and answer in full
// (e's own when e is not linked), equal to what decoding Expand's bytes gives. The values it
// is given are left as they are (they may be shared); the result shares theirs.
func ExpandValues(e *Entry, data, answer any, earlier func(seq int) (data, answer any, ok bool)) (any, any, error) {
	l := e.Link
	if l == nil {
		return data, answer, nil
	}
	// object is an earlier entry's data (or answer) when it is an object; nil otherwise.
	object := func(seq int, ofAnswer bool) map[string]any {
		if seq >= e.Seq {
			return nil
		}
		d, a, ok := earlier(seq)
		if !ok {
			return nil
		}
		if ofAnswer {
			d = a
		}
		m, _ := d.(map[string]any)
		return m
	}
	if l.AnswerExtends != 0 || l.AnswerKeep != 0 {
		path := listPath(e, ListAnswer)
		if path == nil {
			return data, answer, fmt.Errorf("link %s on a %s entry, whose answer holds no messages", appendLink(nil, l), e.Name)
		}
		base := object(l.AnswerExtends, true)
		if base == nil {
			return data, answer, fmt.Errorf("the link refers to entry %d, whose answer is not an object", l.AnswerExtends)
		}
		own, _ := answer.(map[string]any)
		prev, ok1 := listIn(base, path)
		mine, ok2 := listIn(own, path)
		if own == nil || !ok1 || !ok2 || l.AnswerKeep < 1 || l.AnswerKeep > len(prev) {
			return data, answer, fmt.Errorf("link keeps %d answer messages of entry %d, which has %d", l.AnswerKeep, l.AnswerExtends, len(prev))
		}
		answer = withListIn(own, path, append(prev[:l.AnswerKeep:l.AnswerKeep], mine...))
		if l.Advances == 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Repeats == 0 {
			return data, answer, nil
		}
	}
	d, _ := data.(map[string]any)
	if d == nil {
		return data, answer, fmt.Errorf("a linked entry's data is not an object")
	}
	partialOf := func(seq int) (map[string]any, error) {
		m := object(seq, false)
		if m == nil {
			return nil, fmt.Errorf("the link refers to entry %d, whose data is not an object", seq)
		}
		if ame, ok := m["assistantMessageEvent"].(map[string]any); ok {
			m = ame
		}
		p, ok := m["partial"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the link refers to entry %d, which holds no partial message", seq)
		}
		return p, nil
	}
	switch {
	case (l.Extends != 0 || l.NewExtends != 0) && l.Advances == 0 && l.Repeats == 0:
		for _, part := range []struct {
			list          List
			extends, keep int
		}{{ListMessages, l.Extends, l.Keep}, {ListNewMessages, l.NewExtends, l.NewKeep}} {
			if part.extends == 0 && part.keep == 0 {
				continue
			}
			path := listPath(e, part.list)
			if path == nil {
				return data, answer, fmt.Errorf("link %s on a %s entry, which sends no such list", appendLink(nil, l), e.Name)
			}
			base := object(part.extends, false)
			if base == nil {
				return data, answer, fmt.Errorf("the link refers to entry %d, whose data is not an object", part.extends)
			}
			prev, ok1 := listIn(base, path)
			own, ok2 := listIn(d, path)
			if !ok1 || !ok2 || part.keep < 1 || part.keep > len(prev) {
				return data, answer, fmt.Errorf("link keeps %d messages of entry %d, which has %d", part.keep, part.extends, len(prev))
			}
			d = withListIn(d, path, append(prev[:part.keep:part.keep], own...))
		}
	case l.Advances != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Repeats == 0:
		prev, err := partialOf(l.Advances)
		if err != nil {
			return data, answer, err
		}
		next, err := advance(prev, d)
		if err != nil {
			return data, answer, err
		}
		d = maps.Clone(d)
		d["partial"] = next
	case l.Repeats != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Advances == 0 && !holdsMessage(e):
		p, err := partialOf(l.Repeats)
		if err != nil {
			return data, answer, err
		}
		v, has := d["assistantMessageEvent"]
		if !has {
			// The whole event is the delivery's: its data.
			base := object(l.Repeats, false)
			if err := wholeEvent(l.Repeats, base, d); err != nil {
				return data, answer, err
			}
			d = maps.Clone(d)
			d["assistantMessageEvent"] = base
			d["message"] = p
			break
		}
		ame, ok := v.(map[string]any)
		if !ok {
			return data, answer, fmt.Errorf("a repeating entry has no assistantMessageEvent object")
		}
		ame = maps.Clone(ame)
		ame["partial"] = p
		d = maps.Clone(d)
		d["assistantMessageEvent"] = ame
		d["message"] = p
	case l.Repeats != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Advances == 0 && holdsMessage(e):
		if _, ok := d["message"]; ok {
			return data, answer, fmt.Errorf("link %s on a %s entry, which cannot leave its message out", appendLink(nil, l), e.Name)
		}
		base := object(l.Repeats, false)
		if base == nil {
			return data, answer, fmt.Errorf("the link refers to entry %d, whose data is not an object", l.Repeats)
		}
		m, ok := messageIn(base)
		if !ok {
			return data, answer, fmt.Errorf("the link refers to entry %d, which holds no message", l.Repeats)
		}
		d = maps.Clone(d)
		d["message"] = m
	default:
		return data, answer, fmt.Errorf("link %s is not one the linear form knows", appendLink(nil, l))
	}
	return d, answer, nil
}

// withListIn is d with the list at path (where listIn found one) set to list: the objects on
// the path are copied, d's left as they are.
func withListIn(d map[string]any, path []string, list []any) map[string]any {
	out := maps.Clone(d)
	if len(path) == 1 {
		out[path[0]] = list
		return out
	}
	out[path[0]] = withListIn(d[path[0]].(map[string]any), path[1:], list)
	return out
}

// holdsMessage reports whether e is an event whose data.message a link may leave out
// (Link.Message): message_start, message_end and turn_end.
func holdsMessage(e *Entry) bool {
	return e.Kind == KindEvent && (e.Name == "message_start" || e.Name == "message_end" || e.Name == "turn_end")
}

// messageIn is the message an entry's decoded data holds, as Link.Message names it: its
// message member, or else its partial.
func messageIn(d map[string]any) (any, bool) {
	if m, ok := d["message"]; ok {
		return m, true
	}
	m, ok := d["partial"]
	return m, ok
}

// wholeEvent checks that a message_update d, linked by repeats without an
// assistantMessageEvent, may take the whole event from base, the data of the earlier entry
// seq: a delivered stream event (no assistantMessageEvent of its own), and d holds no message.
func wholeEvent(seq int, base, d map[string]any) error {
	if _, nested := base["assistantMessageEvent"]; nested || base == nil {
		return fmt.Errorf("the link refers to entry %d, which is no delivered stream event", seq)
	}
	if _, ok := d["message"]; ok {
		return fmt.Errorf("a repeating entry without assistantMessageEvent holds a message")
	}
	return nil
}
