package invariant

import (
	"cmp"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

const replayDoc = `Tool declarations and the transcript. Before each request the context's declared tool set —
loop.CurrentTools replayed over its system messages — equals the executable tool set at that
moment. The executable set is known where a hook shows it (prepareRequest's context.tools, the
turn context of finishTurn and prepareNextTurn, the tool hooks' context) or sets it
(prepareRequest / prepareNextTurn answers); elsewhere it is constant between such changes, so
requests declared in between declare one set, which holds every tool that was executed and none
that was "not found". The transcript only grows: each request's context is the previous one, its
final assistant message, and exactly the messages emitted since — unless a prepareNextTurn
answer replaced the context (then: that context and the messages emitted after) or
prepareRequest did (then: exactly its answer). The context is read where the trace shows it
whole (transformContext's input, else convertToLlm's, else the request itself); the request's
messages are convertToLlm's answer, and convertToLlm's input transformContext's answer.`

// epoch is a stretch of the run in which the executable tool set does not change.
type epoch struct {
	known    bool
	set      names
	declared []declared
	have     map[string]int // executed tool name -> entry index
	missing  map[string]int // "not found" tool name -> entry index
}

type declared struct {
	i   int
	set names
}

// byEntry yields a map of tool names to entry indexes in trace order, so that violations come
// in the same order every run.
func byEntry(m map[string]int) iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(m[a]-m[b], strings.Compare(a, b)) })
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}

func newEpoch() *epoch { return &epoch{have: map[string]int{}, missing: map[string]int{}} }

// observe learns the exact executable set at entry i.
func (ep *epoch) observe(v *view, vs *violations, i int, set names, what string) {
	if ep.known {
		if !ep.set.equal(set) {
			vs.add(v, i, "%s shows the executable tools %v, but they are %v", what, set, ep.set)
		}
		return
	}
	ep.known, ep.set = true, set
	for _, d := range ep.declared {
		if !d.set.equal(set) {
			vs.add(v, d.i, "the request declares the tools %v, but the executable tools are %v (shown at entry %d)", d.set, set, v.seq(i))
		}
	}
	for n, at := range byEntry(ep.have) {
		if !set[n] {
			vs.add(v, at, "tool %s was executed but is not executable (%s at entry %d shows %v)", n, what, v.seq(i), set)
		}
	}
	for n, at := range byEntry(ep.missing) {
		if set[n] {
			vs.add(v, at, "tool %s was not found but is executable (%s at entry %d shows %v)", n, what, v.seq(i), set)
		}
	}
}

func (ep *epoch) declare(v *view, vs *violations, i int, set names) {
	if ep.known {
		if !ep.set.equal(set) {
			vs.add(v, i, "the request declares the tools %v, but the executable tools are %v", set, ep.set)
		}
		return
	}
	ep.declared = append(ep.declared, declared{i, set})
}

func (ep *epoch) executed(v *view, vs *violations, i int, name string) {
	if ep.known {
		if !ep.set[name] {
			vs.add(v, i, "tool %s was executed but the executable tools are %v", name, ep.set)
		}
		return
	}
	ep.have[name] = i
}

func (ep *epoch) notFound(v *view, vs *violations, i int, name string) {
	if ep.known {
		if ep.set[name] {
			vs.add(v, i, "tool %s was not found but the executable tools are %v", name, ep.set)
		}
		return
	}
	ep.missing[name] = i
}

// close checks an epoch whose set was never shown: everything it declared agrees.
func (ep *epoch) close(v *view, vs *violations) {
	if ep.known || len(ep.declared) == 0 {
		return
	}
	set := ep.declared[0].set
	for _, d := range ep.declared[1:] {
		if !d.set.equal(set) {
			vs.add(v, d.i, "the request declares the tools %v, but an earlier request (entry %d) declared %v and no hook changed them", d.set, v.seq(ep.declared[0].i), set)
		}
	}
	for n, at := range byEntry(ep.have) {
		if !set[n] {
			vs.addRule(v, at, "R-DECL-REPLAY", "tool %s was executed but the requests declare %v", n, set)
		}
	}
	for n, at := range byEntry(ep.missing) {
		if set[n] {
			vs.add(v, at, "tool %s was not found but the requests declare it (%v)", n, set)
		}
	}
}

// declaredNames replays the tool declarations of JSON messages by name, as loop.CurrentTools
// does: system messages in order, each one's toolsRemoved first, then its toolsAdded.
func declaredNames(msgs []any) names {
	out := names{}
	for _, m := range msgs {
		mm := obj(m)
		if str(mm["role"]) != "system" {
			continue
		}
		for _, r := range arr(mm["toolsRemoved"]) {
			delete(out, str(obj(r)["name"]))
		}
		for _, d := range arr(mm["toolsAdded"]) {
			out[str(obj(d)["name"])] = true
		}
	}
	return out
}

