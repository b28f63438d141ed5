package explore

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// ShrinkStats says what shrinking did.
type ShrinkStats struct {
	// Tried counts the candidate scenarios run, Accepted those that still failed.
	Tried, Accepted int
	Elapsed         time.Duration
	Before, After   Size
}

func (s ShrinkStats) String() string { return fmt.Sprintf("%s -> %s", s.Before, s.After) }

// Size measures a scenario and its run.
type Size struct {
	Responses int `json:"responses"`
	ToolCalls int `json:"toolCalls"`
	Tools     int `json:"tools"`
	User      int `json:"user"`
	Hooks     int `json:"hooks"`
	// Operations counts an Agent session's operations (Operations), 0 for a loop run.
	Operations int `json:"operations,omitempty"`
	// Requests is the number of provider requests the implementation made.
	Requests int `json:"requests"`
}

// String says the requests the run made, then what the scenario scripts: "1 request made
// (script: 2 responses, 1 tool call, 1 tool, 0 user actions, 0 hooks)", or operations for
// an Agent session's user actions. A script may hold responses the run never asks for.
func (s Size) String() string {
	user := plural(s.User, "user action")
	if s.Operations > 0 {
		user = plural(s.Operations, "operation")
	}
	return fmt.Sprintf("%s made (script: %s, %s, %s, %s, %s)", plural(s.Requests, "request"),
		plural(s.Responses, "response"), plural(s.ToolCalls, "tool call"), plural(s.Tools, "tool"), user, plural(s.Hooks, "hook"))
}

// Operations counts the operations of an Agent session's user (protocol §13.2): one per
// steered or followed-up message, abort or other operation; 0 for a loop run.
func Operations(sc *sim.Scenario) int {
	if sc.Agent == nil {
		return 0
	}
	n := 0
	for _, a := range sc.User {
		n += len(a.Steer) + len(a.FollowUp)
		if a.Abort {
			n++
		}
		if a.Op != nil {
			n++
		}
	}
	return n
}

func (x *explorer) size(sc *sim.Scenario) Size {
	s := Size{Responses: len(sc.Responses), ToolCalls: len(callIDs(sc)), Tools: len(sc.Tools), User: len(sc.User), Operations: Operations(sc)}
	for _, h := range sc.Hooks.Installed() {
		if h != trace.HookSteering && h != trace.HookFollowUp {
			s.Hooks++
		}
	}
	tr := x.simulate(sc, x.impl()).trace
	for _, e := range tr.Entries {
		if e.Kind == trace.KindCall && e.Name == trace.CallStream {
			s.Requests++
		}
	}
	return s
}

// shrink greedily simplifies a failing scenario while it keeps its cause (the signature of its
// first finding) and shows no finding the current scenario does not: it applies the edits,
// keeping each after which the failure persists, until no edit helps or the time is up.
func (x *explorer) shrink(ctx context.Context, sc *sim.Scenario, prob *Problem) (*sim.Scenario, ShrinkStats) {
	start := time.Now()
	stats := ShrinkStats{Before: x.size(sc)}
	cur := sc
	curFile, err := scenarios.Write(cur)
	if err != nil {
		// A scenario the file format cannot hold cannot be copied and edited.
		stats.After, stats.Elapsed = stats.Before, time.Since(start)
		return cur, stats
	}
	deadline := start.Add(x.opts.ShrinkTime)
	from := 0
	for progress := true; progress; {
		progress = false
		// Edits index the scenario as written (the writer leaves out user actions that can
		// never act), which is what each candidate starts from.
		base, err := parseScenario(curFile)
		if err != nil {
			break
		}
		es := edits(base)
		for k := range es {
			if time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
			e := es[(from+k)%len(es)]
			cand, err := parseScenario(curFile)
			if err != nil {
				break
			}
			e(cand)
			normalize(cand)
			file, err := scenarios.Write(cand)
			if err != nil || bytes.Equal(file, curFile) {
				continue
			}
			stats.Tried++
			if p, _ := x.check(cand); prob.keeps(p) {
				cur, curFile, prob = cand, file, p
				stats.Accepted++
				from = (from + k) % len(es)
				progress = true
				break
			}
		}
	}
	stats.After, stats.Elapsed = x.size(cur), time.Since(start)
	return cur, stats
}

