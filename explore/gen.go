package explore

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// Scenario generates whole scenarios: tools (0–4, some sequential, some inactive, schemas with
// a required string or number), installed hooks with scripted answers, a provider script (text,
// thinking, tool calls to known and unknown tools with valid, coercible and invalid arguments,
// every stop reason, usage, delays, delta sizes, the odd failing stream), tool behaviours
// (durations, updates, throws, isError, terminate, abort handling), user actions (steer,
// follow-up and abort at times or on triggers), and run or continue.
//
// Every scenario is valid for the loader (scenarios.Write can write it) and finite: the
// provider script is short, an extra response never calls tools, and finishTurn does not
// answer continue by default when an extra response would answer every request. A run may
// still exceed the script and fail; that is legal.
func Scenario() *rapid.Generator[*sim.Scenario] { return scenarioFor(Target{}) }

// scenarioFor generates scenarios an implementation can be given: only hooks it declares, and
// only situations its tracked pi version has (see versionedSituations).
func scenarioFor(target Target) *rapid.Generator[*sim.Scenario] {
	return rapid.Custom(func(t *rapid.T) *sim.Scenario { return (&gen{t: t, target: target}).scenario() })
}

// Target is what an implementation under test declares in its hello: the hooks it supports
// and the pi version whose behaviour it tracks. The zero Target supports everything.
type Target struct {
	// Hooks lists the supported hooks by pi's names (sim.Hook*); nil means every hook. Without
	// getSteeringMessages (getFollowUpMessages), scenarios turn steering (follow-up) off and
	// the simulated user never steers (follows up).
	Hooks []string
	// Tracks is the pi version the implementation claims; "" means the newest.
	Tracks string
	// Lacks lists the optional features (sim.Features) it does not support: no scenario
	// needs one of them (sim.NeededFeatures).
	Lacks []string
	// Follows lists pi's conventions it says it follows (docs/SEMANTICS.md, Levels), which
	// --level core judges after all; nil means none.
	Follows []string
	// Level is the level it is judged at: at levels.Core no scenario needs one of pi's
	// conventions (arguments are valid as given, not coerced).
	Level levels.Level
}

// Supports reports whether the target declares hook name.
func (t Target) Supports(name string) bool { return t.Hooks == nil || slices.Contains(t.Hooks, name) }

// Has reports whether a situation exists in the tracked pi version (true for unknown names).
func (t Target) Has(situation string) bool {
	for _, s := range versionedSituations {
		if s.Name == situation {
			return t.Tracks == "" || !conformance.VersionLess(t.Tracks, s.Since)
		}
	}
	return true
}

// versionedSituation is a kind of scenario that exists only from some pi version on.
type versionedSituation struct {
	Name  string
	Since string // the pi version it exists from, as the curated scenarios pinning it say
}

// The situations the generator makes only for an implementation tracking their version or a
// later one.
const (
	sitPrepareArguments = "a tool with prepareArguments"
	sitLengthToolCalls  = "tool calls in a response stopped at the output token limit"
	sitPrepareNextTurn  = "the prepareNextTurn hook"
	sitFinishTurn       = "the finishTurn hook"
	sitPrepareRequest   = "the prepareRequest hook"
	sitDeclarations     = "tool declarations in the starting context"
	sitIsErrorResult    = "a tool result with isError"
	sitStructured       = "a tool result with structuredContent"
	sitAbortWithTools   = "an abort in a run whose responses call tools"
)

