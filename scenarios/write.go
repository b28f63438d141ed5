package scenarios

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// Write renders a scenario as a scenario file that Parse reads back to an equivalent scenario:
// one that simulates to the same trace. Top-level keys are written in block style and every
// value below them as JSON (which is YAML); messages, content blocks, tool results and responses
// take the README's shorthands where those read back the same, pi's JSON form otherwise. Tools
// that responses (or runToolCall) call but the scenario does not define are listed in undefinedTools. The
// output is checked by parsing it: a scenario the file format cannot express, or one the loader
// rejects (a dangling reference, an answer for a call that can never happen), is an error.
func Write(sc *sim.Scenario) ([]byte, error) {
	w := &writer{}
	if err := w.scenario(sc); err != nil {
		return nil, err
	}
	if _, err := Parse("written.yaml", "written", w.buf.Bytes()); err != nil {
		return nil, fmt.Errorf("the written scenario does not load: %w", err)
	}
	return w.buf.Bytes(), nil
}

// writer accumulates a scenario file.
type writer struct {
	buf bytes.Buffer
	err error
}

// object is a JSON object whose keys keep their order.
type object []member

type member struct {
	key   string
	value any
}

func (o *object) set(key string, value any) { *o = append(*o, member{key, value}) }

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// value renders v as JSON that YAML reads back to the same data.
func (w *writer) value(v any) string {
	data, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = err
	}
	return string(yamlNumbers(data))
}

// yamlNumbers rewrites exponent numbers without a fraction ("1e+21") with one ("1.0e+21"):
// the YAML parser reads the former as a string.
func yamlNumbers(data []byte) []byte {
	if !bytes.ContainsAny(data, "eE") {
		return data
	}
	var out []byte
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			out = append(out, c)
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			for j < len(data) && bytes.IndexByte([]byte("+-.0123456789eE"), data[j]) >= 0 {
				j++
			}
			num := data[i:j]
			if e := bytes.IndexAny(num, "eE"); e >= 0 && !bytes.Contains(num[:e], []byte(".")) {
				out = append(out, num[:e]...)
				out = append(out, ".0"...)
				out = append(out, num[e:]...)
			} else {
				out = append(out, num...)
			}
			i = j - 1
		default:
			out = append(out, c)
		}
	}
	return out
}

func (w *writer) line(format string, args ...any) { fmt.Fprintf(&w.buf, format+"\n", args...) }

// key writes "key: value".
func (w *writer) key(k string, v any) { w.line("%s: %s", k, w.value(v)) }

// list writes a block list, one JSON item a line.
func (w *writer) list(k string, items []any) {
	if len(items) == 0 {
		w.line("%s: []", k)
		return
	}
	w.line("%s:", k)
	for _, it := range items {
		w.line("  - %s", w.value(it))
	}
}

// section writes a block mapping of JSON values.
func (w *writer) section(k string, o object) {
	if len(o) == 0 {
		w.line("%s: {}", k)
		return
	}
	w.line("%s:", k)
	for _, m := range o {
		w.line("  %s: %s", yamlKey(m.key), w.value(m.value))
	}
}

// yamlKey writes a mapping key plainly when YAML reads it back as that string, else quoted.
func yamlKey(k string) string {
	plain := k != "" && !slices.Contains([]string{"true", "false", "null", "yes", "no", "on", "off", "y", "n"}, strings.ToLower(k))
	for i, c := range k {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '_' || c == '-')) {
			plain = false
		}
	}
	if plain {
		return k
	}
	q, _ := json.Marshal(k)
	return string(q)
}