func parseScenario(file []byte) (*sim.Scenario, error) {
	f, err := scenarios.Parse("shrink.yaml", "shrink", file)
	if err != nil {
		return nil, err
	}
	return f.Scenario, nil
}

// edit is one simplification, applied to a copy of the scenario.
type edit func(*sim.Scenario)

// edits lists the simplifications of sc, the most drastic first; an Agent session's
// operations go first of all, then its barriers.
func edits(sc *sim.Scenario) []edit {
	return slices.Concat(dropEdits(sc), toolSimplifications(sc), responseSimplifications(sc), userSimplifications(sc), configSimplifications(sc))
}

// dropEdits drops parts of sc: user actions and barriers, responses, hooks and their answers,
// content blocks, tools, messages, prompts and tool-call behaviours.
func dropEdits(sc *sim.Scenario) []edit {
	var out []edit
	add := func(e edit) { out = append(out, e) }
	dropUser := func() {
		for i := range sc.User {
			add(func(s *sim.Scenario) { s.User = slices.Delete(s.User, i, i+1) })
		}
	}
	if sc.Agent != nil {
		dropUser()
		for i := range sc.Agent.Barriers {
			add(func(s *sim.Scenario) { s.Agent.Barriers = slices.Delete(s.Agent.Barriers, i, i+1) })
		}
	}
	for i := len(sc.Responses) - 1; i >= 0; i-- {
		add(func(s *sim.Scenario) { s.Responses = slices.Delete(s.Responses, i, i+1) })
	}
	if sc.ExtraResponse != nil {
		add(func(s *sim.Scenario) { s.ExtraResponse = nil })
	}
	if sc.Agent == nil {
		dropUser()
	}
	out = append(out, hookEdits(sc)...)
	for i, r := range sc.Responses {
		for j := len(r.Content) - 1; j >= 0; j-- {
			add(func(s *sim.Scenario) { s.Responses[i].Content = slices.Delete(s.Responses[i].Content, j, j+1) })
		}
	}
	for i := range sc.Tools {
		add(func(s *sim.Scenario) { s.Tools = slices.Delete(s.Tools, i, i+1) })
	}
	for i := len(sc.Messages) - 1; i >= 0; i-- {
		add(func(s *sim.Scenario) { s.Messages = slices.Delete(s.Messages, i, i+1) })
	}
	for i := len(sc.Prompts) - 1; i >= 0; i-- {
		add(func(s *sim.Scenario) { s.Prompts = slices.Delete(s.Prompts, i, i+1) })
	}
	for _, id := range sortedKeys(sc.ToolCalls) {
		add(func(s *sim.Scenario) { delete(s.ToolCalls, id) })
	}
	return out
}

// toolSimplifications simplifies tools' options, parameters and behaviours, and the
// behaviours scripted per tool call.
func toolSimplifications(sc *sim.Scenario) []edit {
	var out []edit
	add := func(e edit) { out = append(out, e) }
	for i := range sc.Tools {
		add(func(s *sim.Scenario) {
			t := &s.Tools[i]
			t.PrepareArguments, t.ExecutionMode, t.Inactive = nil, "", false
		})
		add(func(s *sim.Scenario) { s.Tools[i].Parameters = map[string]any{"type": "object"} })
		for _, e := range behaviourEdits(sc.Tools[i].Behaviour) {
			add(func(s *sim.Scenario) { e(&s.Tools[i].Behaviour) })
		}
	}
	for _, id := range sortedKeys(sc.ToolCalls) {
		for _, e := range behaviourEdits(sc.ToolCalls[id]) {
			add(func(s *sim.Scenario) { b := s.ToolCalls[id]; e(&b); s.ToolCalls[id] = b })
		}
	}
	return out
}

