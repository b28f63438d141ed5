package loop_test

// Expectations checked against pi by testdata/pi/finishturn.mjs.

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("finishTurn", func() {
	var (
		h                  *harness
		steering, followUp *countingQueue
		decisions          []loop.TurnDecision
		seen               []loop.TurnContext
		steerAfterTurn1    bool
	)

	// counts is [requests, finishTurn calls, steering polls, follow-up polls, steering still
	// queued, follow-ups still queued].
	counts := func() []int {
		return []int{h.provider.Requests(), len(seen), steering.Polls(), followUp.Polls(), steering.Len(), followUp.Len()}
	}

	BeforeEach(func() {
		h = newHarness()
		steering = newCountingQueue(loop.OneAtATime)
		followUp = newCountingQueue(loop.OneAtATime)
		decisions, seen, steerAfterTurn1 = nil, nil, false
		h.cfg.GetSteeringMessages = steering.Poll
		h.cfg.GetFollowUpMessages = followUp.Poll
		h.cfg.FinishTurn = func(_ context.Context, turn loop.TurnContext) (loop.TurnDecision, error) {
			seen = append(seen, turn)
			if steerAfterTurn1 && len(seen) == 1 {
				steering.Enqueue(user("steer"))
			}
			if len(seen) <= len(decisions) {
				return decisions[len(seen)-1], nil
			}
			return loop.DecisionNone, nil
		}
		h.addTool("echo", nil)
		stop := okResult("stop ok")
		stop.Terminate = true
		h.addTool("stop", answers(stop))
	})

	It("makes exactly one context-only request when nothing else asks for one", func() {
		decisions = []loop.TurnDecision{loop.DecisionContinue}
		h.provider.answer(says("one"), says("two"))
		msgs := h.mustRun("hi")
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"turn_end",
			"turn_start",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(counts()).To(Equal([]int{2, 2, 4, 2, 0, 0}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "assistant"}))
		Expect(h.provider.sentRoles(1)).To(Equal([]string{"system", "user", "assistant"}))
	})

	DescribeTable("adds no request when something already asks for one",
		func(first *loop.AssistantMessage, setup func(), want []int, wantRoles []string) {
			decisions = []loop.TurnDecision{loop.DecisionContinue}
			if setup != nil {
				setup()
			}
			h.provider.answer(first, says("two"))
			msgs := h.mustRun("hi")
			Expect(counts()).To(Equal(want))
			Expect(roles(msgs)).To(Equal(wantRoles))
		},
		Entry("tool results", calls(call("t1", "echo", nil)), nil,
			[]int{2, 2, 4, 1, 0, 0}, []string{"system", "user", "assistant", "toolResult", "assistant"}),
		Entry("steering", says("one"), func() { steerAfterTurn1 = true },
			[]int{2, 2, 3, 1, 0, 0}, []string{"system", "user", "assistant", "user", "assistant"}),
		Entry("a follow-up", says("one"), func() { followUp.Enqueue(user("more")) },
			[]int{2, 2, 3, 2, 0, 0}, []string{"system", "user", "assistant", "user", "assistant"}),
	)

	It("makes exactly one extra request after a terminating batch", func() {
		decisions = []loop.TurnDecision{loop.DecisionContinue}
		h.provider.answer(calls(call("t1", "stop", nil)), says("two"))
		msgs := h.mustRun("hi")
		Expect(counts()).To(Equal([]int{2, 2, 4, 2, 0, 0}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "assistant"}))
	})

	It("never stops on its own when it answers continue on every turn", func() {
		decisions = []loop.TurnDecision{loop.DecisionContinue, loop.DecisionContinue, loop.DecisionContinue, loop.DecisionContinue, loop.DecisionEnd}
		h.provider.answer(says("1"), says("2"), says("3"), says("4"), says("5"))
		h.mustRun("hi")
		Expect(counts()).To(Equal([]int{5, 5, 9, 4, 0, 0}))
	})

	It("ends the run right after turn_end on end, leaving tools' wish and both queues untouched", func() {
		decisions = []loop.TurnDecision{loop.DecisionEnd}
		followUp.Enqueue(user("more"))
		h.tools[0].Execute = func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			steering.Enqueue(user("steer"))
			return okResult("echo ok"), nil
		}
		h.provider.answer(calls(call("t1", "echo", nil)), says("never"))
		msgs := h.mustRun("hi")
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"tool_execution_start t1", "tool_execution_end t1 ok",
			"message_start toolResult", "message_end toolResult",
			"turn_end", "agent_end",
		}))
		Expect(counts()).To(Equal([]int{1, 1, 1, 0, 1, 1}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult"}))
	})

	It("is called on an aborted turn but its continue is ignored", func() {
		decisions = []loop.TurnDecision{loop.DecisionContinue}
		h.provider.answer(reply(loop.StopAborted), says("never"))
		msgs := h.mustRun("hi")
		Expect(counts()).To(Equal([]int{1, 1, 1, 0, 0, 0}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant"}))
	})

	It("sees the turn's message, tool results, context and new messages", func() {
		h.provider.answer(calls(call("t1", "echo", nil)), says("two"))
		h.mustRun("hi")
		Expect(seen).To(HaveLen(2))
		Expect(seen[0].Message.StopReason).To(Equal(loop.StopToolUse))
		Expect(seen[0].ToolResults).To(HaveLen(1))
		Expect(seen[0].ToolResults[0].ToolCallID).To(Equal("t1"))
		Expect(roles(seen[0].Context.Messages)).To(Equal([]string{"system", "user", "assistant", "toolResult"}))
		Expect(roles(seen[0].NewMessages)).To(Equal([]string{"system", "user", "assistant", "toolResult"}))
		Expect(seen[1].Message.StopReason).To(Equal(loop.StopStop))
		Expect(seen[1].ToolResults).To(BeEmpty())
		Expect(roles(seen[1].Context.Messages)).To(Equal([]string{"system", "user", "assistant", "toolResult", "assistant"}))
	})

	It("runs after the turn's messages and before turn_end", func() {
		var linesAtCall []string
		h.cfg.FinishTurn = func(context.Context, loop.TurnContext) (loop.TurnDecision, error) {
			linesAtCall = h.rec.Lines()
			return loop.DecisionNone, nil
		}
		h.provider.answer(says("one"))
		h.mustRun("hi")
		Expect(linesAtCall[len(linesAtCall)-1]).To(Equal("message_end assistant"))
		Expect(h.rec.Lines()[len(linesAtCall)]).To(Equal("turn_end"))
	})
})
