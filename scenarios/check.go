package scenarios

import (
	"slices"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// check relates the parts of a decoded scenario: names that must refer to something,
// answers that could never be used, triggers that could never fire.
func (d *decoder) check(sc *sim.Scenario, r *refs) {
	d.checkActions(sc, r)
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
		case t.t.ToolCallID != "" && t.t.Event != "" && !toolEvents[t.t.Event]:
			d.errorf(t.n, "the trigger can never fire: %s events carry no tool call id (only tool_execution_start, tool_execution_update and tool_execution_end do)", t.t.Event)
		case t.t.Request > 0 && t.t.Nth > 1:
			d.errorf(t.n, "the trigger can never fire: request %d opens once, so it has no occurrence %d", t.t.Request, t.t.Nth)
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

// toolEvents are the events that concern one tool call.
var toolEvents = map[loop.EventType]bool{loop.ToolExecutionStart: true, loop.ToolExecutionUpdate: true, loop.ToolExecutionEnd: true}

// checkActions finds user actions that can never do anything: queue messages for a queue
// that is never polled, or a time after which the run cannot still be going.
func (d *decoder) checkActions(sc *sim.Scenario, r *refs) {
	end, bounded := latestEnd(sc)
	budget := sc.Budget.Or(sim.DefaultBudget)
	for _, a := range r.actions {
		if a.steer != nil && sc.Hooks.NoSteering {
			d.errorf(a.steer, "this action steers, but hooks: {steering: false} uninstalls the steering poll, so the message could never be taken")
		}
		if a.followUp != nil && sc.Hooks.NoFollowUp {
			d.errorf(a.followUp, "this action queues a follow-up, but hooks: {followUp: false} uninstalls the follow-up poll, so the message could never be taken")
		}
		if a.at == nil || a.a.At == nil || sc.Agent != nil {
			// An Agent scenario's runs start at the user's operations, whenever they come.
			continue
		}
		switch at := *a.a.At; {
		case at > budget.Time:
			d.errorf(a.at, "at: %dms is after the virtual-time budget of %dms; the action could never happen", at, budget.Time)
		case bounded && at > end:
			d.errorf(a.at, "at: %dms can never happen: the run is over by %dms at the latest (every response streamed and every tool call run in full, one after another)", at, end)
		}
	}
}

// latestEnd is the latest virtual time a run of sc can reach: every response streamed and
// every tool call it makes run in full, one after another. ok is false when an
// extraResponse leaves the run unbounded, or a hook's answer waits (how often a hook is
// called depends on the run, and one held until the abort waits for the user).
func latestEnd(sc *sim.Scenario) (end int64, ok bool) {
	if sc.ExtraResponse != nil || slices.Contains(sim.NeededFeatures(sc), sim.FeatureWaitingHooks) {
		return 0, false
	}
	durations := map[string]int64{}
	for _, t := range sc.Tools {
		durations[t.Name] = t.Behaviour.Duration
	}
	for i := range sc.Responses {
		resp := &sc.Responses[i]
		if n := sim.StreamEventCount(resp); n > 1 {
			end += resp.ChunkDelay * int64(n-1)
		}
		end += resp.Delay
		for _, c := range loop.ToolCalls(resp.Content) {
			if b, ok := sc.ToolCalls[c.ID]; ok {
				end += b.Duration
			} else {
				end += durations[c.Name]
			}
		}
	}
	return end, true
}

// neverActs reports whether a user action can never happen, whatever the loop does: a
// trigger that cannot fire, or a time after the run is over or past the time budget. Such
// an action leaves no trace; the loader rejects it and the writer leaves it out.
func neverActs(sc *sim.Scenario, a sim.UserAction) bool {
	if t := a.On; t != nil {
		return (t.ToolCallID != "" && t.Event != "" && !toolEvents[t.Event]) || (t.Request > 0 && t.Nth > 1)
	}
	if a.At == nil {
		return false
	}
	end, bounded := latestEnd(sc)
	return *a.At > sc.Budget.Or(sim.DefaultBudget).Time || (bounded && sc.Agent == nil && *a.At > end)
}

// checkAgent checks what an Agent scenario's operations name: barriers and tools that exist;
// and that it does not switch the loop's queue polls, which the Agent owns.
func (d *decoder) checkAgent(sc *sim.Scenario, r *refs) {
	for _, n := range r.queueSwitches {
		d.errorf(n, "an Agent owns its queues and answers the loop's polls itself: hooks.steering and hooks.followUp do nothing in an Agent scenario (use steeringMode/followUpMode, or clearQueues)")
	}
	barriers := map[string]bool{}
	for _, b := range sc.Agent.Barriers {
		barriers[b.ID] = true
	}
	tools := map[string]bool{}
	for _, t := range sc.Tools {
		tools[t.Name] = true
	}
	for _, a := range r.actions {
		switch {
		case a.release != nil && !barriers[a.a.Op.Barrier]:
			d.errorf(a.release, "release: no barrier %s in agent.barriers", a.a.Op.Barrier)
		case a.tools != nil:
			for _, name := range a.a.Op.Tools {
				if !tools[name] {
					d.errorf(a.tools, "tools: no tool %s in tools:", name)
				}
			}
		}
	}
}
