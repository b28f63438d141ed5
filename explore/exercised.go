package explore

import (
	"slices"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// hookRules are the rules of docs/SEMANTICS.md that say what an installed hook does.
var hookRules = map[string]string{
	trace.HookConvertToLLM:     "R-PROVIDER-REQUEST",
	trace.HookTransformContext: "R-PROVIDER-REQUEST",
	trace.HookGetAPIKey:        "R-PROVIDER-REQUEST",
	trace.HookPrepareRequest:   "R-PREPARE-REQUEST",
	trace.HookPrepareNextTurn:  "R-PREPARE-NEXT-TURN",
	trace.HookFinishTurn:       "R-FINISH-WHEN",
	trace.HookBeforeToolCall:   "R-TOOL-BEFORE",
	trace.HookAfterToolCall:    "R-TOOL-AFTER",
}

// Exercised lists the rules of docs/SEMANTICS.md a scenario exercises beyond a plain turn,
// in the contract's order: those of its installed hooks, its tools' preparation, its tool
// batches' mode, truncated responses, the queues it fills and an abort. A generated scenario
// pins no rule; once shrunk, what it still exercises points at the rule a divergence breaks.
func Exercised(sc *sim.Scenario) []string {
	set := map[string]bool{}
	for _, h := range sc.Hooks.Installed() {
		if r, ok := hookRules[h]; ok {
			set[r] = true
		}
	}
	for _, t := range sc.Tools {
		if t.PrepareArguments != nil {
			set["R-TOOL-PREPARE-ARGUMENTS"] = true
		}
	}
	for _, r := range sc.Responses {
		calls := loop.ToolCalls(r.Content)
		switch {
		case len(calls) > 0 && r.StopReason == loop.StopLength:
			set["R-TRUNC-FAIL"] = true
		case len(calls) > 0 && sequential(sc, calls):
			set["R-EXEC-SEQUENTIAL"] = true
		case len(calls) > 1:
			set["R-EXEC-PARALLEL"] = true
		}
		if len(calls) > 1 && r.StopReason != loop.StopLength && toolDecidesMode(sc, calls) {
			set["R-EXEC-MODE"] = true
		}
	}
	for _, u := range sc.User {
		switch {
		case u.Abort:
			set["R-ABORT-STREAM"] = true
		case len(u.Steer) > 0:
			set["R-POLL-C"] = true
		case len(u.FollowUp) > 0:
			set["R-POLL-FOLLOW-UP"] = true
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b string) int { return diagnose.RuleOrder(a) - diagnose.RuleOrder(b) })
	return out
}

// toolDecidesMode reports whether a called tool sets its own executionMode: the batch's mode
// then depends on the rule that one sequential tool makes it all sequential (R-EXEC-MODE).
func toolDecidesMode(sc *sim.Scenario, calls []loop.ToolCall) bool {
	for _, c := range calls {
		for _, t := range sc.Tools {
			if t.Name == c.Name && t.ExecutionMode != "" {
				return true
			}
		}
	}
	return false
}

// sequential reports whether a batch of calls runs sequentially (R-EXEC-MODE): the
// configuration says so, or one of the called tools does.
func sequential(sc *sim.Scenario, calls []loop.ToolCall) bool {
	if sc.ToolExecution == loop.Sequential {
		return true
	}
	for _, c := range calls {
		for _, t := range sc.Tools {
			if t.Name == c.Name && t.ExecutionMode == loop.Sequential {
				return true
			}
		}
	}
	return false
}
