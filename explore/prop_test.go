package explore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestGeneratedInvariants: every invariant holds for the reference on generated scenarios.
func TestGeneratedInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := Scenario().Draw(t, "scenario")
		tr, err := sim.Run(sc, sim.NewReference())
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if fl := invariant.CheckAll(tr); len(fl) > 0 {
			data, _ := scenarios.Write(sc)
			t.Fatalf("%v\nscenario:\n%s\ntimeline:\n%s", fl, data, tr.Timeline())
		}
	})
}

// TestGeneratedDeterminism: the same scenario twice gives the same trace, byte for byte.
func TestGeneratedDeterminism(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := Scenario().Draw(t, "scenario")
		a, _ := sim.Run(sc, sim.NewReference())
		b, _ := sim.Run(sc, sim.NewReference())
		if !bytes.Equal(a.JSONL(), b.JSONL()) {
			d, _ := trace.FirstDivergence(trace.Lines(a.Timeline()), trace.Lines(b.Timeline()), 3)
			t.Fatalf("two runs differ:\n%s", d)
		}
	})
}

// queueModel is the state-machine test of loop.Queue: a model queue (a slice and a mode)
// and the real one take the same actions and must agree after each.
type queueModel struct {
	q     *loop.Queue
	model []loop.Message
	mode  loop.QueueMode
	n     int
}

func (m *queueModel) Enqueue(t *rapid.T) {
	k := rapid.IntRange(1, 3).Draw(t, "count")
	var msgs []loop.Message
	for range k {
		m.n++
		msgs = append(msgs, &loop.UserMessage{Text: fmt.Sprintf("m%d", m.n)})
	}
	m.q.Enqueue(msgs...)
	m.model = append(m.model, msgs...)
}

func (m *queueModel) Drain(t *rapid.T) {
	got := m.q.Drain()
	n := len(m.model)
	if m.mode != loop.All && n > 1 {
		n = 1
	}
	want := m.model[:n]
	m.model = slices.Clone(m.model[n:])
	if !slices.Equal(got, want) {
		t.Fatalf("drain in mode %q: got %v, want %v", m.mode, texts(got), texts(want))
	}
	// What a drain returns is the caller's: changing it must not reach the queue.
	if len(got) > 0 {
		got[0] = &loop.UserMessage{Text: "tampered"}
	}
}

func (m *queueModel) Poll(t *rapid.T) {
	got, err := m.q.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := len(m.model)
	if m.mode != loop.All && n > 1 {
		n = 1
	}
	want := m.model[:n]
	m.model = slices.Clone(m.model[n:])
	if !slices.Equal(got, want) {
		t.Fatalf("poll in mode %q: got %v, want %v", m.mode, texts(got), texts(want))
	}
}

func (m *queueModel) Clear(*rapid.T) {
	m.q.Clear()
	m.model = nil
}

func (m *queueModel) SetMode(t *rapid.T) {
	m.mode = rapid.SampledFrom([]loop.QueueMode{loop.OneAtATime, loop.All, ""}).Draw(t, "mode")
	m.q.SetMode(m.mode)
}

// Check is the invariant: the same length.
func (m *queueModel) Check(t *rapid.T) {
	if m.q.Len() != len(m.model) {
		t.Fatalf("Len %d, model %d", m.q.Len(), len(m.model))
	}
}

func texts(msgs []loop.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.(*loop.UserMessage).Text
	}
	return out
}

// TestQueueStateMachine checks loop.Queue against a model: enqueue, drain and poll in both
// modes, clear, change the mode.
func TestQueueStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]loop.QueueMode{loop.OneAtATime, loop.All, ""}).Draw(t, "initial mode")
		m := &queueModel{q: loop.NewQueue(mode), mode: mode}
		t.Repeat(rapid.StateMachineActions(m))
	})
}