func contextTools(m map[string]any) (names, bool) {
	c := obj(m["context"])
	if c == nil {
		return nil, false
	}
	return namesOf(arr(c["tools"])), true
}

func turnContextTools(m map[string]any) (names, bool) { return contextTools(obj(m["turn"])) }

func checkReplay(v *view) []Violation {
	var vs violations
	ep := newEpoch()
	next := func(set names) {
		ep.close(v, &vs)
		ep = newEpoch()
		ep.known, ep.set = true, set
	}
	declaredAtPrepare := false
	for i, e := range v.es {
		switch {
		case e.Kind == trace.KindCall && e.Name == trace.CallStream:
			if !declaredAtPrepare {
				ctx, _ := v.requestContext(i)
				ep.declare(v, &vs, i, declaredNames(ctx))
			}
			declaredAtPrepare = false
		case e.Kind == trace.KindCall && e.Error == "":
			d, a := v.d(i), v.a(i)
			switch e.Name {
			case trace.HookPrepareRequest:
				if set, ok := contextTools(d); ok {
					ep.observe(v, &vs, i, set, "prepareRequest")
				}
				ep.declare(v, &vs, i, declaredNames(messagesOf(obj(d["context"]), "messages")))
				declaredAtPrepare = true
				if set, ok := contextTools(a); ok {
					next(set)
				}
			case trace.HookPrepareNextTurn:
				if set, ok := turnContextTools(d); ok {
					ep.observe(v, &vs, i, set, "prepareNextTurn")
				}
				if set, ok := contextTools(a); ok {
					next(set)
				}
			case trace.HookFinishTurn:
				if set, ok := turnContextTools(d); ok {
					ep.observe(v, &vs, i, set, "finishTurn")
				}
			case trace.HookBeforeToolCall, trace.HookAfterToolCall:
				if set, ok := contextTools(d); ok {
					ep.observe(v, &vs, i, set, e.Name)
				}
			case trace.CallTool:
				ep.executed(v, &vs, i, str(d["toolName"]))
			}
		case v.isEvent(i, "tool_execution_end"):
			d := v.d(i)
			name := str(d["toolName"])
			if d["durationMs"] == nil && resultText(d["result"]) == "Tool "+name+" not found" {
				ep.notFound(v, &vs, i, name)
			}
		}
	}
	ep.close(v, &vs)
	checkGrowth(v, &vs)
	return vs
}

// resultText is the text of a result whose content is one text block.
func resultText(r any) string {
	c := arr(obj(r)["content"])
	if len(c) != 1 {
		return ""
	}
	b := obj(c[0])
	if str(b["type"]) != "text" {
		return ""
	}
	return str(b["text"])
}

// requestContext returns the context of the request at stream call i as the trace shows it:
// transformContext's input, else convertToLlm's, else what prepareRequest left (its answer's
// context or the one it was given), all of them whole; else the request's own messages, which
// are the context without custom messages (filtered).
func (v *view) requestContext(i int) (msgs []any, filtered bool) {
	t, c := v.viewHooks(i)
	switch {
	case t >= 0:
		return messagesOf(v.d(t), "messages"), false
	case c >= 0:
		return messagesOf(v.d(c), "messages"), false
	}
	if p := v.prepareRequestFor(i); p >= 0 {
		if ctx := obj(v.a(p)["context"]); ctx != nil {
			return messagesOf(ctx, "messages"), false
		}
		return messagesOf(obj(v.d(p)["context"]), "messages"), false
	}
	return messagesOf(v.d(i), "messages"), true
}

// llmMessages drops the messages of custom roles, as the default convertToLlm does.
func llmMessages(msgs []any) []any {
	out := make([]any, 0, len(msgs))
	for _, m := range msgs {
		switch str(obj(m)["role"]) {
		case "system", "user", "assistant", "toolResult":
			out = append(out, m)
		}
	}
	return out
}

// contextDiff compares two contexts, without custom messages when either is filtered.
func contextDiff(got []any, gotFiltered bool, want []any, wantFiltered bool) string {
	if gotFiltered || wantFiltered {
		return listDiff(llmMessages(got), llmMessages(want))
	}
	return listDiff(got, want)
}

// viewHooks returns the transformContext and convertToLlm calls made for the request at stream
// call i (-1 when none): the last ones since the previous request or turn_start.
func (v *view) viewHooks(i int) (transform, convert int) {
	transform, convert = -1, -1
	for j := i - 1; j >= 0; j-- {
		e := v.es[j]
		if (e.Kind == trace.KindCall && e.Name == trace.CallStream) || v.isEvent(j, "turn_start") {
			break
		}
		if e.Kind == trace.KindCall && e.Error == "" {
			switch {
			case e.Name == trace.HookTransformContext && transform < 0:
				transform = j
			case e.Name == trace.HookConvertToLLM && convert < 0:
				convert = j
			}
		}
	}
	if convert >= 0 && transform > convert {
		transform = -1 // a transformContext after convertToLlm belongs to nothing we can place
	}
	return
}

