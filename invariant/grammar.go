package invariant

import "github.com/turnstile-dev/turnstile/trace"

const grammarDoc = `The shape of a run. The first event is agent_start; a run that returned has exactly one
agent_end, its last event, and a failed run (an end entry with an error) has none; nothing
follows the end of the run. turn_start and turn_end alternate, and every turn that ended made
exactly one provider request (requests == turns; an open turn of a failed run made at most one).
Messages open and close one at a time (message_start, message_end, same role, the same message
unless it is an assistant's), message_update only inside an assistant message, and every message
and tool event is inside a turn. Per tool-call id, within a turn: exactly one
tool_execution_start and one tool_execution_end, start first, with its updates and its tool call
between them.`

func checkGrammar(v *view) []Violation {
	var vs violations
	first, events := firstEvent(v)
	checkRunOutcome(v, &vs, first, events)
	checkRunEnds(v, &vs, first, events)
	g := grammarWalk{v: v, vs: &vs, openMsg: -1}
	for i, e := range v.es {
		switch e.Kind {
		case trace.KindCall:
			g.call(i, e.Name)
		case trace.KindEvent:
			g.event(i, e.Name)
		}
	}
	g.finish()
	return vs
}

// firstEvent returns the index of the trace's first event (-1 when none) and how many events
// it has.
func firstEvent(v *view) (first, events int) {
	first = -1
	for i, e := range v.es {
		if e.Kind == trace.KindEvent {
			events++
			if first < 0 {
				first = i
			}
		}
	}
	return first, events
}

// checkRunOutcome checks that the run returned and opened with agent_start.
func checkRunOutcome(v *view, vs *violations, first, events int) {
	switch {
	case v.endIdx < 0:
		vs.add(v, -1, "the trace has no end of run: the implementation never returned")
	case events == 0:
		if !v.failed {
			vs.addRule(v, v.endIdx, "R-EV-GRAMMAR", "the run returned without emitting any event")
		}
	default:
		if v.es[first].Name != "agent_start" {
			vs.addRule(v, first, "R-EV-GRAMMAR", "the first event is %s, not agent_start", v.es[first].Name)
		}
	}
}

// checkRunEnds checks one agent_start, one agent_end (none in a failed run) and nothing after
// the end of the run.
func checkRunEnds(v *view, vs *violations, first, events int) {
	agentEnds := 0
	for i, e := range v.es {
		if v.endIdx >= 0 && i > v.endIdx && e.Kind != trace.KindFail {
			vs.addRule(v, i, "R-EV-GRAMMAR", "%s %s after the end of the run", e.Kind, e.Name)
		}
		if e.Kind != trace.KindEvent {
			continue
		}
		switch e.Name {
		case "agent_start":
			if i != first {
				vs.addRule(v, i, "R-EV-GRAMMAR", "a second agent_start")
			}
		case "agent_end":
			agentEnds++
			if v.failed {
				vs.addRule(v, i, "R-EV-ONE-END", "agent_end in a run that failed")
			}
			if agentEnds > 1 {
				vs.addRule(v, i, "R-EV-ONE-END", "a second agent_end")
			}
		default:
			if v.agentEnd >= 0 && i > v.agentEnd {
				vs.addRule(v, i, "R-EV-ONE-END", "%s after agent_end", e.Name)
			}
		}
	}
	if v.endIdx >= 0 && !v.failed && events > 0 && agentEnds == 0 {
		vs.addRule(v, v.endIdx, "R-EV-ONE-END", "the run returned without agent_end")
	}
}

// grammarWalk follows turns, provider requests, messages and tool executions entry by entry.
type grammarWalk struct {
	v       *view
	vs      *violations
	inTurn  bool
	streams int                   // provider requests in the current turn
	openMsg int                   // index of the open message_start, -1 when none
	tools   map[string]*toolState // the current turn's tool executions by tool-call id
}

// toolState is where a tool execution started and ended (-1 while open).
type toolState struct{ start, end int }

// call checks a provider request or a tool call at entry i.
func (g *grammarWalk) call(i int, name string) {
	v := g.v
	switch name {
	case trace.CallStream:
		if !g.inTurn {
			g.vs.addRule(v, i, "R-TURN-REQUEST", "a provider request outside a turn")
		}
		g.streams++
		if g.streams > 1 {
			g.vs.addRule(v, i, "R-TURN-REQUEST", "a second provider request in one turn")
		}
	case trace.CallTool:
		id := str(v.d(i)["toolCallId"])
		ts := g.tools[id]
		if ts == nil || ts.end >= 0 {
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "tool call %s is not between its tool_execution_start and _end", id)
		}
	}
}

