package invariant

import (
	"math"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

const truncationDoc = `A length-stopped response never runs its tool calls: no tool call and no tool hook for them;
each call, in order, gets tool_execution_start, tool_execution_end with isError, details {},
no durationMs, no terminate and exactly the truncation text
(loop.TruncatedToolCallText), then its tool-result message (start and end) with that content.`

const resultsDoc = `Tool results. Every tool call of a response that leads to a batch starts, in source order,
and gets exactly one tool-result message, in source order, after its tool_execution_end and the
ends of the calls before it, carrying the end's result (content, details, isError, durationMs).
durationMs is present exactly when the tool was executed (a tool call was made) and is the
virtual time from that call to the tool's result. Executed calls end in the order their results
were delivered (in parallel mode: completion order; a call whose afterToolCall took time ends
when it returns), each after its result's delivery; each
update delivered before the result gives one tool_execution_update with that partial result and
the call's raw arguments. No other tool events or tool-result messages follow a response.`

// turnTools is what the turn did with tools, from the assistant's message_end to turn_end.
type turnTools struct {
	starts, ends map[string]int
	startOrder   []string
	endOrder     []string
	results      []int // toolResult message_end indexes
	updates      map[string][]int
	toolCalls    map[string]int
	hooks        map[string][]int // tool hook calls by tool-call id
	afterWaited  map[string]bool  // tool-call ids whose afterToolCall took time (waitingHooks)
	deliveries   map[string]int   // toolResult delivery by tool-call id
	delivOrder   []string
	updDeliv     map[string][]int
}

func (v *view) turnTools(t *turn) *turnTools {
	tt := &turnTools{starts: map[string]int{}, ends: map[string]int{}, updates: map[string][]int{}, toolCalls: map[string]int{},
		hooks: map[string][]int{}, afterWaited: map[string]bool{}, deliveries: map[string]int{}, updDeliv: map[string][]int{}}
	if t.asstEnd < 0 {
		return tt
	}
	to := t.end
	if to < 0 {
		to = t.windowEnd
	}
	for i := t.asstEnd + 1; i < to; i++ {
		e := v.es[i]
		switch e.Kind {
		case trace.KindEvent:
			id := e.Target
			switch e.Name {
			case "tool_execution_start":
				if _, dup := tt.starts[id]; !dup {
					tt.starts[id] = i
					tt.startOrder = append(tt.startOrder, id)
				}
			case "tool_execution_end":
				if _, dup := tt.ends[id]; !dup {
					tt.ends[id] = i
					tt.endOrder = append(tt.endOrder, id)
				}
			case "tool_execution_update":
				tt.updates[id] = append(tt.updates[id], i)
			case "message_end":
				if v.role(i) == "toolResult" {
					tt.results = append(tt.results, i)
				}
			}
		case trace.KindCall:
			switch e.Name {
			case trace.CallTool:
				tt.toolCalls[str(v.d(i)["toolCallId"])] = i
			case trace.HookBeforeToolCall, trace.HookAfterToolCall:
				id := str(obj(v.d(i)["toolCall"])["id"])
				tt.hooks[id] = append(tt.hooks[id], i)
				if e.Name == trace.HookAfterToolCall && e.Target != "" {
					tt.afterWaited[id] = true // its answer waited: its end follows the hook's return
				}
			}
		case trace.KindDeliver:
			switch e.Name {
			case trace.DeliverToolResult:
				if _, dup := tt.deliveries[e.Target]; !dup {
					tt.deliveries[e.Target] = i
					tt.delivOrder = append(tt.delivOrder, e.Target)
				}
			case trace.DeliverToolUpdate:
				if _, done := tt.deliveries[e.Target]; !done {
					tt.updDeliv[e.Target] = append(tt.updDeliv[e.Target], i)
				}
			}
		}
	}
	return tt
}

func checkTruncation(v *view) []Violation {
	var vs violations
	for _, t := range v.turns {
		if !t.hasBatch() || t.stop != "length" {
			continue
		}
		tt := v.turnTools(t)
		// The events after the response: per call start, end, result start and end.
		k := t.asstEnd + 1
		nextEvent := func() int {
			for k < len(v.es) && v.es[k].Kind != trace.KindEvent {
				k++
			}
			if k >= len(v.es) {
				return -1
			}
			k++
			return k - 1
		}
		for _, c := range t.calls {
			if i, ok := tt.toolCalls[c.id]; ok {
				vs.add(v, i, "tool %s of a length-stopped response was executed", c.id)
			}
			for _, i := range tt.hooks[c.id] {
				vs.add(v, i, "%s was called for %s of a length-stopped response", v.es[i].Name, c.id)
			}
			want := []any{map[string]any{"type": "text", "text": loop.TruncatedToolCallText(c.name)}}
			for step, name := range []string{"tool_execution_start", "tool_execution_end", "message_start", "message_end"} {
				i := nextEvent()
				if i < 0 || v.es[i].Name != name {
					got := "nothing"
					if i >= 0 {
						got = v.es[i].Name
					}
					vs.add(v, i, "truncated call %s: expected %s, got %s", c.id, name, got)
					break
				}
				d := v.d(i)
				switch step {
				case 0:
					if str(d["toolCallId"]) != c.id {
						vs.add(v, i, "truncated calls start out of order: %s instead of %s", str(d["toolCallId"]), c.id)
					}
				case 1:
					r := obj(d["result"])
					switch {
					case d["isError"] != true:
						vs.add(v, i, "truncated call %s does not end with isError", c.id)
					case d["durationMs"] != nil:
						vs.add(v, i, "truncated call %s has a durationMs", c.id)
					case r["terminate"] != nil:
						vs.add(v, i, "truncated call %s carries terminate", c.id)
					case !same(r["content"], want):
						vs.add(v, i, "truncated call %s: result %s, expected the truncation text %s", c.id, show(r["content"]), show(want))
					case !same(r["details"], map[string]any{}):
						vs.add(v, i, "truncated call %s: details %s, expected {}", c.id, show(r["details"]))
					}
				case 3:
					m := v.message(i)
					if str(m["role"]) != "toolResult" || str(m["toolCallId"]) != c.id || !same(m["content"], want) || m["isError"] != true {
						vs.add(v, i, "truncated call %s: tool-result message %s, expected its truncation error", c.id, show(m))
					}
				}
			}
		}
	}
	return vs
}

func checkResults(v *view) []Violation {
	var vs violations
	for _, t := range v.turns {
		tt := v.turnTools(t)
		if !t.hasBatch() {
			for _, id := range tt.startOrder {
				vs.add(v, tt.starts[id], "a tool execution after a response that leads to no batch")
			}
			for _, i := range tt.results {
				vs.add(v, i, "a tool-result message after a response that leads to no batch")
			}
			continue
		}
		b := batchCheck{v: v, vs: &vs, t: t, tt: tt, calls: map[string]toolCall{}}
		for _, c := range t.calls {
			b.calls[c.id] = c
		}
		// Before pi 1.6.0 an abort stopped the batch: the calls after the one that saw it got
		// no start and no result.
		b.cut = !v.at.Has(loop.AbortCompletesBatch) && v.abortedBefore(t.end)
		b.checkStarts()
		b.checkResultMessages()
		b.checkDeliveryOrder(b.checkExecutions())
	}
	return vs
}

// batchCheck is checkResults' view of one turn's batch.
type batchCheck struct {
	v     *view
	vs    *violations
	t     *turn
	tt    *turnTools
	calls map[string]toolCall // the response's tool calls by id
	cut   bool                // an abort stopped the batch (before pi 1.6.0)
}

// checkStarts checks one tool_execution_start per call, in source order, with its raw arguments.
func (b *batchCheck) checkStarts() {
	v, t, tt := b.v, b.t, b.tt
	for k, c := range t.calls {
		if k >= len(tt.startOrder) {
			if b.cut {
				break
			}
			if len(tt.startOrder) == 0 {
				// Not one call ran: the response's tool calls were not taken from its content.
				b.vs.addRule(v, t.end, "R-CONTENT-DECIDES", "tool call %s never started, nor any call of the response (stopReason %s): its tool calls are its content's toolCall blocks, whatever the stopReason", c.id, t.stop)
			} else {
				b.vs.add(v, t.end, "tool call %s never started", c.id)
			}
			continue
		}
		if tt.startOrder[k] != c.id {
			b.vs.add(v, tt.starts[tt.startOrder[k]], "tool call %s started in place of %s (source order)", tt.startOrder[k], c.id)
		}
	}
	for _, id := range tt.startOrder {
		if _, ok := b.calls[id]; !ok {
			b.vs.add(v, tt.starts[id], "tool_execution_start for %s, which the response did not call", id)
		}
	}
	for id, i := range tt.starts {
		if c, ok := b.calls[id]; ok && !same(v.d(i)["args"], orEmptyObject(c.args)) {
			b.vs.add(v, i, "tool_execution_start for %s carries %s, not the raw arguments %s", id, show(v.d(i)["args"]), show(c.args))
		}
	}
}

// checkResultMessages checks one tool-result message per call, in source order, after the
// ends of the calls before it.
func (b *batchCheck) checkResultMessages() {
	v, t, tt := b.v, b.t, b.tt
	// When none started, R-CONTENT-DECIDES said it already.
	if t.end >= 0 && len(tt.results) != len(t.calls) && !(b.cut && len(tt.results) == len(tt.startOrder)) && len(tt.startOrder) > 0 {
		b.vs.addRule(v, t.end, "R-TOOL-RESULT-MESSAGE", "%d tool calls got %d tool-result messages", len(t.calls), len(tt.results))
	}
	lastEnd := -1
	for k, c := range t.calls {
		if e, ok := tt.ends[c.id]; ok {
			lastEnd = max(lastEnd, e)
		}
		if k >= len(tt.results) {
			continue
		}
		i := tt.results[k]
		m := v.message(i)
		if str(m["toolCallId"]) != c.id {
			// Sequentially each result follows its own call: results out of source order
			// are parallel mode's, emitted in source order once every call has settled.
			b.vs.addRule(v, i, "R-EXEC-PARALLEL", "tool-result message %d is for %s, expected %s: tool-result messages follow the calls' source order, not their completion", k+1, str(m["toolCallId"]), c.id)
			continue
		}
		if str(m["toolName"]) != c.name {
			b.vs.addRule(v, i, "R-TOOL-RESULT-MESSAGE", "tool-result message for %s names tool %s, expected %s", c.id, str(m["toolName"]), c.name)
		}
		e, ok := tt.ends[c.id]
		if !ok {
			continue
		}
		if i < lastEnd {
			b.vs.add(v, i, "tool-result message for %s comes before the tool_execution_end of an earlier call (entry %d)", c.id, v.seq(lastEnd))
		}
		b.checkResultMessage(c.id, i, m, v.d(e))
	}
}

// checkResultMessage checks that the tool-result message m at entry i carries its end's result.
func (b *batchCheck) checkResultMessage(id string, i int, m, end map[string]any) {
	v := b.v
	r := obj(end["result"])
	content := r["content"]
	if content == nil {
		content = []any{}
	}
	switch {
	case !same(m["content"], content):
		b.vs.addRule(v, i, "R-TOOL-RESULT-MESSAGE", "tool-result message for %s has content %s, its result %s", id, show(m["content"]), show(content))
	case !same(m["details"], r["details"]):
		b.vs.addRule(v, i, "R-TOOL-RESULT-MESSAGE", "tool-result message for %s has details %s, its result %s", id, show(m["details"]), show(r["details"]))
	case m["isError"] != end["isError"]:
		b.vs.addRule(v, i, "R-TOOL-RESULT-MESSAGE", "tool-result message for %s has isError %s, its end %s", id, showField(m, "isError"), showField(end, "isError"))
	case !same(m["durationMs"], end["durationMs"]):
		b.vs.addRule(v, i, "R-TOOL-RESULT-MESSAGE", "tool-result message for %s has durationMs %s, its end %s", id, showField(m, "durationMs"), showField(end, "durationMs"))
	}
}

// checkExecutions checks each ended call's durationMs, execution, delivery and updates; it
// returns the executed calls whose result was delivered, in the order they ended, but those
// whose afterToolCall took time (their end follows the hook's return).
func (b *batchCheck) checkExecutions() (executedEnds []string) {
	v, tt := b.v, b.tt
	for _, id := range tt.endOrder {
		e := tt.ends[id]
		call, executed := tt.toolCalls[id]
		dur := v.d(e)["durationMs"]
		b.checkDurationPresence(id, e, executed, dur)
		if !executed {
			continue
		}
		if call > e {
			b.vs.add(v, call, "tool %s executed after its end", id)
		}
		if dl, ok := tt.deliveries[id]; ok {
			if !tt.afterWaited[id] {
				executedEnds = append(executedEnds, id)
			}
			if dl > e {
				b.vs.add(v, e, "tool %s ended before its result was delivered (entry %d)", id, v.seq(dl))
			}
			if ms, ok := dur.(float64); ok {
				want := math.Round(float64(v.es[dl].T - v.es[call].T))
				if ms != want {
					b.vs.addRule(v, e, "R-TIME-DURATION", "tool %s: durationMs %v, but its result came %vms after the call", id, ms, want)
				}
			}
		}
		b.checkUpdates(id, e)
	}
	return executedEnds
}

// checkDurationPresence checks that the end at entry e has a durationMs exactly when its tool
// was executed (and pi stamps one).
func (b *batchCheck) checkDurationPresence(id string, e int, executed bool, dur any) {
	v := b.v
	if !v.at.Has(loop.DurationMs) {
		if dur != nil {
			b.vs.addRule(v, e, "R-TIME-DURATION", "tool %s's end has a durationMs, which pi added in %s", id, loop.DurationMs.Since())
		}
	} else if executed != (dur != nil) {
		if executed {
			b.vs.addRule(v, e, "R-TIME-DURATION", "tool %s was executed but its end has no durationMs", id)
		} else {
			b.vs.addRule(v, e, "R-TIME-DURATION", "tool %s was not executed but its end has a durationMs", id)
		}
	}
}

// checkUpdates checks one tool_execution_update per update delivered before the result, in
// order, each with the partial result and the call's raw arguments.
func (b *batchCheck) checkUpdates(id string, e int) {
	v := b.v
	ups, dels := b.tt.updates[id], b.tt.updDeliv[id]
	if len(ups) != len(dels) {
		b.vs.addRule(v, e, "R-TOOL-UPDATES", "tool %s: %d updates delivered before its result, %d tool_execution_update events", id, len(dels), len(ups))
	}
	for k := 0; k < min(len(ups), len(dels)); k++ {
		d := v.d(ups[k])
		if !same(d["partialResult"], v.d(dels[k])) {
			b.vs.addRule(v, ups[k], "R-TOOL-UPDATES", "tool_execution_update for %s carries %s, not the delivered %s", id, show(d["partialResult"]), show(v.d(dels[k])))
		}
		if ups[k] < dels[k] {
			b.vs.addRule(v, ups[k], "R-TOOL-UPDATES", "tool_execution_update for %s before the update was delivered", id)
		}
		if c, ok := b.calls[id]; ok && !same(d["args"], orEmptyObject(c.args)) {
			b.vs.addRule(v, ups[k], "R-TOOL-UPDATES", "tool_execution_update for %s carries %s, not the raw arguments", id, show(d["args"]))
		}
	}
}

// checkDeliveryOrder checks that executed tools ended in the order their results were
// delivered (executedEnds, and the deliveries, leave out calls whose afterToolCall waited).
func (b *batchCheck) checkDeliveryOrder(executedEnds []string) {
	tt := b.tt
	var delivered []string
	for _, id := range tt.delivOrder {
		if _, ok := tt.ends[id]; ok && !tt.afterWaited[id] {
			delivered = append(delivered, id)
		}
	}
	for k := range min(len(executedEnds), len(delivered)) {
		if executedEnds[k] != delivered[k] {
			b.vs.add(b.v, tt.ends[executedEnds[k]], "executed tools ended in the order %v, their results were delivered in the order %v", executedEnds, delivered)
			break
		}
	}
}

func orEmptyObject(x any) any {
	if x == nil {
		return map[string]any{}
	}
	return x
}
