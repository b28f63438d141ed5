package loop_test

// Expectations checked against pi by testdata/pi/truncated.mjs.

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

// truncatedText is pi's text for a call of a length-stopped response.
func truncatedText(name string) string {
	return `Tool call "` + name + `" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.`
}

var _ = Describe("Truncated batch (stopReason length)", func() {
	var (
		h           *harness
		beforeCalls int
	)

	BeforeEach(func() {
		h = newHarness()
		beforeCalls = 0
		h.addTool("echo", nil)
		h.cfg.BeforeToolCall = func(context.Context, loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
			beforeCalls++
			return nil, nil
		}
		h.provider.answer(reply(loop.StopLength, call("t1", "echo", map[string]any{"x": 1}), call("t2", "ghost", nil)), says("retrying"))
	})

	It("fails every call in order with start, end and result message, executing nothing", func() {
		h.mustRun("hi")
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"tool_execution_start t1", "tool_execution_end t1 err",
			"message_start toolResult", "message_end toolResult",
			"tool_execution_start t2", "tool_execution_end t2 err",
			"message_start toolResult", "message_end toolResult",
			"turn_end",
			"turn_start",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(h.Executed()).To(BeEmpty())
		Expect(beforeCalls).To(BeZero())
	})

	It("gives each call the exact truncation text, unknown tools included (not \"not found\")", func() {
		msgs := h.mustRun("hi")
		Expect(resultTexts(msgs)).To(Equal([]string{truncatedText("echo"), truncatedText("ghost")}))
		Expect(loop.TruncatedToolCallText("ghost")).To(Equal(truncatedText("ghost")))
	})

	It("writes the tool name verbatim, as JavaScript's template string does", func() {
		h.provider.script = nil
		h.provider.answer(reply(loop.StopLength, call("t1", "say \"hi\"\t", nil)), says("ok"))
		msgs := h.mustRun("hi")
		Expect(resultTexts(msgs)).To(Equal([]string{truncatedText("say \"hi\"\t")}))
	})

	It("reports the raw arguments on start and no durationMs, with error details {}", func() {
		msgs := h.mustRun("hi")
		starts := h.rec.Of(loop.ToolExecutionStart)
		Expect(starts[0].Args).To(Equal(map[string]any{"x": 1}))
		for _, e := range h.rec.Of(loop.ToolExecutionEnd) {
			Expect(e.IsError).To(BeTrue())
			Expect(e.DurationMs).To(BeNil())
			Expect(e.Result.Details).To(Equal(map[string]any{}))
		}
		for _, r := range toolResults(msgs) {
			Expect(r.IsError).To(BeTrue())
			Expect(r.DurationMs).To(BeNil())
		}
	})

	It("keeps the loop going: the next request carries the failed results", func() {
		h.mustRun("hi")
		Expect(h.provider.Requests()).To(Equal(2))
		Expect(h.provider.sentRoles(1)).To(Equal([]string{"system", "user", "assistant", "toolResult", "toolResult"}))
	})
})
