package loop_test

// Expectations checked against pi by testdata/pi/preparerequest.mjs.

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("prepareRequest", func() {
	var (
		h    *harness
		seen []loop.RequestState
	)

	// onRequest installs prepareRequest answering update(n) on its n-th call (0-based).
	onRequest := func(update func(n int, req loop.RequestState) *loop.RequestUpdate) {
		h.cfg.PrepareRequest = func(_ context.Context, req loop.RequestState) (*loop.RequestUpdate, error) {
			seen = append(seen, req)
			return update(len(seen)-1, req), nil
		}
	}
	continueTimes := func(n int) {
		turns := 0
		h.cfg.FinishTurn = func(context.Context, loop.TurnContext) (loop.TurnDecision, error) {
			if turns++; turns <= n {
				return loop.DecisionContinue, nil
			}
			return loop.DecisionNone, nil
		}
	}

	BeforeEach(func() {
		h = newHarness()
		seen = nil
	})

	It("runs before every request, the first included, seeing the context about to be sent", func() {
		var requestsAtCall []int
		onRequest(func(int, loop.RequestState) *loop.RequestUpdate {
			requestsAtCall = append(requestsAtCall, h.provider.Requests())
			return nil
		})
		h.addTool("echo", nil)
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		h.mustRun("hi")
		Expect(seen).To(HaveLen(2))
		Expect(requestsAtCall).To(Equal([]int{0, 1}))
		Expect(roles(seen[0].Context.Messages)).To(Equal([]string{"system", "user"}))
		Expect(roles(seen[1].Context.Messages)).To(Equal([]string{"system", "user", "assistant", "toolResult"}))
		Expect(seen[0].Model.ID).To(Equal("test-model"))
		Expect(seen[0].ThinkingLevel).To(Equal(loop.ThinkingOff))
	})

	It("sees the configured thinking level", func() {
		h.cfg.ThinkingLevel = "high"
		onRequest(func(int, loop.RequestState) *loop.RequestUpdate { return nil })
		h.provider.answer(says("a"))
		h.mustRun("hi")
		Expect(seen[0].ThinkingLevel).To(Equal(loop.ThinkingLevel("high")))
	})

	It("cannot add messages: an extra message in a replaced context is sent but neither emitted nor recorded", func() {
		onRequest(func(n int, req loop.RequestState) *loop.RequestUpdate {
			if n > 0 {
				return nil
			}
			replaced := req.Context
			replaced.Messages = append(slices.Clone(req.Context.Messages), user("extra"))
			return &loop.RequestUpdate{Context: &replaced}
		})
		h.addTool("echo", nil)
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		msgs := h.mustRun("hi")
		Expect(h.rec.Of(loop.MessageStart)).To(HaveLen(5))
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "assistant"}))
		Expect(h.provider.sentRoles(0)).To(Equal([]string{"system", "user", "user"}))
		Expect(h.provider.sentRoles(1)).To(Equal([]string{"system", "user", "user", "assistant", "toolResult"}))
	})

	It("keeps a replaced context for later requests", func() {
		h.history = []loop.Message{user("old"), says("old answer")}
		continueTimes(1)
		onRequest(func(n int, req loop.RequestState) *loop.RequestUpdate {
			if n > 0 {
				return nil
			}
			replaced := loop.Context{Messages: req.Context.Messages[2:], Tools: req.Context.Tools}
			return &loop.RequestUpdate{Context: &replaced}
		})
		h.provider.answer(says("a"), says("b"))
		h.mustRun("hi")
		Expect(h.provider.sentRoles(0)).To(Equal([]string{"user"}))
		Expect(h.provider.sentRoles(1)).To(Equal([]string{"user", "assistant"}))
	})

	It("replaces model and thinking level for this and later requests; off clears the level", func() {
		h.cfg.ThinkingLevel = "low"
		continueTimes(2)
		other := testModel
		other.ID = "other"
		onRequest(func(n int, _ loop.RequestState) *loop.RequestUpdate {
			switch n {
			case 0:
				return &loop.RequestUpdate{Model: &other, ThinkingLevel: "high"}
			case 1:
				return &loop.RequestUpdate{ThinkingLevel: loop.ThinkingOff}
			}
			return nil
		})
		h.provider.answer(says("a"), says("b"), says("c"))
		msgs := h.mustRun("hi")
		var sent [][]string
		for i := range 3 {
			req := h.provider.request(i)
			sent = append(sent, []string{req.Model.ID, string(req.ThinkingLevel)})
		}
		Expect(sent).To(Equal([][]string{{"other", "high"}, {"other", "off"}, {"other", "off"}}))
		var stamped []string
		for _, m := range msgs {
			if a, ok := m.(*loop.AssistantMessage); ok {
				stamped = append(stamped, a.ThinkingLevel)
			}
		}
		Expect(stamped).To(Equal([]string{"high", "off", "off"}))
	})
})
