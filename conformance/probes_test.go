package conformance_test

import (
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// probes are further situations, chosen to find differences between pi and the reference:
// result overrides, errors inside tool hooks, aborts between preparation and execution,
// queue modes, odd streams.
func probes() []*sim.Scenario {
	img := loop.ImageContent{Data: "aGVsbG8=", MimeType: "image/png"}
	return []*sim.Scenario{
		{
			Name:  "after-tool-call-overrides",
			Model: testModel,
			Tools: []sim.ToolSpec{
				tool("t", sim.Behaviour{Duration: 2, Result: loop.ToolResult{Content: loop.Text("raw"), Details: map[string]any{"k": "v"}, StructuredContent: map[string]any{"s": 1.0}}}),
			},
			Hooks: sim.Hooks{AfterToolCall: &sim.ToolScript[sim.AfterAnswer]{ByToolCall: map[string]sim.AfterAnswer{
				"a1": {IsError: ptr(true)},
				"a2": {Content: loop.Text("replaced")},
				"a3": {Content: []loop.Block{}, StructuredContent: map[string]any{"new": true}, Terminate: ptr(true)},
				"a4": {Throw: "after hook failed"},
				"a5": {Details: map[string]any{"only": "details"}},
			}}},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("a1", "t", nil), call("a2", "t", nil), call("a3", "t", nil), call("a4", "t", nil), call("a5", "t", nil)}},
				{Content: loop.Text("done")},
			},
		},
		{
			// afterToolCall answering terminate: false. pi keeps the explicit false in the
			// result ({...result, terminate: afterResult.terminate ?? result.terminate}); the
			// reference's loop.ToolResult.Terminate is a plain bool and drops it.
			Name:    "after-tool-call-terminate-false",
			Model:   testModel,
			Tools:   []sim.ToolSpec{tool("t", sim.Behaviour{Duration: 1, Result: loop.ToolResult{Content: loop.Text("raw"), Terminate: true}})},
			Hooks:   sim.Hooks{AfterToolCall: &sim.ToolScript[sim.AfterAnswer]{Default: sim.AfterAnswer{Terminate: ptr(false)}}},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("k1", "t", nil)}},
				{Content: loop.Text("done")},
			},
		},
		{
			Name:  "before-tool-call-throws-and-blocks",
			Model: testModel,
			Tools: []sim.ToolSpec{tool("t", ok("ran", 1))},
			Hooks: sim.Hooks{BeforeToolCall: &sim.ToolScript[sim.BeforeAnswer]{ByToolCall: map[string]sim.BeforeAnswer{
				"b1": {Throw: "before hook failed"},
				"b2": {Block: true},
				"b3": {Block: true, Reason: "blocked with reason"},
			}}},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("b1", "t", nil), call("b2", "t", nil), call("b3", "t", nil), call("b4", "t", nil)}},
				{Content: loop.Text("done")},
			},
		},
		{
			// Sequential: the abort comes while p1 runs (p1 ignores it), so p2 and p3 are
			// prepared already aborted: no beforeToolCall, "Operation aborted", no durationMs.
			Name:          "abort-between-sequential-calls",
			Model:         testModel,
			ToolExecution: loop.Sequential,
			Tools:         []sim.ToolSpec{tool("t", ok("ran", 5))},
			Hooks:         sim.Hooks{BeforeToolCall: &sim.ToolScript[sim.BeforeAnswer]{}, AfterToolCall: &sim.ToolScript[sim.AfterAnswer]{}},
			User:          []sim.UserAction{{At: at(2), Abort: true}},
			Prompts:       []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("p1", "t", nil), call("p2", "t", nil), call("p3", "missing", nil)}},
				{Content: loop.Text("never: the request is answered aborted")},
			},
		},
		{
			Name:         "steering-all-and-finish-end",
			Model:        testModel,
			SteeringMode: loop.All,
			FollowUpMode: loop.All,
			Tools:        []sim.ToolSpec{tool("t", ok("ran", 10))},
			Hooks:        sim.Hooks{FinishTurn: &sim.Script[sim.FinishAnswer]{ByCall: map[int]sim.FinishAnswer{3: {Action: loop.DecisionEnd}}}},
			User: []sim.UserAction{
				{At: at(1), Steer: []loop.Message{user("s1"), user("s2")}, FollowUp: []loop.Message{user("f1"), user("f2")}},
			},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("t1", "t", nil)}, Delay: 3},
				{Content: loop.Text("after steering")},
				{Content: loop.Text("after follow-ups")},
				{Content: loop.Text("never")},
			},
		},
		{
			Name:          "thinking-and-split-deltas",
			Model:         testModel,
			ThinkingLevel: "low",
			Tools:         []sim.ToolSpec{tool("t", ok("ran", 1))},
			Prompts:       []loop.Message{&loop.UserMessage{Blocks: []loop.Block{loop.TextContent{Text: "look"}, img}}},
			Responses: []sim.Response{
				{Content: []loop.Block{loop.ThinkingContent{Thinking: "pondering deeply", ThinkingSignature: "sig"}, loop.TextContent{Text: "I will call"}, call("t1", "t", map[string]any{"query": "a longer argument", "n": 3.0})},
					DeltaSize: 4, ChunkDelay: 1, Usage: &loop.Usage{Input: 3, Output: 7, CacheRead: 1, TotalTokens: 11, Cost: loop.Cost{Input: 0.5, Total: 0.5}}},
				{Content: []loop.Block{loop.TextContent{Text: "one"}, loop.TextContent{Text: "two"}}},
			},
		},
		{
			Name:    "stream-oddities",
			Model:   testModel,
			Tools:   []sim.ToolSpec{tool("t", ok("ran", 1))},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				// Events before start are ignored; done still ends the message.
				{Content: []loop.Block{loop.TextContent{Text: "no start here"}, call("t1", "t", nil)}, NoStart: true},
				// A provider error after a tool turn: the hard exit.
				{Content: loop.Text("half"), StopReason: loop.StopError, ErrorMessage: "overloaded", DeltaSize: 2},
			},
		},
		{
			Name:     "custom-messages-and-tool-results",
			Model:    testModel,
			Continue: true,
			Tools: []sim.ToolSpec{
				{Name: "seq", Description: "sequential", Parameters: objectSchema, ExecutionMode: loop.Sequential,
					Behaviour: sim.Behaviour{Duration: 1, Result: loop.ToolResult{Content: nil, IsError: true, Details: map[string]any{"why": "flagged"}}}},
				tool("par", sim.Behaviour{Duration: 1, Result: loop.ToolResult{Content: []loop.Block{img, loop.TextContent{Text: "pic"}}}}),
			},
			Messages: []loop.Message{
				&loop.SystemMessage{Text: "sys"},
				user("q"),
				&loop.CustomMessage{Fields: map[string]any{"role": "bookmark", "label": "here", "timestamp": 5.0}},
				&loop.AssistantMessage{Content: []loop.Block{call("old", "seq", nil)}, StopReason: loop.StopToolUse, API: "faux", Provider: "faux", Model: "faux-1"},
				&loop.ToolResultMessage{ToolCallID: "old", ToolName: "seq", Content: loop.Text("old result")},
			},
			Responses: []sim.Response{
				{Content: []loop.Block{call("c1", "par", nil), call("c2", "seq", nil)}},
				{Content: loop.Text("done")},
			},
		},
		{
			Name:  "prepare-next-turn-replaces-context",
			Model: testModel,
			Tools: []sim.ToolSpec{tool("a", ok("a ran", 1)), {Name: "b", Description: "b tool", Parameters: objectSchema, Inactive: true, Behaviour: ok("b ran", 1)}},
			Hooks: sim.Hooks{
				PrepareNextTurn: &sim.Script[sim.PrepareAnswer]{ByCall: map[int]sim.PrepareAnswer{
					1: {Context: &sim.ContextChange{Tools: []string{"b"}, KeepLast: 2}, Messages: []loop.Message{&loop.SystemMessage{Text: "now b", ToolsAdded: []loop.ToolDeclaration{{Name: "zzz", Description: "bogus", Parameters: objectSchema}}}}},
				}},
				GetAPIKey:        &sim.KeyScript{Key: ""},
				TransformContext: &sim.TransformScript{},
			},
			APIKey:  "fallback-key",
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("x1", "a", nil)}},
				{Content: []loop.Block{call("x2", "a", nil), call("x3", "b", nil)}},
				{Content: loop.Text("done")},
			},
		},
		{
			Name:      "transform-context-throws",
			Model:     testModel,
			Hooks:     sim.Hooks{TransformContext: &sim.TransformScript{Throw: "transform failed"}},
			Prompts:   []loop.Message{user("go")},
			Responses: []sim.Response{{Content: loop.Text("never")}},
		},
		{
			Name:  "tool-updates-and-throw-in-parallel",
			Model: testModel,
			Tools: []sim.ToolSpec{
				tool("u", sim.Behaviour{Duration: 6, Throw: "tool exploded", Updates: []sim.Update{{At: 2, Result: loop.ToolResult{Content: loop.Text("u1"), Details: map[string]any{"p": 0.5}}}, {At: 9, Result: loop.ToolResult{Content: loop.Text("late, never delivered")}}}}),
				tool("v", sim.Behaviour{Duration: 6, Result: loop.ToolResult{Content: loop.Text("v done"), Terminate: true}, Updates: []sim.Update{{At: 2, Result: loop.ToolResult{Content: loop.Text("v1")}}}}),
			},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("u1", "u", nil), call("v1", "v", nil)}},
				{Content: loop.Text("done")},
			},
		},
		{
			Name:          "terminate-everywhere-with-steering",
			Model:         testModel,
			ToolExecution: loop.Sequential,
			Tools:         []sim.ToolSpec{tool("fin", sim.Behaviour{Duration: 1, Result: loop.ToolResult{Content: loop.Text("bye"), Terminate: true}})},
			User:          []sim.UserAction{{On: &sim.Trigger{Event: loop.ToolExecutionEnd}, Steer: []loop.Message{user("wait, one more thing")}}},
			Hooks:         sim.Hooks{FinishTurn: &sim.Script[sim.FinishAnswer]{ByCall: map[int]sim.FinishAnswer{2: {Action: loop.DecisionContinue}}}},
			Prompts:       []loop.Message{user("finish")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("f1", "fin", nil)}},
				{Content: []loop.Block{call("f2", "fin", nil)}},
				{Content: loop.Text("one extra request")},
			},
		},
		{
			// finishTurn throws on the turn that ended with a provider error: pi awaits it
			// (`await config.finishTurn?.(...)`) before the hard exit, so the run fails.
			Name:      "finish-turn-throws-on-error-turn",
			Model:     testModel,
			Hooks:     sim.Hooks{FinishTurn: &sim.Script[sim.FinishAnswer]{Default: sim.FinishAnswer{Throw: "finish failed"}}},
			Prompts:   []loop.Message{user("go")},
			Responses: []sim.Response{{Content: loop.Text("x"), StopReason: loop.StopError, ErrorMessage: "provider down"}},
		},
		{
			Name:    "prepare-next-turn-throws",
			Model:   testModel,
			Tools:   []sim.ToolSpec{tool("t", ok("ran", 1))},
			Hooks:   sim.Hooks{PrepareNextTurn: &sim.Script[sim.PrepareAnswer]{Default: sim.PrepareAnswer{Throw: "no next turn"}}},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("t1", "t", nil)}},
				{Content: loop.Text("never")},
			},
		},
		{
			Name:  "tool-usage-and-abort-ignored",
			Model: testModel,
			Tools: []sim.ToolSpec{
				tool("costly", sim.Behaviour{Duration: 20, Result: loop.ToolResult{Content: loop.Text("spent"), Usage: &loop.Usage{Input: 2, Output: 3, TotalTokens: 5, Cost: loop.Cost{Total: 0.25}}}}),
			},
			User:    []sim.UserAction{{At: at(3), Abort: true}},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("c1", "costly", nil)}},
				{Content: loop.Text("keeps streaming"), IgnoresAbort: true, DeltaSize: 5, ChunkDelay: 2},
			},
		},
		{
			Name:         "steering-pending-skips-poll-b",
			Model:        testModel,
			SteeringMode: loop.OneAtATime,
			FollowUpMode: loop.OneAtATime,
			Tools:        []sim.ToolSpec{tool("t", ok("ran", 5))},
			Hooks:        sim.Hooks{PrepareNextTurn: &sim.Script[sim.PrepareAnswer]{}},
			User: []sim.UserAction{
				{On: &sim.Trigger{Event: loop.ToolExecutionStart}, Steer: []loop.Message{user("s1"), user("s2"), user("s3")}},
				{On: &sim.Trigger{Hook: trace.HookPrepareNextTurn, Nth: 2}, FollowUp: []loop.Message{user("f1"), user("f2")}},
			},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("t1", "t", nil)}},
				{Content: loop.Text("r2")}, {Content: loop.Text("r3")}, {Content: loop.Text("r4")},
				{Content: loop.Text("r5")}, {Content: loop.Text("r6")},
			},
		},
		{
			Name:    "truncated-batch-with-unknown-and-terminating-tools",
			Model:   testModel,
			Tools:   []sim.ToolSpec{tool("fin", sim.Behaviour{Duration: 1, Result: loop.ToolResult{Content: loop.Text("bye"), Terminate: true}})},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{loop.ThinkingContent{Thinking: "hm", Redacted: true}, call("x1", "fin", nil), call("x2", "nope", map[string]any{"a": []any{1.0, "b"}})}, StopReason: loop.StopLength},
				{Content: []loop.Block{call("x3", "fin", nil)}, StopReason: loop.StopStop},
				{Content: loop.Text("after")},
			},
		},
		{
			Name:     "continue-empty-transcript",
			Model:    testModel,
			Continue: true,
		},
	}
}

// allScenarios are the scenarios the round-trip and pi tests run.
func allScenarios() []*sim.Scenario { return append(scenarios(), probes()...) }
