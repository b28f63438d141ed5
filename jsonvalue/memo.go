package jsonvalue

import (
	"bytes"
	"hash/maphash"
	"unsafe"
)

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
	// Eager remembers an object the first time its bytes are met (a trace read once, whose
	// objects mostly come back: a streamed partial is delivered, then in its event twice).
	Eager bool
	// Borrow keeps the bytes it is given instead of copying them: whoever sets it leaves the
	// bytes it decodes through the memo unchanged while the memo is in use (a trace's
	// entries, checked once).
	Borrow bool
	// arrays are the last long arrays made, newest last: a context repeats the one before
	// it and adds to its end, and what was made of the elements they share is taken whole.
	arrays []memoArray[T]
	// objects are the objects a Decoder remembers, by the hash of their first MinMemoBytes
	// bytes: an object met again is found without first scanning for its end.
	objects map[uint64][]memoObject[T]
}

// memoObject is an object a Decoder remembers: its bytes, how deeply it nests and its value.
type memoObject[T any] struct {
	raw     []byte
	nesting int
	made    T
}

// object finds a remembered object that in[pos:] begins with: its length, nesting and value.
// Only one can match: an object's bytes end where it closes.
func (m *Memo[T]) object(in []byte, pos int) (n, nesting int, made T, ok bool) {
	if len(m.objects) == 0 || len(in)-pos < MinMemoBytes {
		return 0, 0, made, false
	}
	for _, o := range m.objects[m.prefixHash(in[pos:])] {
		if len(o.raw) <= len(in)-pos && bytes.Equal(in[pos:pos+len(o.raw)], o.raw) {
			return len(o.raw), o.nesting, o.made, true
		}
	}
	return 0, 0, made, false
}

// sighted reports whether raw, an object not remembered, was met before, and notes that it
// was met: whether it is worth remembering now.
func (m *Memo[T]) sighted(raw []byte) bool {
	if m.Eager {
		return true
	}
	if m.seen == nil {
		m.seen = map[uint64]struct{}{}
	}
	h := maphash.Bytes(m.seeded(), raw)
	if _, ok := m.seen[h]; ok {
		return true
	}
	if len(m.seen) < maxSightings {
		m.seen[h] = struct{}{}
	}
	return false
}

// rememberObject remembers what a Decoder made of raw, an object at least MinMemoBytes long
// that nests that deeply, while the memo has room.
func (m *Memo[T]) rememberObject(raw []byte, nesting int, made T, size int) {
	if m.bytes >= maxMemoBytes {
		return
	}
	if m.objects == nil {
		m.objects = map[uint64][]memoObject[T]{}
	}
	if !m.Borrow {
		raw = bytes.Clone(raw)
	}
	h := m.prefixHash(raw)
	if len(m.objects[h]) >= maxPrefixObjects {
		return // objects alike in their first bytes (a text growing delta by delta): a lookup compares them all
	}
	m.objects[h] = append(m.objects[h], memoObject[T]{raw: raw, nesting: nesting, made: made})
	m.bytes += len(raw) + size
}

// prefixHash is the hash of b's first MinMemoBytes bytes.
func (m *Memo[T]) prefixHash(b []byte) uint64 {
	return maphash.Bytes(m.seeded(), b[:MinMemoBytes])
}

// seeded is the memo's hash seed, made at its first use.
func (m *Memo[T]) seeded() maphash.Seed {
	if m.seed == (maphash.Seed{}) {
		m.seed = maphash.MakeSeed()
	}
	return m.seed
}

// memoArray is a long array made before: its bytes from the '[' through its last element,
// the depth it opened at, and what was made of those elements.
type memoArray[T any] struct {
	raw   []byte
	depth int
	made  T
}

const (
	// MinMemoArrayBytes: shorter arrays are not remembered whole.
	MinMemoArrayBytes = 1024
	// memoArrays is how many arrays are remembered whole (a call's lists, a hook's).
	memoArrays = 4
)

// ArrayPrefix finds the longest remembered array, opened at depth, that in[pos:] begins with
// and whose last element is followed there by ',' or ']': n is the length of its bytes (from
// the '[' through that element), made what was made of its elements.
func (m *Memo[T]) ArrayPrefix(in []byte, pos, depth int) (n int, made T, ok bool) {
	for _, a := range m.arrays {
		end := pos + len(a.raw)
		if a.depth != depth || len(a.raw) <= n || end >= len(in) || in[end] != ',' && in[end] != ']' {
			continue
		}
		if bytes.Equal(in[pos:end], a.raw) {
			n, made, ok = len(a.raw), a.made, true
		}
	}
	return n, made, ok
}

// PutArray remembers what was made of the elements of an array opened at depth, raw its bytes
// from the '[' through its last element, when it is long enough; made gives what was made of
// them from what was remembered of the array it extends (the zero T when it extends none),
// whose elements it begins with. It replaces the remembered array it extends, or else the
// oldest. An array that extends the one it replaces grows it in place (its bytes, and what
// made builds on): a context that adds a message to the last one costs its new bytes, not a
// copy of all of them.
func (m *Memo[T]) PutArray(raw []byte, depth int, made func(prev T) T) {
	if len(raw) < MinMemoArrayBytes {
		return
	}
	for i, old := range m.arrays {
		if old.depth == depth && bytes.HasPrefix(raw, old.raw) {
			grown := raw
			if !m.Borrow {
				grown = append(old.raw, raw[len(old.raw):]...)
			}
			a := memoArray[T]{raw: grown, depth: depth, made: made(old.made)}
			m.arrays = append(append(m.arrays[:i:i], m.arrays[i+1:]...), a)
			return
		}
	}
	var none T
	kept := raw
	if !m.Borrow {
		kept = bytes.Clone(raw)
	}
	a := memoArray[T]{raw: kept, depth: depth, made: made(none)}
	if len(m.arrays) == memoArrays {
		m.arrays = append(m.arrays[:0:0], m.arrays[1:]...)
	}
	m.arrays = append(m.arrays, a)
}

const (
	// MinMemoBytes: objects shorter are made again each time (cheaper than remembering).
	MinMemoBytes = 64
	maxMemoBytes = 64 << 20
	maxSightings = 1 << 20
	// maxPrefixObjects bounds the objects remembered that begin with the same MinMemoBytes
	// bytes, so that finding one compares a few.
	maxPrefixObjects = 16
)

// Get returns what is remembered for raw. When nothing is, remember reports whether raw was
// met before, so that what is made of it now is worth a Put.
func (m *Memo[T]) Get(raw []byte) (v T, ok, remember bool) {
	if v, ok := m.values[string(raw)]; ok {
		return v, true, false
	}
	if m.Eager {
		return v, false, true
	}
	if m.seen == nil {
		m.seen = map[uint64]struct{}{}
	}
	h := maphash.Bytes(m.seeded(), raw)
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
	if m.Borrow {
		m.values[unsafe.String(unsafe.SliceData(raw), len(raw))] = v
	} else {
		m.values[string(raw)] = v
	}
	m.bytes += len(raw) + size
}

// Len is the number of objects remembered.
func (m *Memo[T]) Len() int {
	n := len(m.values)
	for _, list := range m.objects {
		n += len(list)
	}
	return n
}
