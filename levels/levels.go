// Package levels holds the two levels a loop is judged at (docs/SEMANTICS.md, "Levels"):
// pi, every rule as pi 1.6.0 writes it down, and core, what any agent loop must do — the six
// duties of an agent loop, apart from pi's conventions (how pi writes things down: the
// system message declaring tools, the thinking-level stamp, its texts and fields). At core
// level a trace is compared in its core view (View), where the conventions are left out of
// both traces, and a scenario pinning only conventions is not run.
package levels

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/trace"
)

// Level is how much of the contract a loop is held to.
type Level string

// The levels.
const (
	// Pi holds a loop to every rule, conventions included (the default).
	Pi Level = "pi"
	// Core holds a loop to the core of any agent loop: pi's conventions are judged nowhere.
	Core Level = "core"
)

// Parse reads a level's name.
func Parse(s string) (Level, error) {
	switch Level(s) {
	case Pi, Core, "":
		return Level(strings.TrimSpace(s)), nil
	}
	return "", fmt.Errorf("unknown level %q (want core or pi)", s)
}

// Convention is one of pi's conventions: what a core loop need not write as pi does.
type Convention struct {
	// Rule is the rule of docs/SEMANTICS.md that states it.
	Rule string
	// What says it in a few words.
	What string
}

// Conventions are pi's conventions, each a rule of docs/SEMANTICS.md ("Levels").
var Conventions = []Convention{
	{"R-DECL-WHEN", "tools declared in the transcript, by system messages (toolsAdded, toolsRemoved)"},
	{"R-DECL-DIFF", "tools declared in the transcript, by system messages (toolsAdded, toolsRemoved)"},
	{"R-DECL-INSERT", "tools declared in the transcript, by system messages (toolsAdded, toolsRemoved)"},
	{"R-DECL-PENDING", "tools declared in the transcript, by system messages (toolsAdded, toolsRemoved)"},
	{"R-DECL-REPLAY", "tools declared in the transcript, by system messages (toolsAdded, toolsRemoved)"},
	{"R-DECL-SENT", "tools declared in the transcript, by system messages (toolsAdded, toolsRemoved)"},
	{"R-STREAM-THINKING-LEVEL", "the assistant message stamped with the requested thinkingLevel"},
	{"R-TIME-DURATION", "durationMs on executed tool calls"},
	{"R-TIME-STAMP", "messages stamped when the loop creates them"},
	{"R-TOOL-ERROR-RESULT", "error results written as pi writes them: its texts, details {}"},
	{"R-POLL-A", "steering polled on pi's schedule (polls A, B and C)"},
	{"R-POLL-B", "steering polled on pi's schedule (polls A, B and C)"},
	{"R-POLL-C", "steering polled on pi's schedule (polls A, B and C)"},
	{"R-POLL-NEVER-ELSE", "steering polled on pi's schedule (polls A, B and C)"},
	{"R-EV-FIRST-TURN", "the first turn_start emitted before the loop's body"},
	{"R-PROVIDER-OPTIONS", "the stream function's options (session id, identity)"},
	{"R-TOOL-ABORTED-FIRST", "the abort checked first when a call is prepared"},
	{"R-TOOL-VALIDATE", "arguments validated against the tool's schema as pi-schema does, and coerced"},
}

// IsConvention reports whether rule id states one of pi's conventions.
func IsConvention(id string) bool {
	return slices.ContainsFunc(Conventions, func(c Convention) bool { return c.Rule == id })
}

// ConventionsOnly reports whether every rule of a scenario's list is a convention: at core
// level such a scenario pins nothing a core loop must do.
func ConventionsOnly(rules []string) bool {
	return len(rules) > 0 && !slices.ContainsFunc(rules, func(id string) bool { return !IsConvention(id) })
}

// View is a trace's core view: the trace without pi's conventions, except those follows
// names (rule ids the implementation says it follows). Left out: the steering and follow-up
// polls that took nothing (pi's schedule; a poll that took messages stays), system messages
// that only declare tools and the members declaring them, the thinkingLevel and timestamp
// of messages, durationMs, the stream's options, the api, provider and usage of assistant
// messages, the details and texts of error results, and the texts of errors. Entries keep
// their order; sequence numbers are renumbered.
func View(tr *trace.Trace, follows map[string]bool) *trace.Trace {
	full := tr.Expanded()
	v := &viewer{follows: follows}
	out := &trace.Trace{Scenario: full.Scenario, Unfired: full.Unfired}
	for _, e := range full.Entries {
		if v.drops(e) {
			continue
		}
		if e.Kind == trace.KindCall && e.Name == trace.CallStream && !follows["R-PROVIDER-OPTIONS"] {
			e.Data = jsonvalue.WithoutMember(e.Data, "options")
		}
		e.Data, e.Answer = v.json(e.Data, e.Canonical), v.json(e.Answer, e.Canonical)
		if e.Error != "" && !follows["R-TOOL-ERROR-RESULT"] {
			e.Error = errorText
		}
		e.Seq = len(out.Entries) + 1
		e.Canonical = true
		out.Entries = append(out.Entries, e)
	}
	return out
}

// errorText stands for any error text in the core view.
const errorText = "(an error)"

// viewer makes the core view of a trace's payloads; memo holds what it made of the objects
// of canonical payloads (viewbytes.go).
type viewer struct {
	follows map[string]bool
	memo    viewMemo
}

