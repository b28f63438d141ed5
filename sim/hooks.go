package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// Installed lists the installed hooks by pi's names, in a fixed order.
func (h Hooks) Installed() []string {
	all := h.installed()
	out := make([]string, 0, len(all))
	for _, x := range all {
		if x.on {
			out = append(out, x.name)
		}
	}
	return out
}

// hookInstalled is a hook by name, and whether the scenario installs it.
type hookInstalled struct {
	on   bool
	name string
}

// installed is every hook by name, each with whether the scenario installs it.
func (h Hooks) installed() [10]hookInstalled {
	return [10]hookInstalled{
		{h.ConvertToLLM != nil, trace.HookConvertToLLM},
		{h.TransformContext != nil, trace.HookTransformContext},
		{h.GetAPIKey != nil, trace.HookGetAPIKey},
		{h.PrepareRequest != nil, trace.HookPrepareRequest},
		{h.PrepareNextTurn != nil, trace.HookPrepareNextTurn},
		{h.FinishTurn != nil, trace.HookFinishTurn},
		{!h.NoSteering, trace.HookSteering},
		{!h.NoFollowUp, trace.HookFollowUp},
		{h.BeforeToolCall != nil, trace.HookBeforeToolCall},
		{h.AfterToolCall != nil, trace.HookAfterToolCall},
	}
}

// hook answers a hook call from its script.
// Kept whole: one case per hook, a table.
func (w *world) hook(name string, data json.RawMessage, inProcess bool) Answer {
	calls := w.hookCalls[name] // counted in place: one look-up a call, not an update and a read
	if calls == nil {
		calls = new(int)
		w.hookCalls[name] = calls
	}
	*calls++
	n := *calls
	h := w.sc.Hooks
	in := hookData(data)
	// A queue poll reads nothing of its data, which the world wrote itself in-process.
	poll := name == trace.HookSteering && !h.NoSteering || name == trace.HookFollowUp && !h.NoFollowUp
	if (!inProcess || !poll) && !in.valid() {
		err := fmt.Errorf("not a JSON object: %.40s", data)
		w.fail("protocol", fmt.Sprintf("%s call %d: bad data: %v", name, n, err))
		return Answer{Error: "bad hook data: " + err.Error()}
	}
	switch {
	case name == trace.HookSteering && !h.NoSteering:
		return messagesAnswer(w.steering.Drain())
	case name == trace.HookFollowUp && !h.NoFollowUp:
		return messagesAnswer(w.followUp.Drain())
	case name == trace.HookConvertToLLM && h.ConvertToLLM != nil:
		if h.ConvertToLLM.Throw != "" {
			return w.answering(Answer{Error: h.ConvertToLLM.Throw}, h.ConvertToLLM.Abort, h.ConvertToLLM.Wait)
		}
		return w.answering(w.convert(in.member("messages"), h.ConvertToLLM), h.ConvertToLLM.Abort, h.ConvertToLLM.Wait)
	case name == trace.HookTransformContext && h.TransformContext != nil:
		if h.TransformContext.Throw != "" {
			return w.answering(Answer{Error: h.TransformContext.Throw}, h.TransformContext.Abort, h.TransformContext.Wait)
		}
		return w.answering(transformAnswer(in.member("messages"), h.TransformContext.KeepLast), h.TransformContext.Abort, h.TransformContext.Wait)
	case name == trace.HookGetAPIKey && h.GetAPIKey != nil:
		return w.answering(answerJSON(map[string]any{"apiKey": h.GetAPIKey.Key}), h.GetAPIKey.Abort, h.GetAPIKey.Wait)
	case name == trace.HookPrepareRequest && h.PrepareRequest != nil:
		a := h.PrepareRequest.answer(n)
		if a.Throw != "" {
			return w.answering(Answer{Error: a.Throw}, a.Abort, a.Wait)
		}
		return w.answering(contextAnswerJSON(in.member("context"), a.Context, a.Model, a.ThinkingLevel, a.Messages), a.Abort, a.Wait)
	case name == trace.HookPrepareNextTurn && h.PrepareNextTurn != nil:
		a := h.PrepareNextTurn.answer(n)
		if a.Throw != "" {
			return w.answering(Answer{Error: a.Throw}, a.Abort, a.Wait)
		}
		return w.answering(contextAnswerJSON(hookData(in.member("turn")).member("context"), a.Context, a.Model, a.ThinkingLevel, a.Messages), a.Abort, a.Wait)
	case name == trace.HookFinishTurn && h.FinishTurn != nil:
		a := h.FinishTurn.answer(n)
		if a.Throw != "" {
			return w.answering(Answer{Error: a.Throw}, a.Abort, a.Wait)
		}
		out := map[string]any{}
		if a.Action != loop.DecisionNone {
			out["action"] = a.Action
		}
		return w.answering(answerJSON(out), a.Abort, a.Wait)
	case name == trace.HookBeforeToolCall && h.BeforeToolCall != nil:
		a := h.BeforeToolCall.answer(toolCallID(in))
		if a.Throw != "" {
			return w.answering(Answer{Error: a.Throw}, a.Abort, a.Wait)
		}
		out := map[string]any{}
		if a.Block {
			out["block"] = true
		}
		if a.Reason != "" {
			out["reason"] = a.Reason
		}
		if a.Terminate {
			out["terminate"] = true
		}
		if a.SetArgs != nil {
			out["setArgs"] = a.SetArgs
		}
		return w.answering(answerJSON(out), a.Abort, a.Wait)
	case name == trace.HookAfterToolCall && h.AfterToolCall != nil:
		a := h.AfterToolCall.answer(toolCallID(in))
		if a.Throw != "" {
			return w.answering(Answer{Error: a.Throw}, a.Abort, a.Wait)
		}
		out := map[string]any{}
		if a.Content != nil {
			out["content"] = a.Content
		}
		if a.Details != nil {
			out["details"] = a.Details
		}
		if a.StructuredContent != nil {
			out["structuredContent"] = a.StructuredContent
		}
		if a.IsError != nil {
			out["isError"] = *a.IsError
		}
		if a.Terminate != nil {
			out["terminate"] = *a.Terminate
		}
		if a.Usage != nil {
			out["usage"] = a.Usage
		}
		return w.answering(answerJSON(out), a.Abort, a.Wait)
	}
	text := fmt.Sprintf("hook %s was called but the scenario does not install it", name)
	w.fail("protocol", text)
	return Answer{Error: text}
}

