package sim

import "github.com/turnstile-dev/turnstile/trace"

// Room is the memory a trace is written in — its entries, its payloads' bytes, its links —
// kept for a later run (RunIn): a program that runs scenario after scenario and drops each
// trace once judged (explore) then allocates it once, not once a run. The zero Room is empty.
type Room struct {
	entries []trace.Entry // the last trace's, cleared before the next
	chunks  [][]byte
	links   [][]trace.Link
	// nextChunk and nextLinks are the chunks the run in progress takes next.
	nextChunk, nextLinks int
}

// RunIn is Run writing the trace in room, over the trace the room held before: that trace,
// and whatever shares its memory (its entries' payloads, the findings about it), must not be
// used after. A room serves one run at a time; a run that did not end (it hung, or panicked)
// leaves its room to no other. A nil room is Run's fresh memory.
func RunIn(room *Room, sc *Scenario, impl Implementation) (*trace.Trace, error) {
	if room == nil {
		return Run(sc, impl)
	}
	w := newWorld(sc)
	w.room, w.enc.room = room, room
	room.nextChunk, room.nextLinks = 0, 0
	return w.run(impl, false)
}

// entriesFor is the room's entries array, emptied, with room for n entries.
func (r *Room) entriesFor(n int) []trace.Entry {
	clear(r.entries)
	if cap(r.entries) < n {
		r.entries = make([]trace.Entry, 0, n)
	}
	r.entries = r.entries[:0]
	return r.entries
}

// kept takes back the entries of the run that is over, which may have outgrown the room's.
func (r *Room) kept(entries []trace.Entry) { r.entries = entries }

// chunk is the next chunk of the arena, of size bytes at least: the one at the same place in
// the last run when it is large enough, or a new one, kept in its place for the next run.
func (r *Room) chunk(size int) []byte {
	i := r.nextChunk
	r.nextChunk++
	if i < len(r.chunks) && cap(r.chunks[i]) >= size {
		return r.chunks[i][:0]
	}
	c := make([]byte, 0, size)
	if i < len(r.chunks) {
		r.chunks[i] = c
	} else {
		r.chunks = append(r.chunks, c)
	}
	return c
}

// linkChunk is the next chunk of links, as chunk.
func (r *Room) linkChunk() []trace.Link {
	i := r.nextLinks
	r.nextLinks++
	if i < len(r.links) {
		return r.links[i][:0]
	}
	c := make([]trace.Link, 0, maxLinkChunk)
	r.links = append(r.links, c)
	return c
}