// checkGrowth checks that each request's context extends the previous one.
func checkGrowth(v *view, vs *violations) {
	var prev []any // the previous request's context followed by its final assistant message
	prevFiltered, havePrev := false, false
	var base []any // the context the next request extends, when known
	baseFiltered, baseKnown := false, false
	var emitted []any
	awaiting := false // a request was made and its response has not ended yet
	for i, e := range v.es {
		switch {
		case v.isEvent(i, "message_end"):
			if awaiting && v.role(i) == "assistant" {
				awaiting = false
				prev = append(prev, v.message(i))
				base, baseFiltered, baseKnown, emitted = prev, prevFiltered, true, nil
				continue
			}
			emitted = append(emitted, v.message(i))
		case e.Kind == trace.KindCall && e.Name == trace.HookPrepareNextTurn && e.Error == "":
			if c := obj(v.a(i)["context"]); c != nil {
				base, baseFiltered, baseKnown, emitted = messagesOf(c, "messages"), false, true, nil
			}
		case e.Kind == trace.KindCall && e.Name == trace.CallStream && e.Error == "":
			ctx, filtered := v.requestContext(i)
			atDeclaration, declFiltered := ctx, filtered
			if p := v.prepareRequestFor(i); p >= 0 {
				atDeclaration, declFiltered = messagesOf(obj(v.d(p)["context"]), "messages"), false
				want := atDeclaration
				if c := obj(v.a(p)["context"]); c != nil {
					want = messagesOf(c, "messages")
				}
				sent, sentFiltered := messagesOf(v.d(i), "messages"), true
				if t, c := v.viewHooks(i); t >= 0 || c >= 0 {
					sent, sentFiltered = ctx, false
				}
				if d := contextDiff(sent, sentFiltered, want, false); d != "" {
					vs.add(v, i, "the request's context is not the context prepareRequest left (entry %d): %s", v.seq(p), d)
				}
			}
			switch {
			case baseKnown:
				want := append(append([]any{}, base...), emitted...)
				if d := contextDiff(atDeclaration, declFiltered, want, baseFiltered); d != "" {
					vs.add(v, i, "the transcript did not grow by exactly the previous context, its response and the messages emitted since: %s", d)
				}
			case !havePrev:
				// The first request: its context ends with the messages emitted so far.
				got, tail := atDeclaration, emitted
				if declFiltered {
					tail = llmMessages(emitted)
				}
				if len(tail) > len(got) || listDiff(got[len(got)-len(tail):], tail) != "" {
					vs.add(v, i, "the first request's context %s does not end with the messages emitted before it %s", showMessages(got), showMessages(tail))
				}
			}
			prev, prevFiltered, havePrev, awaiting = append([]any{}, ctx...), filtered, true, true
			base, baseKnown, emitted = nil, false, nil
			checkView(v, vs, i)
		}
	}
}

// prepareRequestFor returns the prepareRequest call made for the request at stream call i.
func (v *view) prepareRequestFor(i int) int {
	for j := i - 1; j >= 0; j-- {
		if v.isCall(j, trace.CallStream) || v.isEvent(j, "turn_start") {
			return -1
		}
		if v.isCall(j, trace.HookPrepareRequest) && v.es[j].Error == "" {
			return j
		}
	}
	return -1
}

// checkView checks that the request carries what transformContext and convertToLlm made of
// the context.
func checkView(v *view, vs *violations, i int) {
	t, c := v.viewHooks(i)
	sent := messagesOf(v.d(i), "messages")
	if c >= 0 {
		if d := listDiff(sent, messagesOf(v.a(c), "messages")); d != "" {
			vs.add(v, i, "the request's messages are not convertToLlm's answer (entry %d): %s", v.seq(c), d)
		}
	}
	if t < 0 {
		return
	}
	out := messagesOf(v.a(t), "messages")
	if c >= 0 {
		if listDiff(messagesOf(v.d(c), "messages"), out) != "" {
			vs.add(v, c, "convertToLlm was not given transformContext's answer (entry %d)", v.seq(t))
		}
		return
	}
	var filtered []any
	for _, m := range out {
		switch str(obj(m)["role"]) {
		case "system", "user", "assistant", "toolResult":
			filtered = append(filtered, m)
		}
	}
	if listDiff(sent, filtered) != "" {
		vs.add(v, i, "the request's messages are not transformContext's answer (entry %d) without custom messages", v.seq(t))
	}
}

func showMessages(msgs []any) string {
	roles := make([]string, 0, len(msgs))
	for _, m := range msgs {
		roles = append(roles, str(obj(m)["role"]))
	}
	return "[" + strings.Join(roles, " ") + "]"
}