// scenario writes a scenario's sections in the file format's order.
func (w *writer) scenario(sc *sim.Scenario) error {
	w.line("# Written by turnstile (scenarios.Write).")
	if sc.Name != "" {
		w.key("name", sc.Name)
	}
	if sc.Description != "" {
		w.key("description", sc.Description)
	}
	if sc.Since != "" {
		w.key("since", sc.Since)
	}
	if len(sc.Tools) > 0 {
		w.list("tools", wEach(sc.Tools, wTool))
	}
	if undefined := wUndefinedTools(sc); len(undefined) > 0 {
		w.key("undefinedTools", undefined)
	}
	if len(sc.Messages) > 0 {
		w.list("context", wMessageList(sc.Messages))
	}
	if c := wConfig(sc); len(c) > 0 {
		w.section("config", c)
	}
	if h := wHooks(sc.Hooks); len(h) > 0 {
		w.section("hooks", h)
	}
	if len(sc.Responses) > 0 {
		w.list("provider", wEach(sc.Responses, wResponse))
	}
	if sc.ExtraResponse != nil {
		w.key("extraResponse", wResponse(*sc.ExtraResponse))
	}
	if len(sc.ToolCalls) > 0 {
		var o object
		for _, id := range slices.Sorted(maps.Keys(sc.ToolCalls)) {
			o.set(id, wBehaviour(sc.ToolCalls[id]))
		}
		w.section("toolCalls", o)
	}
	if sc.Agent != nil {
		w.section("agent", wAgent(sc.Agent))
	}
	actions, err := wUserActions(sc)
	if err != nil {
		return err
	}
	if len(actions) > 0 {
		w.list("user", actions)
	}
	if err := w.run(sc); err != nil {
		return err
	}
	if b := wBudget(sc.Budget); len(b) > 0 {
		w.section("budget", b)
	}
	return w.err
}

// wEach is each item written.
func wEach[T any, W any](items []T, write func(T) W) []any {
	var out []any
	for _, it := range items {
		out = append(out, write(it))
	}
	return out
}

// wAgent is an Agent scenario's agent: its system prompt, whether it has no model, its
// barriers.
func wAgent(a *sim.AgentScript) object {
	var o object
	if a.SystemPrompt != "" {
		o.set("systemPrompt", a.SystemPrompt)
	}
	if a.DefaultModel {
		o.set("defaultModel", true)
	}
	if len(a.Barriers) > 0 {
		var bs []any
		for _, b := range a.Barriers {
			bo := object{{"id", b.ID}, {"event", string(b.Event)}}
			if b.Nth != 0 {
				bo.set("nth", b.Nth)
			}
			if b.UntilAbort {
				bo.set("untilAbort", true)
			}
			bs = append(bs, bo)
		}
		o.set("barriers", bs)
	}
	return o
}

// wUserActions is the user's actions, but those that never act: they leave no trace, and
// the loader rejects them.
func wUserActions(sc *sim.Scenario) ([]any, error) {
	var actions []any
	for i, a := range sc.User {
		if neverActs(sc, a) {
			continue
		}
		o, err := wUserAction(a)
		if err != nil {
			return nil, fmt.Errorf("user action %d: %w", i+1, err)
		}
		actions = append(actions, o)
	}
	return actions, nil
}

// run writes how a loop scenario's run starts: its prompts, or continue. An Agent
// scenario's runs start at the user's operations.
func (w *writer) run(sc *sim.Scenario) error {
	switch {
	case sc.Agent != nil:
	case sc.RunToolCall:
		w.key("runToolCall", true)
	case sc.Continue:
		if len(sc.Prompts) > 0 {
			return errors.New("a scenario that continues has no prompts; the file format cannot express both")
		}
		w.key("continue", true)
	default:
		w.list("run", wMessageList(sc.Prompts))
	}
	return nil
}

// wBudget is the budget's fields that are set.
func wBudget(b sim.Budget) object {
	var o object
	for _, f := range []struct {
		key string
		v   int64
	}{{"requests", int64(b.Requests)}, {"time", b.Time}, {"entries", int64(b.Entries)}, {"bytes", b.Bytes}} {
		if f.v > 0 {
			o.set(f.key, f.v)
		}
	}
	return o
}

// wUndefinedTools lists, in order of first call, the tools responses call that no tool defines.
func wUndefinedTools(sc *sim.Scenario) []string {
	defined := map[string]bool{}
	for _, t := range sc.Tools {
		defined[t.Name] = true
	}
	var out []string
	note := func(r sim.Response) {
		for _, c := range loop.ToolCalls(r.Content) {
			if !defined[c.Name] && !slices.Contains(out, c.Name) {
				out = append(out, c.Name)
			}
		}
	}
	for _, r := range sc.Responses {
		note(r)
	}
	if sc.ExtraResponse != nil {
		note(*sc.ExtraResponse)
	}
	if sc.RunToolCall {
		if msg, _, err := sim.RunToolCallCalls(sc.Messages); err == nil {
			note(sim.Response{Content: msg.Content}) // the calls runToolCall runs
		}
	}
	return out
}