// versionedSituations lists every version-dependent situation with its `since`, from the curated
// suite's tags and docs/VERSIONS.md (prepareNextTurn counts from 0.84, where it took its
// present place; before, it ran right after turn_end). An abort in a run that calls tools
// exists in every release the reference can be; it behaved differently before 1.6.0
// (abort-first, abort-completes-batch), which the reference at those releases does: explore
// against pi 0.87.1, 1.3.0 and 1.5.2 at their own versions found no divergence in 3,000
// runs each (and 0.87.1 in 10,000 more), 5 Dec 2026.
var versionedSituations = []versionedSituation{
	{sitPrepareArguments, "0.80"},
	{sitLengthToolCalls, "0.80"},
	{sitPrepareNextTurn, "0.84"},
	{sitFinishTurn, "0.87"},
	{sitPrepareRequest, "0.87"},
	{sitDeclarations, "0.87"},
	{sitIsErrorResult, "0.99.1"},
	{sitStructured, "0.99.1"},
	{sitAbortWithTools, "0.87"},
	{sitAgent, "0.87.1"},
	{sitResolvesNothing, "0.99.1"},
	{sitAgentIdentity, "1.4.0"},
}

// generatorFor is the scenario of a run seed for target, named after the seed: an Agent session
// for one run in three when the target has them (isAgentRun), else a loop run.
func generatorFor(target Target) func(seed uint64) *sim.Scenario {
	g, _ := generatorOf(target, EntryAny)
	return g
}

// generatorOf is generatorFor making only runs of entry (EntryAny, EntryLoop or EntryAgent); an
// error when the target has no Agent sessions and entry asks for them.
func generatorOf(target Target, entry string) (func(seed uint64) *sim.Scenario, error) {
	loopGen, agentGen := scenarioFor(target), agentSessionFor(target)
	agent := func(uint64) bool { return false }
	switch {
	case entry == EntryAgent && !target.HasAgent():
		return nil, fmt.Errorf("no Agent session can be generated: %s", target.whyNoAgent())
	case entry == EntryAgent:
		agent = func(uint64) bool { return true }
	case entry == EntryAny && target.HasAgent():
		agent = isAgentRun
	}
	return func(seed uint64) *sim.Scenario {
		g := loopGen
		if agent(seed) {
			g = agentGen
		}
		sc := g.Example(int(seed))
		sc.Name = fmt.Sprintf("seed-%d", seed)
		return sc
	}, nil
}

// HasAgent reports whether the target can be given Agent sessions: it does not lack the
// agent feature and tracks a pi that has the Agent as the protocol drives it.
func (t Target) HasAgent() bool {
	return !slices.Contains(t.Lacks, sim.FeatureAgent) && t.Has(sitAgent)
}

func (t Target) whyNoAgent() string {
	if slices.Contains(t.Lacks, sim.FeatureAgent) {
		return "the implementation lacks the agent feature (it speaks protocol 1, or lists agent in capabilities.lacks)"
	}
	return fmt.Sprintf("it tracks pi %s, older than %s, the first the Agent scenarios pin", t.Tracks, sinceOf(sitAgent))
}

// sinceOf is the pi version a situation exists from.
func sinceOf(situation string) string {
	for _, s := range versionedSituations {
		if s.Name == situation {
			return s.Since
		}
	}
	return ""
}

// gen draws one scenario.
type gen struct {
	t        *rapid.T
	target   Target
	sc       *sim.Scenario
	ids      []string // tool-call ids, in order
	repeated map[string]bool
	calls    int
}

// scriptable lists the ids scripts may refer to: those used once.
func (g *gen) scriptable() []string {
	var out []string
	for _, id := range g.ids {
		if !g.repeated[id] {
			out = append(out, id)
		}
	}
	return out
}

// uniform draws an integer in [0, n) with equal chances. rapid's integer generators favour
// small values and its samplers the first options, which would skew every probability below;
// this one is made of fair bits, each of which still shrinks towards 0.
func (g *gen) uniform(n int, label string) int {
	if n <= 1 {
		return 0
	}
	width := bits.Len(uint(n - 1))
	for try := 0; ; try++ {
		v := 0
		for range width {
			v <<= 1
			if bit.Draw(g.t, label) {
				v |= 1
			}
		}
		if v < n {
			return v
		}
		if try == 8 {
			return v % n
		}
	}
}

var bit = rapid.Bool()

func (g *gen) chance(percent int, label string) bool { return g.uniform(100, label) < percent }

func (g *gen) pick(label string, options ...string) string {
	return options[g.uniform(len(options), label)]
}

