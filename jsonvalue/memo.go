package jsonvalue

import "hash/maphash"

// Memo remembers what was made of the bytes of objects met more than once: their decoded
// value (Decoder), their canonical form (the simulator's canonicalizer). An object is
// remembered the second time its bytes are met, so that objects met once (a streamed partial
// message, which grows with every event) cost a hash and not a copy; memory is bounded by
// maxMemoBytes of remembered objects (their bytes and an estimate of what was made of them)
// and maxSightings of objects met once.
type Memo[T any] struct {
	values map[string]T
	seen   map[uint64]struct{}
	seed   maphash.Seed
	bytes  int
	// numbers is the way the values a Decoder remembers hold numbers: 0 not decided yet,
	// 1 float64, 2 json.Number.
	numbers int8
}

const (
	// MinMemoBytes: objects shorter are made again each time (cheaper than remembering).
	MinMemoBytes = 64
	maxMemoBytes = 64 << 20
	maxSightings = 1 << 20
)

// Get returns what is remembered for raw. When nothing is, remember reports whether raw was
// met before, so that what is made of it now is worth a Put.
func (m *Memo[T]) Get(raw []byte) (v T, ok, remember bool) {
	if v, ok := m.values[string(raw)]; ok {
		return v, true, false
	}
	if m.seen == nil {
		m.seen, m.seed = map[uint64]struct{}{}, maphash.MakeSeed()
	}
	h := maphash.Bytes(m.seed, raw)
	if _, ok := m.seen[h]; ok {
		return v, false, true
	}
	if len(m.seen) < maxSightings {
		m.seen[h] = struct{}{}
	}
	return v, false, false
}

// Put remembers v, made of raw and weighing about size bytes, while the memo has room.
func (m *Memo[T]) Put(raw []byte, v T, size int) {
	if m.bytes >= maxMemoBytes {
		return
	}
	if m.values == nil {
		m.values = map[string]T{}
	}
	m.values[string(raw)] = v
	m.bytes += len(raw) + size
}

// Len is the number of objects remembered.
func (m *Memo[T]) Len() int { return len(m.values) }
