package sim

import (
	"bytes"
	"slices"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// The optional features a scenario may need beyond installing hooks (docs/SEMANTICS.md,
// "Optional features"). An implementation that lacks one has the scenarios needing it skipped.
const (
	// FeatureContinue: the run starts with Continue (pi's agentLoopContinue).
	FeatureContinue = "continue"
	// FeatureSeveralPrompts: Run gets more than one prompt message.
	FeatureSeveralPrompts = "severalPrompts"
	// FeatureCustomMessages: a message of a custom role appears, or convertToLlm turns custom
	// messages into user messages.
	FeatureCustomMessages = "customMessages"
	// FeaturePrepareArguments: a tool has prepareArguments.
	FeaturePrepareArguments = "prepareArguments"
	// FeatureArgumentMutation: beforeToolCall changes the arguments execute receives.
	FeatureArgumentMutation = "argumentMutation"
	// FeatureThrowingHooks: a hook throws.
	FeatureThrowingHooks = "throwingHooks"
	// FeatureThrowingStreams: the stream function or the stream throws.
	FeatureThrowingStreams = "throwingStreams"
	// FeatureArgumentsError: a tool call carries argumentsError.
	FeatureArgumentsError = "argumentsError"
	// FeatureStructuredContent: a tool result or an afterToolCall answer has structuredContent.
	FeatureStructuredContent = "structuredContent"
	// FeatureToolResolvesNothing: a tool's execute resolves undefined or null (protocol 2).
	FeatureToolResolvesNothing = "toolResolvesNothing"
	// FeatureStreamOptions: the stream calls record the stream function's options (protocol 2).
	FeatureStreamOptions = "streamOptions"
	// FeatureAbortInHook: the run is aborted while a hook runs (protocol 2).
	FeatureAbortInHook = "abortInHook"
	// FeatureWaitingHooks: a hook's answer takes virtual time, or waits for the run's abort
	// signal, or an Agent listener is held until its signal fires (protocol 2).
	FeatureWaitingHooks = "waitingHooks"
	// FeatureAgent: the scenario drives a stateful Agent through user operations (protocol
	// version 2, §13.2).
	FeatureAgent = "agent"
	// FeatureRunToolCall: the scenario runs tool calls through runToolCall, pi's single-call
	// entry point (protocol version 2, §13.7).
	FeatureRunToolCall = "runToolCall"
	// FeatureDefaultModel: an Agent scenario's setup carries no model, so the Agent takes its
	// own default (pi's DEFAULT_MODEL; protocol version 2, §13.8).
	FeatureDefaultModel = "defaultModel"
)

// ProtocolTwoFeatures are the features that need protocol version 2: an implementation that
// speaks only version 1 lacks them.
var ProtocolTwoFeatures = []string{FeatureToolResolvesNothing, FeatureStreamOptions, FeatureAbortInHook, FeatureWaitingHooks, FeatureAgent, FeatureRunToolCall, FeatureDefaultModel}

// Features lists every optional feature, in the order docs/SEMANTICS.md documents them.
var Features = []string{
	FeatureContinue, FeatureSeveralPrompts, FeatureCustomMessages, FeaturePrepareArguments,
	FeatureArgumentMutation, FeatureThrowingHooks, FeatureThrowingStreams, FeatureArgumentsError,
	FeatureStructuredContent, FeatureToolResolvesNothing, FeatureStreamOptions, FeatureAbortInHook,
	FeatureWaitingHooks, FeatureAgent, FeatureRunToolCall, FeatureDefaultModel,
}

// NeededFeatures returns the optional features sc needs, in the order of Features. They are
// derived from the scenario's content, so a scenario cannot forget one.
func NeededFeatures(sc *Scenario) []string {
	need := needs{}
	need.add(FeatureContinue, sc.Continue)
	need.add(FeatureSeveralPrompts, !sc.Continue && len(sc.Prompts) > 1)
	need.add(FeatureStreamOptions, sc.StreamOptions)
	need.add(FeatureAgent, sc.Agent != nil)
	need.add(FeatureRunToolCall, sc.RunToolCall)
	need.add(FeatureDefaultModel, sc.Agent != nil && sc.Agent.DefaultModel)
	hookMessages := need.hooks(sc)
	need.customMessages(sc, hookMessages)
	need.tools(sc)
	need.responses(sc)
	var out []string
	for _, f := range Features {
		if need[f] {
			out = append(out, f)
		}
	}
	return out
}

// needs is the set of optional features a scenario needs.
type needs map[string]bool

// add adds feature when cond holds.
func (n needs) add(feature string, cond bool) {
	if cond {
		n[feature] = true
	}
}

// answer adds what a hook's answer needs: throwing, aborting, waiting.
func (n needs) answer(throw string, abort bool, wait Wait) {
	n.add(FeatureThrowingHooks, throw != "")
	n.add(FeatureAbortInHook, abort)
	n.add(FeatureWaitingHooks, wait.waits())
}

// hooks adds what the hooks' answers and the Agent's barriers need; it returns the messages
// the prepare hooks' answers give.
func (n needs) hooks(sc *Scenario) (messages [][]loop.Message) {
	h := &sc.Hooks
	if sc.Agent != nil {
		for _, b := range sc.Agent.Barriers {
			n.add(FeatureWaitingHooks, Wait{UntilAbort: b.UntilAbort}.waits())
		}
	}
	for _, s := range []*Script[PrepareAnswer]{h.PrepareRequest, h.PrepareNextTurn} {
		if s == nil {
			continue
		}
		for _, a := range scriptAnswers(s.Default, s.ByCall) {
			messages = append(messages, a.Messages)
			n.answer(a.Throw, a.Abort, a.Wait)
		}
	}
	if c := h.ConvertToLLM; c != nil {
		n.add(FeatureCustomMessages, c.KeepCustomAsUser)
		n.answer(c.Throw, c.Abort, c.Wait)
	}
	if t := h.TransformContext; t != nil {
		n.answer(t.Throw, t.Abort, t.Wait)
	}
	if k := h.GetAPIKey; k != nil {
		n.answer("", k.Abort, k.Wait)
	}
	if h.FinishTurn != nil {
		for _, a := range scriptAnswers(h.FinishTurn.Default, h.FinishTurn.ByCall) {
			n.answer(a.Throw, a.Abort, a.Wait)
		}
	}
	if h.BeforeToolCall != nil {
		for _, a := range scriptAnswers(h.BeforeToolCall.Default, h.BeforeToolCall.ByToolCall) {
			n.add(FeatureArgumentMutation, a.SetArgs != nil)
			n.answer(a.Throw, a.Abort, a.Wait)
		}
	}
	if h.AfterToolCall != nil {
		for _, a := range scriptAnswers(h.AfterToolCall.Default, h.AfterToolCall.ByToolCall) {
			n.add(FeatureStructuredContent, a.StructuredContent != nil)
			n.answer(a.Throw, a.Abort, a.Wait)
		}
	}
	return messages
}

// customMessages adds custom messages when the scenario's messages, prompts, user's messages
// or the hooks' (hookMessages) hold one.
func (n needs) customMessages(sc *Scenario, hookMessages [][]loop.Message) {
	messages := [][]loop.Message{sc.Messages, sc.Prompts}
	for _, u := range sc.User {
		messages = append(messages, u.Steer, u.FollowUp)
		if u.Op != nil {
			messages = append(messages, u.Op.Messages, []loop.Message{u.Op.Message})
		}
	}
	for _, list := range append(messages, hookMessages...) {
		for _, m := range list {
			if _, ok := m.(*loop.CustomMessage); ok {
				n[FeatureCustomMessages] = true
			}
		}
	}
}

// tools adds what the tools and their behaviours need.
func (n needs) tools(sc *Scenario) {
	behaviours := []Behaviour{}
	for _, t := range sc.Tools {
		n.add(FeaturePrepareArguments, t.PrepareArguments != nil)
		behaviours = append(behaviours, t.Behaviour)
	}
	for _, b := range sc.ToolCalls {
		behaviours = append(behaviours, b)
	}
	for _, b := range behaviours {
		n.add(FeatureToolResolvesNothing, b.Resolves != "")
		results := []loop.ToolResult{b.Result}
		for _, u := range b.Updates {
			results = append(results, u.Result)
		}
		if b.OnAbort != nil {
			results = append(results, b.OnAbort.Result)
		}
		for _, r := range results {
			n.add(FeatureStructuredContent, r.StructuredContent != nil)
		}
	}
}

// responses adds what the responses (the extra one too) need.
func (n needs) responses(sc *Scenario) {
	responses := slices.Clone(sc.Responses)
	if sc.ExtraResponse != nil {
		responses = append(responses, *sc.ExtraResponse)
	}
	for _, r := range responses {
		n.add(FeatureThrowingStreams, r.OpenError != "" || r.StreamError != "")
		for _, tc := range loop.ToolCalls(r.Content) {
			n.add(FeatureArgumentsError, tc.ArgumentsError != "")
		}
	}
}

// scriptAnswers is a script's default answer followed by its answers by call.
func scriptAnswers[K comparable, T any](def T, byCall map[K]T) []T {
	out := []T{def}
	for _, a := range byCall {
		out = append(out, a)
	}
	return out
}

// ObservedFeatures lists the optional features the reference's run of a scenario shows it
// needs, beyond what NeededFeatures reads in the scenario: a stream that throws (a request
// the script did not expect), a hook that throws, an execute resolving nothing.
func ObservedFeatures(tr *trace.Trace) []string {
	need := map[string]bool{}
	for _, e := range tr.Entries {
		switch {
		case e.Kind == trace.KindCall && e.Name == trace.CallStream && e.Error != "",
			e.Kind == trace.KindDeliver && e.Name == trace.DeliverStreamFail:
			need[FeatureThrowingStreams] = true
		case e.Kind == trace.KindCall && e.Name != trace.CallTool && e.Name != trace.CallStream && e.Error != "":
			need[FeatureThrowingHooks] = true
		case e.Kind == trace.KindDeliver && e.Name == trace.DeliverToolResult && bytes.Contains(e.Data, []byte(`"nothing"`)):
			need[FeatureToolResolvesNothing] = true
		}
	}
	var out []string
	for _, f := range Features {
		if need[f] {
			out = append(out, f)
		}
	}
	return out
}
