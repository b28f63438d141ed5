package trace

import "encoding/json"

// ExpandByDecoding is Expand restoring every link by decoding, never on the bytes.
func (t *Trace) ExpandByDecoding() (*Trace, error) { return t.expand(byDecoding) }

// ExpandOnBytes is Expand restoring every link on the bytes: an error where it cannot.
func (t *Trace) ExpandOnBytes() (*Trace, error) { return t.expand(onBytesOnly) }

// StreamLineByDecoding is a stream call's timeline line with its data decoded, never read on
// the bytes.
func StreamLineByDecoding(e Entry) string { return streamLine(e, false) }

// DescribeStream is a stream call's timeline line as the timeline writes it.
func DescribeStream(e Entry) string { return describeStream(e) }

// ReadsStreamOnBytes reports whether a stream call's line is read on the bytes of its data.
func ReadsStreamOnBytes(e Entry) bool {
	var s, k, m string
	var o json.RawMessage
	_, ok := contextOf(e.Data)
	_, ok2 := streamMembers(e.Data, &s, &k, &o, &m)
	return ok && ok2
}

// CompareStreamWithin is CompareStream with a window of maxEntries and maxBytes each side.
func CompareStreamWithin(want, got Source, profile Profile, context, maxEntries, maxBytes int) (*StreamComparison, error) {
	return compareStream(want, got, profile, context, maxEntries, maxBytes)
}

// NewExpanderHolding is NewExpander holding only the last keep recent entries (besides those
// the linear form's links name).
func NewExpanderHolding(keep int) *Expander {
	x := NewExpander()
	x.keep = keep
	return x
}
