package invariant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

const terminationDoc = `Unanimous termination. After a batch whose every result has terminate: true, with no steering
(poll C) or follow-up messages and no finishTurn continue, no further request is made; after a
batch with any result without terminate: true — a truncated batch included — another request is
made (unless the run fails first or finishTurn says end). A response without tool calls likewise
leads to another request only when a queue or finishTurn continue asks for one.`

const finishTurnDoc = `finishTurn continuation. end: agent_end right after turn_end, no queue polled, no request.
continue: when nothing else asks for a request (no tool-driven request, no steering or follow-up
messages), exactly one more request is made. A response with stopReason error or aborted: turn_end
then agent_end at once, whatever finishTurn answers.`

const queueTimingDoc = `Queue polls (when a queue's polls are seen at all, it is taken as installed). Steering is
polled once before the first request (poll A), once after each turn_end unless the run ends there
(poll C), and before a later turn only when nothing is pending (poll B). Follow-up is polled
once, after poll C, only when the loop would stop: never while tool results wait for a request
or steering messages are pending. prepareNextTurn is called once before every later turn, after
poll C and any follow-up poll and before poll B. Within a turn nothing of this is called
except poll A in the first.`

const hookTimingDoc = `Hook placement (for hooks seen called). prepareRequest: once per turn, right before its
request, after the turn's messages. finishTurn: once per response, after its tool results and
right before turn_end. beforeToolCall: once per executed call, between its start and its
execution; afterToolCall: once per executed call, between its execution and its end; neither for
a call to an unknown tool or with invalid arguments, nor afterToolCall for a call not executed.`

// nextTurnLost reports whether the run failed in the window after t, so that a request it
// asked for could not be made.
func (v *view) nextTurnLost(t *turn) bool { return t.next < 0 && v.failed }

// startsTool reports whether a tool execution starts between entries from and to (exclusive).
func (v *view) startsTool(from, to int) bool {
	for i := from + 1; i < to && i < len(v.es); i++ {
		if e := &v.es[i]; e.Kind == trace.KindEvent && e.Name == string(loop.ToolExecutionStart) {
			return true
		}
	}
	return false
}

func checkTermination(v *view) []Violation {
	var vs violations
	for _, t := range v.closed() {
		if t.hardExit() || t.decision == "end" || t.asstEnd < 0 {
			continue
		}
		w := v.window(t)
		switch {
		case t.hasBatch() && w.natural:
			if t.next < 0 && !v.nextTurnLost(t) {
				what, rule := "the batch has a result without terminate: true (the batch ends the run only when every result says terminate)", "R-TERM-UNANIMOUS"
				switch {
				case t.stop == "length":
					what, rule = "the batch is a truncated one (it never terminates)", "R-TRUNC-NO-TERMINATE"
				case v.startsTool(t.asstEnd, t.end) && !v.anyTerminates(t):
					what, rule = "no result of the batch asks to terminate: the tool calls ask for another request (a loop caps no turns and stops on no tool)", "R-NO-TURN-LIMIT"
				case !v.startsTool(t.asstEnd, t.end):
					what = fmt.Sprintf("the response (stopReason %s) has tool calls, none of which ran: its tool calls are its content's toolCall blocks, whatever the stopReason", t.stop)
					rule = "R-CONTENT-DECIDES"
				}
				vs.addRule(v, t.end, rule, "%s, but no further request was made", what)
			}
		case t.hasBatch():
			if t.next >= 0 && !w.steered && !w.followed && t.decision != "continue" {
				vs.addRule(v, t.next, "R-TERM-UNANIMOUS", "every result of the batch has terminate: true and nothing else asked, but another request was made")
			}
		case t.decision != "continue" && !w.steered && !w.followed && t.next >= 0:
			vs.addRule(v, t.next, "R-CONTENT-DECIDES", "the response made no tool calls and nothing asked for more, but another request was made")
		}
	}
	return vs
}

