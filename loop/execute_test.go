package loop_test

// Expectations checked against pi by testdata/pi/execute.mjs.

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Tool execution and afterToolCall", func() {
	var h *harness

	// runJob runs one call t1 of the tool "job" executing exec, then "done".
	runJob := func(exec execFunc) []loop.Message {
		h.addTool("job", exec)
		h.provider.answer(calls(call("t1", "job", map[string]any{"q": "raw"})), says("done"))
		return h.mustRun("hi")
	}
	// outcome is t1's end event and tool-result message.
	outcome := func(msgs []loop.Message) (loop.Event, *loop.ToolResultMessage) {
		return h.rec.toolEnd("t1"), toolResults(msgs)[0]
	}
	// after installs afterToolCall answering res.
	after := func(res *loop.AfterToolCallResult, err error) {
		h.cfg.AfterToolCall = func(context.Context, loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
			return res, err
		}
	}
	structured := answers(loop.ToolResult{Content: loop.Text("orig"), Details: map[string]any{"d": 1}, StructuredContent: map[string]any{"s": 1}})
	failing := answers(loop.ToolResult{Content: loop.Text("bad"), Details: map[string]any{}, IsError: true})

	BeforeEach(func() { h = newHarness() })

	It("turns a failing execute into an error result with its message, keeping durationMs", func() {
		end, msg := outcome(runJob(func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			h.rt.advance(3 * time.Millisecond)
			return loop.ToolResult{}, errors.New("disk full")
		}))
		Expect(jsonText(end.Result)).To(MatchJSON(`{"content":[{"type":"text","text":"disk full"}],"details":{}}`))
		Expect(end.IsError).To(BeTrue())
		Expect(*end.DurationMs).To(Equal(int64(3)))
		Expect(msg.IsError).To(BeTrue())
		Expect(*msg.DurationMs).To(Equal(int64(3)))
	})

	It("turns a panicking execute into an error result, as a throw", func() {
		_, msg := outcome(runJob(func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			panic(errors.New("disk full"))
		}))
		Expect(textOf(msg)).To(Equal("disk full"))
		Expect(msg.IsError).To(BeTrue())
	})

	It("treats a result with isError as an error, keeping its details", func() {
		end, msg := outcome(runJob(answers(loop.ToolResult{Content: loop.Text("bad input"), Details: map[string]any{"code": 7}, IsError: true})))
		Expect(h.rec.Lines()[9]).To(Equal("tool_execution_end t1 err"))
		Expect(jsonText(end.Result)).To(MatchJSON(`{"content":[{"type":"text","text":"bad input"}],"details":{"code":7},"isError":true}`))
		Expect(msg.IsError).To(BeTrue())
		Expect(msg.Details).To(Equal(map[string]any{"code": 7}))
	})

	It("writes nil content as [] in the tool-result message", func() {
		end, msg := outcome(runJob(answers(loop.ToolResult{Details: map[string]any{"note": "nothing"}})))
		Expect(jsonText(end.Result)).To(MatchJSON(`{"content":null,"details":{"note":"nothing"}}`))
		Expect(msg.Content).To(BeEmpty())
		Expect(msg.Content).NotTo(BeNil())
		Expect(end.IsError).To(BeFalse())
	})

	DescribeTable("measures durationMs of execute on the monotonic clock, rounded",
		func(elapsed time.Duration, want int64) {
			end, msg := outcome(runJob(func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
				h.rt.advance(elapsed)
				return okResult("timed"), nil
			}))
			Expect(*end.DurationMs).To(Equal(want))
			Expect(*msg.DurationMs).To(Equal(want))
		},
		Entry("1.5 ms rounds up to 2", 1500*time.Microsecond, int64(2)),
		Entry("1.4 ms rounds down to 1", 1400*time.Microsecond, int64(1)),
	)

	It("emits each update with the raw arguments before the end, and drops updates made after execute returned", func() {
		var late func(loop.ToolResult)
		h.cfg.AfterToolCall = func(context.Context, loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
			late(okResult("late"))
			return nil, nil
		}
		runJob(func(_ context.Context, _ string, _ map[string]any, onUpdate func(loop.ToolResult)) (loop.ToolResult, error) {
			onUpdate(okResult("25%"))
			onUpdate(okResult("50%"))
			late = onUpdate
			return okResult("100%"), nil
		})
		Expect(h.rec.Lines()[8:12]).To(Equal([]string{"tool_execution_start t1", "tool_execution_update t1", "tool_execution_update t1", "tool_execution_end t1 ok"}))
		updates := h.rec.Of(loop.ToolExecutionUpdate)
		Expect(updates).To(HaveLen(2))
		for i, want := range []string{"25%", "50%"} {
			Expect([]any{updates[i].ToolCallID, updates[i].ToolName, updates[i].Args}).To(Equal([]any{"t1", "job", map[string]any{"q": "raw"}}))
			Expect(blocksText(updates[i].PartialResult.Content)).To(Equal(want))
		}
		late(okResult("after the run"))
		Expect(h.rec.Of(loop.ToolExecutionUpdate)).To(HaveLen(2))
	})

	DescribeTable("afterToolCall overrides the executed result field by field",
		func(exec execFunc, override *loop.AfterToolCallResult, wantResult string, wantError bool) {
			after(override, nil)
			end, msg := outcome(runJob(exec))
			Expect(jsonText(end.Result)).To(MatchJSON(wantResult))
			Expect(end.IsError).To(Equal(wantError))
			Expect(msg.IsError).To(Equal(wantError))
			Expect(end.DurationMs).NotTo(BeNil())
		},
		Entry("content replaced without structuredContent drops it", structured,
			&loop.AfterToolCallResult{Content: loop.Text("replaced")},
			`{"content":[{"type":"text","text":"replaced"}],"details":{"d":1}}`, false),
		Entry("content replaced with structuredContent takes the new one", structured,
			&loop.AfterToolCallResult{Content: loop.Text("replaced"), StructuredContent: map[string]any{"s": 2}},
			`{"content":[{"type":"text","text":"replaced"}],"details":{"d":1},"structuredContent":{"s":2}}`, false),
		Entry("details replaced keeps content and structuredContent", structured,
			&loop.AfterToolCallResult{Details: map[string]any{"d": 2}},
			`{"content":[{"type":"text","text":"orig"}],"details":{"d":2},"structuredContent":{"s":1}}`, false),
		Entry("isError set marks the call failed", structured,
			&loop.AfterToolCallResult{IsError: new(true)},
			`{"content":[{"type":"text","text":"orig"}],"details":{"d":1},"structuredContent":{"s":1}}`, true),
		Entry("isError cleared marks a failed call ok (the result keeps its own isError)", failing,
			&loop.AfterToolCallResult{IsError: new(false)},
			`{"content":[{"type":"text","text":"bad"}],"details":{},"isError":true}`, false),
		Entry("no answer keeps everything", structured, nil,
			`{"content":[{"type":"text","text":"orig"}],"details":{"d":1},"structuredContent":{"s":1}}`, false),
	)

	It("turns a failing afterToolCall into an error result with its message, keeping durationMs", func() {
		after(nil, errors.New("after exploded"))
		end, msg := outcome(runJob(structured))
		Expect(jsonText(end.Result)).To(MatchJSON(`{"content":[{"type":"text","text":"after exploded"}],"details":{}}`))
		Expect(end.IsError).To(BeTrue())
		Expect(end.DurationMs).NotTo(BeNil())
		Expect(msg.Details).To(Equal(map[string]any{}))
	})

	It("shows afterToolCall the call, its arguments, the executed result, isError and the context", func() {
		var saw loop.AfterToolCallContext
		h.cfg.AfterToolCall = func(_ context.Context, c loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
			saw = c
			return nil, nil
		}
		runJob(failing)
		Expect(saw.ToolCall.ID).To(Equal("t1"))
		Expect(saw.Args).To(Equal(map[string]any{"q": "raw"}))
		Expect(blocksText(saw.Result.Content)).To(Equal("bad"))
		Expect(saw.IsError).To(BeTrue())
		Expect(saw.AssistantMessage.StopReason).To(Equal(loop.StopToolUse))
		Expect(roles(saw.Context.Messages)).To(Equal([]string{"system", "user", "assistant"}))
	})
})
