package conformance_test

import (
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

var testModel = loop.Model{ID: "faux-1", API: "faux", Provider: "faux"}

func user(text string) loop.Message { return &loop.UserMessage{Text: text} }

func at(t int64) *int64 { return &t }

func ptr[T any](v T) *T { return &v }

func call(id, name string, args map[string]any) loop.ToolCall {
	return loop.ToolCall{ID: id, Name: name, Arguments: args}
}

var objectSchema = map[string]any{"type": "object"}

func tool(name string, b sim.Behaviour) sim.ToolSpec {
	return sim.ToolSpec{Name: name, Description: name + " tool", Parameters: objectSchema, Behaviour: b}
}

func ok(text string, d int64) sim.Behaviour {
	return sim.Behaviour{Duration: d, Result: loop.ToolResult{Content: loop.Text(text)}}
}

// scenarios are the round-trip and pi scenarios, each a situation the protocol must carry
// exactly: events, calls, deliveries and their interleaving.
func scenarios() []*sim.Scenario {
	return []*sim.Scenario{
		{
			Name:      "text-only",
			Model:     testModel,
			Prompts:   []loop.Message{user("hello")},
			Responses: []sim.Response{{Content: loop.Text("hi there, how can I help?"), Delay: 10, ChunkDelay: 2, DeltaSize: 5}},
		},
		{
			Name:  "parallel-tools-with-updates",
			Model: testModel,
			Tools: []sim.ToolSpec{
				tool("slow", sim.Behaviour{Duration: 40, Result: loop.ToolResult{Content: loop.Text("slow done")},
					Updates: []sim.Update{{At: 10, Result: loop.ToolResult{Content: loop.Text("slow 25%")}}, {At: 30, Result: loop.ToolResult{Content: loop.Text("slow 75%")}}}}),
				tool("fast", sim.Behaviour{Duration: 15, Result: loop.ToolResult{Content: loop.Text("fast done"), Details: map[string]any{"n": 1.0}},
					Updates: []sim.Update{{At: 5, Result: loop.ToolResult{Content: loop.Text("fast half")}}, {At: 15, Result: loop.ToolResult{Content: loop.Text("fast at end")}}}}),
			},
			Prompts: []loop.Message{user("run both")},
			Responses: []sim.Response{
				{Content: []loop.Block{loop.TextContent{Text: "running"}, call("a", "slow", map[string]any{"x": 1.0}), call("b", "fast", nil), call("c", "missing", nil)}, Delay: 5, ChunkDelay: 1},
				{Content: loop.Text("both done"), Delay: 5},
			},
		},
		{
			Name:          "sequential-tools",
			Model:         testModel,
			ToolExecution: loop.Sequential,
			Tools:         []sim.ToolSpec{tool("one", ok("1", 10)), tool("two", sim.Behaviour{Duration: 5, Throw: "two broke"})},
			Prompts:       []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("s1", "one", nil), call("s2", "two", nil), call("s3", "one", nil)}},
				{Content: loop.Text("done")},
			},
		},
		{
			Name:         "steering-while-tools-run",
			Model:        testModel,
			SteeringMode: loop.OneAtATime,
			Tools:        []sim.ToolSpec{tool("work", ok("worked", 20))},
			Prompts:      []loop.Message{user("work")},
			User: []sim.UserAction{
				{On: &sim.Trigger{Event: loop.ToolExecutionStart, ToolCallID: "w1"}, Steer: []loop.Message{user("steer one"), user("steer two")}},
				{At: at(100), FollowUp: []loop.Message{user("follow up")}},
			},
			Responses: []sim.Response{
				{Content: []loop.Block{call("w1", "work", nil)}, Delay: 2},
				{Content: loop.Text("after steer one"), Delay: 50},
				{Content: loop.Text("after steer two"), Delay: 50},
				{Content: loop.Text("after follow up"), Delay: 5},
			},
		},
		{
			Name:  "abort-mid-batch",
			Model: testModel,
			Tools: []sim.ToolSpec{
				tool("honours", sim.Behaviour{Duration: 100, Result: loop.ToolResult{Content: loop.Text("never")}, OnAbort: &sim.AbortReaction{Throw: "aborted by signal"}}),
				tool("ignores", ok("finished anyway", 30)),
			},
			Prompts: []loop.Message{user("go")},
			User:    []sim.UserAction{{At: at(12), Abort: true}},
			Responses: []sim.Response{
				{Content: []loop.Block{call("h", "honours", nil), call("i", "ignores", nil)}, Delay: 2},
				{Content: loop.Text("not reached: aborted"), Delay: 5},
			},
		},
		{
			Name:    "abort-while-streaming",
			Model:   testModel,
			Prompts: []loop.Message{user("go")},
			User:    []sim.UserAction{{At: at(7), Abort: true}},
			Responses: []sim.Response{
				{Content: loop.Text("a long answer that will be cut"), Delay: 2, ChunkDelay: 2, DeltaSize: 4},
			},
		},
		{
			Name:    "hook-throws",
			Model:   testModel,
			Hooks:   sim.Hooks{PrepareRequest: &sim.Script[sim.PrepareAnswer]{ByCall: map[int]sim.PrepareAnswer{2: {Throw: "prepareRequest exploded"}}}},
			Tools:   []sim.ToolSpec{tool("t", ok("ok", 1))},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("t1", "t", nil)}},
				{Content: loop.Text("unreachable")},
			},
		},
		{
			Name:      "unscripted-request",
			Model:     testModel,
			Tools:     []sim.ToolSpec{tool("t", ok("ok", 3))},
			Prompts:   []loop.Message{user("go")},
			Responses: []sim.Response{{Content: []loop.Block{call("t1", "t", nil)}}},
		},
		{
			Name:          "hooks-everywhere",
			Model:         testModel,
			ThinkingLevel: "medium",
			APIKey:        "static-key",
			Tools: []sim.ToolSpec{
				tool("read", ok("file contents", 4)),
				{Name: "write", Description: "writes", Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}},
					Inactive: true, Behaviour: ok("written", 2)},
			},
			Hooks: sim.Hooks{
				ConvertToLLM:     &sim.ConvertScript{KeepCustomAsUser: true},
				TransformContext: &sim.TransformScript{KeepLast: 6},
				GetAPIKey:        &sim.KeyScript{Key: "dynamic-key"},
				PrepareRequest: &sim.Script[sim.PrepareAnswer]{ByCall: map[int]sim.PrepareAnswer{
					2: {Context: &sim.ContextChange{Tools: []string{"read", "write"}}, ThinkingLevel: "high"},
				}},
				PrepareNextTurn: &sim.Script[sim.PrepareAnswer]{ByCall: map[int]sim.PrepareAnswer{
					1: {Messages: []loop.Message{&loop.CustomMessage{Fields: map[string]any{"role": "note", "content": "a note", "timestamp": 0.0}}}},
					2: {Model: &loop.Model{ID: "faux-2", API: "faux", Provider: "faux"}, ThinkingLevel: "off"},
				}},
				FinishTurn: &sim.Script[sim.FinishAnswer]{ByCall: map[int]sim.FinishAnswer{3: {Action: loop.DecisionContinue}}},
				BeforeToolCall: &sim.ToolScript[sim.BeforeAnswer]{ByToolCall: map[string]sim.BeforeAnswer{
					"r1": {SetArgs: map[string]any{"injected": true}},
					"r2": {Block: true, Reason: "not allowed", Terminate: true},
				}},
				AfterToolCall: &sim.ToolScript[sim.AfterAnswer]{ByToolCall: map[string]sim.AfterAnswer{
					"r1": {Content: loop.Text("rewritten"), Details: map[string]any{"by": "after"}},
				}},
			},
			Messages: []loop.Message{&loop.SystemMessage{Text: "You are a test."}},
			Prompts:  []loop.Message{user("read then write")},
			Responses: []sim.Response{
				{Content: []loop.Block{loop.ThinkingContent{Thinking: "let me think"}, call("r1", "read", map[string]any{"path": "a"}), call("r2", "read", nil)}, Usage: &loop.Usage{Input: 10, Output: 5, TotalTokens: 15}},
				{Content: []loop.Block{call("w1", "write", map[string]any{"path": "b"})}},
				{Content: loop.Text("all done")},
				{Content: loop.Text("continued once")},
			},
		},
		{
			Name:  "validation-and-truncation",
			Model: testModel,
			Tools: []sim.ToolSpec{
				{Name: "typed", Description: "typed", Parameters: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number"}}, "required": []any{"n"}},
					PrepareArguments: map[string]any{"prepared": true}, Behaviour: ok("typed ok", 1)},
			},
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("v1", "typed", map[string]any{"n": "42"}), call("v2", "typed", map[string]any{"n": "x"}), loop.ToolCall{ID: "v3", Name: "typed", ArgumentsError: "unexpected end of JSON"}}},
				{Content: []loop.Block{call("l1", "typed", map[string]any{"n": 1.0})}, StopReason: loop.StopLength},
				{Content: loop.Text("done")},
			},
		},
		{
			Name:    "stream-ends-without-done",
			Model:   testModel,
			Prompts: []loop.Message{user("go")},
			Responses: []sim.Response{
				{Content: loop.Text("no done"), NoDone: true, NoStart: true},
			},
		},
		{
			Name:      "stream-throws",
			Model:     testModel,
			Prompts:   []loop.Message{user("go")},
			Responses: []sim.Response{{Content: loop.Text("partial"), StreamError: "connection reset"}},
		},
		{
			Name:      "stream-function-throws",
			Model:     testModel,
			Prompts:   []loop.Message{user("go")},
			Responses: []sim.Response{{OpenError: "no route to provider"}},
		},
		{
			Name:      "provider-error",
			Model:     testModel,
			Prompts:   []loop.Message{user("go")},
			Responses: []sim.Response{{Content: loop.Text("oops"), StopReason: loop.StopError, ErrorMessage: "rate limited"}},
		},
		{
			Name:      "continue-with-undeclared-tools",
			Model:     testModel,
			Continue:  true,
			Tools:     []sim.ToolSpec{tool("t", ok("ok", 1))},
			Messages:  []loop.Message{user("earlier question")},
			Responses: []sim.Response{{Content: loop.Text("continued")}},
		},
		{
			Name:     "continue-refused",
			Model:    testModel,
			Continue: true,
			Messages: []loop.Message{user("q"), &loop.AssistantMessage{Content: loop.Text("a"), StopReason: loop.StopStop, API: "faux", Provider: "faux", Model: "faux-1"}},
		},
		{
			Name:    "terminate-then-follow-up",
			Model:   testModel,
			Tools:   []sim.ToolSpec{tool("fin", sim.Behaviour{Duration: 3, Result: loop.ToolResult{Content: loop.Text("bye"), Terminate: true}})},
			Hooks:   sim.Hooks{NoSteering: true},
			User:    []sim.UserAction{{On: &sim.Trigger{Event: loop.TurnEnd}, FollowUp: []loop.Message{user("one more")}}},
			Prompts: []loop.Message{user("finish")},
			Responses: []sim.Response{
				{Content: []loop.Block{call("f1", "fin", nil), call("f2", "fin", nil)}},
				{Content: loop.Text("answered the follow-up")},
			},
		},
	}
}