func (g *gen) intIn(lo, hi int, label string) int { return lo + g.uniform(hi-lo+1, label) }

// ms draws a virtual duration, one of a few round values.
func (g *gen) ms(label string) int64 {
	return []int64{0, 0, 1, 2, 5, 10, 20, 30}[g.uniform(8, label)]
}

var toolNames = []string{"read", "write", "grep", "echo"}

// unknownTool is the name responses call that no tool defines.
const unknownTool = "ghost"

var thinkingLevels = []string{"minimal", "low", "medium", "high", "off"}

func (g *gen) scenario() *sim.Scenario {
	g.sc = &sim.Scenario{Name: "generated"}
	g.repeated = map[string]bool{}
	sc := g.sc
	for i, name := range toolNames[:g.intIn(0, len(toolNames), "tools")] {
		sc.Tools = append(sc.Tools, g.tool(i, name))
	}
	n := g.intIn(1, 4, "responses")
	for i := range n {
		sc.Responses = append(sc.Responses, g.response(i, n))
	}
	if g.chance(50, "extra") {
		r := sim.Response{Content: loop.Text("extra")}
		sc.ExtraResponse = &r
	}
	g.toolCalls()
	g.config()
	g.hooks()
	g.entry()
	g.user()
	g.protocolTwo()
	return sc
}

func (g *gen) tool(i int, name string) sim.ToolSpec {
	t := sim.ToolSpec{Name: name, Description: "the " + name + " tool", Parameters: map[string]any{"type": "object"}}
	switch g.intIn(0, 2, "schema") {
	case 1:
		t.Parameters = map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}
	case 2:
		t.Parameters = map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number"}}, "required": []any{"n"}}
	}
	if g.chance(15, "sequential tool") {
		t.ExecutionMode = loop.Sequential
	}
	if i > 0 && g.chance(20, "inactive") {
		t.Inactive = true
	}
	if g.target.Has(sitPrepareArguments) && g.has(sim.FeaturePrepareArguments) && g.chance(8, "prepareArguments") {
		t.PrepareArguments = map[string]any{"path": "/prepared"}
	}
	t.Behaviour = g.behaviour(name)
	return t
}

func (g *gen) result(text string) loop.ToolResult {
	r := loop.ToolResult{Content: loop.Text(text)}
	switch g.intIn(0, 9, "result kind") {
	case 0:
		r.IsError = g.target.Has(sitIsErrorResult)
	case 1:
		r.Details = map[string]any{"lines": float64(g.intIn(0, 3, "lines"))}
	case 2:
		r.Content = nil
	case 3:
		if g.target.Has(sitStructured) && g.has(sim.FeatureStructuredContent) {
			r.StructuredContent = map[string]any{"ok": true}
		}
	}
	if g.chance(25, "terminate") {
		r.Terminate = true
	}
	return r
}

func (g *gen) behaviour(name string) sim.Behaviour {
	b := sim.Behaviour{Duration: g.ms("duration"), Result: g.result(name + " result")}
	for k := range g.intIn(0, 2, "updates") {
		at := min(g.ms("update at"), b.Duration)
		b.Updates = append(b.Updates, sim.Update{At: at, Result: loop.ToolResult{Content: loop.Text(fmt.Sprintf("%s %d", name, k+1))}})
	}
	// In time order: the simulator mishandles updates listed out of order when an abort
	// settles the tool early (a panic; reported to the sim owners).
	slices.SortStableFunc(b.Updates, func(x, y sim.Update) int { return int(x.At - y.At) })
	if g.chance(8, "throw") {
		// A behaviour that throws has no result (the loader rejects both at once).
		b.Throw, b.Result = name+" failed", loop.ToolResult{}
	}
	if g.chance(15, "onAbort") {
		a := &sim.AbortReaction{Result: loop.ToolResult{Content: loop.Text("stopped"), IsError: true}}
		if g.chance(50, "abort throws") {
			a = &sim.AbortReaction{Throw: "interrupted"}
		}
		b.OnAbort = a
	}
	return b
}