// convert is the default convertToLlm filter, optionally turning custom text messages into
// user messages.
func (w *world) convert(raw json.RawMessage, s *ConvertScript) Answer {
	if a, ok := convertCanonical(raw, s.KeepCustomAsUser); ok {
		return a
	}
	return convertDecoded(raw, s.KeepCustomAsUser)
}

// convertDecoded is convert on the messages decoded.
func convertDecoded(raw json.RawMessage, keepCustom bool) Answer {
	var messages []map[string]any
	_ = json.Unmarshal(raw, &messages)
	out := []map[string]any{}
	for _, m := range messages {
		switch m["role"] {
		case "system", "user", "assistant", "toolResult":
			out = append(out, m)
		default:
			if keepCustom {
				if text, ok := m["content"].(string); ok {
					out = append(out, map[string]any{"role": "user", "content": text, "timestamp": m["timestamp"]})
				}
			}
		}
	}
	return answerJSON(map[string]any{"messages": out})
}

func toolCallID(in hookData) string {
	raw := hookData(in.member("toolCall")).member("id")
	// A string without escapes in canonical JSON (valid UTF-8) is its text between the quotes.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : n-1])
	}
	var id string
	_ = json.Unmarshal(raw, &id)
	return id
}

// hookData is a hook call's data as the world has it: canonical JSON, written by the world's
// encoder, so its members are found on the bytes.
type hookData []byte

// valid reports whether the data is an object (or null, which has no members).
func (d hookData) valid() bool {
	return len(d) >= 2 && d[0] == '{' || string(d) == "null"
}

// member is the value of member key, nil when there is none.
func (d hookData) member(key string) json.RawMessage {
	start, end, ok := jsonvalue.MemberValue(d, key)
	if !ok {
		return nil
	}
	return json.RawMessage(d[start:end])
}

