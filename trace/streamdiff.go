package trace

import (
	"errors"
	"io"
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
	var (
		ring         [2][]Entry // the last pairs written alike, up to context of them
		ringBytes    int
		wantN, gotN  int // entries read from each
		wEnd, gEnd   bool
		pendW, pendG *Entry // read, not yet placed
	)
	next := func(src Source, end *bool, n *int, pend **Entry) (*Entry, error) {
		if *pend != nil {
			e := *pend
			*pend = nil
			return e, nil
		}
		if *end {
			return nil, nil
		}
		e, err := src.Next()
		if errors.Is(err, io.EOF) {
			*end = true
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		*n++
		return &e, nil
	}
	ctxMax := min(context, maxEntries/2)
	for {
		w, err := next(want, &wEnd, &wantN, &pendW)
		if err != nil {
			return nil, err
		}
		g, err := next(got, &gEnd, &gotN, &pendG)
		if err != nil {
			return nil, err
		}
		if w == nil && g == nil {
			return &StreamComparison{Comparison: &Comparison{Profile: profile}, WantFrom: wantN, GotFrom: gotN}, nil
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
		// The first difference: a window of each side from the context on.
		win := [2][]Entry{append([]Entry(nil), ring[0]...), append([]Entry(nil), ring[1]...)}
		size := ringBytes
		// wantN and gotN count w and g, which the window holds after the context.
		from := [2]int{wantN - len(ring[0]), gotN - len(ring[1])}
		if w != nil {
			from[0]--
		}
		if g != nil {
			from[1]--
		}
		if w != nil {
			win[0] = append(win[0], *w)
			size += entrySize(w)
		}
		if g != nil {
			win[1] = append(win[1], *g)
			size += entrySize(g)
		}
		for len(win[0]) < maxEntries && len(win[1]) < maxEntries && size < maxBytes {
			w, err := next(want, &wEnd, &wantN, &pendW)
			if err != nil {
				return nil, err
			}
			g, err := next(got, &gEnd, &gotN, &pendG)
			if err != nil {
				return nil, err
			}
			if w == nil && g == nil {
				break
			}
			if w != nil {
				win[0] = append(win[0], *w)
				size += entrySize(w)
			}
			if g != nil {
				win[1] = append(win[1], *g)
				size += entrySize(g)
			}
		}
		// Whether either trace goes on past the window.
		if pendW, err = next(want, &wEnd, &wantN, &pendW); err != nil {
			return nil, err
		}
		if pendG, err = next(got, &gEnd, &gotN, &pendG); err != nil {
			return nil, err
		}
		c := Compare(&Trace{Entries: win[0]}, &Trace{Entries: win[1]}, profile)
		s := &StreamComparison{Comparison: c, WantFrom: from[0], GotFrom: from[1], Cut: pendW != nil || pendG != nil}
		if c.First() >= 0 || !s.Cut {
			// Read both to their end for the errors they may hold.
			for _, side := range []struct {
				src  Source
				end  *bool
				n    *int
				pend **Entry
			}{{want, &wEnd, &wantN, &pendW}, {got, &gEnd, &gotN, &pendG}} {
				for {
					e, err := next(side.src, side.end, side.n, side.pend)
					if err != nil {
						return nil, err
					}
					if e == nil {
						break
					}
				}
			}
			return s, nil
		}
		// The window was cut with every pair in it agreeing: walk on from its end, its last
		// pairs the context.
		n := min(ctxMax, len(win[0]))
		ring = [2][]Entry{append([]Entry(nil), win[0][len(win[0])-n:]...), append([]Entry(nil), win[1][len(win[1])-n:]...)}
		ringBytes = 0
		for i := range ring[0] {
			ringBytes += entrySize(&ring[0][i]) + entrySize(&ring[1][i])
		}
	}
}
