package loop_test

// Expectations checked against pi by testdata/pi/terminate.mjs.

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Batch termination", func() {
	var (
		h                  *harness
		steering, followUp *countingQueue
	)

	terminating := func(name string) loop.ToolResult {
		res := okResult(name + " ok")
		res.Terminate = true
		return res
	}
	blockGuard := func(terminate bool) func(context.Context, loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
		return func(_ context.Context, c loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
			if c.ToolCall.Name == "guard" {
				return &loop.BeforeToolCallResult{Block: true, Reason: "no", Terminate: terminate}, nil
			}
			return nil, nil
		}
	}
	afterSets := func(terminate bool) func(context.Context, loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
		return func(context.Context, loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
			return &loop.AfterToolCallResult{Terminate: &terminate}, nil
		}
	}
	// counts is [requests, steering polls, follow-up polls].
	counts := func() []int { return []int{h.provider.Requests(), steering.Polls(), followUp.Polls()} }

	BeforeEach(func() {
		h = newHarness()
		steering = newCountingQueue(loop.OneAtATime)
		followUp = newCountingQueue(loop.OneAtATime)
		h.cfg.GetSteeringMessages = steering.Poll
		h.cfg.GetFollowUpMessages = followUp.Poll
		h.addTool("stop", answers(terminating("stop")))
		h.addTool("echo", nil)
		h.addTool("guard", nil)
	})

	It("skips the tool-driven request when every result terminates, still polling steering and follow-up", func() {
		h.provider.answer(calls(call("t1", "stop", nil), call("t2", "stop", nil)), says("after"))
		msgs := h.mustRun("hi")
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"tool_execution_start t1", "tool_execution_start t2",
			"tool_execution_end t1 ok", "tool_execution_end t2 ok",
			"message_start toolResult", "message_end toolResult",
			"message_start toolResult", "message_end toolResult",
			"turn_end", "agent_end",
		}))
		Expect(counts()).To(Equal([]int{1, 2, 1}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "toolResult"}))
	})

	DescribeTable("votes with every finalised result",
		func(batch []loop.Block, configure func(*loop.Config), want []int, wantRoles []string) {
			if configure != nil {
				configure(&h.cfg)
			}
			h.provider.answer(calls(batch...), says("after"))
			msgs := h.mustRun("hi")
			Expect(counts()).To(Equal(want))
			Expect(roles(msgs)).To(Equal(wantRoles))
		},
		Entry("some terminate: the loop goes on",
			[]loop.Block{call("t1", "stop", nil), call("t2", "echo", nil)}, nil,
			[]int{2, 4, 1}, []string{"system", "user", "assistant", "toolResult", "toolResult", "assistant"}),
		Entry("none terminate: the loop goes on",
			[]loop.Block{call("t1", "echo", nil), call("t2", "echo", nil)}, nil,
			[]int{2, 4, 1}, []string{"system", "user", "assistant", "toolResult", "toolResult", "assistant"}),
		Entry("a call blocked with terminate votes to terminate",
			[]loop.Block{call("t1", "stop", nil), call("t2", "guard", nil)},
			func(c *loop.Config) { c.BeforeToolCall = blockGuard(true) },
			[]int{1, 2, 1}, []string{"system", "user", "assistant", "toolResult", "toolResult"}),
		Entry("a lone call blocked with terminate terminates",
			[]loop.Block{call("t1", "guard", nil)},
			func(c *loop.Config) { c.BeforeToolCall = blockGuard(true) },
			[]int{1, 2, 1}, []string{"system", "user", "assistant", "toolResult"}),
		Entry("a call blocked without terminate keeps the loop going",
			[]loop.Block{call("t1", "stop", nil), call("t2", "guard", nil)},
			func(c *loop.Config) { c.BeforeToolCall = blockGuard(false) },
			[]int{2, 4, 1}, []string{"system", "user", "assistant", "toolResult", "toolResult", "assistant"}),
		Entry("afterToolCall can set terminate on every result",
			[]loop.Block{call("t1", "echo", nil), call("t2", "echo", nil)},
			func(c *loop.Config) { c.AfterToolCall = afterSets(true) },
			[]int{1, 2, 1}, []string{"system", "user", "assistant", "toolResult", "toolResult"}),
		Entry("afterToolCall can clear terminate",
			[]loop.Block{call("t1", "stop", nil)},
			func(c *loop.Config) { c.AfterToolCall = afterSets(false) },
			[]int{2, 4, 1}, []string{"system", "user", "assistant", "toolResult", "assistant"}),
	)

	DescribeTable("only skips the tool-driven request: a message queued during the tools still gets a request, when it is",
		func(queue func() *countingQueue, want []int) {
			h.cfg.BeforeToolCall = func(context.Context, loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
				queue().Enqueue(user("queued"))
				return nil, nil
			}
			h.provider.answer(calls(call("t1", "stop", nil)), says("after"))
			msgs := h.mustRun("hi")
			Expect(counts()).To(Equal(want))
			Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "user", "assistant"}))
		},
		Entry("steering", func() *countingQueue { return steering }, []int{2, 3, 1}),
		Entry("follow-up", func() *countingQueue { return followUp }, []int{2, 3, 2}),
	)
})
