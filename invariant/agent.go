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
transcript at most once, in the order it was queued (a run the Agent ended with its error turn
may have taken messages it never delivered). A poll in one-at-a-time mode (the mode set last
before it) takes at most one message of its queue. A follow-up is never taken while the run has
more to do: it starts a turn only after a turn_end without tool results or whose batch
terminated (the run would stop there), or as the prompt of a run that continue() started, and
never together with steering (but for steering its first poll takes after that prompt).`

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
	// The current turn's tool results: how many, and whether all asked to terminate; and
	// whether the last turn's batch terminated the run (R-TERM-UNANIMOUS).
	results, terminating, lastTerminated := 0, true, false
	startedByContinue := false
	lastContinue := false
	// inject is the turn_start whose injected messages (the message_start/message_end pairs
	// before the turn's request) are being read, -1 outside them; operations may come
	// between them while a listener holds the run.
	inject := -1
	var tookSteering, tookFollowUps int
	// A poll's mode is the one set last before it, and a listener may hold the run between a
	// poll and what it took, while operations set modes: steerAll and followAll say whether
	// mode all held at some point between the last moment before the poll (a turn_end, or the
	// prompt or continue starting the run) and the first message taken.
	steerAll, followAll := steerMode == string(loop.All), followMode == string(loop.All)
	pollWindow := func() {
		steerAll, followAll = steerMode == string(loop.All), followMode == string(loop.All)
	}
	endInjection := func() {
		i := inject
		inject = -1
		if tookSteering > 1 && !steerAll {
			if lastTurnEnd < 0 && startedByContinue {
				// Two drains may have taken them: continue()'s and the run's first poll.
				vs.add(v, i, "the first turn of a run continue() started took %d steering messages in one-at-a-time mode: a poll takes one, and when continue() from an assistant tail takes one as the prompt, the run's first steering poll answers nothing (R-AGENT-CONTINUE)", tookSteering)
			} else {
				vs.add(v, i, "one poll took %d steering messages in one-at-a-time mode", tookSteering)
			}
		}
		if tookFollowUps > 1 && !followAll {
			vs.add(v, i, "one poll took %d follow-up messages in one-at-a-time mode", tookFollowUps)
		}
		if tookFollowUps > 0 {
			asPrompt := lastTurnEnd < 0 && startedByContinue
			wouldStop := lastTurnEnd >= 0 && (len(arr(v.d(lastTurnEnd)["toolResults"])) == 0 || lastTerminated)
			switch {
			case tookSteering > 0 && !asPrompt:
				// (continue() takes follow-ups as its prompt; its run's first poll may then take
				// steering queued meanwhile.)
				vs.add(v, i, "follow-up and steering messages taken for the same turn: a follow-up comes only when no steering is pending")
			case !asPrompt && !wouldStop:
				vs.add(v, i, "a follow-up was taken while the run had more to do (the last turn ran tools, or this is a prompt's run)")
			}
		}
	}
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
			case trace.OpPrompt, trace.OpContinue:
				pollWindow()
			case trace.OpClearQueues:
				if op.queue != "followUp" {
					steering = nil
				}
				if op.queue != "steering" {
					followUps = nil
				}
			}
			if tookSteering+tookFollowUps == 0 {
				steerAll = steerAll || steerMode == string(loop.All)
				followAll = followAll || followMode == string(loop.All)
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
		injected := v.isEvent(i, "message_start", "message_end") && v.role(i) != "assistant"
		if inject >= 0 && !injected {
			endInjection()
		}
		switch loop.EventType(e.Name) {
		case loop.AgentStart:
			lastTurnEnd, startedByContinue = -1, lastContinue
		case loop.AgentEnd:
			if v.endsWithErrorTurn(i) {
				// A poll of the failed run may have taken messages it never delivered: they
				// are no longer followed.
				steering, followUps = nil, nil
			}
		case loop.ToolExecutionEnd:
			results++
			terminating = terminating && obj(v.d(i)["result"])["terminate"] == true
		case loop.TurnEnd:
			lastTurnEnd = i
			pollWindow()
			lastTerminated = results > 0 && terminating && str(v.message(i)["stopReason"]) != "length"
			results, terminating = 0, true
		case loop.TurnStart:
			inject, tookSteering, tookFollowUps = i, 0, 0
		case loop.MessageStart:
			if inject < 0 || !injected {
				break
			}
			m := canonicalText(v.message(i))
			switch {
			case len(steering) > 0 && steering[0] == m:
				steering = steering[1:]
				tookSteering++
			case len(followUps) > 0 && followUps[0] == m:
				followUps = followUps[1:]
				tookFollowUps++
			case slices.Contains(steering, m) || slices.Contains(followUps, m):
				vs.add(v, i, "a queued message reached the transcript before a message queued earlier on its queue")
			}
		}
	}
	if inject >= 0 {
		endInjection()
	}
	return vs
}

// endsWithErrorTurn reports whether the agent_end at entry i ends a run the Agent ended with
// its error turn (R-AGENT-ERROR-TURN): message_start, message_end and turn_end of an error
// or aborted assistant message right after what failed the run.
func (v *view) endsWithErrorTurn(i int) bool {
	var ev []int
	for j := i - 1; j >= 0 && len(ev) < 3; j-- {
		if v.es[j].Kind == trace.KindEvent {
			ev = append(ev, j)
		}
	}
	if len(ev) < 3 || !v.isEvent(ev[0], "turn_end") || !v.isEvent(ev[1], "message_end") || !v.isEvent(ev[2], "message_start") || v.role(ev[2]) != "assistant" {
		return false
	}
	stop := str(v.message(ev[2])["stopReason"])
	return (stop == string(loop.StopError) || stop == string(loop.StopAborted)) && failedJustBefore(v.es[:ev[2]])
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