// responseSimplifications drops responses' oddities, timing and stop reasons, and empties
// tool calls' arguments.
func responseSimplifications(sc *sim.Scenario) []edit {
	var out []edit
	add := func(e edit) { out = append(out, e) }
	for i := range sc.Responses {
		add(func(s *sim.Scenario) { simplifyResponse(&s.Responses[i]) })
		add(func(s *sim.Scenario) { r := &s.Responses[i]; r.Delay, r.ChunkDelay, r.DeltaSize = 0, 0, 0 })
		add(func(s *sim.Scenario) { r := &s.Responses[i]; r.StopReason, r.ErrorMessage = "", "" })
		for j, b := range sc.Responses[i].Content {
			if tc, ok := b.(loop.ToolCall); ok && (len(tc.Arguments) > 0 || tc.ArgumentsError != "") {
				add(func(s *sim.Scenario) {
					s.Responses[i].Content[j] = loop.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: map[string]any{}}
				})
			}
		}
	}
	return out
}

// userSimplifications keeps one message per queued list and moves user actions to the first
// occasion (an Agent's to time 0).
func userSimplifications(sc *sim.Scenario) []edit {
	var out []edit
	add := func(e edit) { out = append(out, e) }
	for i, a := range sc.User {
		if len(a.Steer) > 1 || len(a.FollowUp) > 1 {
			add(func(s *sim.Scenario) {
				u := &s.User[i]
				u.Steer, u.FollowUp = first(u.Steer), first(u.FollowUp)
			})
		}
		if a.On != nil && a.On.Nth > 1 {
			add(func(s *sim.Scenario) { s.User[i].On.Nth = 0 })
		}
		if a.At != nil && *a.At > 0 {
			add(func(s *sim.Scenario) { zero := int64(0); s.User[i].At = &zero })
		}
	}
	if a := sc.Agent; a != nil {
		if a.SystemPrompt != "" {
			add(func(s *sim.Scenario) { s.Agent.SystemPrompt = "" })
		}
		for i, u := range sc.User {
			if u.On != nil {
				add(func(s *sim.Scenario) { zero := int64(0); s.User[i].On, s.User[i].At = nil, &zero })
			}
		}
	}
	return out
}

// configSimplifications resets stream options and the run's configuration to defaults.
func configSimplifications(sc *sim.Scenario) []edit {
	var out []edit
	if sc.StreamOptions {
		out = append(out, func(s *sim.Scenario) { s.StreamOptions, s.SessionID, s.Identity = false, "", nil })
	}
	return append(out,
		func(s *sim.Scenario) {
			s.ThinkingLevel, s.APIKey, s.ToolExecution, s.SteeringMode, s.FollowUpMode = "", "", "", "", ""
		},
		func(s *sim.Scenario) { s.ToolExecution = "" },
		func(s *sim.Scenario) { s.SteeringMode, s.FollowUpMode = "", "" },
	)
}

func first(m []loop.Message) []loop.Message {
	if len(m) > 1 {
		return m[:1]
	}
	return m
}

// hookEdits uninstalls hooks and drops or empties their answers.
func hookEdits(sc *sim.Scenario) []edit {
	h := sc.Hooks
	var out []edit
	add := func(ok bool, e edit) {
		if ok {
			out = append(out, e)
		}
	}
	add(h.FinishTurn != nil, func(s *sim.Scenario) { s.Hooks.FinishTurn = nil })
	add(h.PrepareRequest != nil, func(s *sim.Scenario) { s.Hooks.PrepareRequest = nil })
	add(h.PrepareNextTurn != nil, func(s *sim.Scenario) { s.Hooks.PrepareNextTurn = nil })
	add(h.BeforeToolCall != nil, func(s *sim.Scenario) { s.Hooks.BeforeToolCall = nil })
	add(h.AfterToolCall != nil, func(s *sim.Scenario) { s.Hooks.AfterToolCall = nil })
	add(h.TransformContext != nil, func(s *sim.Scenario) { s.Hooks.TransformContext = nil })
	add(h.ConvertToLLM != nil, func(s *sim.Scenario) { s.Hooks.ConvertToLLM = nil })
	add(h.GetAPIKey != nil, func(s *sim.Scenario) { s.Hooks.GetAPIKey = nil })
	// (An Agent owns its queues: its polls are never switched off.)
	add(!h.NoSteering && sc.Agent == nil, func(s *sim.Scenario) { s.Hooks.NoSteering = true })
	add(!h.NoFollowUp && sc.Agent == nil, func(s *sim.Scenario) { s.Hooks.NoFollowUp = true })
	if h.FinishTurn != nil {
		out = append(out, scriptEdits(sc.Hooks.FinishTurn, func(s *sim.Scenario) *sim.Script[sim.FinishAnswer] { return s.Hooks.FinishTurn })...)
	}
	if h.PrepareRequest != nil {
		out = append(out, scriptEdits(sc.Hooks.PrepareRequest, func(s *sim.Scenario) *sim.Script[sim.PrepareAnswer] { return s.Hooks.PrepareRequest })...)
	}
	if h.PrepareNextTurn != nil {
		out = append(out, scriptEdits(sc.Hooks.PrepareNextTurn, func(s *sim.Scenario) *sim.Script[sim.PrepareAnswer] { return s.Hooks.PrepareNextTurn })...)
	}
	if h.BeforeToolCall != nil {
		out = append(out, toolScriptEdits(sc.Hooks.BeforeToolCall, func(s *sim.Scenario) *sim.ToolScript[sim.BeforeAnswer] { return s.Hooks.BeforeToolCall })...)
	}
	if h.AfterToolCall != nil {
		out = append(out, toolScriptEdits(sc.Hooks.AfterToolCall, func(s *sim.Scenario) *sim.ToolScript[sim.AfterAnswer] { return s.Hooks.AfterToolCall })...)
	}
	return out
}

