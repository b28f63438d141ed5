package trace

import (
	"bytes"
	"fmt"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// Limits of what an Expander holds for later links: the last recentEntries entries (at most
// recentBytes of them), and beyond them the entry each link of the linear form names (the
// last call of each name that sends a context, with each of its lists; the last delivery of
// each stream carrying a partial), for at most heldStreams streams.
const (
	recentEntries = 1024
	recentBytes   = 16 << 20
	heldStreams   = 256
)

// Expander restores the links of a trace's entries given one at a time, in order (Expand
// for a trace too long to hold): each entry comes back in full. It holds the recent entries
// and those the linear form's links name (see sim's linearizer), so its memory does not grow
// with the trace; a link to an entry it no longer holds is an error saying so.
type Expander struct {
	held    map[int]*Entry // by seq
	recent  []int          // seqs, oldest first
	bytes   int            // of the recent entries
	slots   map[string]int // what a link names → the seq of the entry held for it
	streams []string       // the stream slots, least recently written first
	lastSeq int
	// keep and keepBytes bound the recent entries held (recentEntries, recentBytes).
	keep, keepBytes int
}

// NewExpander starts expanding a trace from its first entry.
func NewExpander() *Expander {
	return &Expander{held: map[int]*Entry{}, slots: map[string]int{}, keep: recentEntries, keepBytes: recentBytes}
}

// Next is e in full; an error names the first link that does not resolve, as Expand does.
func (x *Expander) Next(e Entry) (Entry, error) {
	if !e.Canonical && (e.Link != nil || e.Kind == KindDeliver || e.Kind == KindCall && SendsContext(e.Name)) && canonical(e.Data) && canonical(e.Answer) {
		// Read from JSON lines as the world wrote them: links are restored on the bytes (only
		// linked entries and those links name are looked at).
		e.Canonical = true
	}
	if e.Link != nil {
		targets := linkTargets(e.Link)
		ex := expander{bySeq: map[int]int{}, decoded: map[int]map[string]any{}}
		for _, seq := range targets {
			if h, ok := x.held[seq]; ok {
				ex.bySeq[seq] = len(ex.entries)
				ex.entries = append(ex.entries, *h)
			} else if seq >= 1 && seq < e.Seq && seq <= x.lastSeq {
				return e, fmt.Errorf("entry %d: the link refers to entry %d, further back than a trace read entry by entry is held (the last %d entries, and the last call or delivery each link of the linear form names)", e.Seq, seq, recentEntries)
			}
		}
		if !ex.fastExpand(&e) {
			if err := ex.expand(&e); err != nil {
				return e, fmt.Errorf("entry %d: %w", e.Seq, err)
			}
		}
	}
	x.hold(e)
	return e, nil
}

// linkTargets are the seqs of the entries a link names.
func linkTargets(l *Link) []int {
	var out []int
	for _, s := range []int{l.Advances, l.AnswerExtends, l.Extends, l.NewExtends, l.Repeats} {
		if s != 0 {
			out = append(out, s)
		}
	}
	return out
}

// hold keeps e (in full) for the links of later entries, and lets go of what no link of the
// linear form can name any more.
func (x *Expander) hold(e Entry) {
	x.lastSeq = e.Seq
	held := &e
	x.held[e.Seq] = held
	x.recent = append(x.recent, e.Seq)
	x.bytes += entrySize(held)
	for _, slot := range slotsOf(held) {
		old, had := x.slots[slot]
		x.slots[slot] = e.Seq
		if had && old != e.Seq {
			x.release(old)
		}
		if len(slot) > 0 && slot[0] == 's' {
			x.touchStream(slot)
		}
	}
	for len(x.recent) > x.keep || len(x.recent) > 1 && x.bytes > x.keepBytes {
		seq := x.recent[0]
		x.recent = x.recent[1:]
		if h, ok := x.held[seq]; ok {
			x.bytes -= entrySize(h)
		}
		x.release(seq)
	}
	if len(x.recent) == 0 {
		x.recent = nil
	}
}

// release lets go of the entry seq unless it is recent or a slot holds it.
func (x *Expander) release(seq int) {
	if len(x.recent) > 0 && seq >= x.recent[0] {
		return
	}
	for _, s := range x.slots {
		if s == seq {
			return
		}
	}
	delete(x.held, seq)
}

// touchStream marks a stream's slot as the last written, and forgets the least recently
// written stream past heldStreams.
func (x *Expander) touchStream(slot string) {
	for i, s := range x.streams {
		if s == slot {
			x.streams = append(x.streams[:i], x.streams[i+1:]...)
			break
		}
	}
	x.streams = append(x.streams, slot)
	if len(x.streams) > heldStreams {
		gone := x.streams[0]
		x.streams = x.streams[1:]
		seq := x.slots[gone]
		delete(x.slots, gone)
		x.release(seq)
	}
}

// slotsOf names what a link of the linear form may name e as: "c" and a call's name and
// list for each message list a context call holds, "s" and the stream for a delivery
// carrying a partial, "m" for a message_start and for a message_end of an assistant message.
func slotsOf(e *Entry) []string {
	var out []string
	switch {
	case e.Kind == KindCall && SendsContext(e.Name):
		for _, l := range []List{ListMessages, ListNewMessages, ListAnswer} {
			path := listPath(e, l)
			if path == nil {
				continue
			}
			src := e.Data
			if l == ListAnswer {
				src = e.Answer
			}
			if _, _, _, ok := jsonvalue.ArrayAt(src, path...); ok {
				out = append(out, fmt.Sprintf("c%d %s", l, e.Name))
			}
		}
	case e.Kind == KindDeliver:
		if _, _, ok := jsonvalue.MemberValue(e.Data, "partial"); ok {
			out = append(out, "s"+e.Name+" "+e.Target)
		}
	case e.Kind == KindEvent && e.Name == "message_start":
		out = append(out, "mstart")
	case e.Kind == KindEvent && e.Name == "message_end":
		if start, end, ok := jsonvalue.MemberValue(e.Data, "message"); ok {
			if role, _ := jsonvalue.PlainString(e.Data[start:end], "role"); role == "assistant" {
				out = append(out, "massistant end")
			}
		}
	}
	return out
}

// entrySize is about what an entry holds, in bytes.
func entrySize(e *Entry) int {
	return 64 + len(e.Kind) + len(e.Name) + len(e.Target) + len(e.Data) + len(e.Answer) + len(e.Error)
}

// canonical reports whether a payload is canonical JSON (Entry.Canonical), or absent.
func canonical(b []byte) bool {
	return len(b) == 0 || bytes.Equal(jsonvalue.Canonical(b), b)
}
