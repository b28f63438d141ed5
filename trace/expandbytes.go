package trace

import (
	"strconv"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// Expanding on the bytes.
//
// The entries the world records are canonical JSON (Entry.Canonical), and so are the entries
// Expand has restored. A link between two such entries is restored by splicing their bytes:
// the members a linked entry leaves out are copied from the entry it names, and the text a
// delta adds is appended to the JSON string it extends (a canonical string escapes each
// character by itself, so two escaped strings put together are the escaped concatenation).
// The result is the bytes the decoding path (expander.expand) writes; when anything is
// unusual (a key written with an escape, a member the link would add already present, a
// content index that is not a plain integer, a link that does not resolve) fastExpand leaves
// the entry to that path, which gives the same bytes or the error.
// TestLinearTraceExpandsToTheFullOne expands every curated and many generated runs both ways,
// and on the bytes alone, and requires the full trace's bytes each time.

// fastExpand restores e on the bytes and reports whether it did.
func (x *expander) fastExpand(e *Entry) bool {
	if !e.Canonical {
		return false
	}
	l := e.Link
	answer := e.Answer
	if l.AnswerExtends != 0 || l.AnswerKeep != 0 {
		i, ok := x.index(l.AnswerExtends)
		path := listPath(e, ListAnswer)
		if !ok || path == nil || l.AnswerExtends >= e.Seq || !x.entries[i].Canonical || x.entries[i].Link != nil {
			return false
		}
		if answer, ok = extendAt(x.entries[i].Answer, e.Answer, path, l.AnswerKeep); !ok {
			return false
		}
		if l.Advances == 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Repeats == 0 {
			e.Answer, e.Link = answer, nil
			return true
		}
	}
	var out []byte
	switch {
	case (l.Extends != 0 || l.NewExtends != 0) && l.Advances == 0 && l.Repeats == 0:
		out = e.Data
		for _, part := range []struct {
			list          List
			extends, keep int
		}{{ListMessages, l.Extends, l.Keep}, {ListNewMessages, l.NewExtends, l.NewKeep}} {
			if part.extends == 0 && part.keep == 0 {
				continue
			}
			base, ok := x.canonicalData(part.extends)
			path := listPath(e, part.list)
			if !ok || path == nil {
				return false
			}
			if out, ok = extendAt(base, out, path, part.keep); !ok {
				return false
			}
		}
	case l.Advances != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Repeats == 0:
		prev, ok := x.canonicalPartial(l.Advances)
		if !ok {
			return false
		}
		next, ok := advanceBytes(prev, e.Data)
		if !ok {
			return false
		}
		out, ok = jsonvalue.WithMember(e.Data, "partial", next)
		if !ok {
			return false
		}
	case l.Repeats != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Advances == 0 && !holdsMessage(e):
		p, ok := x.canonicalPartial(l.Repeats)
		if !ok {
			return false
		}
		start, end, ok := jsonvalue.MemberValue(e.Data, "assistantMessageEvent")
		if !ok {
			// The whole event is the delivery's: its data.
			base, _ := x.canonicalData(l.Repeats)
			if _, _, nested := jsonvalue.MemberValue(base, "assistantMessageEvent"); nested {
				return false
			}
			withEvent, ok := jsonvalue.WithMember(e.Data, "assistantMessageEvent", base)
			if !ok {
				return false
			}
			if out, ok = jsonvalue.WithMember(withEvent, "message", p); !ok {
				return false
			}
			break
		}
		if e.Data[start] != '{' {
			return false
		}
		ame, ok := jsonvalue.WithMember(e.Data[start:end], "partial", p)
		if !ok {
			return false
		}
		spliced := make([]byte, 0, len(e.Data)+len(ame)-(end-start))
		spliced = append(spliced, e.Data[:start]...)
		spliced = append(spliced, ame...)
		spliced = append(spliced, e.Data[end:]...)
		out, ok = jsonvalue.WithMember(spliced, "message", p)
		if !ok {
			return false
		}
	case l.Repeats != 0 && l.Extends == 0 && l.Keep == 0 && l.NewExtends == 0 && l.NewKeep == 0 && l.Advances == 0 && holdsMessage(e):
		base, ok := x.canonicalData(l.Repeats)
		if !ok || l.Repeats >= e.Seq {
			return false
		}
		start, end, ok := jsonvalue.MemberValue(base, "message")
		if !ok {
			if start, end, ok = jsonvalue.MemberValue(base, "partial"); !ok {
				return false
			}
		}
		if out, ok = jsonvalue.WithMember(e.Data, "message", base[start:end]); !ok {
			return false
		}
	default:
		return false
	}
	e.Data, e.Answer, e.Link = out, answer, nil
	return true
}

// canonicalData is the (full) data of the earlier entry seq when it is canonical JSON.
func (x *expander) canonicalData(seq int) ([]byte, bool) {
	i, ok := x.index(seq)
	if !ok || !x.entries[i].Canonical || x.entries[i].Link != nil {
		return nil, false
	}
	return x.entries[i].Data, true
}

// canonicalPartial is the partial message of the earlier entry seq, as expander.partial finds
// it, when the entry is canonical JSON.
func (x *expander) canonicalPartial(seq int) ([]byte, bool) {
	d, ok := x.canonicalData(seq)
	if !ok {
		return nil, false
	}
	if start, end, ok := jsonvalue.MemberValue(d, "assistantMessageEvent"); ok {
		if d[start] != '{' {
			// expander.partial would look for the partial at the top level.
			return nil, false
		}
		d = d[start:end]
	}
	start, end, ok := jsonvalue.MemberValue(d, "partial")
	if !ok || d[start] != '{' {
		return nil, false
	}
	return d[start:end], true
}

// index is where the entry seq is.
func (x *expander) index(seq int) (int, bool) {
	if seq >= 1 && seq <= len(x.entries) && x.entries[seq-1].Seq == seq {
		return seq - 1, true
	}
	i, ok := x.bySeq[seq]
	return i, ok
}

// extendAt is a context call's data (or a context hook's answer) with the list at path
// preceded by the first keep of base's list there.
func extendAt(base, data []byte, path []string, keep int) ([]byte, bool) {
	bStart, _, prev, ok := jsonvalue.ArrayAt(base, path...)
	if !ok || keep < 1 || keep > len(prev) {
		return nil, false
	}
	start, end, own, ok := jsonvalue.ArrayAt(data, path...)
	if !ok {
		return nil, false
	}
	// The kept messages lie side by side in base.
	kept := base[bStart+1 : offset(base, prev[keep-1])+len(prev[keep-1])]
	out := make([]byte, 0, len(data)+len(kept)+1)
	out = append(out, data[:start]...)
	out = append(out, '[')
	out = append(out, kept...)
	if len(own) > 0 {
		out = append(out, ',')
		out = append(out, data[start+1:end-1]...)
	}
	out = append(out, ']')
	out = append(out, data[end:]...)
	return out, true
}

// offset is where sub, a slice of b, begins in b.
func offset(b, sub []byte) int {
	return cap(b) - cap(sub)
}

// advanceBytes is the canonical partial prev advanced by the stream event ev (canonical
// JSON without its partial), as advance does on decoded values.
// Kept whole: one case per stream event type, a table.
func advanceBytes(prev, ev []byte) ([]byte, bool) {
	typ, ok := jsonvalue.PlainString(ev, "type")
	if !ok {
		return nil, false
	}
	cStart, cEnd, content, ok := jsonvalue.ArrayAt(prev, "content")
	if !ok {
		return nil, false
	}
	var block []byte
	ci := -1
	switch typ {
	case "text_end", "thinking_end", "toolcall_delta":
		return prev, true
	case "text_start":
		block, ci = EmptyTextBlock, len(content)
	case "thinking_start":
		block, ci = EmptyThinkingBlock, len(content)
	case "text_delta", "thinking_delta", "toolcall_end":
		iStart, iEnd, ok := jsonvalue.MemberValue(ev, "contentIndex")
		if !ok {
			return nil, false
		}
		n, err := strconv.Atoi(string(ev[iStart:iEnd]))
		if err != nil || n < 0 || n >= len(content) || (n > 0 && ev[iStart] == '0') || (n == 0 && iEnd-iStart != 1) {
			return nil, false
		}
		ci = n
		if typ == "toolcall_end" {
			tStart, tEnd, ok := jsonvalue.MemberValue(ev, "toolCall")
			if !ok {
				return nil, false
			}
			block = ev[tStart:tEnd]
			break
		}
		key := "text"
		if typ == "thinking_delta" {
			key = "thinking"
		}
		old := content[ci]
		if len(old) == 0 || old[0] != '{' {
			return nil, false
		}
		sStart, sEnd, ok := jsonvalue.MemberValue(old, key)
		dStart, dEnd, ok2 := jsonvalue.MemberValue(ev, "delta")
		if !ok || !ok2 || old[sStart] != '"' || ev[dStart] != '"' {
			return nil, false
		}
		b := make([]byte, 0, len(old)+dEnd-dStart)
		b = append(b, old[:sEnd-1]...)
		b = append(b, ev[dStart+1:dEnd]...)
		b = append(b, old[sEnd:]...)
		block = b
	default:
		return nil, false
	}
	size := len(prev) + len(block) + 1
	out := make([]byte, 0, size)
	out = append(out, prev[:cStart]...)
	out = append(out, '[')
	for i, c := range content {
		if i > 0 {
			out = append(out, ',')
		}
		if i == ci {
			out = append(out, block...)
		} else {
			out = append(out, c...)
		}
	}
	if ci == len(content) {
		if len(content) > 0 {
			out = append(out, ',')
		}
		out = append(out, block...)
	}
	out = append(out, ']')
	out = append(out, prev[cEnd:]...)
	return out, true
}
