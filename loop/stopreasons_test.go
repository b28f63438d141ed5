package loop_test

// Expectations checked against pi by testdata/pi/stopreasons.mjs.

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Stop reasons: content decides, error and aborted exit", func() {
	var h *harness

	BeforeEach(func() {
		h = newHarness()
		h.addTool("echo", nil)
	})

	It("executes a tool call in a response that says stop", func() {
		h.provider.answer(reply(loop.StopStop, text("running it"), call("t1", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(h.Executed()).To(Equal([]string{"t1"}))
		Expect(h.provider.Requests()).To(Equal(2))
		Expect(h.rec.Lines()).To(ContainElements("tool_execution_start t1", "tool_execution_end t1 ok"))
	})

	It("stops after a response that says toolUse but holds no tool call", func() {
		h.provider.answer(reply(loop.StopToolUse, text("no call after all")))
		h.mustRun("hi")
		Expect(h.provider.Requests()).To(Equal(1))
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
	})

	DescribeTable("ends the run at once, ignoring finishTurn and the queues",
		func(stop loop.StopReason) {
			steering := newCountingQueue(loop.OneAtATime, user("steer"))
			followUp := newCountingQueue(loop.OneAtATime, user("more"))
			var finishCalls, finishResults int
			h.cfg.GetSteeringMessages = steering.Poll
			h.cfg.GetFollowUpMessages = followUp.Poll
			h.cfg.FinishTurn = func(_ context.Context, turn loop.TurnContext) (loop.TurnDecision, error) {
				finishCalls++
				finishResults = len(turn.ToolResults)
				return loop.DecisionContinue, nil
			}
			failed := reply(stop, call("t1", "echo", nil))
			failed.ErrorMessage = "boom"
			h.provider.answer(failed, says("never"))

			msgs := h.mustRun("hi")
			Expect(h.rec.Lines()).To(Equal([]string{
				"agent_start", "turn_start",
				"message_start system", "message_end system",
				"message_start user", "message_end user",
				"message_start user", "message_end user",
				"message_start assistant", "message_end assistant",
				"turn_end", "agent_end",
			}))
			Expect(roles(msgs)).To(Equal([]string{"system", "user", "user", "assistant"}))
			Expect(h.provider.Requests()).To(Equal(1))
			Expect(h.Executed()).To(BeEmpty())
			Expect([]int{finishCalls, finishResults}).To(Equal([]int{1, 0}))
			Expect([]int{steering.Polls(), followUp.Polls(), followUp.Len()}).To(Equal([]int{1, 0, 1}))
			Expect(h.rec.Of(loop.TurnEnd)[0].ToolResults).To(BeEmpty())
		},
		Entry("on stopReason error", loop.StopError),
		Entry("on stopReason aborted", loop.StopAborted),
	)

	It("follows the final message's stop reason, not the event type: an error event whose message says stop continues", func() {
		h.provider.push(response{final: reply(loop.StopStop, call("t1", "echo", nil)), terminal: loop.StreamError})
		h.provider.answer(says("done"))
		h.mustRun("hi")
		Expect(h.Executed()).To(Equal([]string{"t1"}))
		Expect(h.provider.Requests()).To(Equal(2))
		Expect(h.rec.Lines()[len(h.rec.Lines())-1]).To(Equal("agent_end"))
	})

	It("treats a length stop without tool calls as a normal stop", func() {
		followUp := newCountingQueue(loop.OneAtATime)
		h.cfg.GetFollowUpMessages = followUp.Poll
		h.tools = nil
		h.provider.answer(reply(loop.StopLength, text("cut off")))
		h.mustRun("hi")
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(followUp.Polls()).To(Equal(1))
	})
})
