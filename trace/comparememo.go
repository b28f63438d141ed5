package trace

import "github.com/turnstile-dev/turnstile/jsonvalue"

// Memo is what comparing an implementation's trace under one profile remembers: its entries
// expanded, their values decoded (EntryValue) as they are first needed, and the values of
// the objects its entries and the references' write alike, decoded once and shared. A trace
// compared with one reference after another (the reference turned one change at a time) is
// expanded and decoded once; two objects written alike decode to one value, which
// reflect.DeepEqual finds equal without walking it. The comparisons are Compare's: the memo
// only remembers.
type Memo struct {
	profile Profile
	got     []Entry
	// values are got's entries decoded, by index; decoded says which are.
	values  []any
	decoded []bool
	objects *jsonvalue.Memo[any]
}

// NewMemo prepares got to be compared under profile (Memo.Compare).
func NewMemo(got *Trace, profile Profile) *Memo {
	return newMemo(got.Expanded().Entries, profile)
}

func newMemo(got []Entry, profile Profile) *Memo {
	return &Memo{
		profile: profile,
		got:     got,
		values:  make([]any, len(got)),
		decoded: make([]bool, len(got)),
		// Eager: a reference's entry shares the values of the implementation's objects it
		// writes alike. Borrow: the lines decoded are the memo's own (entryValue).
		objects: &jsonvalue.Memo[any]{Eager: true, Borrow: true},
	}
}

// Compare is Compare(want, got, profile) of the memo's trace and profile. The comparisons
// it returns share got's entries and the values of their differences: their readers leave
// them as they are.
func (m *Memo) Compare(want *Trace) *Comparison {
	return compare(want.Expanded().Entries, m.got, m.profile, m)
}

// entryFields is entryFields of the reference's entry w and got's entry i.
func (m *Memo) entryFields(w *Entry, i int) []Field {
	g := &m.got[i]
	if writtenAlike(w, g) {
		return nil
	}
	if !m.decoded[i] {
		m.values[i], m.decoded[i] = m.entryValue(g), true
	}
	return Fields(m.entryValue(w), m.values[i], nil)
}

// entryValue is EntryValue(*e, m.profile), its objects decoded through the memo (from an
// entry's data, at depth 2, to the messages of a turn's context, at 6).
func (m *Memo) entryValue(e *Entry) any {
	line := entryLine(e)
	d := jsonvalue.Decoder{UseNumber: m.profile != Semantic, Memo: m.objects, MemoFrom: 2, MemoTo: 7}
	v, ok := d.Decode(line)
	if !ok {
		return lineValue(line, m.profile)
	}
	if o, ok := v.(map[string]any); ok {
		delete(o, "seq") // the top value is the decoding's own: not remembered
	}
	if m.profile == Semantic {
		v = normalizeStrings(v) // in place, remembered values too: the rules give a normalized text again
	}
	return v
}

// entryLine is an entry's JSON line without its sequence number: what EntryValue reads.
func entryLine(e *Entry) []byte {
	e2 := *e
	e2.Seq = 0
	return e2.appendJSON(nil)
}