func wMessageList(msgs []loop.Message) []any {
	out := make([]any, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, wMessage(m))
	}
	return out
}

// wMessage writes a message in the shortest form the loader reads back to it: a string for a
// plain user message, {user: …} / {system: …}, else pi's JSON form.
func wMessage(m loop.Message) any {
	switch m := m.(type) {
	case *loop.UserMessage:
		if m.Timestamp == 0 {
			if m.Blocks == nil {
				return m.Text
			}
			return object{{"user", wBlocks(m.Blocks)}}
		}
	case *loop.SystemMessage:
		if m.Timestamp == 0 && m.Sections == nil && m.ToolsAdded == nil && m.ToolsRemoved == nil {
			if m.Blocks == nil {
				return object{{"system", m.Text}}
			}
			return object{{"system", wBlocks(m.Blocks)}}
		}
	}
	return m
}

// wBlocks writes content blocks, each in the shortest form the loader reads back to it.
func wBlocks(blocks []loop.Block) []any {
	out := make([]any, 0, len(blocks))
	for _, b := range blocks {
		switch b := b.(type) {
		case loop.TextContent:
			if b.TextSignature == "" {
				out = append(out, object{{"text", b.Text}})
				continue
			}
		case loop.ThinkingContent:
			if b.ThinkingSignature == "" && !b.Redacted {
				out = append(out, object{{"thinking", b.Thinking}})
				continue
			}
		case loop.ToolCall:
			if b.ThoughtSignature == "" && b.Namespace == "" {
				tc := object{{"id", b.ID}, {"name", b.Name}}
				if len(b.Arguments) > 0 {
					tc.set("arguments", b.Arguments)
				}
				if b.ArgumentsError != "" {
					tc.set("argumentsError", b.ArgumentsError)
				}
				out = append(out, object{{"toolCall", tc}})
				continue
			}
		}
		out = append(out, b)
	}
	return out
}

// singleText reports whether blocks are exactly one plain text block, and its text.
func singleText(blocks []loop.Block) (string, bool) {
	if len(blocks) != 1 {
		return "", false
	}
	t, ok := blocks[0].(loop.TextContent)
	return t.Text, ok && t.TextSignature == ""
}

func wMessagesValue(msgs []loop.Message) []any {
	if msgs == nil {
		return []any{}
	}
	return wMessageList(msgs)
}

func wTool(t sim.ToolSpec) object {
	o := object{{"name", t.Name}}
	if t.Description != "" {
		o.set("description", t.Description)
	}
	if t.Parameters != nil {
		o.set("parameters", t.Parameters)
	}
	if t.ExecutionMode != "" {
		o.set("executionMode", t.ExecutionMode)
	}
	if t.Inactive {
		o.set("inactive", true)
	}
	if t.PrepareArguments != nil {
		o.set("prepareArguments", t.PrepareArguments)
	}
	if b := wBehaviour(t.Behaviour); len(b) > 0 {
		o.set("behaviour", b)
	}
	return o
}

func wBehaviour(b sim.Behaviour) object {
	var o object
	if b.Duration != 0 {
		o.set("duration", b.Duration)
	}
	if len(b.Updates) > 0 {
		var ups []any
		for _, u := range b.Updates {
			up := object{{"at", u.At}}
			if r := wToolResult(u.Result); !emptyResult(r) {
				up.set("result", r)
			}
			ups = append(ups, up)
		}
		o.set("updates", ups)
	}
	// A throw wins over a result (the loader rejects both).
	if r := wToolResult(b.Result); !emptyResult(r) && b.Throw == "" {
		o.set("result", r)
	}
	if b.Throw != "" {
		o.set("throw", b.Throw)
	}
	if b.Resolves != "" && b.Throw == "" && emptyResult(wToolResult(b.Result)) {
		o.set("resolves", b.Resolves)
	}
	if b.OnAbort != nil {
		a := object{}
		if r := wToolResult(b.OnAbort.Result); !emptyResult(r) && b.OnAbort.Throw == "" {
			a.set("result", r)
		}
		if b.OnAbort.Throw != "" {
			a.set("throw", b.OnAbort.Throw)
		}
		o.set("onAbort", a)
	}
	return o
}

