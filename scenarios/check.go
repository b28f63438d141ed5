package scenarios

import (
	"slices"

	"github.com/turnstile-dev/turnstile/sim"
)

// check relates the parts of a decoded scenario: names that must refer to something,
// answers that could never be used, triggers that could never fire.
func (d *decoder) check(sc *sim.Scenario, r *refs) {
	for _, c := range r.callTools {
		if _, ok := r.toolNames[c.name]; ok {
			continue
		}
		if _, ok := r.undefinedTools[c.name]; ok {
			continue
		}
		d.errorf(c.n, "a response calls tool %q, which tools: does not define (list it in undefinedTools: to test a call of an unknown tool)", c.name)
	}
	for name, n := range r.undefinedTools {
		if _, ok := r.toolNames[name]; ok {
			d.errorf(n, "tool %q is listed in undefinedTools: but tools: defines it", name)
		}
	}
	for _, c := range r.contextTools {
		if _, ok := r.toolNames[c.name]; !ok {
			d.errorf(c.n, "a hook puts tool %q in the context, but tools: does not define it", c.name)
		}
	}
	for _, k := range r.toolCallKeys {
		if _, ok := r.callIDs[k.name]; !ok {
			d.errorf(k.n, "toolCalls: scripts call %q, but no response makes a tool call with that id", k.name)
		} else if r.dupCallIDs[k.name] {
			d.errorf(k.n, "toolCalls: scripts call %q, which several responses use; give the calls distinct ids", k.name)
		}
	}
	for _, k := range r.hookCallIDs {
		if _, ok := r.callIDs[k.name]; !ok {
			d.errorf(k.n, "a tool hook answers call %q, but no response makes a tool call with that id", k.name)
		} else if r.dupCallIDs[k.name] {
			d.errorf(k.n, "a tool hook answers call %q, which several responses use; give the calls distinct ids", k.name)
		}
	}
	maxRequests := len(sc.Responses)
	unbounded := sc.ExtraResponse != nil
	for _, h := range r.hookIndexes {
		// prepareRequest and finishTurn run once per request, prepareNextTurn once per turn
		// after the first.
		limit := maxRequests
		if h.hook == "prepareNextTurn" {
			limit = maxRequests - 1
		}
		if !unbounded && h.i > limit {
			d.errorf(h.n, "%s call %d can never happen: the provider script has %s", h.hook, h.i, plural(maxRequests, "response"))
		}
	}
	installed := sc.Hooks.Installed()
	for _, t := range r.triggers {
		switch {
		case t.t.ToolCallID != "":
			if _, ok := r.callIDs[t.t.ToolCallID]; !ok {
				d.errorf(t.n, "the trigger names tool call %q, but no response makes a tool call with that id", t.t.ToolCallID)
			} else if r.dupCallIDs[t.t.ToolCallID] {
				d.errorf(t.n, "the trigger names tool call %q, which several responses use; give the calls distinct ids", t.t.ToolCallID)
			}
		case t.t.Request > 0 && !unbounded && t.t.Request > maxRequests:
			d.errorf(t.n, "the trigger waits for request %d, but the provider script has %s", t.t.Request, plural(maxRequests, "response"))
		case t.t.Hook != "" && !slices.Contains(installed, t.t.Hook):
			d.errorf(t.n, "the trigger waits for hook %s, which the scenario does not install", t.t.Hook)
		}
	}
}
