package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
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
)

// Entry is one line of a trace, stamped with virtual time T (ms).
type Entry struct {
	Seq    int             `json:"seq"`
	T      int64           `json:"t"`
	Kind   string          `json:"kind"`
	Name   string          `json:"name"`
	Target string          `json:"target,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	Answer json.RawMessage `json:"answer,omitempty"`
	Error  string          `json:"error,omitempty"`
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
	var buf bytes.Buffer
	for _, e := range t.Entries {
		line, err := json.Marshal(e)
		if err != nil {
			line = []byte(fmt.Sprintf(`{"kind":"fail","error":%q}`, err.Error()))
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// Failed reports whether the trace records a failure or a failed run.
func (t *Trace) Failed() bool {
	for _, e := range t.Entries {
		if e.Kind == KindFail {
			return true
		}
	}
	return false
}

// canonicalOf is the canonical JSON of a Go value.
func canonicalOf(v any) json.RawMessage { return appendCanonical(nil, v) }
