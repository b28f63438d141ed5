package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// Timeline renders the trace for people and golden files: one line an entry, with virtual
// time, a short kind, and what matters of the entry; ids and flags stay visible, long
// payloads are abbreviated with a stable digest.
//
//	12ms  ev    tool_execution_end t1 read ok 30ms "contents"
//	12ms  call  getSteeringMessages -> []
//	15ms  dlv   #2 text_delta [0] "Hel"
//
// A trace in the linear form is expanded first; TimelineLine needs entries in full.
func (t *Trace) Timeline() []byte {
	var buf bytes.Buffer
	for _, e := range t.Expanded().Entries {
		buf.WriteString(TimelineLine(e))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// TimelineLine renders one entry as a timeline line. The entry must be in full (Expand): a
// linked stream call would show only the messages it appends.
func TimelineLine(e Entry) string {
	kind := map[string]string{KindEvent: "ev", KindCall: "call", KindDeliver: "dlv", KindUser: "user", KindEnd: "end", KindFail: "FAIL", KindOutcome: "out"}[e.Kind]
	return fmt.Sprintf("%7dms  %-4s  %s", e.T, kind, describe(e))
}

func describe(e Entry) string {
	// A call decodes only what it shows (a stream call's context may be long): the data is
	// decoded as a whole for the other kinds only.
	var d map[string]any
	if e.Kind != KindCall && e.Kind != KindFail {
		d, _ = decoded(e.Data).(map[string]any)
	}
	switch e.Kind {
	case KindEvent:
		return describeEvent(e.Name, d)
	case KindCall:
		return describeCall(e)
	case KindDeliver:
		return describeDelivery(e, d)
	case KindUser:
		if e.Name == "abort" && len(e.Data) == 0 {
			return "abort (while a hook runs)"
		}
		if e.Name == UserAgentEntry {
			line := "agent steering=" + str(d["steeringMode"]) + " followUp=" + str(d["followUpMode"])
			if sp, ok := d["systemPrompt"]; ok {
				line += " system=" + quote(str(sp), 60)
			}
			for _, b := range arrayOf(d["barriers"]) {
				bo, _ := b.(map[string]any)
				line += " barrier " + str(bo["id"]) + "@" + str(bo["event"])
				if n, ok := bo["nth"].(float64); ok {
					line += fmt.Sprintf("#%d", int(n))
				}
			}
			return line
		}
		msgs, _ := decoded(e.Data).([]any)
		return e.Name + " " + messageList(msgs)
	case KindEnd:
		if e.Error != "" {
			return "run failed: " + e.Error
		}
		msgs, _ := d["messages"].([]any)
		return "run returned " + messageList(msgs)
	case KindFail:
		return e.Name + ": " + e.Error
	case KindOutcome:
		return describeOutcome(e, d)
	}
	return e.Name
}

func arrayOf(v any) []any { a, _ := v.([]any); return a }

// decoded is data decoded as encoding/json decodes it into an any (nil when it is not JSON).
func decoded(data []byte) any { return (&jsonvalue.Decoder{}).DecodeAny(data) }

// describeOutcome renders an Agent operation's outcome: "u3 prompt resolved", "u4 continue
// refused: TEXT", "final state idle [system user assistant]#… queued=[]".
func describeOutcome(e Entry, d map[string]any) string {
	line := e.Target + " " + e.Name + " " + str(d["outcome"])
	if e.Error != "" {
		line += ": " + quote(e.Error, 80)
	}
	if e.Name == OpRunToolCall && e.Error == "" {
		return line + " " + toolCallOutcome(d)
	}
	st, ok := d["state"].(map[string]any)
	if !ok {
		return line
	}
	msgs, _ := st["messages"].([]any)
	queued, _ := st["queued"].([]any)
	busy := "idle"
	if st["isStreaming"] == true {
		busy = "streaming"
	}
	line += " " + busy + " " + messageList(msgs) + " queued=" + messageList(queued)
	if pending, _ := st["pendingToolCalls"].([]any); len(pending) > 0 {
		line += " pending=" + names(pending)
	}
	if em, ok := st["errorMessage"]; ok {
		line += " error=" + quote(str(em), 60)
	}
	if sm, ok := st["streamingMessage"]; ok {
		line += " streaming=" + message(sm)
	}
	return line
}

// toolCallOutcome renders a runToolCall outcome as tool_execution_end's status, duration and
// result, its structured content and the partial results onUpdate received:
// `ok 2ms ["a"] structured={"value":"a"} updates=[["partial"]]`.
func toolCallOutcome(d map[string]any) string {
	parts := []string{"ok"}
	if d["isError"] == true {
		parts[0] = "error"
	}
	if ms, ok := d["durationMs"]; ok {
		parts = append(parts, str(ms)+"ms")
	}
	parts = append(parts, result(d["result"]))
	if r, _ := d["result"].(map[string]any); r != nil {
		if sc, ok := r["structuredContent"]; ok {
			parts = append(parts, "structured="+compact(sc))
		}
	}
	if updates, _ := d["updates"].([]any); len(updates) > 0 {
		list := make([]string, 0, len(updates))
		for _, u := range updates {
			list = append(list, result(u))
		}
		parts = append(parts, "updates=["+strings.Join(list, ", ")+"]")
	}
	return strings.Join(parts, " ")
}

// describeOperation renders an Agent operation delivery: "u2 steer user \"wait\"".
func describeOperation(e Entry, d map[string]any) string {
	op := str(d["op"])
	line := e.Target + " " + op
	switch op {
	case "prompt":
		if msgs, ok := d["messages"].([]any); ok {
			return line + " " + messageList(msgs)
		}
		return line + " " + quote(str(d["text"]), 60)
	case "steer", "followUp":
		return line + " " + message(d["message"])
	case "setSteeringMode", "setFollowUpMode":
		return line + " " + str(d["mode"])
	case "clearQueues":
		return line + " " + str(d["queue"])
	case "setTools":
		tools, _ := d["tools"].([]any)
		return line + " " + names(tools)
	case "release":
		return line + " " + str(d["barrier"])
	}
	return line
}

func describeEvent(name string, d map[string]any) string {
	parts := []string{name}
	switch name {
	case "message_start", "message_end":
		parts = append(parts, message(d["message"]))
	case "message_update":
		ev, _ := d["assistantMessageEvent"].(map[string]any)
		parts = append(parts, streamEvent(ev))
	case "turn_end":
		m, _ := d["message"].(map[string]any)
		results, _ := d["toolResults"].([]any)
		parts = append(parts, fmt.Sprintf("%v results=%d", str(m["stopReason"]), len(results)))
	case "agent_end":
		msgs, _ := d["messages"].([]any)
		parts = append(parts, messageList(msgs))
	case "tool_execution_start":
		parts = append(parts, str(d["toolCallId"]), str(d["toolName"]), compact(d["args"]))
	case "tool_execution_update":
		parts = append(parts, str(d["toolCallId"]), str(d["toolName"]), result(d["partialResult"]))
	case "tool_execution_end":
		status := "ok"
		if d["isError"] == true {
			status = "error"
		}
		parts = append(parts, str(d["toolCallId"]), str(d["toolName"]), status)
		if ms, ok := d["durationMs"]; ok {
			parts = append(parts, str(ms)+"ms")
		}
		parts = append(parts, result(d["result"]))
	}
	return strings.Join(parts, " ")
}

func describeCall(e Entry) string {
	var d map[string]any
	if e.Name != CallStream {
		d, _ = decoded(e.Data).(map[string]any)
	}
	var s string
	switch e.Name {
	case CallStream:
		s = describeStream(e)
	case CallTool:
		s = fmt.Sprintf("tool %v %v %s", str(d["toolCallId"]), str(d["toolName"]), compact(d["args"]))
	default:
		s = e.Name + "(" + hookInput(e.Name, d) + ")"
	}
	if e.Error != "" {
		return s + " -> throws " + quote(e.Error, 60) + hookWait(e)
	}
	if len(e.Answer) > 0 && e.Name != CallStream && e.Name != CallTool {
		return s + " -> " + hookAnswer(decoded(e.Answer)) + hookWait(e)
	}
	return s
}

// hookInput shows the part of a hook's argument that identifies the call.
func hookInput(name string, d map[string]any) string {
	switch name {
	case HookBeforeToolCall, HookAfterToolCall:
		tc, _ := d["toolCall"].(map[string]any)
		s := str(tc["id"]) + " " + compact(d["args"])
		if name == HookAfterToolCall {
			s += " " + result(d["result"])
		}
		return s
	case HookPrepareRequest:
		c, _ := d["context"].(map[string]any)
		msgs, _ := c["messages"].([]any)
		return fmt.Sprintf("%d msgs think=%v", len(msgs), str(d["thinkingLevel"]))
	case HookPrepareNextTurn, HookFinishTurn:
		t, _ := d["turn"].(map[string]any)
		m, _ := t["message"].(map[string]any)
		results, _ := t["toolResults"].([]any)
		return fmt.Sprintf("%v results=%d", str(m["stopReason"]), len(results))
	case HookConvertToLLM, HookTransformContext:
		msgs, _ := d["messages"].([]any)
		return fmt.Sprintf("%d msgs", len(msgs))
	case HookGetAPIKey:
		return str(d["provider"])
	}
	return ""
}

// hookWait says when a hook call's answer is returned, when not at once: its entry's target
// names the hookReturn delivery, or "untilAbort" for an answer held until the signal fires.
func hookWait(e Entry) string {
	switch {
	case e.Target == "" || e.Name == CallStream || e.Name == CallTool:
		return ""
	case e.Target == "untilAbort":
		return ", returned once its signal aborts"
	}
	if wait, ok := strings.CutSuffix(e.Target, "|untilAbort"); ok {
		return ", returned once its signal aborts or at hookReturn " + wait
	}
	return ", returned at hookReturn " + e.Target
}

func hookAnswer(a any) string {
	m, ok := a.(map[string]any)
	if !ok {
		return compact(a)
	}
	if msgs, ok := m["messages"].([]any); ok && len(m) == 1 {
		return messageList(msgs)
	}
	if len(m) == 0 {
		return "none"
	}
	return compact(a)
}

func describeDelivery(e Entry, d map[string]any) string {
	switch e.Name {
	case DeliverStreamEvent:
		return "#" + e.Target + " " + streamEvent(d)
	case DeliverStreamEnd:
		return "#" + e.Target + " ends without done: " + message(d["message"])
	case DeliverStreamFail:
		return "#" + e.Target + " stream throws " + quote(str(d["error"]), 60)
	case DeliverToolUpdate:
		return "tool " + e.Target + " update " + result(d)
	case DeliverToolResult:
		if errText, ok := d["error"]; ok {
			return "tool " + e.Target + " throws " + quote(str(errText), 60)
		}
		if n, ok := d["nothing"].(string); ok {
			return "tool " + e.Target + " resolves " + n
		}
		return "tool " + e.Target + " result " + result(d["result"])
	case DeliverAbort:
		return "abort"
	case DeliverAgent:
		return describeOperation(e, d)
	case DeliverHookReturn:
		return "hook " + e.Target + " returns"
	}
	return e.Name
}

func streamEvent(ev map[string]any) string {
	t := str(ev["type"])
	switch t {
	case "start":
		return t
	case "done", "error":
		key := "message"
		if t == "error" {
			key = "error"
		}
		return t + " " + str(ev["reason"]) + " " + message(ev[key])
	}
	s := fmt.Sprintf("%s [%s]", t, str(ev["contentIndex"]))
	if delta, ok := ev["delta"]; ok {
		s += " " + quote(str(delta), 40)
	}
	if tc, ok := ev["toolCall"].(map[string]any); ok {
		s += " " + str(tc["id"]) + " " + str(tc["name"])
	}
	return s
}

// message summarises a message: role and what identifies it.
func message(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return compact(v)
	}
	role := str(m["role"])
	switch role {
	case "user":
		return "user " + content(m["content"])
	case "system":
		s := "system"
		if text := content(m["content"]); text != `""` {
			s += " " + text
		}
		if added, ok := m["toolsAdded"].([]any); ok {
			s += " +tools" + names(added)
		}
		if removed, ok := m["toolsRemoved"].([]any); ok {
			s += " -tools" + names(removed)
		}
		return s
	case "assistant":
		s := fmt.Sprintf("assistant %v %s", str(m["stopReason"]), content(m["content"]))
		if errText := str(m["errorMessage"]); errText != "" {
			s += " error=" + quote(errText, 40)
		}
		if level := str(m["thinkingLevel"]); level != "" {
			s += " think=" + level
		}
		return s
	case "toolResult":
		status := "ok"
		if m["isError"] == true {
			status = "error"
		}
		s := fmt.Sprintf("toolResult %v %v %s %s", str(m["toolCallId"]), str(m["toolName"]), status, content(m["content"]))
		if ms, ok := m["durationMs"]; ok {
			s += " " + str(ms) + "ms"
		}
		return s
	}
	return role + " " + compact(m)
}

func messageList(msgs []any) string {
	roles := make([]string, 0, len(msgs))
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		roles = append(roles, str(mm["role"]))
	}
	if len(msgs) == 0 {
		return "[]"
	}
	return fmt.Sprintf("[%s]%s", strings.Join(roles, " "), digest(msgs))
}

