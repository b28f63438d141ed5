package sim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// The world's side of Agent scenarios (protocol §13.2): the user's actions become operation
// deliveries, the implementation reports their outcomes, and the session ends with a last
// state operation once the script is exhausted.

// FinalStateID is the id of the state operation that ends every Agent scenario.
const FinalStateID = "final"

// agentWorld is what the world tracks of an Agent scenario.
type agentWorld struct {
	ops      int                // operations scheduled so far (their ids are u1, u2, …)
	sent     map[string]*sentOp // every delivered operation, by id
	order    []*sentOp          // the same, in delivery order
	seen     []int              // events seen per barrier
	held     []bool             // barriers holding the listener
	finalSet bool               // the final state operation is scheduled
}

// sentOp is a delivered operation: when, and whether its outcome came.
type sentOp struct {
	AgentOp
	id      string
	at      int64
	settled bool
}

// agentOps are the operations of user action a, in order: one per steered or followed-up
// message, then the abort, then Op.
func agentOps(a UserAction) []AgentOp {
	var ops []AgentOp
	for _, m := range a.Steer {
		ops = append(ops, AgentOp{Op: trace.OpSteer, Message: m})
	}
	for _, m := range a.FollowUp {
		ops = append(ops, AgentOp{Op: trace.OpFollowUp, Message: m})
	}
	if a.Abort {
		ops = append(ops, AgentOp{Op: trace.OpAbort})
	}
	if a.Op != nil {
		ops = append(ops, *a.Op)
	}
	return ops
}

// opFields are an operation's delivery data but its messages, which the world writes as
// values (wireOp) and the reference reads as JSON.
type opFields struct {
	Op      string   `json:"op"`
	Text    string   `json:"text,omitempty"`
	Mode    string   `json:"mode,omitempty"`
	Queue   string   `json:"queue,omitempty"`
	Tools   []string `json:"tools,omitempty"`
	Barrier string   `json:"barrier,omitempty"`
}

// wireOp is an operation's delivery data, as the world writes it.
type wireOp struct {
	opFields
	Messages []loop.Message `json:"messages,omitempty"`
	Message  loop.Message   `json:"message,omitempty"`
}

// outcomeHead is what the world reads of an outcome.
type outcomeHead struct {
	ID      string `json:"id"`
	Op      string `json:"op"`
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
}

// outcomeOf reads an outcome given in-process as a value, as decoding its JSON would: not
// when a string of it is not UTF-8 (its JSON holds U+FFFD instead).
func outcomeOf(value any) (outcomeHead, bool) {
	var o outcomeHead
	switch x := value.(type) {
	case Outcome:
		o = outcomeHead{x.ID, x.Op, x.Outcome, x.Error}
	case ToolCallOutcome:
		o = outcomeHead{x.ID, x.Op, x.Outcome, x.Error}
	default:
		return o, false
	}
	ok := utf8.ValidString(o.ID) && utf8.ValidString(o.Op) && utf8.ValidString(o.Outcome) && utf8.ValidString(o.Error)
	return o, ok
}

// scheduleOps schedules user action i's operations now, to be delivered once the
// implementation is idle.
func (w *world) scheduleOps(i int) {
	for _, op := range agentOps(w.sc.User[i]) {
		w.agent.ops++
		w.scheduleOp("u"+strconv.Itoa(w.agent.ops), op)
	}
}

func (w *world) scheduleOp(id string, op AgentOp) {
	data := w.enc.valueBytes(wireOp{Messages: op.Messages, Message: op.Message,
		opFields: opFields{Op: op.Op, Text: op.Text, Mode: string(op.Mode), Queue: op.Queue, Tools: op.Tools, Barrier: op.Barrier}})
	s := w.at(w.now, Delivery{Kind: trace.DeliverAgent, Target: id, Data: data})
	s.onRelease = func() {
		sent := &sentOp{AgentOp: op, id: id, at: w.now}
		w.agent.sent[id] = sent
		w.agent.order = append(w.agent.order, sent)
		if op.Op == trace.OpAbort {
			w.reactToAbort()
			for b, bar := range w.sc.Agent.Barriers {
				if bar.UntilAbort {
					w.agent.held[b] = false // its listener returns, if it was given the signal
				}
			}
		}
	}
}