func checkFinishTurn(v *view) []Violation {
	var vs violations
	for _, t := range v.closed() {
		if t.hardExit() || t.decision == "end" {
			why := "finishTurn answered end"
			if t.hardExit() {
				why = "the response's stopReason is " + t.stop
			}
			// turn_end, then agent_end at once: no call, no other event.
			for i := t.end + 1; i < len(v.es); i++ {
				e := v.es[i]
				if e.Kind == trace.KindCall {
					vs.add(v, i, "%s: %s was called after turn_end", why, e.Name)
					break
				}
				if e.Kind == trace.KindEvent {
					if e.Name != "agent_end" {
						vs.add(v, i, "%s: %s follows turn_end instead of agent_end", why, e.Name)
					}
					break
				}
				if e.Kind == trace.KindEnd {
					vs.add(v, i, "%s: the run ended without agent_end", why)
					break
				}
			}
			continue
		}
		if t.decision != "continue" {
			continue
		}
		w := v.window(t)
		if !w.natural && !w.steered && !w.followed && t.next < 0 && !v.nextTurnLost(t) {
			vs.addRule(v, t.end, "R-FINISH-CONTINUE", "finishTurn answered continue and nothing else asked for a request, but no further request was made")
		}
	}
	return vs
}

// flowCall is a call that schedules turns: a queue poll or prepareNextTurn.
func flowCall(name string) bool {
	return name == trace.HookSteering || name == trace.HookFollowUp || name == trace.HookPrepareNextTurn
}

func short(name string) string {
	switch name {
	case trace.HookSteering:
		return "steering"
	case trace.HookFollowUp:
		return "follow-up"
	}
	return name
}

func checkQueueTiming(v *view) []Violation {
	var vs violations
	v.checkPollsInsideTurns(&vs)
	for _, t := range v.closed() {
		v.checkPollsAfterTurn(&vs, t)
	}
	return vs
}

// checkPollsInsideTurns checks that inside turns only poll A is called, in the first turn,
// before its request.
func (v *view) checkPollsInsideTurns(vs *violations) {
	steering := v.seen[trace.HookSteering]
	for _, t := range v.turns {
		to := t.end
		if to < 0 {
			to = t.windowEnd
		}
		pollA := false
		for i := t.start; i < to; i++ {
			e := v.es[i]
			if e.Kind != trace.KindCall || !flowCall(e.Name) {
				continue
			}
			if t.n == 1 && e.Name == trace.HookSteering && !pollA && (t.stream < 0 || i < t.stream) {
				pollA = true
				continue
			}
			rule, why := insideTurn(e.Name)
			vs.addRule(v, i, rule, "%s called inside turn %d, before its turn_end: %s", short(e.Name), t.n, why)
		}
		if t.n == 1 && steering && !pollA && t.stream >= 0 {
			vs.addRule(v, t.stream, "R-POLL-A", "the first request was made without polling steering first (poll A)")
		}
	}
}

// pollMatch matches the flow calls after a turn against the sequence expected.
type pollMatch struct {
	v     *view
	calls []int    // the flow calls made, by entry index
	want  []string // the calls expected so far
	k     int      // how many calls matched
}

// take expects a call of name next; it reports whether it came and, if so, how many messages
// it answered.
func (p *pollMatch) take(name string) (int, bool) {
	p.want = append(p.want, name)
	if p.k < len(p.calls) && p.v.es[p.calls[p.k]].Name == name {
		p.k++
		return len(messagesOf(p.v.a(p.calls[p.k-1]), "messages")), true
	}
	return 0, false
}

// expectPolls walks the sequence of polls expected after turn t as the calls answer them; ok
// is false at the first call expected and not made.
func (p *pollMatch) expectPolls(t *turn) (ok bool) {
	v := p.v
	steering, followUp, pnt := v.seen[trace.HookSteering], v.seen[trace.HookFollowUp], v.seen[trace.HookPrepareNextTurn]
	ok = true
	if t.hardExit() || t.decision == "end" {
		return ok
	}
	w := v.window(t)
	pending, next := false, false
	if steering {
		n, got := p.take(trace.HookSteering)
		ok = ok && got
		pending = n > 0
	}
	if ok && (w.natural || pending) {
		next = true
	} else if ok {
		if followUp {
			n, got := p.take(trace.HookFollowUp)
			ok = ok && got
			if n > 0 {
				pending, next = true, true
			}
		}
		if ok && !next && t.decision == "continue" {
			next = true
		}
	}
	if ok && next {
		if pnt {
			_, got := p.take(trace.HookPrepareNextTurn)
			ok = ok && got
		}
		if ok && steering && !pending {
			_, got := p.take(trace.HookSteering)
			ok = ok && got
		}
	}
	return ok
}