// drops reports whether the core view leaves entry e out.
func (v *viewer) drops(e trace.Entry) bool {
	switch {
	case e.Kind == trace.KindCall && (e.Name == trace.HookSteering || e.Name == trace.HookFollowUp) && !v.follows["R-POLL-B"]:
		var a struct{ Messages []json.RawMessage }
		return json.Unmarshal(e.Answer, &a) == nil && len(a.Messages) == 0 && e.Error == ""
	case e.Kind == trace.KindEvent && strings.HasPrefix(e.Name, "message_") && !v.follows["R-DECL-WHEN"]:
		if e.Canonical {
			start, end, ok := jsonvalue.MemberValue(e.Data, "message")
			if !ok {
				return false
			}
			var buf [24]span
			ms, isObject := members(e.Data[start:end], buf[:0])
			if !isObject {
				return false
			}
			var role []byte
			for _, m := range ms {
				if string(m.key) == `"role"` {
					role = m.value
				}
			}
			return declarationOnlyBytes(ms, role)
		}
		var d map[string]any
		if json.Unmarshal(e.Data, &d) != nil {
			return false
		}
		m, _ := d["message"].(map[string]any)
		return m != nil && v.declarationOnly(m)
	}
	return false
}

// declarationOnly reports whether a message is a system message that only declares tools.
func (v *viewer) declarationOnly(m map[string]any) bool {
	if m["role"] != "system" || m["toolsAdded"] == nil && m["toolsRemoved"] == nil {
		return false
	}
	c, _ := m["content"].(string)
	return c == "" && m["sections"] == nil
}

// json is a payload in the core view; canonical says it is canonical JSON, whose view is
// made on its bytes.
func (v *viewer) json(data json.RawMessage, canonical bool) json.RawMessage {
	if len(data) == 0 {
		return data
	}
	if canonical {
		if out, ok := v.canonicalView(make([]byte, 0, len(data)), data); ok {
			return out
		}
	}
	var d any
	if json.Unmarshal(data, &d) != nil {
		return data
	}
	return jsonvalue.AppendValue(nil, v.value(d, false))
}

// value is a decoded value in the core view; nested says it is the result of a failed call
// (an object with isError true holds its result's content and details one level down).
func (v *viewer) value(x any, nested bool) any {
	switch x := x.(type) {
	case []any:
		out := make([]any, 0, len(x))
		for _, item := range x {
			if m, ok := item.(map[string]any); ok && !v.follows["R-DECL-WHEN"] && v.declarationOnly(m) {
				continue // a declaration in a list of messages
			}
			out = append(out, v.value(item, false))
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		message := x["role"] != nil
		failed := nested || x["isError"] == true
		for k, item := range x {
			if v.leavesOut(k, message, x["role"] == "assistant", failed) {
				continue
			}
			out[k] = v.value(item, failed && k == "result")
		}
		if failed && nested && !v.follows["R-TOOL-ERROR-RESULT"] {
			delete(out, "isError") // said by the event or message that holds the result
		}
		if failed && !v.follows["R-TOOL-ERROR-RESULT"] {
			if _, ok := out["content"]; ok {
				out["content"] = errorText
			}
		}
		if e, ok := out["error"].(string); ok && e != "" && !v.follows["R-TOOL-ERROR-RESULT"] {
			out["error"] = errorText
		}
		return out
	}
	return x
}

// leavesOut reports whether the core view leaves out member k of an object (a message, an
// assistant message, an error result).
func (v *viewer) leavesOut(k string, message, assistant, failed bool) bool {
	switch k {
	case "toolsAdded", "toolsRemoved":
		return !v.follows["R-DECL-WHEN"]
	case "thinkingLevel":
		return message && !v.follows["R-STREAM-THINKING-LEVEL"]
	case "timestamp":
		return message && !v.follows["R-TIME-STAMP"]
	case "durationMs":
		return !v.follows["R-TIME-DURATION"]
	case "api", "provider", "usage":
		return assistant
	case "details":
		return failed && !v.follows["R-TOOL-ERROR-RESULT"]
	}
	return false
}

// Broken is what a core loop's run breaks of invs: the failures of got's core view that the
// reference's run of the same scenario (want), in its core view, does not show, and that
// name no convention. A view leaves out what an invariant of pi's texts and schedule needs,
// so what the reference breaks there is the view's, not the loop's.
func Broken(got, want *trace.Trace, follows map[string]bool, invs []invariant.Invariant) []invariant.Failure {
	known := map[string]bool{}
	for _, f := range invariant.CheckAll(View(want, follows), invs...) {
		known[f.Invariant+"\x00"+f.Msg] = true
	}
	var out []invariant.Failure
	for _, f := range invariant.CheckAll(View(got, follows), invs...) {
		if !known[f.Invariant+"\x00"+f.Msg] && !(IsConvention(f.Rule) && !follows[f.Rule]) {
			out = append(out, f)
		}
	}
	return out
}

// Findings is what core level keeps of a diagnosis: it leaves out the findings of pi's
// conventions the implementation does not follow, and of invariants that judge only
// conventions.
func Findings(fs []diagnose.Finding, follows map[string]bool) []diagnose.Finding {
	var out []diagnose.Finding
	for _, f := range fs {
		if IsConvention(f.RuleID) && !follows[f.RuleID] {
			continue
		}
		if inv, ok := invariant.ByName(f.Invariant); ok && f.Kind == diagnose.Invariant && f.RuleID == "" && ConventionsOnly(inv.Rules) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// Invariants is invs without those that judge only conventions: what core level checks.
func Invariants(invs []invariant.Invariant) []invariant.Invariant {
	return slices.DeleteFunc(slices.Clone(invs), func(inv invariant.Invariant) bool { return ConventionsOnly(inv.Rules) })
}