// wToolResult writes a tool result; nil content is left out (the loader's default). A result
// of one text block and nothing else is written as its text.
func wToolResult(r loop.ToolResult) any {
	if text, ok := singleText(r.Content); ok && r.Details == nil && !r.IsError && !r.Terminate && r.StructuredContent == nil && r.Usage == nil {
		return text
	}
	o := object{}
	if r.Content != nil {
		o.set("content", wBlocks(r.Content))
	}
	if r.Details != nil {
		o.set("details", r.Details)
	}
	if r.IsError {
		o.set("isError", true)
	}
	if r.Terminate {
		o.set("terminate", true)
	}
	if r.StructuredContent != nil {
		o.set("structuredContent", r.StructuredContent)
	}
	if r.Usage != nil {
		o.set("usage", r.Usage)
	}
	return o
}

func emptyResult(r any) bool {
	o, ok := r.(object)
	return ok && len(o) == 0
}

// wResponse writes a provider response; one of a single text block and nothing else is
// written as its text.
func wResponse(r sim.Response) any {
	o := object{}
	if len(r.Content) > 0 {
		o.set("content", wBlocks(r.Content))
	}
	if r.StopReason != "" {
		o.set("stopReason", r.StopReason)
	}
	if r.ErrorMessage != "" {
		o.set("errorMessage", r.ErrorMessage)
	}
	if r.Usage != nil {
		o.set("usage", r.Usage)
	}
	for _, f := range []struct {
		key string
		v   int64
	}{{"delay", r.Delay}, {"chunkDelay", r.ChunkDelay}, {"deltaSize", int64(r.DeltaSize)}} {
		if f.v != 0 {
			o.set(f.key, f.v)
		}
	}
	for _, f := range []struct {
		key string
		v   bool
	}{{"noStart", r.NoStart}, {"noDone", r.NoDone}, {"ignoresAbort", r.IgnoresAbort}, {"errorEvent", r.ErrorEvent}} {
		if f.v {
			o.set(f.key, true)
		}
	}
	if r.OpenError != "" {
		o.set("openError", r.OpenError)
	}
	if r.StreamError != "" {
		o.set("streamError", r.StreamError)
	}
	if text, ok := singleText(r.Content); ok && len(o) == 1 {
		return text
	}
	return o
}

func wModel(m loop.Model) object {
	o := object{}
	if m.ID != "" {
		o.set("id", m.ID)
	}
	if m.API != "" {
		o.set("api", m.API)
	}
	if m.Provider != "" {
		o.set("provider", m.Provider)
	}
	return o
}

func wConfig(sc *sim.Scenario) object {
	var o object
	if m := (loop.Model{ID: sc.Model.ID, API: sc.Model.API, Provider: sc.Model.Provider}); m != (loop.Model{}) && m != sim.DefaultModel {
		o.set("model", wModel(m))
	}
	if sc.ThinkingLevel != "" {
		o.set("thinkingLevel", sc.ThinkingLevel)
	}
	if sc.APIKey != "" {
		o.set("apiKey", sc.APIKey)
	}
	if sc.ToolExecution != "" {
		o.set("toolExecution", sc.ToolExecution)
	}
	if sc.SteeringMode != "" {
		o.set("steeringMode", sc.SteeringMode)
	}
	if sc.FollowUpMode != "" {
		o.set("followUpMode", sc.FollowUpMode)
	}
	if sc.StreamOptions {
		o.set("streamOptions", true)
		if sc.SessionID != "" {
			o.set("sessionId", sc.SessionID)
		}
		if sc.Identity != nil {
			o.set("identity", sc.Identity)
		}
	}
	return o
}

