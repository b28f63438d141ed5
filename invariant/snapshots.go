package invariant

import (
	"maps"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

const snapshotsDoc = `Streaming snapshots. For each request, the assistant events follow the stream's deliveries:
start gives message_start with the start event's partial; each content event after start gives
message_update with that event and its partial (events before start give none); done or error
(or the end of a stream without them) gives message_end with the stream's final message plus
thinkingLevel — the request's level — preceded by message_start with the same message when no
start was delivered. Each event comes after its delivery and before the next one, unless an
Agent's listener can hold the run (a barrier): pi reads the stream only as its listeners return.`

const reportsDoc = `What the loop reports. turn_end carries the turn's assistant message and its tool-result
messages ([] after error or aborted); agent_end carries every message the run emitted
(message_end), in order, and the end of the run the same list. finishTurn and prepareNextTurn
see the turn (message, tool results, the new messages so far, and a context ending with the
turn's response and results).`

// expectedEvent is an assistant event a delivery calls for.
type expectedEvent struct {
	name     string
	message  map[string]any
	ame      any // message_update's assistantMessageEvent
	delivery int
}

func checkSnapshots(v *view) []Violation {
	var vs violations
	for _, t := range v.turns {
		if t.stream < 0 || v.es[t.stream].Error != "" {
			continue
		}
		id := v.es[t.stream].Target
		level := str(v.d(t.stream)["thinkingLevel"])
		to := t.end
		if to < 0 {
			to = t.windowEnd
		}
		var want []expectedEvent
		var deliveries []int
		started, finished := false, false
		for i := t.stream + 1; i < to && !finished; i++ {
			e := v.es[i]
			if e.Kind != trace.KindDeliver || e.Target != id {
				continue
			}
			deliveries = append(deliveries, i)
			d := v.d(i)
			final := func(m map[string]any) {
				m = maps.Clone(m)
				if m == nil {
					m = map[string]any{}
				}
				if v.at.Has(loop.ThinkingLevelStamp) {
					m["thinkingLevel"] = level
				}
				if !started {
					want = append(want, expectedEvent{name: "message_start", message: m, delivery: i})
				}
				want = append(want, expectedEvent{name: "message_end", message: m, delivery: i})
				finished = true
			}
			switch e.Name {
			case trace.DeliverStreamEvent:
				switch str(d["type"]) {
				case "start":
					if !started {
						want = append(want, expectedEvent{name: "message_start", message: obj(d["partial"]), delivery: i})
						started = true
					}
				case "done":
					final(obj(d["message"]))
				case "error":
					final(obj(d["error"]))
				default:
					if started {
						want = append(want, expectedEvent{name: "message_update", message: obj(d["partial"]), ame: d, delivery: i})
					}
				}
			case trace.DeliverStreamEnd:
				final(obj(d["message"]))
			case trace.DeliverStreamFail:
				finished = true
			}
		}
		// The assistant events of the request.
		var got []int
		for i := t.stream + 1; i < to; i++ {
			if !v.isEvent(i, "message_start", "message_update", "message_end") {
				continue
			}
			if v.es[i].Name != "message_update" && v.role(i) != "assistant" {
				if len(got) == 0 {
					continue
				}
				break
			}
			got = append(got, i)
			if v.es[i].Name == "message_end" {
				break
			}
		}
		for k, w := range want {
			if k >= len(got) {
				vs.add(v, w.delivery, "request %s: this delivery should give %s, which never came", id, w.name)
				break
			}
			i := got[k]
			e := v.es[i]
			if e.Name != w.name {
				vs.add(v, i, "request %s: %s where the delivery at entry %d calls for %s", id, e.Name, v.seq(w.delivery), w.name)
				break
			}
			if d := valueDiff(v.message(i), w.message); d != "" {
				rule := "" // a message lacking only the requested thinkingLevel breaks pi's stamp alone
				if fs := trace.Fields(w.message, v.message(i), same); len(fs) == 1 && fs[0].Path == "thinkingLevel" {
					rule = "R-STREAM-THINKING-LEVEL"
				}
				vs.addRule(v, i, rule, "request %s: %s carries another message than the stream's, %s", id, e.Name, d)
			}
			if w.name == "message_update" && !same(v.d(i)["assistantMessageEvent"], w.ame) {
				vs.add(v, i, "request %s: message_update carries the event %s, delivered %s", id, show(v.d(i)["assistantMessageEvent"]), show(w.ame))
			}
			if i < w.delivery {
				vs.add(v, i, "request %s: %s comes before its delivery (entry %d)", id, e.Name, v.seq(w.delivery))
			}
			for _, dl := range deliveries {
				if !v.holds && dl > w.delivery && dl < i {
					vs.add(v, i, "request %s: %s comes after the next delivery (entry %d)", id, e.Name, v.seq(dl))
					break
				}
			}
		}
		if len(got) > len(want) && len(want) > 0 && v.es[got[len(want)-1]].Name == want[len(want)-1].name {
			vs.add(v, got[len(want)], "request %s: an extra %s", id, v.es[got[len(want)]].Name)
		}
	}
	return vs
}

// showMessageLists shows two lists of messages by their roles ("[assistant toolResult]") when
// the roles differ, which says the difference in a few words; else (or when they are not
// lists) as JSON.
func showMessageLists(got, want any) (string, string) {
	g, gok := got.([]any)
	w, wok := want.([]any)
	if gok && wok {
		if gs, ws := showMessages(g), showMessages(w); gs != ws {
			return gs, ws
		}
	}
	return show(got), show(want)
}

func checkReports(v *view) []Violation {
	var vs violations
	var emitted []any
	var lastTurn map[string]any // what prepareNextTurn should see: the previous turn
	turnAt := map[int]*turn{}
	for _, t := range v.turns {
		if t.end >= 0 {
			turnAt[t.end] = t
		}
	}
	var results []any
	var asst map[string]any
	var ctxAfter []any // the context after the turn's messages, when known
	ctxFiltered := false
	for i, e := range v.es {
		if e.Kind == trace.KindCall && e.Error == "" && (e.Name == trace.HookFinishTurn || e.Name == trace.HookPrepareNextTurn) {
			turnData := obj(v.d(i)["turn"])
			var want map[string]any
			if e.Name == trace.HookFinishTurn {
				want = map[string]any{"message": asst, "toolResults": orEmptyList(results), "newMessages": orEmptyList(emitted)}
			} else {
				want = lastTurn
			}
			if want != nil {
				for _, key := range []string{"message", "toolResults", "newMessages"} {
					if !same(turnData[key], want[key]) {
						gotShown, wantShown := showMessageLists(turnData[key], want[key])
						vs.add(v, i, "%s sees turn.%s %s, expected %s", e.Name, key, gotShown, wantShown)
					}
				}
			}
			if e.Name == trace.HookFinishTurn {
				lastTurn = want
				if ctxAfter != nil {
					if d := contextDiff(messagesOf(obj(turnData["context"]), "messages"), false, ctxAfter, ctxFiltered); d != "" {
						vs.add(v, i, "finishTurn sees a context that is not the request's context, its response and results: %s", d)
					}
				}
			}
			continue
		}
		if e.Kind == trace.KindCall && e.Name == trace.CallStream && e.Error == "" {
			ctx, filtered := v.requestContext(i)
			ctxAfter, ctxFiltered = append([]any{}, ctx...), filtered
			results, asst = nil, nil
			continue
		}
		if e.Kind != trace.KindEvent {
			if e.Kind == trace.KindEnd && e.Error == "" && v.agentEnd >= 0 {
				if d := listDiff(messagesOf(v.d(i), "messages"), messagesOf(v.d(v.agentEnd), "messages")); d != "" {
					vs.add(v, i, "the run returned other messages than agent_end's: %s", d)
				}
			}
			continue
		}
		switch e.Name {
		case "message_end":
			m := v.message(i)
			emitted = append(emitted, m)
			switch {
			case asst == nil && str(m["role"]) == "assistant" && ctxAfter != nil:
				asst = m
				ctxAfter = append(ctxAfter, m)
			case asst != nil && str(m["role"]) == "toolResult":
				results = append(results, m)
				ctxAfter = append(ctxAfter, m)
			}
		case "turn_end":
			t := turnAt[i]
			d := v.d(i)
			if t != nil && t.msg != nil && !same(obj(d["message"]), t.msg) {
				vs.add(v, i, "turn_end carries %s, not the turn's response %s", show(d["message"]), show(t.msg))
			}
			if diff := listDiff(arr(d["toolResults"]), results); diff != "" {
				vs.add(v, i, "turn_end's toolResults are not the turn's tool-result messages: %s", diff)
			}
			ctxAfter = nil
		case "agent_end":
			if d := listDiff(messagesOf(v.d(i), "messages"), emitted); d != "" {
				vs.add(v, i, "agent_end's messages are not the messages the run emitted: %s", d)
			}
		}
	}
	return vs
}

func orEmptyList(a []any) []any {
	if a == nil {
		return []any{}
	}
	return a
}
