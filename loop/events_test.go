package loop_test

// Expectations checked against pi by testdata/pi/events.mjs. testdata/pi/tool-turn.events.json
// is the value that script prints for "tool turn JSON" (pi's events, clocks fixed), indented.

import (
	"context"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Run start and event order", func() {
	var h *harness

	BeforeEach(func() { h = newHarness() })

	It("emits agent_start, turn_start, the prompt, the streamed answer, turn_end and agent_end for a text-only run", func() {
		h.provider.answer(says("hello"))
		msgs := h.mustRun("hi")
		Expect(h.rec.All()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start user", "message_end user",
			"message_start assistant", "message_update", "message_update", "message_update", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(roles(msgs)).To(Equal([]string{"user", "assistant"}))
	})

	It("emits the first turn_start before the prompt messages, outside the loop body", func() {
		h.provider.answer(says("hello"))
		h.mustRun("hi")
		Expect(h.rec.Lines()[:3]).To(Equal([]string{"agent_start", "turn_start", "message_start user"}))
	})

	It("forwards every stream delta as a message_update carrying the stream event", func() {
		h.provider.answer(says("hello"))
		h.mustRun("hi")
		var kinds []loop.StreamEventType
		for _, e := range h.rec.Of(loop.MessageUpdate) {
			kinds = append(kinds, e.AssistantEvent.Type)
		}
		Expect(kinds).To(Equal([]loop.StreamEventType{loop.StreamTextStart, loop.StreamTextDelta, loop.StreamTextEnd}))
	})

	It("starts the assistant message with the empty partial and ends it with the final message", func() {
		h.provider.answer(says("hello"))
		h.mustRun("hi")
		start, end := h.rec.Of(loop.MessageStart)[1], h.rec.Of(loop.MessageEnd)[1]
		Expect(start.Message.(*loop.AssistantMessage).Content).To(BeEmpty())
		Expect(textOf(end.Message)).To(Equal("hello"))
	})

	It("runs a tool turn: declaration, prompt, call, result, then a second turn", func() {
		h.addTool("echo", nil)
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
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "assistant"}))
	})

	It("runs several tool turns in a row, one turn per response", func() {
		h.addTool("echo", nil)
		h.provider.answer(calls(call("t1", "echo", nil)), calls(call("t2", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"tool_execution_start t1", "tool_execution_end t1 ok",
			"message_start toolResult", "message_end toolResult",
			"turn_end",
			"turn_start",
			"message_start assistant", "message_end assistant",
			"tool_execution_start t2", "tool_execution_end t2 ok",
			"message_start toolResult", "message_end toolResult",
			"turn_end",
			"turn_start",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
	})

	It("makes exactly one provider request per turn", func() {
		h.addTool("echo", nil)
		h.provider.answer(calls(call("t1", "echo", nil)), calls(call("t2", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(h.provider.Requests()).To(Equal(3))
		Expect(h.rec.Of(loop.TurnStart)).To(HaveLen(3))
		Expect(h.rec.Of(loop.TurnEnd)).To(HaveLen(3))
	})

	It("sends each request the whole context so far", func() {
		h.addTool("echo", nil)
		h.provider.answer(calls(call("t1", "echo", nil)), calls(call("t2", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(h.provider.sentRoles(0)).To(Equal([]string{"system", "user"}))
		Expect(h.provider.sentRoles(1)).To(Equal([]string{"system", "user", "assistant", "toolResult"}))
		Expect(h.provider.sentRoles(2)).To(Equal([]string{"system", "user", "assistant", "toolResult", "assistant", "toolResult"}))
	})

	It("emits start and end for each of several prompts and ends with the run's new messages only", func() {
		h.history = []loop.Message{user("before"), says("earlier")}
		h.provider.answer(says("now"))
		msgs := h.mustRun("a", "b")
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start user", "message_end user",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		end := h.rec.Of(loop.AgentEnd)[0]
		Expect(roles(end.Messages)).To(Equal([]string{"user", "user", "assistant"}))
		Expect([]string{textOf(end.Messages[0]), textOf(end.Messages[1]), textOf(end.Messages[2])}).To(Equal([]string{"a", "b", "now"}))
		Expect(msgs).To(Equal(end.Messages))
	})

	It("ends with every new message of the run: declaration, prompt, prepared, steering, follow-up, assistants, results", func() {
		steering := newCountingQueue(loop.OneAtATime)
		followUp := newCountingQueue(loop.OneAtATime, user("follow"))
		h.cfg.GetSteeringMessages = steering.Poll
		h.cfg.GetFollowUpMessages = followUp.Poll
		prepared := false
		h.cfg.PrepareNextTurn = func(context.Context, loop.TurnContext) (*loop.TurnUpdate, error) {
			if prepared {
				return nil, nil
			}
			prepared = true
			return &loop.TurnUpdate{Messages: []loop.Message{user("prepared")}}, nil
		}
		h.history = []loop.Message{user("old")}
		h.addTool("echo", func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			steering.Enqueue(user("steer"))
			return okResult("echo ok"), nil
		})
		h.provider.answer(calls(call("t1", "echo", nil)), says("b"), says("c"))
		h.mustRun("hi")
		end := h.rec.Of(loop.AgentEnd)[0]
		Expect(roles(end.Messages)).To(Equal([]string{"system", "user", "assistant", "toolResult", "user", "user", "assistant", "user", "assistant"}))
		var users []string
		for _, m := range end.Messages {
			if m.Role() == "user" {
				users = append(users, textOf(m))
			}
		}
		Expect(users).To(Equal([]string{"hi", "prepared", "steer", "follow"}))
	})

	It("waits for each listener: a tool executes only after its tool_execution_start was delivered", func() {
		var order []string
		h.addTool("echo", func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			order = append(order, "execute")
			return okResult("ok"), nil
		})
		h.listen = func(e loop.Event) {
			if e.Type == loop.ToolExecutionStart {
				order = append(order, "listener done")
			}
		}
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(order).To(Equal([]string{"listener done", "execute"}))
	})

	It("emits every event of a tool turn in pi's JSON shape (testdata/pi/tool-turn.events.json)", func() {
		want, err := os.ReadFile("testdata/pi/tool-turn.events.json")
		Expect(err).NotTo(HaveOccurred())
		h.addTool("echo", func(_ context.Context, _ string, _ map[string]any, onUpdate func(loop.ToolResult)) (loop.ToolResult, error) {
			onUpdate(okResult("half"))
			return loop.ToolResult{Content: loop.Text("echo ok"), Details: map[string]any{"n": 1}}, nil
		})
		h.provider.answer(calls(text("let me"), call("t1", "echo", map[string]any{"q": "x"})), says("done"))
		h.mustRun("hi")
		Expect(jsonText(h.rec.Of(""))).To(MatchJSON(want))
	})
})
