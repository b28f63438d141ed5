package loop_test

// Expectations checked against pi by testdata/pi/prepare.mjs.

import (
	"context"
	"encoding/json"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

func jsonText(v any) string {
	data, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

var _ = Describe("Tool call preparation", func() {
	var (
		h        *harness
		calc     *loop.Tool
		executed []string // the JSON of the arguments calc ran with
	)

	numberSchema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"n": map[string]any{"type": "number"}},
		"required":   []any{"n"},
	}
	// runCalls answers the prompt with one response holding blocks, then "done".
	runCalls := func(blocks ...loop.Block) []loop.Message {
		h.provider.answer(calls(blocks...), says("done"))
		return h.mustRun("hi")
	}
	// expectImmediate checks that call id got an error end without durationMs.
	expectImmediate := func(id string) {
		end := h.rec.toolEnd(id)
		Expect(end.IsError).To(BeTrue())
		Expect(end.DurationMs).To(BeNil())
		Expect(end.Result.Details).To(Equal(map[string]any{}))
	}
	guard := func(answer func() (*loop.BeforeToolCallResult, error)) {
		h.cfg.BeforeToolCall = func(_ context.Context, c loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
			if c.ToolCall.Name != "calc" {
				return nil, nil
			}
			return answer()
		}
	}

	BeforeEach(func() {
		h = newHarness()
		executed = nil
		calc = h.addTool("calc", func(_ context.Context, _ string, args map[string]any, _ func(loop.ToolResult)) (loop.ToolResult, error) {
			executed = append(executed, jsonText(args))
			return okResult("n=" + jsonText(args["n"])), nil
		})
		calc.Parameters = numberSchema
		h.addTool("echo", nil)
	})

	It("answers an unknown tool with \"Tool NAME not found\" without calling beforeToolCall", func() {
		beforeCalls := 0
		h.cfg.BeforeToolCall = func(context.Context, loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
			beforeCalls++
			return nil, nil
		}
		msgs := runCalls(call("t1", "ghost", map[string]any{"a": 1}))
		Expect(resultTexts(msgs)).To(Equal([]string{"Tool ghost not found"}))
		expectImmediate("t1")
		Expect(beforeCalls).To(BeZero())
	})

	It("fails validation of a missing property with pi's text", func() {
		msgs := runCalls(call("t1", "calc", map[string]any{}))
		Expect(resultTexts(msgs)).To(Equal([]string{"Validation failed for tool \"calc\":\n  - n: missing\n\nReceived arguments:\n{}"}))
		Expect(executed).To(BeEmpty())
		expectImmediate("t1")
	})

	It("fails validation of a wrong type with pi's text, showing the received arguments", func() {
		msgs := runCalls(call("t1", "calc", map[string]any{"n": "abc"}))
		Expect(resultTexts(msgs)).To(Equal([]string{"Validation failed for tool \"calc\":\n  - n: expected number, got string\n\nReceived arguments:\n{\n  \"n\": \"abc\"\n}"}))
		Expect(executed).To(BeEmpty())
	})

	It("coerces arguments on a copy: execute gets 42, the transcript and tool_execution_start keep \"42\"", func() {
		msgs := runCalls(call("t1", "calc", map[string]any{"n": "42"}))
		Expect(resultTexts(msgs)).To(Equal([]string{"n=42"}))
		Expect(executed).To(Equal([]string{`{"n":42}`}))
		Expect(h.rec.Of(loop.ToolExecutionStart)[0].Args).To(Equal(map[string]any{"n": "42"}))
		Expect(loop.ToolCalls(msgs[2].(*loop.AssistantMessage).Content)[0].Arguments).To(Equal(map[string]any{"n": "42"}))
		Expect(h.rec.toolEnd("t1").DurationMs).NotTo(BeNil())
	})

	It("fails a call carrying argumentsError with \"Invalid arguments for tool\", even after prepareArguments", func() {
		calc.PrepareArguments = func(map[string]any) map[string]any { return map[string]any{"n": 1} }
		bad := loop.ToolCall{ID: "t1", Name: "calc", Arguments: map[string]any{}, ArgumentsError: "Unexpected token } in JSON at position 7"}
		msgs := runCalls(bad)
		Expect(resultTexts(msgs)).To(Equal([]string{"Invalid arguments for tool \"calc\": Unexpected token } in JSON at position 7"}))
		Expect(executed).To(BeEmpty())
		expectImmediate("t1")
	})

	It("writes the tool name of an argumentsError verbatim, as JavaScript's template string does", func() {
		h.addTool("say \"hi\"", nil)
		msgs := runCalls(loop.ToolCall{ID: "t1", Name: "say \"hi\"", Arguments: map[string]any{}, ArgumentsError: "bad json"})
		Expect(resultTexts(msgs)).To(Equal([]string{"Invalid arguments for tool \"say \"hi\"\": bad json"}))
	})

	It("validates what prepareArguments made of the raw arguments", func() {
		calc.PrepareArguments = func(raw map[string]any) map[string]any { return map[string]any{"n": raw["num"]} }
		msgs := runCalls(call("t1", "calc", map[string]any{"num": 5}))
		Expect(resultTexts(msgs)).To(Equal([]string{"n=5"}))
	})

	It("turns a panicking prepareArguments into an error result with its message", func() {
		calc.PrepareArguments = func(map[string]any) map[string]any { panic(errors.New("cannot prepare")) }
		msgs := runCalls(call("t1", "calc", map[string]any{"num": 5}))
		Expect(resultTexts(msgs)).To(Equal([]string{"cannot prepare"}))
		expectImmediate("t1")
	})

	It("blocks a call with beforeToolCall's reason, running the others", func() {
		guard(func() (*loop.BeforeToolCallResult, error) {
			return &loop.BeforeToolCallResult{Block: true, Reason: "not allowed"}, nil
		})
		msgs := runCalls(call("t1", "calc", map[string]any{"n": 1}), call("t2", "echo", nil))
		Expect(resultTexts(msgs)).To(Equal([]string{"not allowed", "echo ok"}))
		Expect(executed).To(BeEmpty())
		expectImmediate("t1")
		Expect(h.rec.toolEnd("t2").DurationMs).NotTo(BeNil())
	})

	It("blocks with \"Tool execution was blocked\" when no reason is given", func() {
		guard(func() (*loop.BeforeToolCallResult, error) { return &loop.BeforeToolCallResult{Block: true}, nil })
		Expect(resultTexts(runCalls(call("t1", "calc", map[string]any{"n": 1})))).To(Equal([]string{"Tool execution was blocked"}))
	})

	It("turns a failing beforeToolCall into an error result with its message", func() {
		guard(func() (*loop.BeforeToolCallResult, error) { return nil, errors.New("hook exploded") })
		Expect(resultTexts(runCalls(call("t1", "calc", map[string]any{"n": 1})))).To(Equal([]string{"hook exploded"}))
		Expect(executed).To(BeEmpty())
		expectImmediate("t1")
	})

	It("runs the call when beforeToolCall does not block, whatever reason it gives", func() {
		guard(func() (*loop.BeforeToolCallResult, error) {
			return &loop.BeforeToolCallResult{Reason: "ignored"}, nil
		})
		Expect(resultTexts(runCalls(call("t1", "calc", map[string]any{"n": 1})))).To(Equal([]string{"n=1"}))
	})

	It("shows beforeToolCall the validated arguments and lets its mutations reach execute unvalidated", func() {
		var saw loop.BeforeToolCallContext
		var sawArgs string
		h.cfg.BeforeToolCall = func(_ context.Context, c loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
			saw, sawArgs = c, jsonText(c.Args)
			c.Args["n"] = "not a number"
			c.Args["extra"] = true
			return nil, nil
		}
		msgs := runCalls(call("t1", "calc", map[string]any{"n": "7"}))
		Expect(sawArgs).To(Equal(`{"n":7}`))
		Expect(saw.ToolCall.Arguments).To(Equal(map[string]any{"n": "7"}))
		Expect(saw.AssistantMessage.StopReason).To(Equal(loop.StopToolUse))
		Expect(roles(saw.Context.Messages)).To(Equal([]string{"system", "user", "assistant"}))
		Expect(executed).To(Equal([]string{`{"extra":true,"n":"not a number"}`}))
		Expect(resultTexts(msgs)).To(Equal([]string{`n="not a number"`}))
	})
})
