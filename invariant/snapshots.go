package invariant

import (
	"bytes"
	"maps"

	"github.com/turnstile-dev/turnstile/jsonvalue"
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
	message  map[string]any // nil for a message_update, whose message and event are the delivery's
	delivery int
	// final: the delivery's member holding the stream's final message, which this event
	// carries plus level as its thinkingLevel (finalMessage), read when compared.
	final, level string
}

func checkSnapshots(v *view) []Violation {
	var vs violations
	for _, t := range v.turns {
		if t.stream < 0 || v.es[t.stream].Error != "" {
			continue
		}
		to := t.end
		if to < 0 {
			to = t.windowEnd
		}
		want, deliveries := v.expectedEvents(t.stream, to)
		got := v.assistantEvents(t.stream, to)
		v.compareSnapshots(&vs, v.es[t.stream].Target, want, got, deliveries)
	}
	return vs
}

// expectedEvents returns the assistant events the deliveries of the request at entry stream
// call for, up to entry to, and the deliveries.
func (v *view) expectedEvents(stream, to int) (want []expectedEvent, deliveries []int) {
	id := v.es[stream].Target
	level := str(v.d(stream)["thinkingLevel"])
	started, finished := false, false
	for i := stream + 1; i < to && !finished; i++ {
		e := v.es[i]
		if e.Kind != trace.KindDeliver || e.Target != id {
			continue
		}
		deliveries = append(deliveries, i)
		// final calls for the events of the stream's final message, held in member.
		final := func(member string) {
			if !started {
				want = append(want, expectedEvent{name: "message_start", final: member, level: level, delivery: i})
			}
			want = append(want, expectedEvent{name: "message_end", final: member, level: level, delivery: i})
			finished = true
		}
		switch e.Name {
		case trace.DeliverStreamEvent:
			switch v.eventType(i) {
			case "start":
				if !started {
					want = append(want, expectedEvent{name: "message_start", message: obj(v.d(i)["partial"]), delivery: i})
					started = true
				}
			case "done":
				final("message")
			case "error":
				final("error")
			default:
				if started {
					want = append(want, expectedEvent{name: "message_update", delivery: i})
				}
			}
		case trace.DeliverStreamEnd:
			final("message")
		case trace.DeliverStreamFail:
			finished = true
		}
	}
	return want, deliveries
}

// finalMessage is the message the final event w calls for: its delivery's final message, with
// the request's thinkingLevel where the loop stamps it.
func (v *view) finalMessage(w expectedEvent) map[string]any {
	m := maps.Clone(obj(v.d(w.delivery)[w.final]))
	if m == nil {
		m = map[string]any{}
	}
	if v.at.Has(loop.ThinkingLevelStamp) {
		m["thinkingLevel"] = w.level
	}
	return m
}

// carriesFinal reports whether the event at entry i carries finalMessage(w), found on the
// canonical bytes of two recorded entries written in full: canonical JSON is one text per
// value, so equal texts are equal values. False says nothing: the values are compared.
func (v *view) carriesFinal(i int, w expectedEvent) bool {
	e, dl := &v.es[i], &v.es[w.delivery]
	if !e.Canonical || !dl.Canonical || e.Link != nil || dl.Link != nil {
		return false
	}
	gs, ge, ok := jsonvalue.MemberValue(e.Data, "message")
	if !ok || e.Data[gs] != '{' {
		return false
	}
	ws, we, ok := jsonvalue.MemberValue(dl.Data, w.final)
	if !ok || dl.Data[ws] != '{' {
		return false
	}
	want := dl.Data[ws:we]
	if v.at.Has(loop.ThinkingLevelStamp) {
		if want, ok = jsonvalue.WithMember(want, "thinkingLevel", jsonvalue.AppendString(nil, w.level)); !ok {
			return false
		}
	}
	return bytes.Equal(e.Data[gs:ge], want)
}