func (g *gen) newID() string {
	g.calls++
	id := fmt.Sprintf("c%d", g.calls)
	g.ids = append(g.ids, id)
	return id
}

// arguments draws arguments for a call of tool name: valid, coercible, wrong or missing
// (valid only at core level).
func (g *gen) arguments(name string) map[string]any {
	var schema map[string]any
	if i := slices.IndexFunc(g.sc.Tools, func(t sim.ToolSpec) bool { return t.Name == name }); i >= 0 {
		schema = g.sc.Tools[i].Parameters
	}
	props, _ := schema["properties"].(map[string]any)
	if g.target.Level == levels.Core { // validating and coercing are pi's conventions
		switch {
		case props["path"] != nil:
			return map[string]any{"path": "a.txt"}
		case props["n"] != nil:
			return map[string]any{"n": float64(7)}
		}
	}
	switch {
	case props["path"] != nil:
		switch g.intIn(0, 3, "path args") {
		case 0:
			return map[string]any{}
		case 1:
			return map[string]any{"path": float64(5)}
		}
		return map[string]any{"path": "a.txt"}
	case props["n"] != nil:
		switch g.intIn(0, 3, "n args") {
		case 0:
			return map[string]any{"n": "42"}
		case 1:
			return map[string]any{"n": "many"}
		}
		return map[string]any{"n": float64(7)}
	}
	if g.chance(30, "some args") {
		return map[string]any{"q": "x"}
	}
	return map[string]any{}
}

func (g *gen) response(i, n int) sim.Response {
	var r sim.Response
	if g.chance(20, "thinking") {
		r.Content = append(r.Content, loop.ThinkingContent{Thinking: "let me think"})
	}
	if g.chance(60, "text") {
		r.Content = append(r.Content, loop.TextContent{Text: fmt.Sprintf("answer %d", i+1)})
	}
	earlier := len(g.ids)
	if i < n-1 || g.chance(30, "last calls tools") {
		for range g.intIn(0, 3, "calls") {
			name := unknownTool
			if len(g.sc.Tools) > 0 && !g.chance(10, "unknown tool") {
				name = g.sc.Tools[g.intIn(0, len(g.sc.Tools)-1, "called tool")].Name
			}
			id := ""
			if earlier > 0 && g.chance(5, "repeated id") {
				// An id an earlier response used; no script may then refer to it. (Never one of
				// this response: the reference hangs on two calls with one id in a batch.)
				id = g.ids[g.intIn(0, earlier-1, "repeated")]
				if slices.ContainsFunc(loop.ToolCalls(r.Content), func(c loop.ToolCall) bool { return c.ID == id }) {
					id = g.newID()
				} else {
					g.repeated[id] = true
				}
			} else {
				id = g.newID()
			}
			tc := loop.ToolCall{ID: id, Name: name, Arguments: g.arguments(name)}
			if g.has(sim.FeatureArgumentsError) && g.chance(5, "argumentsError") {
				tc.Arguments, tc.ArgumentsError = map[string]any{}, "Unexpected end of JSON input"
			}
			r.Content = append(r.Content, tc)
		}
	}
	switch g.intIn(0, 19, "stop") {
	case 0, 1:
		if len(loop.ToolCalls(r.Content)) == 0 || g.target.Has(sitLengthToolCalls) {
			r.StopReason = loop.StopLength
		}
	case 2:
		r.StopReason = loop.StopError
		r.ErrorMessage = "overloaded"
	case 3:
		r.StopReason = loop.StopAborted
		r.ErrorMessage = "aborted by the provider"
	case 4:
		r.StopReason = loop.StopStop
	case 5:
		r.StopReason = loop.StopToolUse
	}
	if g.chance(20, "usage") {
		r.Usage = &loop.Usage{Input: int64(g.intIn(1, 100, "input")), Output: int64(g.intIn(1, 50, "output")), TotalTokens: 150,
			Cost: loop.Cost{Input: 0.25, Output: 0.5, Total: 0.75}}
	}
	r.Delay = g.ms("delay")
	if g.chance(30, "chunked") {
		r.ChunkDelay = g.ms("chunkDelay")
		r.DeltaSize = g.intIn(0, 6, "deltaSize")
	}
	switch g.intIn(0, 44, "stream oddity") {
	case 0:
		r.NoStart = true
	case 1:
		r.NoDone = true
	case 2:
		if g.has(sim.FeatureThrowingStreams) {
			r.OpenError = "connection refused"
		}
	case 3:
		if g.has(sim.FeatureThrowingStreams) {
			r.StreamError = "stream reset"
		}
	case 4, 5:
		r.IgnoresAbort = true
	case 6:
		r.ErrorEvent = true
	}
	return r
}