// checkPollsAfterTurn checks the exact sequence of polls after turn t.
func (v *view) checkPollsAfterTurn(vs *violations, t *turn) {
	p := pollMatch{v: v}
	for i := t.end + 1; i < t.windowEnd; i++ {
		if v.es[i].Kind == trace.KindCall && flowCall(v.es[i].Name) {
			p.calls = append(p.calls, i)
		}
	}
	ok := p.expectPolls(t)
	calls, want := p.calls, p.want
	got := make([]string, len(calls))
	for j, i := range calls {
		got[j] = v.es[i].Name
	}
	if ok && len(got) == len(want) {
		return
	}
	// A run that failed in the window may stop short of the expected sequence.
	if v.nextTurnLost(t) && isPrefix(got, want) && len(calls) > 0 && v.es[calls[len(calls)-1]].Error != "" {
		return
	}
	at := t.end
	if len(calls) > 0 {
		at = calls[min(p.k, len(calls)-1)]
	}
	rule, why := v.pollBreach(t, got, want, ok)
	expected := shortList(want)
	if !ok {
		expected += " …" // the walk stops at the first call expected and not made
	}
	vs.addRule(v, at, rule, "after turn %d the loop called [%s], expected [%s]%s", t.n, shortList(got), expected, why)
}

// pollBreach is the rule the calls after turn t break and why, when the batch explains it.
func (v *view) pollBreach(t *turn, got, want []string, ok bool) (rule, why string) {
	rule = pollRule(got, want, ok)
	if rule != "R-POLL-FOLLOW-UP" || !t.hasBatch() || !v.window(t).natural {
		return rule, ""
	}
	if len(got) > 0 && got[len(got)-1] == trace.HookFollowUp && !v.anyTerminates(t) && v.startsTool(t.asstEnd, t.end) && t.next < 0 {
		// It polled last and stopped, though no result asked to terminate.
		return "R-NO-TURN-LIMIT", ": no result of the batch asks to terminate, so the loop was not stopping and polls no follow-up (a loop caps no turns and stops on no tool)"
	}
	if slices.Contains(got, trace.HookFollowUp) {
		why = ": the batch has a result without terminate: true, so the loop was not stopping and polls no follow-up"
		if got[len(got)-1] == trace.HookFollowUp {
			// It polled as a stopping loop does, last: it may have judged the batch so.
			why += " (did it take the batch as terminating? R-TERM-UNANIMOUS)"
		}
	}
	return rule, why
}

// insideTurn is the rule a flow call inside a turn breaks, and why.
func insideTurn(name string) (rule, why string) {
	switch name {
	case trace.HookSteering:
		return "R-POLL-NEVER-ELSE", "steering is polled within a turn only before the first request (poll A); a response's turn polls it after its turn_end (poll C)"
	case trace.HookFollowUp:
		return "R-POLL-FOLLOW-UP", "follow-up is polled only after a turn_end, when the loop would stop"
	}
	return "R-PREPARE-NEXT-TURN", "prepareNextTurn is called between turns, after the last turn's turn_end and before the next turn_start"
}

// pollRule is the rule broken by the calls after a turn (got) that differ from those
// expected (want, which ends at the first call expected and not made when ok is false).
// Where a call came instead of the one expected, a follow-up poll on either side is the
// follow-up rule's (polled too early, or not when the loop would stop); otherwise the rule
// of the call expected there. An extra call at the end is its own rule's. A missing
// steering poll right after another is poll C or poll B, which the trace cannot tell: "".
func pollRule(got, want []string, ok bool) string {
	j, name := len(want)-1, ""
	switch {
	case ok && len(got) > len(want):
		j, name = len(want), got[len(want)]
	case !ok && j >= 0:
		name = want[j]
		if j < len(got) && (got[j] == trace.HookFollowUp || name == trace.HookFollowUp) {
			return "R-POLL-FOLLOW-UP"
		}
		if j >= len(got) && name == trace.HookSteering && j > 0 && want[j-1] == trace.HookSteering {
			return ""
		}
	}
	switch name {
	case trace.HookSteering:
		if j == 0 {
			return "R-POLL-C"
		}
		return "R-POLL-B"
	case trace.HookFollowUp:
		return "R-POLL-FOLLOW-UP"
	case trace.HookPrepareNextTurn:
		return "R-PREPARE-NEXT-TURN"
	}
	return ""
}

func isPrefix(got, want []string) bool {
	if len(got) > len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func shortList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = short(n)
	}
	return strings.Join(out, " ")
}

