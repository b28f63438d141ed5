package trace

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// Entry kinds of a trace.
const (
	// KindEvent is a loop event the implementation emitted.
	KindEvent = "event"
	// KindCall is a call of the implementation into the world, with the world's answer.
	KindCall = "call"
	// KindDeliver is a delivery the world released to the implementation.
	KindDeliver = "deliver"
	// KindUser is an action of the simulated user on the world's own state (enqueue).
	KindUser = "user"
	// KindEnd is the end of the run as the implementation reported it.
	KindEnd = "end"
	// KindFail is a failure of the scenario or the implementation, found by the world.
	KindFail = "fail"
	// KindOutcome is the outcome of an Agent operation, as the implementation reported it:
	// Name is the op, Target its id, Data {id, op, outcome, error?, state?}.
	KindOutcome = "outcome"
)

// UserAgentEntry names the world's first entry of an Agent trace (kind user): the Agent's
// setup, whose queue modes the Agent invariants judge its polls by.
const UserAgentEntry = "agent"

// IsAgentTrace reports whether entries are an Agent scenario's trace.
func IsAgentTrace(entries []Entry) bool {
	return len(entries) > 0 && entries[0].Kind == KindUser && entries[0].Name == UserAgentEntry
}

// Entry is one line of a trace, stamped with virtual time T (ms).
type Entry struct {
	Seq    int             `json:"seq"`
	T      int64           `json:"t"`
	Kind   string          `json:"kind"`
	Name   string          `json:"name"`
	Target string          `json:"target,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	// Link, in the linear form of a trace, says what Data leaves out and which earlier
	// entries hold it (see Link); nil when Data is written in full. Trace.Expand restores it.
	Link   *Link           `json:"link,omitempty"`
	Answer json.RawMessage `json:"answer,omitempty"`
	Error  string          `json:"error,omitempty"`

	// Canonical says Data and Answer are canonical JSON (compact, valid, keys sorted, escaped
	// as encoding/json escapes), so lines copy them as they are and links are restored on
	// their bytes. The world sets it on every entry it records; it is not part of the line.
	Canonical bool `json:"-"`
}

// Trace is the ordered record of one simulated run.
type Trace struct {
	Scenario string
	Entries  []Entry
	// Unfired lists, by index, the scenario's user actions that never happened: a trigger
	// that did not fire, or a time the run did not reach. It is not part of the JSON lines.
	Unfired []int
}

// JSONL renders the trace as canonical JSON lines: one entry a line, object keys sorted, no
// insignificant space. The same run always gives the same bytes.
func (t *Trace) JSONL() []byte {
	size := int64(0)
	for i := range t.Entries {
		size += LineSize(&t.Entries[i]) // exact for the entries the world records
	}
	buf := make([]byte, 0, size)
	for i := range t.Entries {
		buf = t.Entries[i].appendJSON(buf)
		buf = append(buf, '\n')
	}
	return buf
}

// appendJSON appends the entry as json.Marshal writes it (members in field order), without
// reflection for the entries the world recorded, whose payloads are canonical already.
func (e *Entry) appendJSON(b []byte) []byte {
	if !e.Canonical {
		line, err := json.Marshal(e)
		if err != nil {
			line = []byte(fmt.Sprintf(`{"kind":"fail","error":%q}`, err.Error()))
		}
		return append(b, line...)
	}
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, int64(e.Seq), 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, e.T, 10)
	b = append(b, `,"kind":`...)
	b = jsonvalue.AppendString(b, e.Kind)
	b = append(b, `,"name":`...)
	b = jsonvalue.AppendString(b, e.Name)
	if e.Target != "" {
		b = append(b, `,"target":`...)
		b = jsonvalue.AppendString(b, e.Target)
	}
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	if e.Link != nil {
		b = append(b, `,"link":`...)
		b = appendLink(b, e.Link)
	}
	if len(e.Answer) > 0 {
		b = append(b, `,"answer":`...)
		b = append(b, e.Answer...)
	}
	if e.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonvalue.AppendString(b, e.Error)
	}
	return append(b, '}')
}

// Failed reports whether the trace records a failure or a failed run.
func (t *Trace) Failed() bool { return t.Failure() != nil }

// Failure is the first failure the trace records (a KindFail entry), nil when there is none.
func (t *Trace) Failure() *Entry {
	for i := range t.Entries {
		if t.Entries[i].Kind == KindFail {
			return &t.Entries[i]
		}
	}
	return nil
}

// LineSize is the length of e's line in Trace.JSONL, newline included, computed without
// encoding it: the world records canonical payloads, which the line holds as they are
// (canonical JSON escapes <, >, &, U+2028 and U+2029 already, as json.Marshal would).
func LineSize(e *Entry) int64 {
	n := LineSizeUnlinked(e)
	if e.Link != nil {
		n += int64(len(`,"link":`) + linkSize(e.Link))
	}
	return n
}

// LineSizeUnlinked is LineSize of e without its link member: with the bytes the link leaves
// out added, the size of its line in the trace in full.
func LineSizeUnlinked(e *Entry) int64 {
	n := len(`{"seq":,"t":,"kind":,"name":}`) + 1
	n += decimalLen(int64(e.Seq)) + decimalLen(e.T)
	n += jsonvalue.StringSize(e.Kind) + jsonvalue.StringSize(e.Name)
	if e.Target != "" {
		n += len(`,"target":`) + jsonvalue.StringSize(e.Target)
	}
	if len(e.Data) > 0 {
		n += len(`,"data":`) + len(e.Data)
	}
	if len(e.Answer) > 0 {
		n += len(`,"answer":`) + len(e.Answer)
	}
	if e.Error != "" {
		n += len(`,"error":`) + jsonvalue.StringSize(e.Error)
	}
	return int64(n)
}

// decimalLen is len(strconv.FormatInt(v, 10)), without writing it.
func decimalLen(v int64) int {
	n := 1
	u := uint64(v)
	if v < 0 {
		n, u = 2, uint64(-v) // -MinInt64 wraps to itself, which as unsigned is its magnitude
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}