func scriptEdits[T any](s *sim.Script[T], of func(*sim.Scenario) *sim.Script[T]) []edit {
	var out []edit
	var zero T
	if !reflect.DeepEqual(s.Default, zero) {
		out = append(out, func(sc *sim.Scenario) { of(sc).Default = zero })
	}
	for _, k := range slices.Sorted(maps.Keys(s.ByCall)) {
		out = append(out, func(sc *sim.Scenario) { delete(of(sc).ByCall, k) })
	}
	return out
}

func toolScriptEdits[T any](s *sim.ToolScript[T], of func(*sim.Scenario) *sim.ToolScript[T]) []edit {
	var out []edit
	var zero T
	if !reflect.DeepEqual(s.Default, zero) {
		out = append(out, func(sc *sim.Scenario) { of(sc).Default = zero })
	}
	for _, id := range sortedKeys(s.ByToolCall) {
		out = append(out, func(sc *sim.Scenario) { delete(of(sc).ByToolCall, id) })
	}
	return out
}

// behaviourEdits simplifies a tool behaviour.
func behaviourEdits(b sim.Behaviour) []edit0 {
	var out []edit0
	if b.Duration != 0 {
		out = append(out, func(b *sim.Behaviour) { b.Duration = 0 })
	}
	for i := range b.Updates {
		out = append(out, func(b *sim.Behaviour) { b.Updates = slices.Delete(b.Updates, i, i+1) })
	}
	plain := loop.ToolResult{Content: loop.Text("ok")}
	if b.Throw != "" {
		out = append(out, func(b *sim.Behaviour) { b.Throw, b.Result = "", plain })
	}
	if b.OnAbort != nil {
		out = append(out, func(b *sim.Behaviour) { b.OnAbort = nil })
	}
	if b.Resolves != "" {
		out = append(out, func(b *sim.Behaviour) { b.Resolves, b.Result = "", plain })
	}
	if b.Throw == "" && !reflect.DeepEqual(b.Result, plain) {
		out = append(out, func(b *sim.Behaviour) { b.Result = plain })
	}
	return out
}

// edit0 simplifies a behaviour in place.
type edit0 func(*sim.Behaviour)

// simplifyResponse drops a response's oddities: usage, missing start or done, failures.
func simplifyResponse(r *sim.Response) {
	r.Usage = nil
	r.NoStart, r.NoDone, r.IgnoresAbort, r.ErrorEvent = false, false, false, false
	r.OpenError, r.StreamError = "", ""
}

// normalize keeps a scenario valid after an edit: scripts may refer only to tool calls some
// response makes (once), hook answers only to calls that can happen, triggers only to what
// exists, hook contexts only to defined tools; updates come no later than their settling.
func normalize(sc *sim.Scenario) {
	count := map[string]int{}
	for _, id := range callIDs(sc) {
		count[id]++
	}
	made := func(id string) bool { return count[id] == 1 }
	defined := map[string]bool{}
	for _, t := range sc.Tools {
		defined[t.Name] = true
	}
	dropUnmadeCallScripts(sc, made)
	dropImpossibleHookAnswers(sc, defined)
	dropImpossibleUserActions(sc, made, defined)
	fix := func(b *sim.Behaviour) {
		for i := range b.Updates {
			b.Updates[i].At = min(b.Updates[i].At, b.Duration)
		}
	}
	for i := range sc.Tools {
		fix(&sc.Tools[i].Behaviour)
	}
	for id, b := range sc.ToolCalls {
		fix(&b)
		sc.ToolCalls[id] = b
	}
}

