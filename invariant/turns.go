package invariant

import (
	"github.com/turnstile-dev/turnstile/trace"
)

// turn is one turn_start … turn_end of the trace, with what happened in it and the window of
// entries after it up to the next turn (or the end of the run).
type turn struct {
	n          int // 1-based
	start, end int // indexes of turn_start and turn_end; end is -1 for an open turn
	// stream is the index of the turn's (first) stream call, -1 when none; streams counts them.
	stream  int
	streams int
	// asstEnd is the index of the assistant message_end that follows the stream call.
	asstEnd int
	msg     map[string]any
	stop    string
	calls   []toolCall
	// prepareRequest is the index of the prepareRequest call before the stream, -1 when none.
	prepareRequest int
	// finish is the index of the finishTurn call after the response, -1 when none.
	finish   int
	decision string
	// next is the index of the next turn's turn_start (-1 when none); windowEnd is where the
	// window after turn_end stops (exclusive): next, agent_end, the end of the run or the trace.
	next      int
	windowEnd int
}

// toolCall is a tool-call block of an assistant message.
type toolCall struct {
	id, name string
	args     any
}

// hasBatch reports whether the turn's response leads to a tool batch: tool calls, and a stop
// reason other than error or aborted (those end the run before any tool runs).
func (t *turn) hasBatch() bool {
	return len(t.calls) > 0 && t.asstEnd >= 0 && t.stop != "error" && t.stop != "aborted"
}

// hardExit reports whether the response's stop reason ends the run at once.
func (t *turn) hardExit() bool { return t.asstEnd >= 0 && (t.stop == "error" || t.stop == "aborted") }

func (v *view) parseTurns() {
	var cur *turn
	for i, e := range v.es {
		switch {
		case e.Kind == trace.KindEvent && e.Name == "turn_start":
			if cur != nil && cur.end < 0 {
				cur.end = -1 // left open; grammar reports it
			}
			cur = &turn{n: len(v.turns) + 1, start: i, end: -1, stream: -1, asstEnd: -1, prepareRequest: -1, finish: -1, next: -1}
			v.turns = append(v.turns, cur)
		case cur == nil || cur.end >= 0:
		case e.Kind == trace.KindEvent && e.Name == "turn_end":
			cur.end = i
		case e.Kind == trace.KindCall && e.Name == trace.CallStream:
			cur.streams++
			if cur.stream < 0 {
				cur.stream = i
			}
		case e.Kind == trace.KindCall && e.Name == trace.HookPrepareRequest && cur.stream < 0:
			cur.prepareRequest = i
		case e.Kind == trace.KindCall && e.Name == trace.HookFinishTurn && cur.asstEnd >= 0 && cur.finish < 0:
			cur.finish = i
			cur.decision = str(v.a(i)["action"])
		case e.Kind == trace.KindEvent && e.Name == "message_end" && cur.stream >= 0 && cur.asstEnd < 0 && v.role(i) == "assistant":
			cur.asstEnd = i
			cur.msg = v.message(i)
			cur.stop = str(cur.msg["stopReason"])
			for _, b := range arr(cur.msg["content"]) {
				bm := obj(b)
				if str(bm["type"]) == "toolCall" {
					cur.calls = append(cur.calls, toolCall{id: str(bm["id"]), name: str(bm["name"]), args: bm["arguments"]})
				}
			}
		}
	}
	for k, t := range v.turns {
		if k+1 < len(v.turns) {
			t.next = v.turns[k+1].start
		}
		switch {
		case t.next >= 0:
			t.windowEnd = t.next
		case v.agentEnd > t.end && t.end >= 0:
			t.windowEnd = v.agentEnd
		case v.endIdx >= 0:
			t.windowEnd = v.endIdx
		default:
			t.windowEnd = len(v.es)
		}
	}
}

// closed returns the turns that ended with turn_end.
func (v *view) closed() []*turn {
	var out []*turn
	for _, t := range v.turns {
		if t.end >= 0 {
			out = append(out, t)
		}
	}
	return out
}

// poll is a queue poll: its index, which queue, and how many messages it returned.
type poll struct {
	i        int
	steering bool
	n        int
}

// polls lists the queue polls in [from, to).
func (v *view) polls(from, to int) []poll {
	var out []poll
	for i := max(from, 0); i < to && i < len(v.es); i++ {
		switch {
		case v.isCall(i, trace.HookSteering):
			out = append(out, poll{i: i, steering: true, n: len(messagesOf(v.a(i), "messages"))})
		case v.isCall(i, trace.HookFollowUp):
			out = append(out, poll{i: i, n: len(messagesOf(v.a(i), "messages"))})
		}
	}
	return out
}

// window summarises the window after a closed turn: what asks for another request.
type window struct {
	natural  bool // the batch did not terminate
	steered  bool // poll C returned messages
	followed bool // a follow-up poll returned messages
}

// terminates reports whether the turn's batch terminated: non-empty, not truncated, and every
// tool_execution_end result has terminate exactly true.
func (v *view) terminates(t *turn) bool {
	if !t.hasBatch() || t.stop == "length" {
		return false
	}
	ends := v.toolEnds(t)
	if len(ends) == 0 {
		return false
	}
	for _, i := range ends {
		if obj(v.d(i)["result"])["terminate"] != true {
			return false
		}
	}
	return true
}

// anyTerminates reports whether some result of the turn's batch has terminate exactly true.
func (v *view) anyTerminates(t *turn) bool {
	for _, i := range v.toolEnds(t) {
		if obj(v.d(i)["result"])["terminate"] == true {
			return true
		}
	}
	return false
}

// toolEnds lists the tool_execution_end events of the turn.
func (v *view) toolEnds(t *turn) []int {
	var out []int
	to := t.end
	if to < 0 {
		to = t.windowEnd
	}
	for i := t.start; i < to; i++ {
		if v.isEvent(i, "tool_execution_end") {
			out = append(out, i)
		}
	}
	return out
}

func (v *view) window(t *turn) window {
	w := window{natural: t.hasBatch() && !v.terminates(t)}
	for k, p := range v.polls(t.end+1, t.windowEnd) {
		if p.steering && k == 0 && p.n > 0 {
			w.steered = true
		}
		if !p.steering && p.n > 0 {
			w.followed = true
		}
	}
	return w
}

// abortedBefore reports whether an abort was delivered before entry end (the whole trace when
// end is -1).
func (v *view) abortedBefore(end int) bool {
	if end < 0 {
		end = len(v.es)
	}
	for i := 0; i < end; i++ {
		if v.isAbort(i) {
			return true
		}
	}
	return false
}

// isAbort reports whether entry i aborts the run: an abort delivery, an abort fired while a
// hook ran (the world's "user abort"), or an Agent's abort operation.
func (v *view) isAbort(i int) bool {
	e := &v.es[i]
	switch {
	case e.Kind == trace.KindDeliver && e.Name == trace.DeliverAbort, e.Kind == trace.KindUser && e.Name == "abort":
		return true
	case e.Kind == trace.KindDeliver && e.Name == trace.DeliverAgent:
		return str(v.d(i)["op"]) == trace.OpAbort
	}
	return false
}
