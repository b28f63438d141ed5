package loop_test

// Expectations checked against pi by testdata/pi/queues.mjs (the loop's polls with counting
// queues, and pi's Agent with its PendingMessageQueue for the modes).

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Steering and follow-up queues", func() {
	var (
		h                  *harness
		steering, followUp *countingQueue
		steerDuringTools   bool
	)

	// counts is [steering polls, follow-up polls, requests].
	counts := func() []int { return []int{steering.Polls(), followUp.Polls(), h.provider.Requests()} }
	wire := func() {
		h.cfg.GetSteeringMessages = steering.Poll
		h.cfg.GetFollowUpMessages = followUp.Poll
	}
	withEcho := func() {
		h.addTool("echo", func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			if steerDuringTools {
				steering.Enqueue(user("steer"))
			}
			return okResult("echo ok"), nil
		})
	}

	BeforeEach(func() {
		h = newHarness()
		steerDuringTools = false
		steering = newCountingQueue(loop.OneAtATime)
		followUp = newCountingQueue(loop.OneAtATime)
		wire()
	})

	It("polls steering at A and C and follow-up once in a text-only run", func() {
		h.provider.answer(says("a"))
		msgs := h.mustRun("hi")
		Expect(counts()).To(Equal([]int{2, 1, 1}))
		Expect(roles(msgs)).To(Equal([]string{"user", "assistant"}))
	})

	It("polls steering at A, C, B, C in a tool turn followed by an answer", func() {
		withEcho()
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(counts()).To(Equal([]int{4, 1, 2}))
	})

	It("takes one follow-up batch of 2 after a plain stop: steering 3 polls, follow-up 2", func() {
		followUp = newCountingQueue(loop.All, user("f1"), user("f2"))
		wire()
		h.provider.answer(says("a"), says("b"))
		msgs := h.mustRun("hi")
		Expect(counts()).To(Equal([]int{3, 2, 2}))
		Expect(roles(msgs)).To(Equal([]string{"user", "assistant", "user", "user", "assistant"}))
	})

	It("takes follow-ups one at a time, one turn each, by default", func() {
		withEcho()
		followUp.Enqueue(user("f1"), user("f2"))
		h.provider.answer(says("a"), says("b"), says("c"))
		msgs := h.mustRun("hi")
		Expect(counts()).To(Equal([]int{4, 3, 3}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "user", "assistant", "user", "assistant"}))
	})

	It("takes a follow-up only when the loop would stop, after the tool turns", func() {
		withEcho()
		followUp.Enqueue(user("f1"))
		h.provider.answer(calls(call("t1", "echo", nil)), says("b"), says("c"))
		msgs := h.mustRun("hi")
		Expect(counts()).To(Equal([]int{5, 2, 3}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "assistant", "user", "assistant"}))
		Expect(h.rec.Lines()[13:]).To(Equal([]string{
			"turn_start",
			"message_start assistant", "message_end assistant",
			"turn_end",
			"turn_start",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
	})

	It("delivers steering queued during tools at poll C, before the next request, skipping poll B", func() {
		withEcho()
		steerDuringTools = true
		h.provider.answer(calls(call("t1", "echo", nil)), says("b"))
		msgs := h.mustRun("hi")
		Expect(counts()).To(Equal([]int{3, 1, 2}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "user", "assistant"}))
		Expect(h.provider.sentRoles(1)).To(Equal([]string{"system", "user", "assistant", "toolResult", "user"}))
	})

	It("takes steering queued before the run at poll A, one message per poll", func() {
		withEcho()
		steering.Enqueue(user("s1"), user("s2"))
		h.provider.answer(says("a"), says("b"))
		msgs := h.mustRun("hi")
		Expect(counts()).To(Equal([]int{3, 1, 2}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "user", "assistant", "user", "assistant"}))
	})

	It("takes all steering at once in mode all", func() {
		withEcho()
		steering = newCountingQueue(loop.All, user("s1"), user("s2"))
		wire()
		h.provider.answer(says("a"))
		msgs := h.mustRun("hi")
		Expect(counts()).To(Equal([]int{2, 1, 1}))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "user", "user", "assistant"}))
	})

	Describe("Queue", func() {
		texts := func(ms []loop.Message) []string {
			out := []string{}
			for _, m := range ms {
				out = append(out, textOf(m))
			}
			return out
		}

		It("drains the oldest message per poll in one-at-a-time mode (the default)", func() {
			q := loop.NewQueue("")
			q.Enqueue(user("f1"), user("f2"))
			Expect(texts(q.Drain())).To(Equal([]string{"f1"}))
			Expect(texts(q.Drain())).To(Equal([]string{"f2"}))
			Expect(q.Drain()).To(BeEmpty())
		})

		It("drains everything in mode all, also after switching modes", func() {
			q := loop.NewQueue(loop.OneAtATime)
			q.Enqueue(user("f1"), user("f2"), user("f3"))
			q.SetMode(loop.All)
			Expect(texts(q.Drain())).To(Equal([]string{"f1", "f2", "f3"}))
			Expect(q.Len()).To(BeZero())
		})

		It("peeks at what the next poll takes without taking it, by mode", func() {
			q := loop.NewQueue("")
			Expect(q.Mode()).To(Equal(loop.OneAtATime))
			q.Enqueue(user("f1"), user("f2"))
			Expect(texts(q.Peek())).To(Equal([]string{"f1"}))
			Expect(q.Len()).To(Equal(2))
			q.SetMode(loop.All)
			Expect(texts(q.Peek())).To(Equal([]string{"f1", "f2"}))
			Expect(texts(q.Drain())).To(Equal([]string{"f1", "f2"}))
			Expect(q.Peek()).To(BeEmpty())
		})

		It("drops every queued message on Clear", func() {
			q := loop.NewQueue(loop.All)
			q.Enqueue(user("s1"))
			q.Clear()
			Expect(q.Len()).To(BeZero())
			Expect(q.Drain()).To(BeEmpty())
		})
	})
})