// contextAnswer builds a prepareRequest / prepareNextTurn answer from the context the hook
// was given.
func contextAnswer(given json.RawMessage, change *ContextChange, model *loop.Model, level loop.ThinkingLevel, messages []loop.Message) map[string]any {
	out := map[string]any{}
	if change != nil {
		var ctx struct {
			Messages json.RawMessage `json:"messages"`
			Tools    []string        `json:"tools"`
		}
		_ = json.Unmarshal(given, &ctx)
		c := map[string]any{"messages": keepLast(ctx.Messages, change.KeepLast), "tools": ctx.Tools}
		if change.Tools != nil {
			c["tools"] = change.Tools
		}
		out["context"] = c // tools null when neither the given context nor the change has any
	}
	if model != nil {
		out["model"] = ModelSetup{ID: model.ID, API: model.API, Provider: model.Provider}
	}
	if level != "" {
		out["thinkingLevel"] = level
	}
	if messages != nil {
		out["messages"] = messages
	}
	return out
}

// keepLast keeps the last n messages of a JSON array (all when n <= 0).
func keepLast(raw json.RawMessage, n int) []json.RawMessage {
	var list []json.RawMessage
	_ = json.Unmarshal(raw, &list)
	if list == nil {
		list = []json.RawMessage{}
	}
	if n > 0 && len(list) > n {
		list = list[len(list)-n:]
	}
	return list
}

// The hooks' answers built on the canonical JSON of the data they were given (hookData), as
// answerJSON writes them from decoded values: json.Marshal writes the canonical JSON of an
// element given as json.RawMessage as it is, and a decoded canonical object again as it was
// (its keys sorted, its strings escaped and its numbers written the same way). Each reports
// false for data it does not read so, which the code above them answers.

// keptLast is keepLast of a canonical array, its elements as they are written there.
func keptLast(raw json.RawMessage, n int) ([][]byte, bool) {
	list, ok := jsonvalue.Elements(raw)
	if !ok {
		return nil, false
	}
	if n > 0 && len(list) > n {
		list = list[len(list)-n:]
	}
	return list, true
}

// appendElements appends a JSON array of the elements (written as they are).
func appendElements(b []byte, list [][]byte) []byte {
	return jsonvalue.AppendList(b, list, func(b, e []byte) []byte { return append(b, e...) })
}

// transformAnswer is transformContext's answer: the last n of the messages it was given.
func transformAnswer(raw json.RawMessage, n int) Answer {
	if list, ok := keptLast(raw, n); ok {
		return Answer{Data: append(appendElements(append(make([]byte, 0, len(raw)+16), `{"messages":`...), list), '}')}
	}
	return answerJSON(map[string]any{"messages": keepLast(raw, n)})
}

// contextAnswerJSON is answerJSON of contextAnswer.
func contextAnswerJSON(given json.RawMessage, change *ContextChange, model *loop.Model, level loop.ThinkingLevel, messages []loop.Message) Answer {
	o := open(nil) // json.Marshal's members of a map, in their keys' order
	if change != nil {
		list, tools, ok := givenContext(given, change.KeepLast)
		if !ok {
			return answerJSON(contextAnswer(given, change, model, level, messages))
		}
		o = o.key("context")
		c := open(o.b).key("messages")
		c.b = appendElements(c.b, list)
		c = c.key("tools")
		switch {
		case change.Tools != nil:
			c.b = jsonvalue.AppendList(c.b, change.Tools, jsonvalue.AppendString)
		case tools != nil:
			c.b = appendElements(c.b, tools)
		default: // contextAnswer's tools: the given context's, nil when it has none
			c.b = append(c.b, "null"...)
		}
		o.b = c.close()
	}
	if messages != nil {
		var ok bool
		o = o.key("messages")
		if o.b, ok = jsonvalue.AppendMarshalList(o.b, messages, loop.AppendMessage); !ok {
			return answerJSON(contextAnswer(given, change, model, level, messages))
		}
	}
	if model != nil {
		o = o.key("model")
		o.b = appendModelSetupJSON(o.b, ModelSetup{ID: model.ID, API: model.API, Provider: model.Provider})
	}
	if level != "" {
		o = o.str("thinkingLevel", string(level))
	}
	return Answer{Data: o.close()}
}

