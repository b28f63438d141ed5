package scenarios

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/goccy/go-yaml/ast"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// position is where a part of a file is, line and column from 1; 0:0 when unknown.
type position struct{ line, col int }

func positionOf(n ast.Node) position {
	if n == nil {
		return position{}
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return position{tk.Position.Line, tk.Position.Column}
	}
	return position{}
}

// Warnings are what only a run can tell is wrong with the file: the parts of its script that
// never took effect during the run tr — a user action that never happened (a trigger that did
// not fire, a time the run did not reach), a response never requested (not the extraResponse,
// which answers whatever requests there are), an update that came after its tool had settled (the loop drops it) — each as
// "file:line:col: warning: …", in the file's order. A part meant as a trap for a wrong loop
// (a response a right loop never asks for) is warned about too: a warning never fails a run.
func (f *File) Warnings(tr *trace.Trace) []string {
	type warning struct {
		at  position
		msg string
	}
	var ws []warning
	for _, i := range tr.Unfired {
		if i < 0 || i >= len(f.actions) || i >= len(f.Scenario.User) {
			continue
		}
		why := "its trigger never fired"
		if at := f.Scenario.User[i].At; at != nil {
			why = fmt.Sprintf("the run was over before at: %dms", *at)
		}
		ws = append(ws, warning{f.actions[i], "this user action never happened: " + why})
	}
	requests := 0
	for _, e := range tr.Entries {
		if e.Kind == trace.KindCall && e.Name == trace.CallStream {
			requests++
		}
	}
	for i := requests; i < len(f.responses) && i < len(f.Scenario.Responses); i++ {
		ws = append(ws, warning{f.responses[i], fmt.Sprintf("this response was never requested: the run made %s", plural(requests, "request"))})
	}
	for _, l := range f.lateUpdates(tr) {
		ws = append(ws, warning{l.at, fmt.Sprintf("this update never took effect: it is due at %dms, after tool call %s settled at %dms (a loop drops it)", l.t, l.id, l.settled)})
	}
	slices.SortStableFunc(ws, func(a, b warning) int {
		return cmp.Or(cmp.Compare(a.at.line, b.at.line), cmp.Compare(a.at.col, b.at.col))
	})
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, fmt.Sprintf("%s:%d:%d: warning: %s", f.Path, w.at.line, w.at.col, w.msg))
	}
	return out
}

// lateUpdate is a scripted update due after its tool call had settled.
type lateUpdate struct {
	at         position
	id         string
	t, settled int64
}

// lateUpdates finds, in tr, each scripted update due after its tool call settled — delivered
// to a settled call, or never delivered because the run ended first — once per update in the
// file (a tool called twice may run the same one late twice). One due at the settling time
// itself comes first and takes effect. A call that never settled in the run is left out.
func (f *File) lateUpdates(tr *trace.Trace) []lateUpdate {
	type call struct {
		key   string
		b     sim.Behaviour
		start int64
		done  bool
	}
	calls := map[string]*call{}
	seen := map[position]bool{}
	var out []lateUpdate
	for _, e := range tr.Entries {
		switch {
		case e.Kind == trace.KindCall && e.Name == trace.CallTool:
			var start struct{ ToolCallID, ToolName string }
			if json.Unmarshal(e.Data, &start) != nil {
				continue
			}
			if b, key, ok := f.behaviourOf(start.ToolCallID, start.ToolName); ok {
				calls[start.ToolCallID] = &call{key: key, b: b, start: e.T}
			}
		case e.Kind == trace.KindDeliver && e.Name == trace.DeliverToolResult:
			c := calls[e.Target]
			if c == nil || c.done {
				continue
			}
			c.done = true
			for i, u := range c.b.Updates {
				if c.start+u.At <= e.T || i >= len(f.updates[c.key]) {
					continue
				}
				if at := f.updates[c.key][i]; !seen[at] {
					seen[at] = true
					out = append(out, lateUpdate{at: at, id: e.Target, t: c.start + u.At, settled: e.T})
				}
			}
		}
	}
	return out
}

// behaviourOf is the behaviour a tool call runs, as the world picks it, and its updateKey.
func (f *File) behaviourOf(id, tool string) (sim.Behaviour, string, bool) {
	if b, ok := f.Scenario.ToolCalls[id]; ok {
		return b, updateKey("", id), true
	}
	for _, t := range f.Scenario.Tools {
		if t.Name == tool {
			return t.Behaviour, updateKey(tool, ""), true
		}
	}
	return sim.Behaviour{}, "", false
}