// describeStream summarises a stream call: the roles of the messages sent (with a digest
// of them), the tools they declare, the thinking level, the key and the model. It decodes
// only what it shows, since requests carry the whole, growing context.
func describeStream(e Entry) string { return streamLine(e, e.Canonical) }

// streamLine is describeStream reading the data on its bytes when onBytes (the world's
// canonical entries: one member per key, valid UTF-8 and JSON) and it can, or decoding it.
func streamLine(e Entry, onBytes bool) string {
	var d struct {
		Messages      json.RawMessage `json:"messages"`
		ThinkingLevel string          `json:"thinkingLevel"`
		APIKey        string          `json:"apiKey"`
		Options       json.RawMessage `json:"options"`
		Model         struct {
			ID string `json:"id"`
		} `json:"model"`
	}
	var msgs []contextMessage
	ok := false
	if onBytes {
		msgs, ok = contextOf(e.Data)
	}
	if ok {
		d.Messages, ok = streamMembers(e.Data, &d.ThinkingLevel, &d.APIKey, &d.Options, &d.Model.ID)
	}
	if !ok {
		d.ThinkingLevel, d.APIKey, d.Options, d.Model.ID = "", "", nil, ""
		_ = json.Unmarshal(e.Data, &d)
		msgs = nil
		_ = json.Unmarshal(d.Messages, &msgs)
	}
	roles := make([]string, len(msgs))
	var tools []string
	for i, m := range msgs {
		roles[i] = m.Role
		for _, r := range m.ToolsRemoved {
			if j := slices.Index(tools, r.Name); j >= 0 {
				tools = slices.Delete(tools, j, j+1)
			}
		}
		for _, a := range m.ToolsAdded {
			if !slices.Contains(tools, a.Name) {
				tools = append(tools, a.Name)
			}
		}
	}
	list := "[]"
	if len(msgs) > 0 {
		sum := sha256.Sum256(d.Messages)
		list = "[" + strings.Join(roles, " ") + "]#" + hex.EncodeToString(sum[:3])
	}
	s := fmt.Sprintf("stream #%s %s tools=[%s] think=%s", e.Target, list, strings.Join(tools, ","), d.ThinkingLevel)
	if d.APIKey != "" {
		s += " key=" + d.APIKey
	}
	if d.Model.ID != "" {
		s += " model=" + d.Model.ID
	}
	if len(d.Options) > 0 {
		s += " options=" + string(jsonvalue.Canonical(d.Options)) // protocol 2's stream options, in full
	}
	return s
}