func checkHookTiming(v *view) []Violation {
	var vs violations
	pr, ft := v.seen[trace.HookPrepareRequest], v.seen[trace.HookFinishTurn]
	before, after := v.seen[trace.HookBeforeToolCall], v.seen[trace.HookAfterToolCall]
	for _, t := range v.turns {
		to := t.end
		if to < 0 {
			to = t.windowEnd
		}
		var prs, fts []int
		for i := t.start; i < to; i++ {
			switch {
			case v.isCall(i, trace.HookPrepareRequest):
				prs = append(prs, i)
			case v.isCall(i, trace.HookFinishTurn):
				fts = append(fts, i)
			}
		}
		if pr {
			v.checkPrepareRequest(&vs, t, prs)
		}
		if ft && t.asstEnd >= 0 {
			v.checkFinishTurnPlace(&vs, t, fts)
		}
		if t.hasBatch() && (before || after) {
			v.checkToolHooks(&vs, t, before, after)
		}
	}
	return vs
}

// checkPrepareRequest checks turn t's prepareRequest calls (prs): once, right before its request.
func (v *view) checkPrepareRequest(vs *violations, t *turn, prs []int) {
	switch {
	case t.stream >= 0 && len(prs) != 1:
		vs.addRule(v, t.stream, "R-PREPARE-REQUEST", "turn %d called prepareRequest %d times before its request, not once", t.n, len(prs))
	case t.stream >= 0 && prs[0] > t.stream:
		vs.addRule(v, prs[0], "R-PREPARE-REQUEST", "prepareRequest called after the request of turn %d", t.n)
	case t.stream >= 0:
		for i := prs[0] + 1; i < t.stream; i++ {
			if v.isEvent(i) || (v.es[i].Kind == trace.KindCall && flowCall(v.es[i].Name)) {
				vs.addRule(v, i, "R-PREPARE-REQUEST", "%s between prepareRequest and its request", v.es[i].Name)
				break
			}
		}
	}
}

// checkFinishTurnPlace checks turn t's finishTurn calls (fts): once, after its response and
// right before turn_end.
func (v *view) checkFinishTurnPlace(vs *violations, t *turn, fts []int) {
	switch {
	case len(fts) != 1 && (t.end >= 0 || len(fts) > 1):
		vs.addRule(v, t.asstEnd, "R-FINISH-WHEN", "turn %d called finishTurn %d times, not once", t.n, len(fts))
	case len(fts) == 1 && fts[0] < t.asstEnd:
		vs.addRule(v, fts[0], "R-FINISH-WHEN", "finishTurn called before the response ended")
	case len(fts) == 1 && t.end >= 0:
		for i := fts[0] + 1; i < t.end; i++ {
			if v.isEvent(i) || v.es[i].Kind == trace.KindCall {
				vs.addRule(v, i, "R-FINISH-WHEN", "%s between finishTurn and turn_end", v.es[i].Name)
				break
			}
		}
	}
}

// checkToolHooks checks beforeToolCall and afterToolCall (those seen called) around each
// tool call of turn t's batch.
func (v *view) checkToolHooks(vs *violations, t *turn, before, after bool) {
	tt := v.turnTools(t)
	for _, c := range t.calls {
		start, end := tt.starts[c.id], tt.ends[c.id]
		call, executed := tt.toolCalls[c.id]
		var bs, as []int
		for _, i := range tt.hooks[c.id] {
			if v.es[i].Name == trace.HookBeforeToolCall {
				bs = append(bs, i)
			} else {
				as = append(as, i)
			}
		}
		if executed {
			if before && (len(bs) != 1 || bs[0] < start || bs[0] > call) {
				vs.addRule(v, call, "R-TOOL-BEFORE", "tool %s executed without exactly one beforeToolCall between its start and execution", c.id)
			}
			if after && (len(as) != 1 || as[0] < call || (end > 0 && as[0] > end)) {
				vs.addRule(v, call, "R-TOOL-AFTER", "tool %s executed without exactly one afterToolCall between its execution and its end", c.id)
			}
			continue
		}
		for _, i := range as {
			vs.addRule(v, i, "R-TOOL-AFTER", "afterToolCall for %s, which was not executed", c.id)
		}
		if end > 0 {
			text := resultText(v.d(end)["result"])
			if text == "Tool "+c.name+" not found" || strings.HasPrefix(text, "Validation failed for tool ") || strings.HasPrefix(text, "Invalid arguments for tool ") {
				for _, i := range bs {
					vs.addRule(v, i, "R-TOOL-BEFORE", "beforeToolCall for %s, which failed before the hook (%q)", c.id, firstLine(text))
				}
			}
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