func wHooks(h sim.Hooks) object {
	var o object
	if h.ConvertToLLM != nil {
		c := object{}
		if h.ConvertToLLM.KeepCustomAsUser && h.ConvertToLLM.Throw == "" {
			c.set("keepCustomAsUser", true)
		}
		if h.ConvertToLLM.Throw != "" {
			c.set("throw", h.ConvertToLLM.Throw)
		}
		c = withAbort(c, h.ConvertToLLM.Abort, h.ConvertToLLM.Wait)
		o.set("convertToLlm", c)
	}
	if h.TransformContext != nil {
		c := object{}
		if h.TransformContext.KeepLast != 0 && h.TransformContext.Throw == "" {
			c.set("keepLast", h.TransformContext.KeepLast)
		}
		if h.TransformContext.Throw != "" {
			c.set("throw", h.TransformContext.Throw)
		}
		c = withAbort(c, h.TransformContext.Abort, h.TransformContext.Wait)
		o.set("transformContext", c)
	}
	if h.GetAPIKey != nil {
		o.set("getApiKey", withAbort(object{{"key", h.GetAPIKey.Key}}, h.GetAPIKey.Abort, h.GetAPIKey.Wait))
	}
	if h.PrepareRequest != nil {
		o.set("prepareRequest", wByCall(h.PrepareRequest, wPrepareAnswer))
	}
	if h.PrepareNextTurn != nil {
		o.set("prepareNextTurn", wByCall(h.PrepareNextTurn, wPrepareAnswer))
	}
	if h.FinishTurn != nil {
		o.set("finishTurn", wByCall(h.FinishTurn, wFinishAnswer))
	}
	if h.BeforeToolCall != nil {
		o.set("beforeToolCall", wByToolCall(h.BeforeToolCall, wBeforeAnswer))
	}
	if h.AfterToolCall != nil {
		o.set("afterToolCall", wByToolCall(h.AfterToolCall, wAfterAnswer))
	}
	if h.NoSteering {
		o.set("steering", false)
	}
	if h.NoFollowUp {
		o.set("followUp", false)
	}
	return o
}

// wByCall writes {default, calls}; a zero default is left out.
func wByCall[T any](s *sim.Script[T], answer func(T) any) object {
	return wCalls(s.Default, s.ByCall, strconv.Itoa, answer)
}

// wByToolCall is wByCall for the tool hooks, whose calls are keyed by tool-call id.
func wByToolCall[T any](s *sim.ToolScript[T], answer func(T) any) object {
	return wCalls(s.Default, s.ByToolCall, func(id string) string { return id }, answer)
}

func wCalls[K cmp.Ordered, T any](def T, calls map[K]T, key func(K) string, answer func(T) any) object {
	o := object{}
	var zero T
	if d := answer(def); !wSameJSON(d, answer(zero)) {
		o.set("default", d)
	}
	if len(calls) > 0 {
		c := object{}
		for _, k := range slices.Sorted(maps.Keys(calls)) {
			c.set(key(k), answer(calls[k]))
		}
		o.set("calls", c)
	}
	return o
}

func wSameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func wContextChange(c *sim.ContextChange) object {
	o := object{}
	if c.Tools != nil {
		o.set("tools", c.Tools)
	}
	if c.KeepLast != 0 {
		o.set("keepLast", c.KeepLast)
	}
	return o
}

// wPrepareAnswer writes a prepareRequest or prepareNextTurn answer.
func wPrepareAnswer(a sim.PrepareAnswer) any {
	if a.Throw != "" {
		// A hook that throws answers nothing else (the loader rejects both).
		return withAbort(object{{"throw", a.Throw}}, a.Abort, a.Wait)
	}
	o := object{}
	if a.Context != nil {
		o.set("context", wContextChange(a.Context))
	}
	if a.Messages != nil {
		o.set("messages", wMessagesValue(a.Messages))
	}
	if a.Model != nil {
		o.set("model", wModel(*a.Model))
	}
	if a.ThinkingLevel != "" {
		o.set("thinkingLevel", a.ThinkingLevel)
	}
	return withAbort(o, a.Abort, a.Wait)
}

