package loop_test

// Expectations checked against pi by testdata/pi/preparenextturn.mjs.

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("prepareNextTurn", func() {
	var (
		h    *harness
		seen []loop.TurnContext
		// update answers the n-th call (0-based); nil answers nothing.
		update func(n int, turn loop.TurnContext) *loop.TurnUpdate
	)

	BeforeEach(func() {
		h = newHarness()
		seen, update = nil, nil
		h.addTool("echo", nil)
		h.cfg.PrepareNextTurn = func(_ context.Context, turn loop.TurnContext) (*loop.TurnUpdate, error) {
			seen = append(seen, turn)
			if update == nil {
				return nil, nil
			}
			return update(len(seen)-1, turn), nil
		}
	})

	It("is not called before the first turn", func() {
		h.provider.answer(says("a"))
		h.mustRun("hi")
		Expect(seen).To(BeEmpty())
	})

	It("is called before every later turn with the turn that just completed", func() {
		h.provider.answer(calls(call("t1", "echo", nil)), calls(call("t2", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(seen).To(HaveLen(2))
		Expect(seen[0].Message.StopReason).To(Equal(loop.StopToolUse))
		Expect(seen[0].ToolResults[0].ToolCallID).To(Equal("t1"))
		Expect(seen[1].ToolResults[0].ToolCallID).To(Equal("t2"))
	})

	It("appends its messages with their events after turn_start, before the request", func() {
		update = func(int, loop.TurnContext) *loop.TurnUpdate {
			return &loop.TurnUpdate{Messages: []loop.Message{user("prepared")}}
		}
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		msgs := h.mustRun("hi")
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"tool_execution_start t1", "tool_execution_end t1 ok",
			"message_start toolResult", "message_end toolResult",
			"turn_end",
			"turn_start",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "user", "assistant"}))
		Expect(h.provider.sentRoles(1)).To(Equal([]string{"system", "user", "assistant", "toolResult", "user"}))
	})

	It("puts its messages before pending steering, and poll B is skipped while steering is pending", func() {
		steering := newCountingQueue(loop.OneAtATime)
		h.cfg.GetSteeringMessages = steering.Poll
		h.cfg.BeforeToolCall = func(context.Context, loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
			steering.Enqueue(user("steer"))
			return nil, nil
		}
		update = func(int, loop.TurnContext) *loop.TurnUpdate {
			return &loop.TurnUpdate{Messages: []loop.Message{user("prepared")}}
		}
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		msgs := h.mustRun("hi")
		var users []string
		for _, m := range msgs {
			if m.Role() == "user" {
				users = append(users, textOf(m))
			}
		}
		Expect(users).To(Equal([]string{"hi", "prepared", "steer"}))
		Expect(steering.Polls()).To(Equal(3))
	})

	It("replaces the context", func() {
		update = func(_ int, turn loop.TurnContext) *loop.TurnUpdate {
			kept := loop.Context{Tools: turn.Context.Tools}
			for _, m := range turn.Context.Messages {
				if m.Role() != "assistant" && m.Role() != "toolResult" {
					kept.Messages = append(kept.Messages, m)
				}
			}
			return &loop.TurnUpdate{Context: &kept}
		}
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(h.provider.sentRoles(1)).To(Equal([]string{"system", "user"}))
	})

	It("replaces model and thinking level; off clears the level", func() {
		h.cfg.ThinkingLevel = "low"
		next := testModel
		next.ID = "next"
		update = func(n int, _ loop.TurnContext) *loop.TurnUpdate {
			if n == 0 {
				return &loop.TurnUpdate{Model: &next, ThinkingLevel: "medium"}
			}
			return &loop.TurnUpdate{ThinkingLevel: loop.ThinkingOff}
		}
		h.provider.answer(calls(call("t1", "echo", nil)), calls(call("t2", "echo", nil)), says("done"))
		msgs := h.mustRun("hi")
		var sent [][]string
		for i := range 3 {
			req := h.provider.request(i)
			sent = append(sent, []string{req.Model.ID, string(req.ThinkingLevel)})
		}
		Expect(sent).To(Equal([][]string{{"test-model", "low"}, {"next", "medium"}, {"next", "off"}}))
		var stamped []string
		for _, m := range msgs {
			if a, ok := m.(*loop.AssistantMessage); ok {
				stamped = append(stamped, a.ThinkingLevel)
			}
		}
		Expect(stamped).To(Equal([]string{"low", "medium", "off"}))
	})

	It("runs after poll C and before poll B and turn_start", func() {
		var order []string
		h.cfg.GetSteeringMessages = func(context.Context) ([]loop.Message, error) {
			order = append(order, "poll")
			return nil, nil
		}
		h.cfg.PrepareNextTurn = func(context.Context, loop.TurnContext) (*loop.TurnUpdate, error) {
			order = append(order, "prepareNextTurn")
			return nil, nil
		}
		h.listen = func(e loop.Event) {
			if e.Type == loop.TurnStart || e.Type == loop.TurnEnd {
				order = append(order, string(e.Type))
			}
		}
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(order).To(Equal([]string{"turn_start", "poll", "turn_end", "poll", "prepareNextTurn", "poll", "turn_start", "turn_end", "poll"}))
	})
})
