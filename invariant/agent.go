package invariant

import (
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
	message any // steer's and followUp's message; noMessage when the delivery has none
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
	op := agentOp{id: e.Target, op: str(d["op"]), mode: str(d["mode"]), queue: str(d["queue"]), message: noMessage{}}
	if m, ok := d["message"]; ok {
		op.message = m
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
	q := queueWatch{v: v, vs: &vs, steerMode: steerMode, followMode: followMode, lastTurnEnd: -1, terminating: true, inject: -1}
	q.pollWindow()
	for i := 0; i < len(v.es); i++ {
		e := &v.es[i]
		if op, ok := v.agentOp(i); ok {
			q.operation(op)
			continue
		}
		if e.Kind == trace.KindOutcome && e.Name == trace.OpReset && str(v.d(i)["outcome"]) == trace.OutcomeAccepted {
			q.steering, q.followUps = nil, nil
			continue
		}
		if e.Kind == trace.KindEvent {
			q.event(i, e.Name)
		}
	}
	if q.inject >= 0 {
		q.endInjection()
	}
	return vs
}

// queueWatch follows an Agent trace's queues for checkAgentQueues.
type queueWatch struct {
	v                     *view
	vs                    *violations
	steerMode, followMode string
	steering, followUps   []any // queued messages, oldest first
	lastTurnEnd           int   // the run's last turn_end, -1 at a run's start
	// The current turn's tool results: how many, and whether all asked to terminate; and
	// whether the last turn's batch terminated the run (R-TERM-UNANIMOUS).
	results                     int
	terminating, lastTerminated bool
	startedByContinue           bool
	lastContinue                bool
	// running is set from a run's agent_start to its agent_end: a prompt or continue delivered
	// meanwhile is refused (pi: "Agent is already processing a prompt") and starts nothing.
	running bool
	// inject is the turn_start whose injected messages (the message_start/message_end pairs
	// before the turn's request) are being read, -1 outside them; operations may come
	// between them while a listener holds the run.
	inject                      int
	tookSteering, tookFollowUps int
	// A poll's mode is the one set last before it, but a listener may hold the run between a
	// poll and what it took while operations set modes: steerAll and followAll say whether
	// mode all held at some point between the last moment before the poll (a turn_end, or the
	// prompt or continue starting the run) and the first message taken.
	steerAll, followAll bool
}

// pollWindow opens the window of a poll's mode at the current modes.
func (q *queueWatch) pollWindow() {
	q.steerAll, q.followAll = q.steerMode == string(loop.All), q.followMode == string(loop.All)
}

// operation applies an operation delivery to the queues and modes.
func (q *queueWatch) operation(op agentOp) {
	switch op.op {
	case trace.OpSteer:
		q.steering = append(q.steering, op.message)
	case trace.OpFollowUp:
		q.followUps = append(q.followUps, op.message)
	case trace.OpSetSteeringMode:
		q.steerMode = op.mode
	case trace.OpSetFollowUpMode:
		q.followMode = op.mode
	case trace.OpPrompt, trace.OpContinue:
		if q.running {
			return // refused: the run's windows and how it started stand
		}
		q.pollWindow()
	case trace.OpClearQueues:
		if op.queue != "followUp" {
			q.steering = nil
		}
		if op.queue != "steering" {
			q.followUps = nil
		}
	}
	if q.tookSteering+q.tookFollowUps == 0 {
		q.steerAll = q.steerAll || q.steerMode == string(loop.All)
		q.followAll = q.followAll || q.followMode == string(loop.All)
	}
	q.lastContinue = op.op == trace.OpContinue
}

// event follows the run's turns and the messages injected at a turn's start.
func (q *queueWatch) event(i int, name string) {
	v := q.v
	injected := v.isEvent(i, "message_start", "message_end") && v.role(i) != "assistant"
	if q.inject >= 0 && !injected {
		q.endInjection()
	}
	switch loop.EventType(name) {
	case loop.AgentStart:
		q.lastTurnEnd, q.startedByContinue, q.running = -1, q.lastContinue, true
	case loop.AgentEnd:
		q.running = false
		if v.endsWithErrorTurn(i) {
			// A poll of the failed run may have taken messages it never delivered: they
			// are no longer followed.
			q.steering, q.followUps = nil, nil
		}
	case loop.ToolExecutionEnd:
		q.results++
		q.terminating = q.terminating && obj(v.d(i)["result"])["terminate"] == true
	case loop.TurnEnd:
		q.lastTurnEnd = i
		q.pollWindow()
		q.lastTerminated = q.results > 0 && q.terminating && str(v.message(i)["stopReason"]) != "length"
		q.results, q.terminating = 0, true
	case loop.TurnStart:
		q.inject, q.tookSteering, q.tookFollowUps = i, 0, 0
	case loop.MessageStart:
		if q.inject >= 0 && injected {
			q.take(i)
		}
	}
}

// take matches the message injected at entry i with the head of a queue.
func (q *queueWatch) take(i int) {
	var m any // null, as a message that is not an object is read
	if msg := q.v.message(i); msg != nil {
		m = msg
	}
	is := func(x any) bool { return identical(x, m) }
	switch {
	case len(q.steering) > 0 && is(q.steering[0]):
		q.steering = q.steering[1:]
		q.tookSteering++
	case len(q.followUps) > 0 && is(q.followUps[0]):
		q.followUps = q.followUps[1:]
		q.tookFollowUps++
	case slices.ContainsFunc(q.steering, is) || slices.ContainsFunc(q.followUps, is):
		q.vs.add(q.v, i, "a queued message reached the transcript before a message queued earlier on its queue")
	}
}

// endInjection judges what the polls of the turn being started took.
func (q *queueWatch) endInjection() {
	v, i := q.v, q.inject
	q.inject = -1
	if q.tookSteering > 1 && !q.steerAll {
		if q.lastTurnEnd < 0 && q.startedByContinue {
			// Two drains may have taken them: continue()'s and the run's first poll.
			q.vs.addRule(v, i, "R-AGENT-CONTINUE", "the first turn of a run continue() started took %d steering messages in one-at-a-time mode: a poll takes one, and when continue() from an assistant tail takes one as the prompt, the run's first steering poll answers nothing (R-AGENT-CONTINUE)", q.tookSteering)
		} else {
			q.vs.add(v, i, "the polls before one turn took %d steering messages in one-at-a-time mode (a poll takes one)", q.tookSteering)
		}
	}
	if q.tookFollowUps > 1 && !q.followAll {
		q.vs.add(v, i, "the polls before one turn took %d follow-up messages in one-at-a-time mode (a poll takes one)", q.tookFollowUps)
	}
	if q.tookFollowUps > 0 {
		asPrompt := q.lastTurnEnd < 0 && q.startedByContinue
		wouldStop := q.lastTurnEnd >= 0 && (len(arr(v.d(q.lastTurnEnd)["toolResults"])) == 0 || q.lastTerminated)
		switch {
		case q.tookSteering > 0 && !asPrompt:
			// continue() takes follow-ups as its prompt; its run's first poll may then take
			// steering queued meanwhile.
			q.vs.add(v, i, "follow-up and steering messages taken for the same turn: a follow-up comes only when no steering is pending")
		case !asPrompt && !wouldStop:
			q.vs.add(v, i, "a follow-up was taken while the run had more to do (the last turn ran tools, or this is a prompt's run)")
		}
	}
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
	r := runWatch{v: v, vs: &vs, ops: map[string]*deliveredOp{}, lastDelivery: -1}
	for i := range v.es {
		e := &v.es[i]
		if op, ok := v.agentOp(i); ok {
			r.delivery(i, op)
			continue
		}
		switch {
		case e.Kind == trace.KindEvent && e.Name == string(loop.AgentStart):
			r.agentStart(i)
		case e.Kind == trace.KindEvent && e.Name == string(loop.AgentEnd):
			r.ended = true
		case e.Kind == trace.KindOutcome:
			r.outcome(i, e.Target)
		}
	}
	for _, id := range r.order {
		if d := r.ops[id]; !d.settled && !trace.SettlesLater(d.op) {
			vs.add(v, d.at, "operation %s (%s) got no outcome", id, d.op)
		}
	}
	return vs
}

// deliveredOp is an operation delivered to the Agent, as checkAgentRuns follows it.
type deliveredOp struct {
	op        string
	at        int  // entry index of the delivery
	duringRun bool // delivered while a run was active
	settled   bool
}

// runWatch follows an Agent trace's runs and operations for checkAgentRuns.
type runWatch struct {
	v            *view
	vs           *violations
	ops          map[string]*deliveredOp
	order        []string // operation ids in delivery order
	active       bool     // a run is active: from agent_start until its starter resolved
	ended        bool     // the active run's agent_end has happened
	starter      string   // the accepted prompt/continue of the active run
	lastDelivery int
}

// delivery records operation op delivered at entry i, after checking that the synchronous
// operations delivered before it got their outcome.
func (r *runWatch) delivery(i int, op agentOp) {
	for _, id := range r.order {
		d := r.ops[id]
		if !d.settled && !trace.SettlesLater(d.op) && d.at == r.lastDelivery {
			r.vs.add(r.v, i, "operation %s (%s) got no outcome before the next delivery", id, d.op)
			d.settled = true
		}
	}
	r.ops[op.id] = &deliveredOp{op: op.op, at: i, duringRun: r.active}
	r.order = append(r.order, op.id)
	r.lastDelivery = i
}

// agentStart starts a run at entry i, which belongs to the latest prompt or continue
// delivered and not yet settled.
func (r *runWatch) agentStart(i int) {
	if r.active {
		r.vs.add(r.v, i, "agent_start while a run is active (runs never overlap)")
	}
	r.active, r.ended, r.starter = true, false, ""
	for k := len(r.order) - 1; k >= 0; k-- {
		if d := r.ops[r.order[k]]; (d.op == trace.OpPrompt || d.op == trace.OpContinue) && !d.settled {
			r.starter = r.order[k]
			break
		}
	}
}

// outcome checks the outcome at entry i of operation id.
func (r *runWatch) outcome(i int, id string) {
	v := r.v
	d := r.ops[id]
	if d == nil {
		return // the world already recorded this protocol error
	}
	if d.settled {
		r.vs.add(v, i, "a second outcome of operation %s (%s)", id, d.op)
		return
	}
	d.settled = true
	outcome := str(v.d(i)["outcome"])
	switch d.op {
	case trace.OpPrompt, trace.OpContinue:
		switch {
		case outcome == trace.OutcomeRefused:
		case d.duringRun:
			r.vs.add(v, i, "%s %s was delivered while a run was active and not refused", d.op, id)
		case id != r.starter:
			r.vs.add(v, i, "%s %s resolved, but no run of its own started", d.op, id)
		case !r.ended:
			r.vs.add(v, i, "%s %s resolved before its run's agent_end", d.op, id)
		default:
			r.active, r.starter = false, ""
		}
	case trace.OpWaitForIdle:
		switch {
		case d.duringRun && !r.ended:
			r.vs.add(v, i, "waitForIdle %s resolved before the active run's agent_end", id)
		case d.duringRun && r.active && !v.settlesBeforeNextDelivery(i, r.starter):
			r.vs.add(v, i, "waitForIdle %s resolved while the run was not over (its %s %s settles only later: a listener still held it)", id, r.ops[r.starter].op, r.starter)
		}
		if !d.duringRun && r.lastDelivery != d.at {
			r.vs.add(v, i, "waitForIdle %s was delivered while idle and did not resolve at once", id)
		}
	}
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

// noMessage is the message of an operation delivered without one: no message injected is
// identical to it.
type noMessage struct{}

// identical reports whether two decoded JSON values have the same canonical text, as
// encoding/json writes it: same but for a zero, whose sign the text keeps.
func identical(a, b any) bool { return equalValues(a, b, true) }
