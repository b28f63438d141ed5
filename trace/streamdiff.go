package trace

import (
	"errors"
	"io"
	"slices"
)

// Source yields a trace's entries in full (links restored, see Expander), in order; io.EOF
// after the last.
type Source interface {
	Next() (Entry, error)
}

// The window CompareStream aligns from the first difference on, each side: as many entries
// as a run holds at its default budgets (100,000 entries, 16 MiB of the trace in full), so
// that such runs are compared whole, as Compare compares them.
const (
	windowEntries = 100_000
	windowBytes   = 32 << 20
)

// StreamComparison is two traces read entry by entry and compared by Compare from where they
// first differ: the entries both write alike before it are walked, holding only the last few
// as context; from there a bounded window of each trace is aligned.
type StreamComparison struct {
	// Comparison is the window's comparison; its indexes count from WantFrom and GotFrom.
	*Comparison
	// WantFrom and GotFrom are the entries of each trace before the window.
	WantFrom, GotFrom int
	// Cut says the window ended before both traces did: what follows it was not aligned.
	Cut bool
}

// At is where the first difference is, 1-based: an entry of the implementation's trace, or
// of the reference's when reference is true (an entry the implementation lacks); 0 when the
// traces agree.
func (s *StreamComparison) At() (entry int, reference bool) {
	k := s.First()
	if k < 0 {
		return 0, false
	}
	if st := s.Steps[k]; st.Op == Missing {
		return s.WantFrom + st.Want + 1, true
	}
	return s.GotFrom + s.Steps[k].Got + 1, false
}

// Text is Comparison.Text with the entries numbered in the traces, and a note when the
// window was cut.
func (s *StreamComparison) Text(context int) string {
	return s.text(context, s.WantFrom, s.GotFrom, s.Cut)
}

// CompareStream compares two traces read entry by entry under profile, holding up to context
// entries before their first difference and a bounded window after it, whatever the traces'
// lengths. For traces that fit the window, the difference found is Compare's. Both traces are
// read to their end, so that an error in either is returned whatever comes first.
func CompareStream(want, got Source, profile Profile, context int) (*StreamComparison, error) {
	return compareStream(want, got, profile, context, windowEntries, windowBytes)
}

// compareStream is CompareStream with a window of maxEntries and maxBytes each side.
func compareStream(want, got Source, profile Profile, context, maxEntries, maxBytes int) (*StreamComparison, error) {
	ws, gs := &streamSide{src: want}, &streamSide{src: got}
	var ring [2][]Entry // the last pairs written alike, up to context of them
	ringBytes := 0
	ctxMax := min(context, maxEntries/2)
	for {
		w, g, err := nextPair(ws, gs)
		if err != nil {
			return nil, err
		}
		if w == nil && g == nil {
			return &StreamComparison{Comparison: &Comparison{Profile: profile}, WantFrom: ws.n, GotFrom: gs.n}, nil
		}
		if w != nil && g != nil && writtenAlike(w, g) {
			if ctxMax > 0 {
				ring[0], ring[1] = append(ring[0], *w), append(ring[1], *g)
				ringBytes += entrySize(w) + entrySize(g)
				for len(ring[0]) > ctxMax || len(ring[0]) > 1 && ringBytes > maxBytes/2 {
					ringBytes -= entrySize(&ring[0][0]) + entrySize(&ring[1][0])
					ring[0], ring[1] = ring[0][1:], ring[1][1:]
				}
			}
			continue
		}
		// The first difference: a window of each side from the context on. ws.n and gs.n
		// count w and g, which the window holds after the context.
		win := [2][]Entry{slices.Clone(ring[0]), slices.Clone(ring[1])}
		from := [2]int{ws.n - len(ring[0]), gs.n - len(ring[1])}
		if w != nil {
			from[0]--
		}
		if g != nil {
			from[1]--
		}
		size := ringBytes
		for w != nil || g != nil {
			for i, e := range []*Entry{w, g} {
				if e != nil {
					win[i] = append(win[i], *e)
					size += entrySize(e)
				}
			}
			if len(win[0]) >= maxEntries || len(win[1]) >= maxEntries || size >= maxBytes {
				break
			}
			if w, g, err = nextPair(ws, gs); err != nil {
				return nil, err
			}
		}
		// Whether either trace goes on past the window.
		cut := false
		for _, side := range []*streamSide{ws, gs} {
			more, err := side.more()
			if err != nil {
				return nil, err
			}
			cut = cut || more
		}
		c := Compare(&Trace{Entries: win[0]}, &Trace{Entries: win[1]}, profile)
		s := &StreamComparison{Comparison: c, WantFrom: from[0], GotFrom: from[1], Cut: cut}
		if c.First() >= 0 || !cut {
			// Read both to their end for the errors they may hold.
			for _, side := range []*streamSide{ws, gs} {
				if err := side.drain(); err != nil {
					return nil, err
				}
			}
			return s, nil
		}
		// The window was cut with every pair in it agreeing: walk on from its end, its last
		// pairs the context.
		n := min(ctxMax, len(win[0]))
		ring = [2][]Entry{slices.Clone(win[0][len(win[0])-n:]), slices.Clone(win[1][len(win[1])-n:])}
		ringBytes = 0
		for i := range ring[0] {
			ringBytes += entrySize(&ring[0][i]) + entrySize(&ring[1][i])
		}
	}
}

// streamSide is one trace read entry by entry: how many entries were read, whether it ended,
// an entry read ahead and not yet placed.
type streamSide struct {
	src  Source
	n    int
	end  bool
	pend *Entry
}

// next is the side's next entry; nil at its end.
func (s *streamSide) next() (*Entry, error) {
	if e := s.pend; e != nil {
		s.pend = nil
		return e, nil
	}
	if s.end {
		return nil, nil
	}
	e, err := s.src.Next()
	if errors.Is(err, io.EOF) {
		s.end = true
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.n++
	return &e, nil
}

// more reports whether the side has another entry, reading it ahead.
func (s *streamSide) more() (bool, error) {
	e, err := s.next()
	s.pend = e
	return e != nil, err
}

// drain reads the side to its end.
func (s *streamSide) drain() error {
	for {
		e, err := s.next()
		if e == nil || err != nil {
			return err
		}
	}
}

// nextPair is the next entry of each side.
func nextPair(w, g *streamSide) (*Entry, *Entry, error) {
	we, err := w.next()
	if err != nil {
		return nil, nil, err
	}
	ge, err := g.next()
	return we, ge, err
}