// eventType is the type of the stream event delivered at entry i. A linked delivery's own
// data holds it as its data in full does (restoring a link adds its partial alone), so it is
// read there, on the canonical JSON's bytes, without making the partial.
func (v *view) eventType(i int) string {
	if e := &v.es[i]; e.Canonical {
		if typ, ok := jsonvalue.PlainString(e.Data, "type"); ok {
			return typ
		}
	}
	return str(v.d(i)["type"])
}

// repeatsDelivery reports whether the message_update at entry i is, once its link is
// restored, the stream event delivered at entry delivery with its partial, by construction:
// a recorded entry {"type":"message_update"} whose link repeats that delivery, a recorded
// stream event (its links resolve) that holds a partial or advances an earlier one. Its
// message and event are then the delivery's own values (trace.ExpandValues).
func (v *view) repeatsDelivery(i, delivery int) bool {
	e, dl := &v.es[i], &v.es[delivery]
	if !v.restoresLinks() || !e.Canonical || !dl.Canonical || e.Link == nil || *e.Link != (trace.Link{Repeats: dl.Seq}) ||
		string(e.Data) != `{"type":"message_update"}` || dl.Kind != trace.KindDeliver || dl.Name != trace.DeliverStreamEvent || dl.Seq >= e.Seq {
		return false
	}
	if _, _, nested := jsonvalue.MemberValue(dl.Data, "assistantMessageEvent"); nested {
		return false
	}
	if dl.Link != nil {
		return *dl.Link == trace.Link{Advances: dl.Link.Advances}
	}
	start, _, ok := jsonvalue.MemberValue(dl.Data, "partial")
	return ok && dl.Data[start] == '{'
}

// restoresLinks reports whether the view's entries are decoded with their links restored on
// the values (its own, or its whole trace's for a run of an Agent trace).
func (v *view) restoresLinks() bool {
	if v.parent != nil {
		return v.parent.linked
	}
	return v.linked
}