// contextMessage is what a stream call's line shows of a context message.
type contextMessage struct {
	Role         string                  `json:"role"`
	ToolsAdded   []struct{ Name string } `json:"toolsAdded"`
	ToolsRemoved []struct{ Name string } `json:"toolsRemoved"`
}

// contextOf reads a stream call's context messages from its compact JSON data on the bytes
// (the context is long and the timeline shows little of it), as decoding them into
// contextMessage would; ok is false for anything out of the ordinary (another layout, a key
// written in another case, a value of another type), to be decoded instead.
func contextOf(data []byte) (msgs []contextMessage, ok bool) {
	_, _, elems, ok := jsonvalue.ArrayAt(data, "messages")
	if !ok {
		return nil, false
	}
	msgs = make([]contextMessage, len(elems))
	r := byteReader{good: true}
	for i, el := range elems {
		m := &msgs[i]
		r.object(el, func(key string, v []byte) {
			switch r.key(key, "role", "toolsAdded", "toolsRemoved") {
			case "role":
				m.Role = r.str(v)
			case "toolsAdded":
				m.ToolsAdded = r.toolNames(v)
			case "toolsRemoved":
				m.ToolsRemoved = r.toolNames(v)
			}
		})
	}
	return msgs, r.good
}

// streamMembers reads the other members a stream call's line shows from its compact JSON data.
func streamMembers(data []byte, thinking, apiKey *string, options *json.RawMessage, model *string) (messages json.RawMessage, ok bool) {
	r := byteReader{good: true}
	r.object(data, func(key string, v []byte) {
		switch r.key(key, "messages", "thinkingLevel", "apiKey", "options", "model") {
		case "messages":
			messages = v
		case "thinkingLevel":
			*thinking = r.str(v)
		case "apiKey":
			*apiKey = r.str(v)
		case "options":
			*options = v
		case "model":
			r.object(v, func(key string, v []byte) {
				if r.key(key, "id") == "id" {
					*model = r.str(v)
				}
			})
		}
	})
	return messages, r.good
}