// withAbort adds abort: true to a hook answer that aborts the run, and its wait.
func withAbort(o object, abort bool, wait sim.Wait) object {
	if abort {
		o.set("abort", true)
	}
	if wait.Delay > 0 {
		o.set("delay", wait.Delay)
	}
	if wait.UntilAbort {
		o.set("untilAbort", true)
	}
	return o
}

func wDecisionName(d loop.TurnDecision) string {
	if d == loop.DecisionNone {
		return "none"
	}
	return string(d)
}

func wFinishAnswer(a sim.FinishAnswer) any {
	switch {
	case a.Throw != "":
		return withAbort(object{{"throw", a.Throw}}, a.Abort, a.Wait)
	case a.Abort || a.Wait != (sim.Wait{}):
		return withAbort(object{{"action", wDecisionName(a.Action)}}, a.Abort, a.Wait)
	}
	return wDecisionName(a.Action)
}

func wBeforeAnswer(a sim.BeforeAnswer) any {
	if a.Throw != "" {
		return withAbort(object{{"throw", a.Throw}}, a.Abort, a.Wait)
	}
	o := object{}
	if a.Block {
		o.set("block", true)
	}
	if a.Reason != "" {
		o.set("reason", a.Reason)
	}
	if a.Terminate {
		o.set("terminate", true)
	}
	if a.SetArgs != nil {
		o.set("setArgs", a.SetArgs)
	}
	return withAbort(o, a.Abort, a.Wait)
}

func wAfterAnswer(a sim.AfterAnswer) any {
	if a.Throw != "" {
		return withAbort(object{{"throw", a.Throw}}, a.Abort, a.Wait)
	}
	o := object{}
	if a.Content != nil {
		o.set("content", wBlocks(a.Content))
	}
	if a.Details != nil {
		o.set("details", a.Details)
	}
	if a.StructuredContent != nil {
		o.set("structuredContent", a.StructuredContent)
	}
	if a.IsError != nil {
		o.set("isError", *a.IsError)
	}
	if a.Terminate != nil {
		o.set("terminate", *a.Terminate)
	}
	if a.Usage != nil {
		o.set("usage", a.Usage)
	}
	return withAbort(o, a.Abort, a.Wait)
}

func wUserAction(a sim.UserAction) (object, error) {
	o := object{}
	switch {
	case a.At != nil && a.On != nil:
		return nil, errors.New("both at: and on:")
	case a.At != nil:
		o.set("at", *a.At)
	case a.On != nil:
		t := object{}
		if a.On.Event != "" {
			t.set("event", a.On.Event)
		}
		if a.On.ToolCallID != "" {
			t.set("toolCallId", a.On.ToolCallID)
		}
		if a.On.Request != 0 {
			t.set("request", a.On.Request)
		}
		if a.On.Hook != "" {
			t.set("hook", a.On.Hook)
		}
		if a.On.Nth != 0 {
			t.set("nth", a.On.Nth)
		}
		o.set("on", t)
	default:
		return nil, errors.New("neither at: nor on:")
	}
	if len(a.Steer) > 0 {
		o.set("steer", a.Steer)
	}
	if len(a.FollowUp) > 0 {
		o.set("followUp", a.FollowUp)
	}
	if a.Abort {
		o.set("abort", true)
	}
	if op := a.Op; op != nil {
		switch op.Op {
		case trace.OpPrompt:
			if op.Messages == nil {
				o.set("promptText", op.Text)
			} else {
				o.set("prompt", op.Messages)
			}
		case trace.OpContinue, trace.OpWaitForIdle, trace.OpReset, trace.OpState:
			o.set(op.Op, true)
		case trace.OpSetSteeringMode:
			o.set("steeringMode", string(op.Mode))
		case trace.OpSetFollowUpMode:
			o.set("followUpMode", string(op.Mode))
		case trace.OpClearQueues:
			o.set("clearQueues", op.Queue)
		case trace.OpSetTools:
			o.set("tools", append([]string{}, op.Tools...)) // no tools is [], never null
		case trace.OpRelease:
			o.set("release", op.Barrier)
		default:
			return nil, fmt.Errorf("unknown Agent operation %q", op.Op)
		}
	}
	return o, nil
}