// outcome records an operation's outcome.
func (w *world) outcome(data json.RawMessage, value any) {
	o, ok := outcomeOf(value)
	if !ok {
		_ = json.Unmarshal(data, &o)
	}
	w.record(trace.Entry{Kind: trace.KindOutcome, Name: o.Op, Target: o.ID, Data: data, Error: o.Error})
	if o.Op == OpRunToolCall {
		w.toolCallOutcome(o.ID)
		return
	}
	if w.sc.Agent == nil {
		w.fail("protocol", fmt.Sprintf("an outcome (of operation %q) in a scenario that is not an Agent scenario", o.ID))
		return
	}
	op, ok := w.agent.sent[o.ID]
	switch {
	case !ok:
		w.fail("protocol", fmt.Sprintf("an outcome of operation %q, which was never delivered", o.ID))
		return
	case op.Op != o.Op:
		w.fail("protocol", fmt.Sprintf("the outcome of operation %q names op %q; it was %q", o.ID, o.Op, op.Op))
	case op.settled:
		w.fail("protocol", fmt.Sprintf("a second outcome of operation %q (%s)", o.ID, op.Op))
	}
	op.settled = true
	if op.Op == trace.OpRelease && o.Outcome == trace.OutcomeAccepted {
		for b, bar := range w.sc.Agent.Barriers {
			if bar.ID == op.Barrier {
				w.agent.held[b] = false
			}
		}
	}
}

// agentEvent notes an event of an Agent scenario: a new run has a new abort signal, and the
// barriers count their events.
func (w *world) agentEvent(typ loop.EventType) {
	if typ == loop.AgentStart {
		w.aborted = false
	}
	for b, bar := range w.sc.Agent.Barriers {
		if bar.Event != typ {
			continue
		}
		w.agent.seen[b]++
		if w.agent.seen[b] == max(bar.Nth, 1) {
			w.agent.held[b] = !bar.UntilAbort || !w.aborted // a fired signal holds nothing
		}
	}
}

// finishAgent is called when nothing is scheduled: the first time it schedules the final
// state operation and reports true (go on); then it records what never settled as stuck.
func (w *world) finishAgent() bool {
	if !w.agent.finalSet {
		w.agent.finalSet = true
		w.scheduleOp(FinalStateID, AgentOp{Op: trace.OpState})
		return true
	}
	var open []string
	for _, op := range w.agent.order {
		switch {
		case op.settled:
		case trace.SettlesLater(op.Op):
			open = append(open, fmt.Sprintf("%s %s (delivered at %dms) never settled", op.Op, op.id, op.at))
		case op.id == FinalStateID:
			open = append(open, "the final state operation got no outcome")
		}
	}
	for b, held := range w.agent.held {
		if held {
			open = append(open, fmt.Sprintf("barrier %s still holds the listener", w.sc.Agent.Barriers[b].ID))
		}
	}
	if len(open) > 0 {
		w.fail("stuck", strings.Join(open, "; "))
	}
	return false
}

// agentSetup is the Setup's Agent of the scenario.
func (sc *Scenario) agentSetup() *AgentSetup {
	a := &AgentSetup{
		SteeringMode: string(orDefault(sc.SteeringMode, loop.OneAtATime)),
		FollowUpMode: string(orDefault(sc.FollowUpMode, loop.OneAtATime)),
		SystemPrompt: sc.Agent.SystemPrompt,
	}
	for _, b := range sc.Agent.Barriers {
		a.Barriers = append(a.Barriers, BarrierSetup{ID: b.ID, Event: string(b.Event), Nth: b.Nth, UntilAbort: b.UntilAbort})
	}
	return a
}
