package loop_test

// Expectations checked against pi by testdata/pi/abort.mjs.

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Abort", func() {
	var (
		h                  *harness
		ctx                context.Context
		abort              context.CancelFunc
		steering, followUp *countingQueue
		beforeCalls        int
		onBefore           func(loop.BeforeToolCallContext)
	)

	// counts is [beforeToolCall calls, requests, steering polls, follow-up polls, follow-ups
	// still queued].
	counts := func() []int {
		return []int{beforeCalls, h.provider.Requests(), steering.Polls(), followUp.Polls(), followUp.Len()}
	}
	// abortOn aborts when an event the predicate picks is emitted.
	abortOn := func(pick func(loop.Event) bool) {
		h.listen = func(e loop.Event) {
			if pick(e) {
				abort()
			}
		}
	}
	endsWithDuration := func() []string {
		ids := []string{}
		for _, e := range h.rec.Of(loop.ToolExecutionEnd) {
			if e.DurationMs != nil {
				ids = append(ids, e.ToolCallID)
			}
		}
		return ids
	}
	// expectAbortedReply checks that the run ended with the provider's aborted answer.
	expectAbortedReply := func(msgs []loop.Message) {
		last := msgs[len(msgs)-1].(*loop.AssistantMessage)
		Expect([]string{string(last.StopReason), last.ErrorMessage}).To(Equal([]string{"aborted", "Request was aborted"}))
	}
	three := []loop.Block{call("a", "a", nil), call("b", "ghost", nil), call("c", "c", nil)}

	BeforeEach(func() {
		h = newHarness()
		ctx, abort = context.WithCancel(context.Background())
		DeferCleanup(abort)
		steering = newCountingQueue(loop.OneAtATime)
		followUp = newCountingQueue(loop.OneAtATime, user("later"))
		beforeCalls, onBefore = 0, nil
		h.cfg.GetSteeringMessages = steering.Poll
		h.cfg.GetFollowUpMessages = followUp.Poll
		h.cfg.BeforeToolCall = func(_ context.Context, c loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
			beforeCalls++
			if onBefore != nil {
				onBefore(c)
			}
			return nil, nil
		}
		h.addTool("a", nil)
		h.addTool("b", nil)
		h.addTool("c", nil)
	})

	It("before the run: the first request is still made and its aborted answer ends the run", func() {
		abortOn(func(e loop.Event) bool { return e.Type == loop.AgentStart })
		h.provider.answer(calls(three...), says("never"))
		msgs, err := h.runCtx(ctx, "hi")
		Expect(err).NotTo(HaveOccurred())
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(counts()).To(Equal([]int{0, 1, 1, 0, 1}))
		expectAbortedReply(msgs)
	})

	It("before tools: every call, unknown ones included, gets start, end and \"Operation aborted\"; no hook runs", func() {
		abortOn(func(e loop.Event) bool { return e.Type == loop.MessageEnd && e.Message.Role() == "assistant" })
		h.provider.answer(calls(three...), says("never"))
		msgs, err := h.runCtx(ctx, "hi")
		Expect(err).NotTo(HaveOccurred())
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"tool_execution_start a", "tool_execution_end a err",
			"tool_execution_start b", "tool_execution_end b err",
			"tool_execution_start c", "tool_execution_end c err",
			"message_start toolResult", "message_end toolResult",
			"message_start toolResult", "message_end toolResult",
			"message_start toolResult", "message_end toolResult",
			"turn_end",
			"turn_start",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(resultTexts(msgs)).To(Equal([]string{"Operation aborted", "Operation aborted", "Operation aborted"}))
		Expect(endsWithDuration()).To(BeEmpty())
		Expect(h.Executed()).To(BeEmpty())
		Expect(counts()).To(Equal([]int{0, 2, 3, 0, 1}))
		expectAbortedReply(msgs)
	})

	It("during sequential tools: the remaining calls still get start/end with \"Operation aborted\"", func() {
		h.cfg.ToolExecution = loop.Sequential
		h.tools[0].Execute = func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			abort()
			return okResult("a ok"), nil
		}
		h.provider.answer(calls(call("a", "a", nil), call("b", "b", nil), call("c", "c", nil)), says("never"))
		msgs, err := h.runCtx(ctx, "hi")
		Expect(err).NotTo(HaveOccurred())
		Expect(h.rec.Lines()[8:21]).To(Equal([]string{
			"tool_execution_start a", "tool_execution_end a ok", "message_start toolResult", "message_end toolResult",
			"tool_execution_start b", "tool_execution_end b err", "message_start toolResult", "message_end toolResult",
			"tool_execution_start c", "tool_execution_end c err", "message_start toolResult", "message_end toolResult",
			"turn_end",
		}))
		Expect(resultTexts(msgs)).To(Equal([]string{"a ok", "Operation aborted", "Operation aborted"}))
		Expect(endsWithDuration()).To(Equal([]string{"a"}))
		Expect(counts()).To(Equal([]int{1, 2, 3, 0, 1}))
		expectAbortedReply(msgs)
	})

	It("during parallel tools: running executions see the abort and settle with their own results", func() {
		h.rt.concurrent = true
		bStarted, aEnded := make(chan struct{}), make(chan struct{})
		h.listen = func(e loop.Event) {
			if e.Type == loop.ToolExecutionEnd && e.ToolCallID == "a" {
				close(aEnded)
			}
		}
		h.tools[0].Execute = func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			<-bStarted
			abort()
			return okResult("a ok"), nil
		}
		h.tools[1].Execute = func(ctx context.Context, _ string, _ map[string]any, _ func(loop.ToolResult)) (loop.ToolResult, error) {
			close(bStarted)
			<-ctx.Done()
			<-aEnded // end in pi's order: a settled first
			return loop.ToolResult{}, errors.New("b saw the abort")
		}
		h.provider.answer(calls(call("a", "a", nil), call("b", "b", nil)), says("never"))
		msgs := h.runAsync(ctx, "hi")()
		Expect(h.rec.Lines()[8:17]).To(Equal([]string{
			"tool_execution_start a", "tool_execution_start b",
			"tool_execution_end a ok", "tool_execution_end b err",
			"message_start toolResult", "message_end toolResult", "message_start toolResult", "message_end toolResult",
			"turn_end",
		}))
		Expect(resultTexts(msgs)).To(Equal([]string{"a ok", "b saw the abort"}))
		Expect(endsWithDuration()).To(Equal([]string{"a", "b"}))
		Expect(counts()).To(Equal([]int{2, 2, 3, 0, 1}))
		expectAbortedReply(msgs)
	})

	It("during parallel preparation: a call already prepared is not executed and gets \"Operation aborted\"", func() {
		onBefore = func(c loop.BeforeToolCallContext) {
			if c.ToolCall.ID == "b" {
				abort()
			}
		}
		h.provider.answer(calls(call("a", "a", nil), call("b", "b", nil), call("c", "c", nil)), says("never"))
		msgs, err := h.runCtx(ctx, "hi")
		Expect(err).NotTo(HaveOccurred())
		Expect(h.rec.Lines()[8:21]).To(Equal([]string{
			"tool_execution_start a",
			"tool_execution_start b", "tool_execution_end b err",
			"tool_execution_start c", "tool_execution_end c err",
			"tool_execution_end a err",
			"message_start toolResult", "message_end toolResult",
			"message_start toolResult", "message_end toolResult",
			"message_start toolResult", "message_end toolResult",
			"turn_end",
		}))
		Expect(resultTexts(msgs)).To(Equal([]string{"Operation aborted", "Operation aborted", "Operation aborted"}))
		Expect(endsWithDuration()).To(BeEmpty())
		Expect(h.Executed()).To(BeEmpty())
		Expect(counts()).To(Equal([]int{2, 2, 3, 0, 1}))
	})

	It("after tools: steering is still polled and the next request made; its aborted answer ends the run", func() {
		h.cfg.AfterToolCall = func(_ context.Context, c loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
			if c.ToolCall.ID == "b" {
				abort()
			}
			return nil, nil
		}
		h.provider.answer(calls(call("a", "a", nil), call("b", "b", nil)), says("never"))
		msgs, err := h.runCtx(ctx, "hi")
		Expect(err).NotTo(HaveOccurred())
		Expect(resultTexts(msgs)).To(Equal([]string{"a ok", "b ok"}))
		Expect(endsWithDuration()).To(Equal([]string{"a", "b"}))
		Expect(counts()).To(Equal([]int{2, 2, 3, 0, 1}))
		Expect(h.rec.Lines()[len(h.rec.Lines())-5:]).To(Equal([]string{"turn_start", "message_start assistant", "message_end assistant", "turn_end", "agent_end"}))
		expectAbortedReply(msgs)
	})
})