// assistantEvents returns the message events of the assistant message after the request at
// entry stream, up to its message_end.
func (v *view) assistantEvents(stream, to int) []int {
	var got []int
	for i := stream + 1; i < to; i++ {
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
	return got
}

// compareSnapshots checks request id's assistant events (got) against those its deliveries
// call for (want): same events, same messages, each after its delivery and before the next.
func (v *view) compareSnapshots(vs *violations, id string, want []expectedEvent, got, deliveries []int) {
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
		v.checkCarried(vs, id, i, w)
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

// checkCarried checks that event i carries the message w calls for, and a message_update the
// event delivered.
func (v *view) checkCarried(vs *violations, id string, i int, w expectedEvent) {
	var event any
	if w.name == "message_update" {
		if v.repeatsDelivery(i, w.delivery) {
			return // its message and event are the delivery's, restored from it
		}
		d := v.d(w.delivery)
		w.message, event = obj(d["partial"]), d
	}
	if w.final != "" {
		if v.carriesFinal(i, w) {
			return
		}
		w.message = v.finalMessage(w)
	}
	if d := valueDiff(v.message(i), w.message); d != "" {
		rule := "" // a message lacking only the requested thinkingLevel breaks pi's stamp alone
		if fs := trace.Fields(w.message, v.message(i), same); len(fs) == 1 && fs[0].Path == "thinkingLevel" {
			rule = "R-STREAM-THINKING-LEVEL"
		}
		vs.addRule(v, i, rule, "request %s: %s carries another message than the stream's, %s", id, v.es[i].Name, d)
	}
	if w.name == "message_update" && !same(v.d(i)["assistantMessageEvent"], event) {
		vs.add(v, i, "request %s: message_update carries the event %s, delivered %s", id, show(v.d(i)["assistantMessageEvent"]), show(event))
	}
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
	r := reportWatch{v: v, vs: &vs, turnAt: map[int]*turn{}}
	for _, t := range v.turns {
		if t.end >= 0 {
			r.turnAt[t.end] = t
		}
	}
	for i, e := range v.es {
		switch {
		case e.Kind == trace.KindCall && e.Error == "" && (e.Name == trace.HookFinishTurn || e.Name == trace.HookPrepareNextTurn):
			r.turnHook(i, e.Name)
		case e.Kind == trace.KindCall && e.Name == trace.CallStream && e.Error == "":
			ctx, filtered := v.requestContext(i)
			r.ctxAfter, r.ctxFiltered = append([]any{}, ctx...), filtered
			r.results, r.asst = nil, nil
		case e.Kind == trace.KindEnd && e.Error == "" && v.agentEnd >= 0:
			if d := listDiff(messagesOf(v.d(i), "messages"), messagesOf(v.d(v.agentEnd), "messages")); d != "" {
				vs.add(v, i, "the run returned other messages than agent_end's: %s", d)
			}
		case e.Kind == trace.KindEvent:
			r.event(i, e.Name)
		}
	}
	return vs
}

// reportWatch follows what a run emitted, for checkReports.
type reportWatch struct {
	v        *view
	vs       *violations
	turnAt   map[int]*turn  // turns by their turn_end
	emitted  []any          // the run's messages so far
	lastTurn map[string]any // what prepareNextTurn should see: the previous turn
	// The current turn's tool results and response, and the context after them when known.
	results     []any
	asst        map[string]any
	ctxAfter    []any
	ctxFiltered bool
}

// turnHook checks the turn a finishTurn or prepareNextTurn call at entry i sees.
func (r *reportWatch) turnHook(i int, name string) {
	v := r.v
	turnData := obj(v.d(i)["turn"])
	var want map[string]any
	if name == trace.HookFinishTurn {
		want = map[string]any{"message": r.asst, "toolResults": orEmptyList(r.results), "newMessages": orEmptyList(r.emitted)}
	} else {
		want = r.lastTurn
	}
	if want != nil {
		for _, key := range []string{"message", "toolResults", "newMessages"} {
			if !same(turnData[key], want[key]) {
				gotShown, wantShown := showMessageLists(turnData[key], want[key])
				r.vs.add(v, i, "%s sees turn.%s %s, expected %s", name, key, gotShown, wantShown)
			}
		}
	}
	if name != trace.HookFinishTurn {
		return
	}
	r.lastTurn = want
	if r.ctxAfter != nil {
		if d := contextDiff(messagesOf(obj(turnData["context"]), "messages"), false, r.ctxAfter, r.ctxFiltered); d != "" {
			r.vs.add(v, i, "finishTurn sees a context that is not the request's context, its response and results: %s", d)
		}
	}
}

// event follows the messages emitted and checks what turn_end and agent_end carry.
func (r *reportWatch) event(i int, name string) {
	v := r.v
	switch name {
	case "message_end":
		m := v.message(i)
		r.emitted = append(r.emitted, m)
		switch {
		case r.asst == nil && str(m["role"]) == "assistant" && r.ctxAfter != nil:
			r.asst = m
			r.ctxAfter = append(r.ctxAfter, m)
		case r.asst != nil && str(m["role"]) == "toolResult":
			r.results = append(r.results, m)
			r.ctxAfter = append(r.ctxAfter, m)
		}
	case "turn_end":
		t := r.turnAt[i]
		d := v.d(i)
		if t != nil && t.msg != nil && !same(obj(d["message"]), t.msg) {
			r.vs.add(v, i, "turn_end carries %s, not the turn's response %s", show(d["message"]), show(t.msg))
		}
		if diff := listDiff(arr(d["toolResults"]), r.results); diff != "" {
			r.vs.add(v, i, "turn_end's toolResults are not the turn's tool-result messages: %s", diff)
		}
		r.ctxAfter = nil
	case "agent_end":
		if d := listDiff(messagesOf(v.d(i), "messages"), r.emitted); d != "" {
			r.vs.add(v, i, "agent_end's messages are not the messages the run emitted: %s", d)
		}
	}
}

func orEmptyList(a []any) []any {
	if a == nil {
		return []any{}
	}
	return a
}