// byteReader reads compact JSON on the bytes as encoding/json decodes it into a struct; good
// turns false at the first thing it would have to read otherwise.
type byteReader struct{ good bool }

// object calls f with each member of a compact JSON object.
func (r *byteReader) object(obj []byte, f func(key string, value []byte)) {
	ok := jsonvalue.EachMember(obj, func(k, v []byte) {
		key, ok := r.string(k)
		r.good = r.good && ok
		f(key, v)
	})
	r.good = r.good && ok
}

// key is the one of names that key is, "" for none; a key that is one of them but for case
// (encoding/json would take it) is not read.
func (r *byteReader) key(key string, names ...string) string {
	for _, n := range names {
		if key == n {
			return n
		}
		if strings.EqualFold(key, n) {
			r.good = false
		}
	}
	return ""
}

// str reads a string value.
func (r *byteReader) str(v []byte) string {
	s, ok := r.string(v)
	r.good = r.good && ok
	return s
}

func (r *byteReader) string(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// toolNames reads a list of tool declarations' or references' names.
func (r *byteReader) toolNames(v []byte) []struct{ Name string } {
	tools, ok := jsonvalue.Elements(v)
	if !ok {
		r.good = false
		return nil
	}
	out := make([]struct{ Name string }, len(tools))
	for i, t := range tools {
		r.object(t, func(key string, v []byte) {
			if r.key(key, "name") == "name" {
				out[i].Name = r.str(v)
			}
		})
	}
	return out
}

// content summarises message content: a string, or its blocks.
func content(v any) string {
	switch c := v.(type) {
	case string:
		return quote(c, 40)
	case []any:
		parts := make([]string, 0, len(c))
		for _, b := range c {
			bm, _ := b.(map[string]any)
			switch bm["type"] {
			case "text":
				parts = append(parts, quote(str(bm["text"]), 40))
			case "thinking":
				parts = append(parts, "thinking:"+quote(str(bm["thinking"]), 20))
			case "toolCall":
				parts = append(parts, fmt.Sprintf("call:%v:%v%s", str(bm["id"]), str(bm["name"]), compact(bm["arguments"])))
			case "image":
				parts = append(parts, "image"+digest(bm))
			default:
				parts = append(parts, compact(bm))
			}
		}
		return "[" + strings.Join(parts, " ") + "]"
	case nil:
		return "null"
	}
	return compact(v)
}

func result(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return compact(v)
	}
	s := content(m["content"])
	for _, flag := range []string{"isError", "terminate"} {
		if m[flag] == true {
			s += " " + flag
		}
	}
	if details, ok := m["details"]; ok && !isEmptyObject(details) {
		s += " details=" + compact(details)
	}
	return s
}

func names(list []any) string {
	out := make([]string, 0, len(list))
	for _, t := range list {
		tm, _ := t.(map[string]any)
		out = append(out, str(tm["name"]))
	}
	return "[" + strings.Join(out, ",") + "]"
}

// compact is short JSON, or an abbreviation with a digest when long.
func compact(v any) string {
	data, _ := json.Marshal(v)
	if len(data) <= 48 {
		return string(data)
	}
	return string(data[:1]) + "…" + digest(v)
}

// digest is a stable short hash of a value's canonical JSON.
func digest(v any) string {
	data, _ := json.Marshal(v)
	sum := sha256.Sum256(data)
	return "#" + hex.EncodeToString(sum[:3])
}

func quote(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return fmt.Sprintf("%q…%s", string(r[:n]), digest(s))
	}
	return fmt.Sprintf("%q", s)
}

func str(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case nil:
		return ""
	case float64:
		return string(jsonvalue.AppendNumber(nil, s))
	}
	return fmt.Sprint(v)
}

func isEmptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}
