package explore

import (
	"fmt"
	"maps"
	"slices"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// Entries of a generated run: what it drives.
const (
	// EntryAny makes loop runs and Agent sessions, as far as the target has them.
	EntryAny = ""
	// EntryLoop makes loop runs only: run with prompts, or continue.
	EntryLoop = "loop"
	// EntryAgent makes Agent sessions only (protocol §13.2).
	EntryAgent = "agent"
)

// ParseEntry checks an entry name (EntryAny spelt "any").
func ParseEntry(s string) (string, error) {
	switch s {
	case "any", EntryAny:
		return EntryAny, nil
	case EntryLoop, EntryAgent:
		return s, nil
	}
	return "", fmt.Errorf("entry %q: want loop, agent or any", s)
}

// agentShare is the share of Agent sessions among the runs of EntryAny: one in agentShare.
const agentShare = 3

// isAgentRun decides from the run seed alone whether a run of EntryAny is an Agent session,
// so that a loop run draws the very scenario a loop-only exploration would.
func isAgentRun(seed uint64) bool { return splitmix(seed^0x6167656e74)%agentShare == 0 }

// agentSessions generates Agent sessions (protocol §13.2) for every feature.
func agentSessions() *rapid.Generator[*sim.Scenario] { return agentSessionFor(Target{}) }

// agentSessionFor generates Agent sessions an implementation can be given: a stateful Agent
// with tools (some inactive), a provider script shared by its runs, hooks, queue modes,
// sometimes a system prompt, an earlier transcript, stream options and listener barriers; and
// the user's operations at virtual times or on triggers: prompts and continue(), steering and
// follow-up, mode switches, aborts, waitForIdle, reset, clearQueues, setTools, state reads and
// barrier releases. Every barrier has a release at a random time and one long after the
// session is over (virtual time is free), so that no session is stuck on a listener.
func agentSessionFor(target Target) *rapid.Generator[*sim.Scenario] {
	return rapid.Custom(func(t *rapid.T) *sim.Scenario { return (&gen{t: t, target: target}).agentSession() })
}

// lateRelease is when every barrier is released at the latest: past anything a generated
// session does.
const lateRelease = 100_000

// agentEvents are the events a barrier or a trigger of an Agent session waits for.
var agentEvents = []loop.EventType{loop.AgentStart, loop.TurnStart, loop.MessageStart, loop.MessageUpdate, loop.MessageEnd,
	loop.ToolExecutionStart, loop.ToolExecutionEnd, loop.TurnEnd, loop.AgentEnd}

// opTime draws when an operation happens, in virtual ms: runs take tens of ms.
func (g *gen) opTime(label string) int64 {
	return []int64{0, 0, 1, 2, 5, 10, 15, 20, 30, 40, 60, 90}[g.uniform(12, label)]
}

func (g *gen) agentSession() *sim.Scenario {
	g.sc = &sim.Scenario{Name: "generated", Agent: &sim.AgentScript{}}
	g.repeated = map[string]bool{}
	sc := g.sc
	for i, name := range toolNames[:g.intIn(0, 3, "tools")] {
		sc.Tools = append(sc.Tools, g.tool(i, name))
	}
	n := g.intIn(1, 5, "responses")
	for i := range n {
		sc.Responses = append(sc.Responses, g.response(i, n))
	}
	// A request beyond the script throws from the stream: only where streams may throw.
	if !g.has(sim.FeatureThrowingStreams) || g.chance(60, "extra") {
		r := sim.Response{Content: loop.Text("extra"), Delay: g.ms("extra delay")}
		sc.ExtraResponse = &r
	}
	g.toolCalls()
	g.config()
	g.hooks()
	// The Agent owns its queues: the polls are never switched off.
	sc.Hooks.NoSteering, sc.Hooks.NoFollowUp = false, false
	if g.chance(30, "system prompt") {
		sc.Agent.SystemPrompt = "You help."
	}
	if g.chance(25, "earlier transcript") {
		sc.Messages = append(sc.Messages, &loop.UserMessage{Text: "earlier question"})
		if g.chance(60, "answered") {
			sc.Messages = append(sc.Messages, &loop.AssistantMessage{Content: loop.Text("earlier answer"), API: "faux", Provider: "faux",
				Model: "faux-1", StopReason: loop.StopStop})
		}
	}
	g.barriers()
	g.operations()
	g.protocolTwo()
	return sc
}

// barriers draws the listener's barriers, each released at a random time or on a trigger,
// and again long after the session's end.
func (g *gen) barriers() {
	sc := g.sc
	n := 0
	switch v := g.uniform(20, "barriers"); {
	case v < 4:
		n = 1
	case v == 4:
		n = 2 // one may hold the run before the other's event
	}
	for k := range n {
		b := sim.Barrier{ID: fmt.Sprintf("b%d", k+1), Event: agentEvents[g.uniform(len(agentEvents), "barrier event")]}
		if b.Event == loop.ToolExecutionEnd && parallelBatch(sc) {
			b.Event = loop.ToolExecutionStart
		}
		if k == 1 && b.Event == sc.Agent.Barriers[0].Event {
			// Two barriers on one event: the reference's listener holds at one, then the
			// other, where pi's adapter holds at both at once (protocol §13.2 does not say).
			continue
		}
		if g.chance(25, "barrier nth") {
			b.Nth = 2
		}
		sc.Agent.Barriers = append(sc.Agent.Barriers, b)
		release := sim.AgentOp{Op: trace.OpRelease, Barrier: b.ID}
		a := sim.UserAction{Op: &release}
		g.when(&a, false)
		sc.User = append(sc.User, a)
	}
	// One barrier may hold the run before another's event: released late in turn, each
	// barrier is released after every other's event.
	for j := range sc.Agent.Barriers {
		for _, b := range sc.Agent.Barriers {
			late := int64(lateRelease * (j + 1))
			sc.User = append(sc.User, sim.UserAction{At: &late, Op: &sim.AgentOp{Op: trace.OpRelease, Barrier: b.ID}})
		}
	}
}

// when draws the time or the trigger of an operation; first operations come at a time.
func (g *gen) when(a *sim.UserAction, first bool) {
	if first || !g.chance(35, "triggered") {
		at := g.opTime("at")
		a.At = &at
		return
	}
	sc := g.sc
	tr := &sim.Trigger{}
	var hooks []string
	for _, h := range sc.Hooks.Installed() {
		if h != trace.HookSteering && h != trace.HookFollowUp {
			hooks = append(hooks, h)
		}
	}
	switch g.intIn(0, 5, "trigger") {
	case 0:
		if ids := g.scriptable(); len(ids) > 0 {
			tr.Event = loop.EventType(g.pick("trigger tool event", "tool_execution_start", "tool_execution_end"))
			tr.ToolCallID = ids[g.intIn(0, len(ids)-1, "trigger id")]
			break
		}
		fallthrough
	case 1, 2:
		tr.Event = agentEvents[g.uniform(len(agentEvents), "trigger event")]
	case 3:
		tr.Request = g.intIn(1, len(sc.Responses), "trigger request")
	default:
		if len(hooks) == 0 {
			tr.Event = loop.TurnEnd
			break
		}
		tr.Hook = g.pick("trigger hook", hooks...)
	}
	if tr.Request == 0 && g.chance(25, "nth") {
		tr.Nth = g.intIn(2, 3, "nth")
	}
	a.On = tr
}

// operation kinds, each as often as it is listed.
var agentOpKinds = []string{
	trace.OpPrompt, trace.OpPrompt, trace.OpPrompt, trace.OpPrompt,
	trace.OpContinue, trace.OpContinue, trace.OpContinue,
	trace.OpSteer, trace.OpSteer, trace.OpSteer, trace.OpSteer,
	trace.OpFollowUp, trace.OpFollowUp, trace.OpFollowUp, trace.OpFollowUp,
	trace.OpAbort, trace.OpAbort, trace.OpAbort,
	trace.OpWaitForIdle, trace.OpReset,
	trace.OpSetSteeringMode, trace.OpSetFollowUpMode, trace.OpClearQueues, trace.OpSetTools,
	trace.OpState, trace.OpState,
}

// operations draws the user's operations on the Agent.
func (g *gen) operations() {
	sc := g.sc
	for k := range g.intIn(1, 7, "operations") {
		kind := agentOpKinds[g.uniform(len(agentOpKinds), "operation")]
		if k == 0 && g.chance(70, "starts with a prompt") {
			kind = trace.OpPrompt
		}
		if kind == trace.OpSetTools && len(sc.Tools) == 0 {
			kind = trace.OpState
		}
		var a sim.UserAction
		g.when(&a, k == 0)
		text := fmt.Sprintf("%s %d", kind, k+1)
		switch kind {
		case trace.OpSteer:
			a.Steer = []loop.Message{&loop.UserMessage{Text: text}}
		case trace.OpFollowUp:
			a.FollowUp = []loop.Message{&loop.UserMessage{Text: text}}
		case trace.OpAbort:
			a.Abort = true
		default:
			op := &sim.AgentOp{Op: kind}
			switch kind {
			case trace.OpPrompt:
				if g.chance(50, "prompt text") {
					op.Text = text
				} else {
					op.Messages = []loop.Message{&loop.UserMessage{Text: text}}
					if g.chance(15, "two prompts") {
						op.Messages = append(op.Messages, &loop.UserMessage{Blocks: loop.Text("and be quick")})
					}
				}
			case trace.OpSetSteeringMode, trace.OpSetFollowUpMode:
				op.Mode = loop.QueueMode(g.pick("mode", string(loop.OneAtATime), string(loop.All)))
			case trace.OpClearQueues:
				op.Queue = g.pick("queue", "steering", "followUp", "all")
			case trace.OpSetTools:
				op.Tools = g.toolSubset()
			}
			a.Op = op
		}
		sc.User = append(sc.User, a)
	}
}

// The situations of protocol version 2 that exist only from some pi version on.
const (
	sitAgent           = "an Agent session"
	sitResolvesNothing = "a tool whose execute resolves nothing"
	// Before pi 1.4.0 the Agent passes no identity to the stream function (checked with pi
	// 1.3.0 and 1.4.0 through the adapter).
	sitAgentIdentity = "an Agent session with an identity"
)

// protocolTwo draws the features of protocol version 2 a scenario may need, where the target
// has them: stream options (a session id, an identity), an abort fired inside a hook, a tool
// resolving nothing, a hook taking time to return. They are drawn last, so that the rest of a scenario is what it was
// without them.
func (g *gen) protocolTwo() {
	sc := g.sc
	if g.has(sim.FeatureStreamOptions) && g.chance(15, "stream options") {
		sc.StreamOptions = true
		if g.chance(60, "session id") {
			sc.SessionID = "s-1"
		}
		if g.chance(40, "identity") && (sc.Agent == nil || g.target.Has(sitAgentIdentity)) {
			v := "2.0"
			sc.Identity = &loop.Identity{UserAgent: g.pick("user agent", "short", "detailed"), Version: &v}
			if g.chance(30, "no attribution") {
				sc.Identity.NoAttribution = true
			}
		}
	}
	if g.has(sim.FeatureAbortInHook) && g.chance(12, "abort in a hook") {
		g.abortInHook()
	}
	if g.has(sim.FeatureToolResolvesNothing) && g.target.Has(sitResolvesNothing) && g.chance(10, "resolves nothing") {
		ids := sortedKeys(sc.ToolCalls)
		if n := len(sc.Tools) + len(ids); n > 0 {
			nothing := func(b *sim.Behaviour) {
				b.Resolves, b.Result, b.Throw = g.pick("resolves", "undefined", "null"), loop.ToolResult{}, ""
			}
			if k := g.uniform(n, "resolving nothing"); k < len(sc.Tools) {
				nothing(&sc.Tools[k].Behaviour)
			} else {
				b := sc.ToolCalls[ids[k-len(sc.Tools)]]
				nothing(&b)
				sc.ToolCalls[ids[k-len(sc.Tools)]] = b
			}
		}
	}
	if g.has(sim.FeatureWaitingHooks) && g.chance(15, "waiting hook") {
		g.waitingHook()
	}
}

// abortInHook makes one answer of an installed hook fire the run's abort before it returns.
func (g *gen) abortInHook() {
	g.oneHookAnswer("abort", func(abort *bool, _ *sim.Wait) { *abort = true })
}

// waitingHook makes one answer of an installed hook take virtual time to return, or wait for
// the run's abort up to that time.
func (g *gen) waitingHook() {
	w := sim.Wait{Delay: []int64{1, 2, 5, 10, 20, 30}[g.uniform(6, "hook wait")], UntilAbort: g.chance(30, "until abort")}
	g.oneHookAnswer("wait", func(_ *bool, wait *sim.Wait) { *wait = w })
}

// oneHookAnswer applies set to one answer, drawn, of an installed hook; what names the draws.
func (g *gen) oneHookAnswer(what string, set func(abort *bool, wait *sim.Wait)) {
	h := &g.sc.Hooks
	var choices []func()
	if s := h.FinishTurn; s != nil {
		choices = append(choices, scriptAnswer(g, what, s, func(a *sim.FinishAnswer) { set(&a.Abort, &a.Wait) }))
	}
	if s := h.PrepareRequest; s != nil {
		choices = append(choices, scriptAnswer(g, what, s, func(a *sim.PrepareAnswer) { set(&a.Abort, &a.Wait) }))
	}
	if s := h.PrepareNextTurn; s != nil {
		choices = append(choices, scriptAnswer(g, what, s, func(a *sim.PrepareAnswer) { set(&a.Abort, &a.Wait) }))
	}
	if s := h.BeforeToolCall; s != nil {
		choices = append(choices, toolScriptAnswer(g, what, s, func(a *sim.BeforeAnswer) { set(&a.Abort, &a.Wait) }))
	}
	if s := h.AfterToolCall; s != nil {
		choices = append(choices, toolScriptAnswer(g, what, s, func(a *sim.AfterAnswer) { set(&a.Abort, &a.Wait) }))
	}
	if t := h.TransformContext; t != nil {
		choices = append(choices, func() { set(&t.Abort, &t.Wait) })
	}
	if c := h.ConvertToLLM; c != nil {
		choices = append(choices, func() { set(&c.Abort, &c.Wait) })
	}
	if k := h.GetAPIKey; k != nil {
		choices = append(choices, func() { set(&k.Abort, &k.Wait) })
	}
	if len(choices) > 0 {
		choices[g.uniform(len(choices), what+"ing hook")]()
	}
}

// scriptAnswer applies set to one of a script's answers: one by call, else the default.
func scriptAnswer[T any](g *gen, what string, s *sim.Script[T], set func(*T)) func() {
	return func() {
		keys := slices.Sorted(maps.Keys(s.ByCall))
		if len(keys) > 0 && g.chance(70, what+" by call") {
			k := keys[g.uniform(len(keys), what+"ing call")]
			a := s.ByCall[k]
			set(&a)
			s.ByCall[k] = a
			return
		}
		set(&s.Default)
	}
}

// toolScriptAnswer applies set to one of a tool hook's answers: one by tool call, else the
// default.
func toolScriptAnswer[T any](g *gen, what string, s *sim.ToolScript[T], set func(*T)) func() {
	return func() {
		keys := sortedKeys(s.ByToolCall)
		if len(keys) > 0 && g.chance(70, what+" by call") {
			k := keys[g.uniform(len(keys), what+"ing call")]
			a := s.ByToolCall[k]
			set(&a)
			s.ByToolCall[k] = a
			return
		}
		set(&s.Default)
	}
}

// parallelBatch reports whether a response of sc may make a batch of calls run in parallel.
// A listener held at the tool_execution_end of such a batch hangs the reference: its loop
// hands the events of parallel executions to the listener one at a time, where pi's Agent
// passes the other executions' events to its listeners meanwhile. Barriers wait for no such
// event.
func parallelBatch(sc *sim.Scenario) bool {
	responses := sc.Responses
	if sc.ExtraResponse != nil {
		responses = append(slices.Clone(responses), *sc.ExtraResponse)
	}
	for _, r := range responses {
		// (A tool's own executionMode does not decide: the tool may be inactive, or set
		// aside by setTools or a hook's context.)
		if len(loop.ToolCalls(r.Content)) > 1 && sc.ToolExecution != loop.Sequential {
			return true
		}
	}
	return false
}