// givenContext reads a hook's given context, canonical JSON, as contextAnswer does: its last
// n messages, and its tools, each a string without escapes, as written (nil when it has none).
func givenContext(given json.RawMessage, n int) (list, tools [][]byte, ok bool) {
	if len(given) == 0 || given[0] != '{' {
		return nil, nil, false
	}
	if start, end, found := jsonvalue.MemberValue(given, "messages"); found {
		if list, ok = keptLast(given[start:end], n); !ok {
			return nil, nil, false
		}
	} else {
		list = [][]byte{}
	}
	if start, end, found := jsonvalue.MemberValue(given, "tools"); found && string(given[start:end]) != "null" {
		if tools, ok = jsonvalue.Elements(given[start:end]); !ok {
			return nil, nil, false
		}
		for _, t := range tools {
			if t[0] != '"' || bytes.IndexByte(t, '\\') >= 0 {
				return nil, nil, false
			}
		}
	}
	return list, tools, true
}

// convertCanonical is convert of canonical messages: those of the four roles kept as they
// are written, custom ones turned into user messages or dropped.
func convertCanonical(raw json.RawMessage, keepCustom bool) (Answer, bool) {
	list, ok := jsonvalue.Elements(raw)
	if !ok {
		return Answer{}, false
	}
	b := append(make([]byte, 0, len(raw)+16), `{"messages":[`...)
	n := 0
	for _, m := range list {
		if m[0] != '{' {
			return Answer{}, false
		}
		keep := false
		if start, end, found := jsonvalue.MemberValue(m, "role"); found && m[start] == '"' {
			role := m[start:end]
			if bytes.IndexByte(role, '\\') >= 0 {
				return Answer{}, false
			}
			switch string(role[1 : len(role)-1]) {
			case "system", "user", "assistant", "toolResult":
				keep = true
			}
		}
		switch {
		case keep:
			if n++; n > 1 {
				b = append(b, ',')
			}
			b = append(b, m...)
		case keepCustom:
			start, end, found := jsonvalue.MemberValue(m, "content")
			if !found || m[start] != '"' {
				continue
			}
			if n++; n > 1 {
				b = append(b, ',')
			}
			b = append(append(append(b, `{"content":`...), m[start:end]...), `,"role":"user","timestamp":`...)
			if start, end, found := jsonvalue.MemberValue(m, "timestamp"); found {
				b = append(b, m[start:end]...)
			} else {
				b = append(b, "null"...)
			}
			b = append(b, '}')
		}
	}
	return Answer{Data: append(b, "]}"...)}, true
}

func nonNilMessages(m []loop.Message) []loop.Message {
	if m == nil {
		return []loop.Message{}
	}
	return m
}

// answering completes a hook's answer: abort marks it as aborting the run while the hook
// runs; wait as returned later. A delayed answer names the hookReturn delivery that lets the
// hook return it, scheduled now; an answer held until the abort is returned by the
// implementation itself once the signal it gave the hook fires (or at the delivery, when it
// has a delay too, whichever comes first).
func (w *world) answering(a Answer, abort bool, wait Wait) Answer {
	a.Abort = abort
	a.UntilAbort = wait.UntilAbort
	if wait.Delay > 0 {
		w.hookWaits++
		a.Wait = "h" + strconv.Itoa(w.hookWaits)
		w.at(w.now+wait.Delay, Delivery{Kind: trace.DeliverHookReturn, Target: a.Wait})
	}
	return a
}

// noMessages is the answer of a queue poll that finds the queue empty, as answerJSON writes
// it: most polls find nothing, and the reference reads it without decoding.
var noMessages = json.RawMessage(`{"messages":[]}`)

// messagesAnswer is a queue poll's answer: the messages drained from the queue.
func messagesAnswer(drained []loop.Message) Answer {
	if len(drained) == 0 {
		return Answer{Data: noMessages}
	}
	return answerJSON(map[string]any{"messages": drained})
}

func answerJSON(v any) Answer {
	data, err := json.Marshal(v)
	if err != nil {
		return Answer{Error: "unencodable answer: " + err.Error()}
	}
	return Answer{Data: data}
}

// UntilAbortTarget is the target of a hook call's entry whose answer waits for the run's abort
// signal (Answer.UntilAbort).
const UntilAbortTarget = "untilAbort"

// waitTarget is what a hook call's entry records of its answer's wait as its target: the
// hookReturn delivery's target, UntilAbortTarget, both as "h1|untilAbort", or "" for an
// answer returned at once.
func (a Answer) waitTarget() string {
	switch {
	case a.UntilAbort && a.Wait != "":
		return a.Wait + "|" + UntilAbortTarget
	case a.UntilAbort:
		return UntilAbortTarget
	}
	return a.Wait
}
