package invariant

import (
	"encoding/json"
	"slices"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// The invariants of Agent traces (protocol §13.2, docs/SEMANTICS.md "The Agent"). A trace is
// an Agent trace when it opens with the world's "user agent" entry, which records the queue
// modes; on any other trace they find nothing.

const agentQueuesDoc = `The Agent's queues (R-AGENT-QUEUES). Every steered or followed-up message reaches the
transcript at most once, in the order it was queued. A poll in one-at-a-time mode (the mode set
last before it) takes at most one message of its queue. A follow-up is never taken while the
run has more to do: it starts a turn only after a turn_end without tool results (the run would
stop there), or as the prompt of a run that continue() started, and never together with
steering.`

const agentRunsDoc = `The Agent's runs (R-AGENT-BUSY, R-AGENT-LISTENERS). Runs never overlap. A prompt or continue
delivered while a run is active is refused; one accepted resolves only after its run's
agent_end, and no run is active once it has resolved. waitForIdle resolves at once when idle,
else only after the active run's agent_end. Every operation gets exactly one outcome, and a
synchronous one (steer, followUp, abort, the setters, state, reset, release) before the next
delivery.`

// agentOp is an operation delivery of an Agent trace, as the invariants read it.
type agentOp struct {
	id, op  string
	message string // canonical JSON of steer's and followUp's message
	mode    string
	queue   string
}

// agentOps reads an Agent trace's operation at entry i, if it is one.
func (v *view) agentOp(i int) (agentOp, bool) {
	e := &v.es[i]
	if e.Kind != trace.KindDeliver || e.Name != trace.DeliverAgent {
		return agentOp{}, false
	}
	d := v.d(i)
	op := agentOp{id: e.Target, op: str(d["op"]), mode: str(d["mode"]), queue: str(d["queue"])}
	if m, ok := d["message"]; ok {
		op.message = canonicalText(m)
	}
	return op, true
}

// agentSetup returns the queue modes of an Agent trace; ok is false for other traces.
func (v *view) agentSetup() (steering, followUp string, ok bool) {
	if !trace.IsAgentTrace(v.es) {
		return "", "", false
	}
	d := v.d(0)
	return str(d["steeringMode"]), str(d["followUpMode"]), true
}

func checkAgentQueues(v *view) []Violation {
	steerMode, followMode, ok := v.agentSetup()
	if !ok {
		return nil
	}
	var vs violations
	var steering, followUps []string // queued, oldest first
	lastTurnEnd := -1                // the run's last turn_end, -1 at a run's start
	startedByContinue := false
	lastContinue := false
	for i := 0; i < len(v.es); i++ {
		e := &v.es[i]
		if op, ok := v.agentOp(i); ok {
			switch op.op {
			case trace.OpSteer:
				steering = append(steering, op.message)
			case trace.OpFollowUp:
				followUps = append(followUps, op.message)
			case trace.OpSetSteeringMode:
				steerMode = op.mode
			case trace.OpSetFollowUpMode:
				followMode = op.mode
			case trace.OpClearQueues:
				if op.queue != "followUp" {
					steering = nil
				}
				if op.queue != "steering" {
					followUps = nil
				}
			}
			lastContinue = op.op == trace.OpContinue
			continue
		}
		if e.Kind == trace.KindOutcome && e.Name == trace.OpReset && str(v.d(i)["outcome"]) == trace.OutcomeAccepted {
			steering, followUps = nil, nil
			continue
		}
		if e.Kind != trace.KindEvent {
			continue
		}
		switch loop.EventType(e.Name) {
		case loop.AgentStart:
			lastTurnEnd, startedByContinue = -1, lastContinue
		case loop.TurnEnd:
			lastTurnEnd = i
		case loop.TurnStart:
			// The messages injected at this turn's start: message_start/message_end pairs.
			var tookSteering, tookFollowUps int
			j := i + 1
			for ; j < len(v.es) && v.isEvent(j, "message_start", "message_end"); j++ {
				if v.es[j].Name != "message_start" {
					continue
				}
				m := canonicalText(v.message(j))
				switch {
				case len(steering) > 0 && steering[0] == m:
					steering = steering[1:]
					tookSteering++
				case len(followUps) > 0 && followUps[0] == m:
					followUps = followUps[1:]
					tookFollowUps++
				case slices.Contains(steering, m) || slices.Contains(followUps, m):
					vs.add(v, j, "a queued message reached the transcript before a message queued earlier on its queue")
				}
			}
			if tookSteering > 1 && steerMode == string(loop.OneAtATime) {
				if lastTurnEnd < 0 && startedByContinue {
					// Two drains may have taken them: continue()'s and the run's first poll.
					vs.add(v, i, "the first turn of a run continue() started took %d steering messages in one-at-a-time mode: a poll takes one, and when continue() from an assistant tail takes one as the prompt, the run's first steering poll answers nothing (R-AGENT-CONTINUE)", tookSteering)
				} else {
					vs.add(v, i, "one poll took %d steering messages in one-at-a-time mode", tookSteering)
				}
			}
			if tookFollowUps > 1 && followMode == string(loop.OneAtATime) {
				vs.add(v, i, "one poll took %d follow-up messages in one-at-a-time mode", tookFollowUps)
			}
			if tookFollowUps > 0 {
				asPrompt := lastTurnEnd < 0 && startedByContinue
				wouldStop := lastTurnEnd >= 0 && len(arr(v.d(lastTurnEnd)["toolResults"])) == 0
				switch {
				case tookSteering > 0:
					vs.add(v, i, "follow-up and steering messages taken for the same turn: a follow-up comes only when no steering is pending")
				case !asPrompt && !wouldStop:
					vs.add(v, i, "a follow-up was taken while the run had more to do (the last turn ran tools, or this is a prompt's run)")
				}
			}
			i = j - 1
		}
	}
	return vs
}

func checkAgentRuns(v *view) []Violation {
	if _, _, ok := v.agentSetup(); !ok {
		return nil
	}
	var vs violations
	type delivered struct {
		op        string
		at        int  // entry index of the delivery
		duringRun bool // delivered while a run was active
		settled   bool
	}
	ops := map[string]*delivered{}
	var order []string
	active := false // a run is active: from agent_start until its starter resolved
	ended := false  // the active run's agent_end has happened
	starter := ""   // the accepted prompt/continue of the active run
	lastDelivery := -1
	for i := range v.es {
		e := &v.es[i]
		if op, ok := v.agentOp(i); ok {
			// Synchronous operations delivered before this one must have their outcome.
			for _, id := range order {
				d := ops[id]
				if !d.settled && !trace.SettlesLater(d.op) && d.at == lastDelivery {
					vs.add(v, i, "operation %s (%s) got no outcome before the next delivery", id, d.op)
					d.settled = true
				}
			}
			ops[op.id] = &delivered{op: op.op, at: i, duringRun: active}
			order = append(order, op.id)
			lastDelivery = i
			continue
		}
		switch {
		case e.Kind == trace.KindEvent && e.Name == string(loop.AgentStart):
			if active {
				vs.add(v, i, "agent_start while a run is active (runs never overlap)")
			}
			active, ended, starter = true, false, ""
			// The run belongs to the latest prompt or continue delivered and not yet settled.
			for k := len(order) - 1; k >= 0; k-- {
				if d := ops[order[k]]; (d.op == trace.OpPrompt || d.op == trace.OpContinue) && !d.settled {
					starter = order[k]
					break
				}
			}
		case e.Kind == trace.KindEvent && e.Name == string(loop.AgentEnd):
			ended = true
		case e.Kind == trace.KindOutcome:
			d := ops[e.Target]
			if d == nil {
				continue // the world already recorded this protocol error
			}
			if d.settled {
				vs.add(v, i, "a second outcome of operation %s (%s)", e.Target, d.op)
				continue
			}
			d.settled = true
			outcome := str(v.d(i)["outcome"])
			switch d.op {
			case trace.OpPrompt, trace.OpContinue:
				switch {
				case outcome == trace.OutcomeRefused:
				case d.duringRun:
					vs.add(v, i, "%s %s was delivered while a run was active and not refused", d.op, e.Target)
				case e.Target != starter:
					vs.add(v, i, "%s %s resolved, but no run of its own started", d.op, e.Target)
				case !ended:
					vs.add(v, i, "%s %s resolved before its run's agent_end", d.op, e.Target)
				default:
					active, starter = false, ""
				}
			case trace.OpWaitForIdle:
				switch {
				case d.duringRun && !ended:
					vs.add(v, i, "waitForIdle %s resolved before the active run's agent_end", e.Target)
				case d.duringRun && active && !v.settlesBeforeNextDelivery(i, starter):
					vs.add(v, i, "waitForIdle %s resolved while the run was not over (its %s %s settles only later: a listener still held it)", e.Target, ops[starter].op, starter)
				}
				if !d.duringRun && lastDelivery != d.at {
					vs.add(v, i, "waitForIdle %s was delivered while idle and did not resolve at once", e.Target)
				}
			}
		}
	}
	for _, id := range order {
		if d := ops[id]; !d.settled && !trace.SettlesLater(d.op) {
			vs.add(v, d.at, "operation %s (%s) got no outcome", id, d.op)
		}
	}
	return vs
}

// settlesBeforeNextDelivery reports whether operation id gets its outcome after entry i and
// before the next operation delivery.
func (v *view) settlesBeforeNextDelivery(i int, id string) bool {
	for j := i + 1; j < len(v.es); j++ {
		switch e := &v.es[j]; {
		case e.Kind == trace.KindOutcome && e.Target == id:
			return true
		case e.Kind == trace.KindDeliver:
			return false
		}
	}
	return false
}

// canonicalText is a decoded JSON value's canonical text (encoding/json sorts object keys),
// to compare messages by value.
func canonicalText(x any) string {
	data, _ := json.Marshal(x)
	return string(data)
}
