package sim

import (
	"bytes"
	"encoding/json"

	"github.com/turnstile-dev/turnstile/trace"
)

// Standing is offered by the world an implementation is started with (the Port given to
// Implementation.Start): the answers it promises, for the whole session, to every call of
// some hooks. An implementation that can use them (the protocol's standingAnswers,
// PROTOCOL.md §15) still makes each such call, so that the world records it, but need not
// wait for its answer: the world's answer is the promised one, byte for byte, while the run
// goes on (once the simulation has ended, calls are answered with an error and recorded
// nowhere, as any other).
type Standing interface {
	// StandingAnswers returns the promised answers' data by hook name; nil when there are
	// none. It is decided at the start of the session and does not change during it.
	StandingAnswers() map[string]json.RawMessage
	// Ended reports whether the simulation has ended (a budget stopped the run, or the world
	// closed): every call is answered with an error then, and recorded nowhere.
	Ended() bool
}

// StandingAnswers implements Standing. The queue polls (getSteeringMessages,
// getFollowUpMessages) find their queue empty for the whole session when no user action
// can fill it: a loop scenario without user actions (steering and follow-up messages come
// only from them; an Agent scenario's come from its operations).
func (w *world) StandingAnswers() map[string]json.RawMessage {
	if w.agent != nil || w.valuesOnly || len(w.sc.User) > 0 {
		return nil
	}
	out := map[string]json.RawMessage{}
	if !w.sc.Hooks.NoSteering {
		out[trace.HookSteering] = bytes.Clone(noMessages)
	}
	if !w.sc.Hooks.NoFollowUp {
		out[trace.HookFollowUp] = bytes.Clone(noMessages)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Ended implements Standing.
func (w *world) Ended() bool { return w.closed || w.over != nil }

// Budgeted is offered by the world an implementation is started with: the verdict of the
// budget that stopped the run, so that an implementation served over a protocol can stop
// serving one that runs away instead of answering it until a timeout.
type Budgeted interface {
	// OverBudget is the budget's verdict once one stopped the run; nil before.
	OverBudget() *BudgetError
}

// OverBudget implements Budgeted.
func (w *world) OverBudget() *BudgetError { return w.over }
