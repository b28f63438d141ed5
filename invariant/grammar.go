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
	events := 0
	first := -1
	for i, e := range v.es {
		if e.Kind == trace.KindEvent {
			events++
			if first < 0 {
				first = i
			}
		}
	}
	// The outcome of the run.
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

	// Turns, requests, messages and tool executions.
	inTurn := false
	streams := 0
	openMsg := -1 // index of the open message_start
	type toolState struct{ start, end int }
	var tools map[string]*toolState
	for i, e := range v.es {
		switch e.Kind {
		case trace.KindCall:
			switch e.Name {
			case trace.CallStream:
				if !inTurn {
					vs.addRule(v, i, "R-TURN-REQUEST", "a provider request outside a turn")
				}
				streams++
				if streams > 1 {
					vs.addRule(v, i, "R-TURN-REQUEST", "a second provider request in one turn")
				}
			case trace.CallTool:
				id := str(v.d(i)["toolCallId"])
				ts := tools[id]
				if ts == nil || ts.end >= 0 {
					vs.addRule(v, i, "R-EV-GRAMMAR", "tool call %s is not between its tool_execution_start and _end", id)
				}
			}
			continue
		case trace.KindEvent:
		default:
			continue
		}
		switch e.Name {
		case "turn_start":
			if inTurn {
				vs.addRule(v, i, "R-EV-GRAMMAR", "turn_start inside an open turn")
			}
			inTurn, streams, tools = true, 0, map[string]*toolState{}
		case "turn_end":
			if !inTurn {
				vs.addRule(v, i, "R-EV-GRAMMAR", "turn_end without turn_start")
			}
			if streams != 1 && inTurn {
				vs.addRule(v, i, "R-TURN-REQUEST", "the turn made %d provider requests, not 1", streams)
			}
			for id, ts := range tools {
				if ts.end < 0 {
					vs.addRule(v, i, "R-EV-GRAMMAR", "tool call %s started but never ended", id)
				}
			}
			inTurn = false
		case "agent_end":
			if inTurn {
				vs.addRule(v, i, "R-EV-ONE-END", "agent_end inside an open turn")
			}
		case "message_start", "message_end", "message_update":
			if !inTurn {
				vs.addRule(v, i, "R-EV-GRAMMAR", "%s outside a turn", e.Name)
			}
			switch e.Name {
			case "message_start":
				if openMsg >= 0 {
					vs.addRule(v, i, "R-EV-GRAMMAR", "message_start while the message of entry %d is open", v.seq(openMsg))
				}
				openMsg = i
			case "message_update":
				if openMsg < 0 || v.role(openMsg) != "assistant" {
					vs.addRule(v, i, "R-EV-GRAMMAR", "message_update outside an assistant message")
				}
			case "message_end":
				switch {
				case openMsg < 0:
					vs.addRule(v, i, "R-EV-GRAMMAR", "message_end without message_start")
				case v.role(openMsg) != v.role(i):
					vs.addRule(v, i, "R-EV-GRAMMAR", "message_end of a %s message closes a %s message", v.role(i), v.role(openMsg))
				case v.role(i) != "assistant" && !same(v.message(i), v.message(openMsg)):
					vs.addRule(v, i, "R-EV-GRAMMAR", "message_end carries another message than its message_start: %s vs %s", show(v.message(i)), show(v.message(openMsg)))
				}
				openMsg = -1
			}
			continue
		case "tool_execution_start", "tool_execution_update", "tool_execution_end":
			if !inTurn {
				vs.addRule(v, i, "R-EV-GRAMMAR", "%s outside a turn", e.Name)
				continue
			}
			id := str(v.d(i)["toolCallId"])
			ts := tools[id]
			switch e.Name {
			case "tool_execution_start":
				if ts != nil {
					vs.addRule(v, i, "R-EV-GRAMMAR", "a second tool_execution_start for %s", id)
				} else {
					tools[id] = &toolState{start: i, end: -1}
				}
			case "tool_execution_update":
				if ts == nil || ts.end >= 0 {
					vs.addRule(v, i, "R-EV-GRAMMAR", "tool_execution_update for %s outside its start and end", id)
				}
			case "tool_execution_end":
				switch {
				case ts == nil:
					vs.addRule(v, i, "R-EV-GRAMMAR", "tool_execution_end for %s without tool_execution_start", id)
				case ts.end >= 0:
					vs.addRule(v, i, "R-EV-GRAMMAR", "a second tool_execution_end for %s", id)
				default:
					ts.end = i
				}
			}
		}
		if openMsg >= 0 && e.Name != "message_update" {
			vs.addRule(v, i, "R-EV-GRAMMAR", "%s while the message of entry %d is open", e.Name, v.seq(openMsg))
		}
	}
	if !v.failed {
		if inTurn && v.endIdx >= 0 {
			vs.addRule(v, v.endIdx, "R-EV-GRAMMAR", "the run returned inside an open turn")
		}
		if openMsg >= 0 {
			vs.addRule(v, openMsg, "R-EV-GRAMMAR", "the message opened here is never closed")
		}
	}
	return vs
}