// toolCalls scripts some calls individually.
func (g *gen) toolCalls() {
	for _, id := range g.scriptable() {
		if g.chance(15, "per-call behaviour") {
			if g.sc.ToolCalls == nil {
				g.sc.ToolCalls = map[string]sim.Behaviour{}
			}
			g.sc.ToolCalls[id] = g.behaviour(id)
		}
	}
}

func (g *gen) config() {
	sc := g.sc
	if g.chance(30, "thinking level") {
		sc.ThinkingLevel = loop.ThinkingLevel(g.pick("level", thinkingLevels...))
	}
	if g.chance(25, "sequential config") {
		sc.ToolExecution = loop.Sequential
	}
	if g.chance(25, "steering all") {
		sc.SteeringMode = loop.All
	}
	if g.chance(25, "follow-up all") {
		sc.FollowUpMode = loop.All
	}
	if g.chance(10, "api key") {
		sc.APIKey = "sk-config"
	}
}

// toolSubset draws a subset of the tool names, for a hook's context change.
func (g *gen) toolSubset() []string {
	out := []string{}
	for _, t := range g.sc.Tools {
		if g.chance(50, "keep tool "+t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

func (g *gen) contextChange() *sim.ContextChange {
	c := &sim.ContextChange{}
	if g.chance(60, "change tools") {
		c.Tools = g.toolSubset()
	}
	if g.chance(40, "keep last") {
		c.KeepLast = g.intIn(1, 4, "keepLast")
	}
	return c
}

var altModel = loop.Model{ID: "faux-2", API: "faux", Provider: "faux"}

// hooks draws the scenario's hook scripts. Kept whole: one draw per hook, a table.
func (g *gen) hooks() {
	sc, h := g.sc, &g.sc.Hooks
	n := len(sc.Responses)
	if g.allowed(trace.HookFinishTurn, sitFinishTurn) && g.chance(35, "finishTurn") {
		s := &sim.Script[sim.FinishAnswer]{ByCall: map[int]sim.FinishAnswer{}}
		choices := []string{"none", "none", "end"}
		if sc.ExtraResponse == nil {
			choices = append(choices, "continue")
		}
		s.Default = finish(g.pick("finish default", choices...))
		for k := 1; k <= n; k++ {
			if g.chance(30, "finish answer") {
				a := finish(g.pick("finish", "none", "end", "continue"))
				if g.has(sim.FeatureThrowingHooks) && g.chance(5, "finish throws") {
					a.Throw = "finishTurn failed"
				}
				s.ByCall[k] = a
			}
		}
		h.FinishTurn = s
	}
	if g.allowed(trace.HookPrepareRequest, sitPrepareRequest) && g.chance(30, "prepareRequest") {
		s := &sim.Script[sim.PrepareAnswer]{ByCall: map[int]sim.PrepareAnswer{}}
		for k := 1; k <= n; k++ {
			if !g.chance(40, "prepareRequest answer") {
				continue
			}
			var a sim.PrepareAnswer
			if g.chance(40, "request context") {
				a.Context = g.contextChange()
			}
			if g.chance(25, "request model") {
				a.Model = &altModel
			}
			if g.chance(25, "request level") {
				a.ThinkingLevel = loop.ThinkingLevel(g.pick("request level", thinkingLevels...))
			}
			if g.chance(10, "request messages") {
				a.Messages = []loop.Message{&loop.UserMessage{Text: "ignored"}}
			}
			if g.has(sim.FeatureThrowingHooks) && g.chance(4, "prepareRequest throws") {
				a.Throw = "prepareRequest failed"
			}
			s.ByCall[k] = a
		}
		h.PrepareRequest = s
	}
	if n > 1 && g.allowed(trace.HookPrepareNextTurn, sitPrepareNextTurn) && g.chance(30, "prepareNextTurn") {
		s := &sim.Script[sim.PrepareAnswer]{ByCall: map[int]sim.PrepareAnswer{}}
		for k := 1; k < n; k++ {
			if !g.chance(50, "prepareNextTurn answer") {
				continue
			}
			var a sim.PrepareAnswer
			if g.chance(50, "turn context") {
				a.Context = g.contextChange()
			}
			if g.chance(30, "turn messages") {
				a.Messages = []loop.Message{&loop.UserMessage{Text: "summary so far"}}
			}
			if g.chance(20, "turn model") {
				a.Model = &altModel
			}
			if g.chance(20, "turn level") {
				a.ThinkingLevel = loop.ThinkingLevel(g.pick("turn level", thinkingLevels...))
			}
			if g.has(sim.FeatureThrowingHooks) && g.chance(4, "prepareNextTurn throws") {
				a.Throw = "prepareNextTurn failed"
			}
			s.ByCall[k] = a
		}
		h.PrepareNextTurn = s
	}
	ids := g.scriptable()
	if len(ids) > 0 && g.target.Supports(trace.HookBeforeToolCall) && g.chance(30, "beforeToolCall") {
		s := &sim.ToolScript[sim.BeforeAnswer]{ByToolCall: map[string]sim.BeforeAnswer{}}
		if g.chance(10, "block by default") {
			s.Default = sim.BeforeAnswer{Block: true}
		}
		for _, id := range ids {
			switch g.intIn(0, 9, "before "+id) {
			case 0:
				s.ByToolCall[id] = sim.BeforeAnswer{Block: true, Reason: "not allowed"}
			case 1:
				s.ByToolCall[id] = sim.BeforeAnswer{Block: true, Terminate: true}
			case 2:
				if g.has(sim.FeatureArgumentMutation) {
					s.ByToolCall[id] = sim.BeforeAnswer{SetArgs: map[string]any{"path": float64(1)}}
				}
			case 3:
				if g.has(sim.FeatureThrowingHooks) {
					s.ByToolCall[id] = sim.BeforeAnswer{Throw: "beforeToolCall failed"}
				}
			}
		}
		h.BeforeToolCall = s
	}
	if len(ids) > 0 && g.target.Supports(trace.HookAfterToolCall) && g.chance(30, "afterToolCall") {
		s := &sim.ToolScript[sim.AfterAnswer]{ByToolCall: map[string]sim.AfterAnswer{}}
		yes, no := true, false
		for _, id := range ids {
			switch g.intIn(0, 9, "after "+id) {
			case 0:
				s.ByToolCall[id] = sim.AfterAnswer{Content: loop.Text("replaced"), Details: map[string]any{"by": "hook"}}
			case 1:
				s.ByToolCall[id] = sim.AfterAnswer{Terminate: &yes}
			case 2:
				s.ByToolCall[id] = sim.AfterAnswer{Terminate: &no, IsError: &yes}
			case 3:
				if g.has(sim.FeatureThrowingHooks) {
					s.ByToolCall[id] = sim.AfterAnswer{Throw: "afterToolCall failed"}
				}
			case 4:
				s.ByToolCall[id] = sim.AfterAnswer{IsError: &no}
			case 5:
				s.ByToolCall[id] = sim.AfterAnswer{Usage: &loop.Usage{Input: 3, Output: 4, TotalTokens: 7}}
			}
		}
		h.AfterToolCall = s
	}
	if g.target.Supports(trace.HookTransformContext) && g.chance(10, "transformContext") {
		h.TransformContext = &sim.TransformScript{KeepLast: g.intIn(0, 3, "transform keepLast")}
		if g.has(sim.FeatureThrowingHooks) && g.chance(10, "transform throws") {
			h.TransformContext.Throw = "transformContext failed"
		}
	}
	if g.target.Supports(trace.HookConvertToLLM) && g.chance(10, "convertToLlm") {
		h.ConvertToLLM = &sim.ConvertScript{KeepCustomAsUser: g.chance(50, "custom as user") && g.has(sim.FeatureCustomMessages)}
		if g.has(sim.FeatureThrowingHooks) && g.chance(10, "convert throws") {
			h.ConvertToLLM.Throw = "convertToLlm failed"
		}
	}
	if g.target.Supports(trace.HookGetAPIKey) && g.chance(10, "getApiKey") {
		h.GetAPIKey = &sim.KeyScript{Key: "sk-hook"}
	}
	h.NoSteering = g.chance(8, "no steering") || !g.target.Supports(trace.HookSteering)
	h.NoFollowUp = g.chance(8, "no follow-up") || !g.target.Supports(trace.HookFollowUp)
}

// has reports whether the target supports an optional feature (sim.Features).
func (g *gen) has(feature string) bool { return !slices.Contains(g.target.Lacks, feature) }

// allowed reports whether the target supports hook and has its situation.
func (g *gen) allowed(hook, situation string) bool {
	return g.target.Supports(hook) && g.target.Has(situation)
}

func finish(s string) sim.FinishAnswer {
	switch s {
	case "end":
		return sim.FinishAnswer{Action: loop.DecisionEnd}
	case "continue":
		return sim.FinishAnswer{Action: loop.DecisionContinue}
	}
	return sim.FinishAnswer{}
}

// entry draws run with prompts, or continue from a context.
func (g *gen) entry() {
	sc := g.sc
	if g.chance(25, "prior context") {
		sc.Messages = append(sc.Messages, &loop.UserMessage{Text: "earlier question"},
			&loop.AssistantMessage{Content: loop.Text("earlier answer"), API: "faux", Provider: "faux", Model: "faux-1", StopReason: loop.StopStop})
		if len(sc.Tools) > 0 && g.target.Has(sitDeclarations) && g.target.Level != levels.Core && g.chance(50, "declared earlier") {
			// An earlier declaration, possibly of another definition than the executable one.
			t := sc.Tools[0]
			desc := t.Description
			if g.chance(50, "changed definition") {
				desc = "an older " + t.Name
			}
			sc.Messages = slices.Insert(sc.Messages, 0, loop.Message(&loop.SystemMessage{Text: "you are helpful",
				ToolsAdded: []loop.ToolDeclaration{{Name: t.Name, Description: desc, Parameters: t.Parameters}}}))
		}
		if g.has(sim.FeatureCustomMessages) && g.chance(20, "custom in context") {
			sc.Messages = append(sc.Messages, &loop.CustomMessage{Fields: map[string]any{"role": "note", "content": "a note", "timestamp": float64(0)}})
		}
	}
	if g.has(sim.FeatureContinue) && g.chance(20, "continue") {
		sc.Continue = true
		switch g.intIn(0, 9, "continue from") {
		case 0: // an empty or assistant-ended context: the run is refused
		case 1:
			sc.Messages = append(sc.Messages, &loop.AssistantMessage{Content: loop.Text("last"), StopReason: loop.StopStop})
		default:
			sc.Messages = append(sc.Messages, &loop.UserMessage{Text: "please retry"})
		}
		return
	}
	sc.Prompts = []loop.Message{&loop.UserMessage{Text: "do the task"}}
	several := g.has(sim.FeatureSeveralPrompts)
	if several && g.chance(15, "second prompt") {
		sc.Prompts = append(sc.Prompts, &loop.UserMessage{Blocks: loop.Text("and be quick")})
	}
	if several && g.chance(10, "system prompt") {
		sc.Prompts = slices.Insert(sc.Prompts, 0, loop.Message(&loop.SystemMessage{Text: "be brief"}))
	}
	if several && g.has(sim.FeatureCustomMessages) && g.chance(10, "custom prompt") {
		sc.Prompts = append(sc.Prompts, &loop.CustomMessage{Fields: map[string]any{"role": "note", "content": "remember", "timestamp": float64(0)}})
	}
}

// user draws the simulated user's actions.
func (g *gen) user() {
	sc := g.sc
	installed := sc.Hooks.Installed()
	if g.target.Level == levels.Core { // when the queues are polled is pi's convention
		installed = slices.DeleteFunc(slices.Clone(installed), func(h string) bool {
			return h == trace.HookSteering || h == trace.HookFollowUp
		})
	}
	for k := range g.intIn(0, 3, "user actions") {
		var a sim.UserAction
		if g.chance(40, "timed") {
			at := g.ms("at")
			a.At = &at
		} else {
			tr := &sim.Trigger{}
			switch g.intIn(0, 4, "trigger") {
			case 0:
				if ids := g.scriptable(); len(ids) > 0 {
					tr.Event = loop.EventType(g.pick("trigger tool event", "tool_execution_start", "tool_execution_update", "tool_execution_end"))
					tr.ToolCallID = ids[g.intIn(0, len(ids)-1, "trigger id")]
					break
				}
				fallthrough
			case 1:
				events := []string{"turn_end", "message_end", "turn_start", "tool_execution_end", "message_update"}
				if g.target.Level == levels.Core { // pi's declaration messages have message_end events too
					events[1] = "turn_end"
				}
				tr.Event = loop.EventType(g.pick("trigger event", events...))
			case 2:
				tr.Request = g.intIn(1, len(sc.Responses), "trigger request")
			default:
				if len(installed) == 0 {
					tr.Event = loop.TurnEnd
					break
				}
				tr.Hook = g.pick("trigger hook", installed...)
			}
			if g.chance(25, "nth") {
				tr.Nth = g.intIn(1, 3, "nth")
			}
			a.On = tr
		}
		// Only actions the scenario allows: no steering with steering off, no follow-up with
		// follow-up off, no abort among tool calls before the version that settled its rules.
		canAbort := g.target.Has(sitAbortWithTools) || len(callIDs(sc)) == 0
		kinds := []string{"abort", "steer", "steer", "steer", "steer", "follow-up", "follow-up", "follow-up", "follow-up", "follow-up"}
		kind := kinds[g.uniform(len(kinds), "action")]
		allowed := map[string]bool{"abort": canAbort, "steer": !sc.Hooks.NoSteering, "follow-up": !sc.Hooks.NoFollowUp}
		if !allowed[kind] {
			kind = ""
			for _, k := range []string{"steer", "follow-up", "abort"} {
				if allowed[k] {
					kind = k
					break
				}
			}
		}
		switch kind {
		case "abort":
			a.Abort = true
		case "steer":
			a.Steer = g.userMessages(fmt.Sprintf("steer %d", k+1))
		case "follow-up":
			a.FollowUp = g.userMessages(fmt.Sprintf("follow up %d", k+1))
		default:
			continue
		}
		sc.User = append(sc.User, a)
	}
}

func (g *gen) userMessages(text string) []loop.Message {
	out := []loop.Message{&loop.UserMessage{Text: text}}
	if g.chance(20, "two messages") {
		out = append(out, &loop.UserMessage{Text: text + " (more)"})
	}
	return out
}

// ids returns the tool-call ids of a scenario's responses, in order.
func callIDs(sc *sim.Scenario) []string {
	var out []string
	add := func(r sim.Response) {
		for _, c := range loop.ToolCalls(r.Content) {
			out = append(out, c.ID)
		}
	}
	for _, r := range sc.Responses {
		add(r)
	}
	if sc.ExtraResponse != nil {
		add(*sc.ExtraResponse)
	}
	return out
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
