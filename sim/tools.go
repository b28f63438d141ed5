package sim

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// toolStart is the data of a tool call.
type toolStart struct {
	ToolCallID string         `json:"toolCallId"`
	ToolName   string         `json:"toolName"`
	Args       map[string]any `json:"args"`
}

// decodeToolStart reads a tool call's data given as JSON into st (decoded into a value of its
// own: st, passed to the decoder, would otherwise be allocated on every call).
func decodeToolStart(data json.RawMessage, st *toolStart) error {
	var out toolStart
	err := json.Unmarshal(data, &out)
	*st = out
	return err
}

// startTool schedules a tool execution's updates and result. value is the in-process form of
// data, when there is one.
func (w *world) startTool(data json.RawMessage, value any) Answer {
	var st toolStart
	if tc, ok := value.(*toolCall); ok {
		st.ToolCallID, st.ToolName = tc.ID, tc.Name
	} else if id, name, ok := toolIDsOf(value); ok {
		st.ToolCallID, st.ToolName = id, name
	} else if err := decodeToolStart(data, &st); err != nil {
		w.fail("protocol", "bad tool call: "+err.Error())
		return Answer{Error: "bad tool call: " + err.Error()}
	}
	spec := -1       // the tool in sc.Tools whose behaviour this is; -1 for the call's own
	var b *Behaviour // not copied but into the execution: a behaviour is large
	var own Behaviour
	ok := false
	if len(w.sc.ToolCalls) > 0 {
		own, ok = w.sc.ToolCalls[st.ToolCallID]
	}
	if ok {
		b = &own
	} else {
		spec = slices.IndexFunc(w.sc.Tools, func(t ToolSpec) bool { return t.Name == st.ToolName })
		if spec < 0 {
			text := fmt.Sprintf("tool %q was executed but the scenario does not define it", st.ToolName)
			w.fail("script", text)
			return Answer{Error: text}
		}
		b = &w.sc.Tools[spec].Behaviour
	}
	// The executions that finished are let go: only those running are looked at (here and
	// by an abort), and a long run would otherwise look at every execution it made.
	w.tools = slices.DeleteFunc(w.tools, func(t *toolRun) bool { return t.finished })
	for _, t := range w.tools {
		if t.id == st.ToolCallID && !t.finished {
			text := fmt.Sprintf("tool call %s started twice while running", st.ToolCallID)
			w.fail("protocol", text)
			return Answer{Error: text}
		}
	}
	t := w.toolRuns.next(&toolRunChunks, 16)
	t.id, t.b = st.ToolCallID, *b
	t.pending = t.first[:0]
	w.tools = append(w.tools, t)
	start := w.now
	// An update after Duration is scheduled after the result (ties keep scheduling order, so
	// one at Duration still comes first): it reaches a settled execution, which must ignore it.
	for _, u := range b.Updates {
		s := w.at(start+u.At, Delivery{Kind: trace.DeliverToolUpdate, Target: t.id, Now: start + u.At, Data: w.enc.valueBytes(u.Result), Value: u.Result})
		s.tool = t
		t.pending = append(t.pending, s)
	}
	var end settlement
	if spec < 0 {
		end = w.settlement(&b.Result, b.Throw, b.Resolves)
	} else {
		end = w.toolSettlement(spec)
	}
	w.settle(t, start+b.Duration, end)
	return Answer{Data: json.RawMessage(`{}`)}
}

// toolIDsOf is the toolCallId and toolName of a tool call given as decoded JSON; false when v
// is not an object with both strings.
func toolIDsOf(v any) (id, name string, ok bool) {
	m, _ := v.(map[string]any)
	id, ok1 := m["toolCallId"].(string)
	name, ok2 := m["toolName"].(string)
	return id, name, ok1 && ok2
}

// settlement is the delivery that settles a tool execution, as the world writes it: its data
// and, for an in-process implementation, its value (nil when it reads the data).
type settlement struct {
	data  json.RawMessage
	value any
}

// settleTool schedules the end of a tool execution: a result, or a thrown error.
func (w *world) settleTool(t *toolRun, at int64, result loop.ToolResult, throw, nothing string) {
	w.settle(t, at, w.settlement(&result, throw, nothing))
}

// settlement is the end of an execution that returns result, throws throw or resolves
// nothing.
func (w *world) settlement(result *loop.ToolResult, throw, nothing string) settlement {
	switch {
	case throw != "":
		return settlement{data: w.enc.valueBytes(map[string]string{"error": throw})}
	case nothing != "":
		return settlement{data: w.enc.valueBytes(map[string]string{"nothing": nothing})}
	}
	data := w.enc.sized(func(b []byte) []byte { // {"result": result}
		return append(w.enc.toolResult(append(b, `{"result":`...), result), '}')
	})
	return settlement{data: data, value: *result} // in-process, the result is taken as a value
}

// toolSettlement is the end of an execution of tool i of the scenario's, written once a run:
// every call of a tool settles alike, and an entry's data and a delivery's value are only
// read, so its executions share them.
func (w *world) toolSettlement(i int) settlement {
	if w.toolEnds == nil {
		w.toolEnds = make([]settlement, len(w.sc.Tools))
	}
	if w.toolEnds[i].data == nil {
		b := &w.sc.Tools[i].Behaviour
		w.toolEnds[i] = w.settlement(&b.Result, b.Throw, b.Resolves)
	}
	return w.toolEnds[i]
}

// settle schedules the delivery end that settles execution t, at time at.
func (w *world) settle(t *toolRun, at int64, end settlement) {
	s := w.at(at, Delivery{Kind: trace.DeliverToolResult, Target: t.id, Now: at, Data: end.data, Value: end.value})
	s.tool = t
	t.pending = append(t.pending, s)
}

// released takes the execution's delivery s as released: an update is no longer pending,
// and after its result the execution is finished.
func (t *toolRun) released(s *scheduled) {
	if s.delivery.Kind == trace.DeliverToolResult {
		t.pending = nil
		t.finished = true
		return
	}
	t.pending = slices.DeleteFunc(t.pending, func(p *scheduled) bool { return p == s })
}