// event checks the event at entry i; while a message is open, only its updates and end may come.
func (g *grammarWalk) event(i int, name string) {
	v := g.v
	switch name {
	case "turn_start":
		if g.inTurn {
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "turn_start inside an open turn")
		}
		g.inTurn, g.streams, g.tools = true, 0, map[string]*toolState{}
	case "turn_end":
		g.turnEnd(i)
	case "agent_end":
		if g.inTurn {
			g.vs.addRule(v, i, "R-EV-ONE-END", "agent_end inside an open turn")
		}
	case "message_start", "message_end", "message_update":
		g.message(i, name)
		return
	case "tool_execution_start", "tool_execution_update", "tool_execution_end":
		if !g.inTurn {
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "%s outside a turn", name)
			return
		}
		g.tool(i, name)
	}
	if g.openMsg >= 0 && name != "message_update" {
		g.vs.addRule(v, i, "R-EV-GRAMMAR", "%s while the message of entry %d is open", name, v.seq(g.openMsg))
	}
}

// turnEnd checks that the turn ending at entry i was open, made one request and ended its tools.
func (g *grammarWalk) turnEnd(i int) {
	v := g.v
	if !g.inTurn {
		g.vs.addRule(v, i, "R-EV-GRAMMAR", "turn_end without turn_start")
	}
	if g.streams != 1 && g.inTurn {
		g.vs.addRule(v, i, "R-TURN-REQUEST", "the turn made %d provider requests, not 1", g.streams)
	}
	for id, ts := range g.tools {
		if ts.end < 0 {
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "tool call %s started but never ended", id)
		}
	}
	g.inTurn = false
}

// message checks that messages open and close one at a time, updates only an assistant's.
func (g *grammarWalk) message(i int, name string) {
	v := g.v
	if !g.inTurn {
		g.vs.addRule(v, i, "R-EV-GRAMMAR", "%s outside a turn", name)
	}
	switch name {
	case "message_start":
		if g.openMsg >= 0 {
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "message_start while the message of entry %d is open", v.seq(g.openMsg))
		}
		g.openMsg = i
	case "message_update":
		if g.openMsg < 0 || v.role(g.openMsg) != "assistant" {
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "message_update outside an assistant message")
		}
	case "message_end":
		open := g.openMsg
		switch {
		case open < 0:
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "message_end without message_start")
		case v.role(open) != v.role(i):
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "message_end of a %s message closes a %s message", v.role(i), v.role(open))
		case v.role(i) != "assistant" && !same(v.message(i), v.message(open)):
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "message_end carries another message than its message_start: %s vs %s", show(v.message(i)), show(v.message(open)))
		}
		g.openMsg = -1
	}
}

// tool checks one start and one end per tool-call id in a turn, its updates between them.
func (g *grammarWalk) tool(i int, name string) {
	v := g.v
	id := str(v.d(i)["toolCallId"])
	ts := g.tools[id]
	switch name {
	case "tool_execution_start":
		if ts != nil {
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "a second tool_execution_start for %s", id)
		} else {
			g.tools[id] = &toolState{start: i, end: -1}
		}
	case "tool_execution_update":
		if ts == nil || ts.end >= 0 {
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "tool_execution_update for %s outside its start and end", id)
		}
	case "tool_execution_end":
		switch {
		case ts == nil:
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "tool_execution_end for %s without tool_execution_start", id)
		case ts.end >= 0:
			g.vs.addRule(v, i, "R-EV-GRAMMAR", "a second tool_execution_end for %s", id)
		default:
			ts.end = i
		}
	}
}

// finish checks that a run that returned left no turn or message open.
func (g *grammarWalk) finish() {
	v := g.v
	if v.failed {
		return
	}
	if g.inTurn && v.endIdx >= 0 {
		g.vs.addRule(v, v.endIdx, "R-EV-GRAMMAR", "the run returned inside an open turn")
	}
	if g.openMsg >= 0 {
		g.vs.addRule(v, g.openMsg, "R-EV-GRAMMAR", "the message opened here is never closed")
	}
}