// dropUnmadeCallScripts drops the behaviours and tool-hook answers of tool calls no response
// makes exactly once.
func dropUnmadeCallScripts(sc *sim.Scenario, made func(string) bool) {
	for id := range sc.ToolCalls {
		if !made(id) {
			delete(sc.ToolCalls, id)
		}
	}
	if h := sc.Hooks.BeforeToolCall; h != nil {
		maps.DeleteFunc(h.ByToolCall, func(id string, _ sim.BeforeAnswer) bool { return !made(id) })
	}
	if h := sc.Hooks.AfterToolCall; h != nil {
		maps.DeleteFunc(h.ByToolCall, func(id string, _ sim.AfterAnswer) bool { return !made(id) })
	}
}

// dropImpossibleHookAnswers drops turn hooks' answers to calls beyond the responses and the
// undefined tools from their contexts.
func dropImpossibleHookAnswers(sc *sim.Scenario, defined map[string]bool) {
	n, unbounded := len(sc.Responses), sc.ExtraResponse != nil
	within := func(limit int) func(int) bool { return func(k int) bool { return unbounded || k <= limit } }
	if h := sc.Hooks.FinishTurn; h != nil {
		maps.DeleteFunc(h.ByCall, func(k int, _ sim.FinishAnswer) bool { return !within(n)(k) })
	}
	keepDefined := func(c *sim.ContextChange) {
		if c != nil && c.Tools != nil {
			c.Tools = slices.DeleteFunc(slices.Clone(c.Tools), func(name string) bool { return !defined[name] })
		}
	}
	if h := sc.Hooks.PrepareRequest; h != nil {
		maps.DeleteFunc(h.ByCall, func(k int, _ sim.PrepareAnswer) bool { return !within(n)(k) })
		keepDefined(h.Default.Context)
		for k, a := range h.ByCall {
			keepDefined(a.Context)
			h.ByCall[k] = a
		}
	}
	if h := sc.Hooks.PrepareNextTurn; h != nil {
		maps.DeleteFunc(h.ByCall, func(k int, _ sim.PrepareAnswer) bool { return !within(n - 1)(k) })
		keepDefined(h.Default.Context)
		for k, a := range h.ByCall {
			keepDefined(a.Context)
			h.ByCall[k] = a
		}
	}
}

// dropImpossibleUserActions drops the barriers a parallel batch cannot reach and the user
// actions whose trigger or barrier no longer exists, and undefined tools from setTools.
func dropImpossibleUserActions(sc *sim.Scenario, made func(string) bool, defined map[string]bool) {
	n, unbounded := len(sc.Responses), sc.ExtraResponse != nil
	installed := sc.Hooks.Installed()
	barriers := map[string]bool{}
	if a := sc.Agent; a != nil {
		if parallelBatch(sc) {
			a.Barriers = slices.DeleteFunc(a.Barriers, func(b sim.Barrier) bool { return b.Event == loop.ToolExecutionEnd })
		}
		for _, b := range a.Barriers {
			barriers[b.ID] = true
		}
	}
	sc.User = slices.DeleteFunc(sc.User, func(a sim.UserAction) bool {
		t := a.On
		switch {
		case a.Op != nil && a.Op.Op == trace.OpRelease && !barriers[a.Op.Barrier]:
			return true
		case a.Op != nil && a.Op.Op == trace.OpSetTools:
			a.Op.Tools = slices.DeleteFunc(a.Op.Tools, func(name string) bool { return !defined[name] })
		}
		switch {
		case t == nil:
			return false
		case t.ToolCallID != "":
			return !made(t.ToolCallID)
		case t.Request > 0:
			return !unbounded && t.Request > n
		case t.Hook != "":
			return !slices.Contains(installed, t.Hook)
		}
		return false
	})
}
