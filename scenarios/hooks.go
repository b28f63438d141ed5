package scenarios

import (
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// hookKeys are the keys of hooks:, pi's hook names plus the two queue switches.
var hookKeys = []string{"convertToLlm", "transformContext", "getApiKey", "prepareRequest", "prepareNextTurn",
	"finishTurn", "beforeToolCall", "afterToolCall", "steering", "followUp"}

// hooks reads hooks:. A hook listed is installed; its answers are by call number (calls:)
// or, for the tool hooks, by tool-call id, with a default.
func (d *decoder) hooks(n ast.Node, h *sim.Hooks, r *refs) {
	for _, f := range d.mapping(n, "hooks", hookKeys...) {
		what := "hooks." + f.key
		switch f.key {
		case "steering":
			h.NoSteering = !d.boolean(f.value, what)
			r.queueSwitches = append(r.queueSwitches, f.keyN)
		case "followUp":
			h.NoFollowUp = !d.boolean(f.value, what)
			r.queueSwitches = append(r.queueSwitches, f.keyN)
		case "convertToLlm":
			c := &sim.ConvertScript{}
			h.ConvertToLLM = c
			d.hookAnswer(f.value, what, &c.Throw, &c.Abort, &c.Wait, func(cf field) {
				c.KeepCustomAsUser = d.boolean(cf.value, what+".keepCustomAsUser")
			}, "keepCustomAsUser")
		case "transformContext":
			t := &sim.TransformScript{}
			h.TransformContext = t
			d.hookAnswer(f.value, what, &t.Throw, &t.Abort, &t.Wait, func(cf field) {
				t.KeepLast = int(d.duration(cf.value, what+".keepLast"))
			}, "keepLast")
		case "getApiKey":
			k := &sim.KeyScript{}
			h.GetAPIKey = k
			d.hookAnswer(f.value, what, nil, &k.Abort, &k.Wait, func(cf field) {
				k.Key = d.str(cf.value, what+".key")
			}, "key")
		case "prepareRequest":
			h.PrepareRequest = &sim.Script[sim.PrepareAnswer]{}
			byCall(d, f.value, what, "prepareRequest", r, &h.PrepareRequest.Default, &h.PrepareRequest.ByCall,
				func(n ast.Node, w string) sim.PrepareAnswer { return d.prepareAnswer(n, w, r) })
		case "prepareNextTurn":
			h.PrepareNextTurn = &sim.Script[sim.PrepareAnswer]{}
			byCall(d, f.value, what, "prepareNextTurn", r, &h.PrepareNextTurn.Default, &h.PrepareNextTurn.ByCall,
				func(n ast.Node, w string) sim.PrepareAnswer { return d.prepareAnswer(n, w, r) })
		case "finishTurn":
			h.FinishTurn = &sim.Script[sim.FinishAnswer]{}
			byCall(d, f.value, what, "finishTurn", r, &h.FinishTurn.Default, &h.FinishTurn.ByCall, d.finishAnswer)
		case "beforeToolCall":
			h.BeforeToolCall = &sim.ToolScript[sim.BeforeAnswer]{}
			byToolCall(d, f.value, what, r, &h.BeforeToolCall.Default, &h.BeforeToolCall.ByToolCall, d.beforeAnswer)
		case "afterToolCall":
			h.AfterToolCall = &sim.ToolScript[sim.AfterAnswer]{}
			byToolCall(d, f.value, what, r, &h.AfterToolCall.Default, &h.AfterToolCall.ByToolCall, d.afterAnswer)
		}
	}
}

// hookAnswer reads a hook's answer: the keys every hook takes — throw: (where throw is not
// nil), abort: (the run), delay: and untilAbort: (a wait) — and, through own, its own keys.
func (d *decoder) hookAnswer(n ast.Node, what string, throw *string, abort *bool, wait *sim.Wait, own func(field), keys ...string) {
	if throw != nil {
		keys = append(keys, "throw")
	}
	keys = append(keys, "abort", "delay", "untilAbort")
	for _, f := range d.throwAlone(d.mapping(n, what, keys...), what) {
		switch f.key {
		case "throw":
			*throw = d.str(f.value, what+".throw")
		case "abort":
			*abort = d.boolean(f.value, what+".abort")
		case "delay":
			wait.Delay = d.duration(f.value, what+".delay")
		case "untilAbort":
			wait.UntilAbort = d.boolean(f.value, what+".untilAbort")
		default:
			own(f)
		}
	}
}

// byCall reads {default: answer, calls: {N: answer}}.
func byCall[T any](d *decoder, n ast.Node, what, hook string, r *refs, def *T, calls *map[int]T, read func(ast.Node, string) T) {
	for _, f := range d.mapping(n, what, "default", "calls") {
		switch f.key {
		case "default":
			*def = read(f.value, what+".default")
		case "calls":
			*calls = map[int]T{}
			for _, c := range d.mapping(f.value, what+".calls") {
				if i := d.index(c, what+".calls"); i > 0 {
					(*calls)[i] = read(c.value, what+".calls."+c.key)
					r.hookIndexes = append(r.hookIndexes, indexed{hook, i, c.keyN})
				}
			}
		}
	}
}

// byToolCall reads {default: answer, calls: {toolCallId: answer}}.
func byToolCall[T any](d *decoder, n ast.Node, what string, r *refs, def *T, calls *map[string]T, read func(ast.Node, string) T) {
	for _, f := range d.mapping(n, what, "default", "calls") {
		switch f.key {
		case "default":
			*def = read(f.value, what+".default")
		case "calls":
			*calls = map[string]T{}
			for _, c := range d.mapping(f.value, what+".calls") {
				(*calls)[c.key] = read(c.value, what+".calls."+c.key)
				r.hookCallIDs = append(r.hookCallIDs, named{c.key, c.keyN})
			}
		}
	}
}

func (d *decoder) contextChange(n ast.Node, what string, r *refs) *sim.ContextChange {
	c := &sim.ContextChange{}
	for _, f := range d.mapping(n, what, "tools", "keepLast") {
		switch f.key {
		case "tools":
			c.Tools = []string{}
			for _, t := range d.sequence(f.value, what+".tools", false) {
				name := d.str(t, what+".tools[]")
				c.Tools = append(c.Tools, name)
				r.contextTools = append(r.contextTools, named{name, t})
			}
		case "keepLast":
			c.KeepLast = int(d.duration(f.value, what+".keepLast"))
		}
	}
	return c
}

// prepareAnswer reads a prepareRequest or prepareNextTurn answer.
func (d *decoder) prepareAnswer(n ast.Node, what string, r *refs) sim.PrepareAnswer {
	var a sim.PrepareAnswer
	d.hookAnswer(n, what, &a.Throw, &a.Abort, &a.Wait, func(f field) {
		switch f.key {
		case "context":
			a.Context = d.contextChange(f.value, what+".context", r)
		case "messages":
			a.Messages = d.messages(f.value, what+".messages")
		case "model":
			a.Model = d.model(f.value, what+".model")
		case "thinkingLevel":
			a.ThinkingLevel = d.thinkingLevel(f.value, what+".thinkingLevel")
		}
	}, "context", "messages", "model", "thinkingLevel")
	return a
}

// finishAnswer reads continue / end / none, or {action, throw}.
func (d *decoder) finishAnswer(n ast.Node, what string) sim.FinishAnswer {
	if d.isString(n) {
		return sim.FinishAnswer{Action: d.decision(n, what)}
	}
	var a sim.FinishAnswer
	d.hookAnswer(n, what, &a.Throw, &a.Abort, &a.Wait, func(f field) {
		a.Action = d.decision(f.value, what+".action")
	}, "action")
	return a
}

func (d *decoder) decision(n ast.Node, what string) loop.TurnDecision {
	switch d.oneOf(n, what, "continue", "end", "none") {
	case "continue":
		return loop.DecisionContinue
	case "end":
		return loop.DecisionEnd
	}
	return loop.DecisionNone
}

func (d *decoder) beforeAnswer(n ast.Node, what string) sim.BeforeAnswer {
	var a sim.BeforeAnswer
	d.hookAnswer(n, what, &a.Throw, &a.Abort, &a.Wait, func(f field) {
		switch f.key {
		case "block":
			a.Block = d.boolean(f.value, what+".block")
		case "reason":
			a.Reason = d.str(f.value, what+".reason")
		case "terminate":
			a.Terminate = d.boolean(f.value, what+".terminate")
		case "setArgs":
			a.SetArgs = d.object(f.value, what+".setArgs")
		}
	}, "block", "reason", "terminate", "setArgs")
	return a
}

func (d *decoder) afterAnswer(n ast.Node, what string) sim.AfterAnswer {
	var a sim.AfterAnswer
	d.hookAnswer(n, what, &a.Throw, &a.Abort, &a.Wait, func(f field) {
		switch f.key {
		case "content":
			a.Content = d.blocks(f.value, what+".content")
		case "details":
			a.Details = d.json(f.value, what+".details")
		case "structuredContent":
			a.StructuredContent = d.json(f.value, what+".structuredContent")
		case "isError":
			v := d.boolean(f.value, what+".isError")
			a.IsError = &v
		case "terminate":
			v := d.boolean(f.value, what+".terminate")
			a.Terminate = &v
		case "usage":
			u := d.usage(f.value, what+".usage")
			a.Usage = &u
		}
	}, "content", "details", "structuredContent", "isError", "terminate", "usage")
	return a
}

// eventTypes are the loop events a trigger may name.
var eventTypes = []string{"agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
	"message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end"}

// userAction reads one simulated-user action: at: or on:, and what to do.
func (d *decoder) userAction(n ast.Node, r *refs) sim.UserAction {
	var a sim.UserAction
	var whenN ast.Node
	where := action{n: n}
	defer func() { where.a = a; r.actions = append(r.actions, where) }()
	var opKeys []ast.Node
	setOp := func(f field, op sim.AgentOp) {
		opKeys = append(opKeys, f.keyN)
		a.Op = &op
		where.op = f.keyN
	}
	unknownBefore := d.unknownKeys
	for i, f := range d.mapping(n, "a user action", userActionKeys...) {
		if i == 0 {
			where.n = f.keyN
		}
		switch f.key {
		case "at":
			t := d.duration(f.value, "at")
			a.At = &t
			whenN = f.keyN
			where.at = f.value
		case "on":
			a.On = d.trigger(f.value)
			r.triggers = append(r.triggers, trigger{a.On, f.value})
			whenN = f.keyN
		case "steer":
			a.Steer = d.messages(f.value, "steer")
			where.steer = f.keyN
		case "followUp":
			a.FollowUp = d.messages(f.value, "followUp")
			where.followUp = f.keyN
		case "abort":
			a.Abort = d.boolean(f.value, "abort")
		case "tools":
			var names []string
			for _, t := range d.sequence(f.value, "tools", false) {
				names = append(names, d.str(t, "a tool name"))
			}
			setOp(f, sim.AgentOp{Op: trace.OpSetTools, Tools: names})
			where.tools = f.value
		case "release":
			setOp(f, sim.AgentOp{Op: trace.OpRelease, Barrier: d.str(f.value, "release")})
			where.release = f.value
		default:
			if op, ok := d.agentOp(f); ok {
				setOp(f, op)
			}
		}
	}
	d.checkUserAction(n, a, whenN, opKeys, d.unknownKeys == unknownBefore)
	return a
}

// agentOp reads an Agent operation of a user action given by a key alone (prompt:,
// steeringMode:, continue: true…); false for continue: false and the like, which do nothing.
func (d *decoder) agentOp(f field) (sim.AgentOp, bool) {
	switch f.key {
	case "prompt":
		return sim.AgentOp{Op: trace.OpPrompt, Messages: d.messages(f.value, "prompt")}, true
	case "promptText":
		return sim.AgentOp{Op: trace.OpPrompt, Text: d.str(f.value, "promptText")}, true
	case "steeringMode", "followUpMode":
		op := trace.OpSetSteeringMode
		if f.key == "followUpMode" {
			op = trace.OpSetFollowUpMode
		}
		return sim.AgentOp{Op: op, Mode: loop.QueueMode(d.oneOf(f.value, f.key, string(loop.OneAtATime), string(loop.All)))}, true
	case "clearQueues":
		return sim.AgentOp{Op: trace.OpClearQueues, Queue: d.oneOf(f.value, "clearQueues", "steering", "followUp", "all")}, true
	case "continue", "waitForIdle", "reset", "state":
		if d.boolean(f.value, f.key) {
			return sim.AgentOp{Op: map[string]string{"continue": trace.OpContinue, "waitForIdle": trace.OpWaitForIdle,
				"reset": trace.OpReset, "state": trace.OpState}[f.key]}, true
		}
		d.errorf(f.value, "%s: false does nothing; leave the key out", f.key)
	}
	return sim.AgentOp{}, false
}

// checkUserAction checks that a user action happens once (at: or on:) and does one thing:
// an Agent operation, or steering, following up and aborting (allKnown: its keys are all
// known, so that a misspelt one is not also said missing).
func (d *decoder) checkUserAction(n ast.Node, a sim.UserAction, whenN ast.Node, opKeys []ast.Node, allKnown bool) {
	switch {
	case a.At != nil && a.On != nil:
		d.errorf(whenN, "a user action happens at: a time or on: a trigger, not both")
	case a.At == nil && a.On == nil && allKnown:
		d.errorf(n, "a user action needs at: (virtual ms) or on: (a trigger)")
	}
	if len(opKeys) > 1 {
		d.errorf(opKeys[1], "a user action does one Agent operation; put this one in an action of its own")
	}
	if len(opKeys) > 0 && (len(a.Steer) > 0 || len(a.FollowUp) > 0 || a.Abort) {
		d.errorf(opKeys[0], "a user action does one Agent operation, or steers, follows up and aborts; not both")
	}
	if len(a.Steer) == 0 && len(a.FollowUp) == 0 && !a.Abort && a.Op == nil && allKnown {
		d.errorf(n, "a user action must steer, followUp or abort (or, in an Agent scenario, do an operation: %s)", strings.Join(userActionKeys[5:], ", "))
	}
}

// userActionKeys are the keys of a user action: when, the loop's queue actions, and the
// Agent operations (Agent scenarios only).
var userActionKeys = []string{"at", "on", "steer", "followUp", "abort",
	"prompt", "promptText", "continue", "waitForIdle", "reset", "state", "steeringMode", "followUpMode", "clearQueues", "tools", "release"}

// agentScript reads an Agent scenario's agent: block.
func (d *decoder) agentScript(n ast.Node) *sim.AgentScript {
	a := &sim.AgentScript{}
	if _, ok := d.unwrap(n).(*ast.NullNode); ok {
		return a
	}
	for _, f := range d.mapping(n, "agent", "systemPrompt", "defaultModel", "barriers") {
		switch f.key {
		case "systemPrompt":
			a.SystemPrompt = d.str(f.value, "agent.systemPrompt")
		case "defaultModel":
			if a.DefaultModel = d.boolean(f.value, "agent.defaultModel"); !a.DefaultModel {
				d.errorf(f.value, "agent.defaultModel: false is the default; leave the key out")
			}
		case "barriers":
			seen := map[string]bool{}
			for i, bn := range d.sequence(f.value, "agent.barriers", false) {
				var b sim.Barrier
				what := "agent.barriers[" + strconv.Itoa(i) + "]"
				for _, bf := range d.mapping(bn, what, "id", "event", "nth", "untilAbort") {
					switch bf.key {
					case "id":
						b.ID = d.str(bf.value, what+".id")
						if seen[b.ID] {
							d.errorf(bf.value, "%s: barrier %s is defined twice", what, b.ID)
						}
						seen[b.ID] = true
					case "event":
						b.Event = loop.EventType(d.oneOf(bf.value, what+".event", eventTypes...))
					case "nth":
						b.Nth = int(d.duration(bf.value, what+".nth"))
					case "untilAbort":
						b.UntilAbort = d.boolean(bf.value, what+".untilAbort")
					}
				}
				if b.ID == "" || b.Event == "" {
					d.errorf(bn, "%s needs id: and event:", what)
				}
				a.Barriers = append(a.Barriers, b)
			}
		}
	}
	return a
}

func (d *decoder) trigger(n ast.Node) *sim.Trigger {
	t := &sim.Trigger{}
	for _, f := range d.mapping(n, "on", "event", "toolCallId", "request", "hook", "nth") {
		switch f.key {
		case "event":
			t.Event = loop.EventType(d.oneOf(f.value, "on.event", eventTypes...))
		case "toolCallId":
			t.ToolCallID = d.str(f.value, "on.toolCallId")
		case "request":
			t.Request = int(d.duration(f.value, "on.request"))
		case "hook":
			t.Hook = d.oneOf(f.value, "on.hook", "convertToLlm", "transformContext", "getApiKey", "prepareRequest",
				"prepareNextTurn", "finishTurn", "getSteeringMessages", "getFollowUpMessages", "beforeToolCall", "afterToolCall")
		case "nth":
			t.Nth = int(d.duration(f.value, "on.nth"))
		}
	}
	kinds := 0
	for _, set := range []bool{t.Event != "", t.Request > 0, t.Hook != ""} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		d.errorf(n, "a trigger names exactly one of event:, request: or hook:")
	}
	if t.ToolCallID != "" && t.Event == "" {
		d.errorf(n, "on.toolCallId needs an event:")
	}
	return t
}
