package loop_test

// Expectations checked against pi by testdata/pi/stream.mjs.

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Streaming a response", func() {
	var h *harness

	assistantEvent := func(t loop.EventType) loop.Event {
		for _, e := range h.rec.Of(t) {
			if e.Message.Role() == "assistant" {
				return e
			}
		}
		Fail("no assistant " + string(t))
		return loop.Event{}
	}
	last := func(msgs []loop.Message) *loop.AssistantMessage { return msgs[len(msgs)-1].(*loop.AssistantMessage) }
	note := func() loop.Message {
		return &loop.CustomMessage{Fields: map[string]any{"role": "note", "text": "custom", "timestamp": 0}}
	}

	BeforeEach(func() { h = newHarness() })

	It("stamps thinkingLevel \"off\" on the final message when no level was requested", func() {
		h.provider.answer(says("a"))
		msgs := h.mustRun("hi")
		Expect(last(msgs).ThinkingLevel).To(Equal("off"))
		Expect(assistantEvent(loop.MessageEnd).Message.(*loop.AssistantMessage).ThinkingLevel).To(Equal("off"))
	})

	It("stamps the requested thinking level on the final message", func() {
		h.cfg.ThinkingLevel = "high"
		h.provider.answer(says("a"))
		Expect(last(h.mustRun("hi")).ThinkingLevel).To(Equal("high"))
	})

	It("emits message_start, a copy of the final message, when the stream never sent start, and ignores updates before it", func() {
		h.provider.push(response{final: says("a"), noStart: true})
		h.mustRun("hi")
		Expect(h.rec.All()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start user", "message_end user",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		start, end := assistantEvent(loop.MessageStart), assistantEvent(loop.MessageEnd)
		Expect(start.Message).NotTo(BeIdenticalTo(end.Message))
		Expect(start.Message.(*loop.AssistantMessage).Content).To(HaveLen(1))
		Expect(start.Message.(*loop.AssistantMessage).ThinkingLevel).To(Equal("off"))
	})

	It("finalises a stream that ends without done or error the same way", func() {
		h.provider.push(response{final: says("a"), terminal: "none"})
		msgs := h.mustRun("hi")
		Expect(h.rec.All()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start user", "message_end user",
			"message_start assistant", "message_update", "message_update", "message_update", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(last(msgs).ThinkingLevel).To(Equal("off"))
	})

	It("forwards thinking and text deltas as updates carrying copies of the growing partial", func() {
		h.provider.answer(reply(loop.StopStop, loop.ThinkingContent{Thinking: "hmm"}, text("a")))
		h.mustRun("hi")
		var kinds []loop.StreamEventType
		var lengths []int
		updates := h.rec.Of(loop.MessageUpdate)
		for _, e := range updates {
			kinds = append(kinds, e.AssistantEvent.Type)
			lengths = append(lengths, len(e.Message.(*loop.AssistantMessage).Content))
		}
		Expect(kinds).To(Equal([]loop.StreamEventType{
			loop.StreamThinkingStart, loop.StreamThinkingDelta, loop.StreamThinkingEnd,
			loop.StreamTextStart, loop.StreamTextDelta, loop.StreamTextEnd,
		}))
		Expect(lengths).To(Equal([]int{1, 1, 1, 2, 2, 2}))
		Expect(updates[0].Message).NotTo(BeIdenticalTo(updates[0].AssistantEvent.Partial))
	})

	It("emits copies: a provider mutating its one partial object later does not change what was emitted", func() {
		final := says("a")
		partial := &loop.AssistantMessage{API: "test", Provider: "test", Model: "test-model", StopReason: loop.StopStop}
		stream := &reusingStream{partial: partial, final: final}
		cfg := h.config()
		cfg.Stream = func(context.Context, loop.StreamRequest) (loop.AssistantStream, error) { return stream, nil }
		_, err := loop.Run(context.Background(), []loop.Message{user("hi")}, h.context(), cfg)
		Expect(err).NotTo(HaveOccurred())
		Expect(assistantEvent(loop.MessageStart).Message.(*loop.AssistantMessage).ResponseID).To(BeEmpty())
		Expect(h.rec.Of(loop.MessageUpdate)[0].Message.(*loop.AssistantMessage).ResponseID).To(Equal("r1"))
	})

	It("sends the transformContext view through convertToLlm, keeping the context itself", func() {
		h.history = []loop.Message{user("old"), says("old answer"), note()}
		transformed := 0
		var converted []string
		turns := 0
		h.cfg.FinishTurn = func(context.Context, loop.TurnContext) (loop.TurnDecision, error) {
			if turns++; turns == 1 {
				return loop.DecisionContinue, nil
			}
			return loop.DecisionNone, nil
		}
		h.cfg.TransformContext = func(_ context.Context, messages []loop.Message) ([]loop.Message, error) {
			transformed++
			return messages[2:], nil
		}
		h.cfg.ConvertToLLM = func(ctx context.Context, messages []loop.Message) ([]loop.Message, error) {
			converted = roles(messages)
			return loop.DefaultConvertToLLM(ctx, messages)
		}
		h.provider.answer(says("a"), says("b"))
		msgs := h.mustRun("hi")
		Expect(transformed).To(Equal(2))
		Expect(converted).To(Equal([]string{"note", "user", "assistant"}))
		Expect(h.provider.sentRoles(0)).To(Equal([]string{"user"}))
		Expect(h.provider.sentRoles(1)).To(Equal([]string{"user", "assistant"}))
		Expect(roles(msgs)).To(Equal([]string{"user", "assistant", "assistant"}))
	})

	It("drops custom roles with the default convertToLlm", func() {
		h.history = []loop.Message{note(), user("x")}
		h.provider.answer(says("a"))
		h.mustRun("y")
		Expect(h.provider.sentRoles(0)).To(Equal([]string{"user", "user"}))
	})

	It("asks getApiKey for the model's provider on every request, falling back to the configured key", func() {
		var asked []string
		h.cfg.APIKey = "fallback"
		h.cfg.GetAPIKey = func(_ context.Context, provider string) (string, error) {
			asked = append(asked, provider)
			if len(asked) == 1 {
				return "resolved", nil
			}
			return "", nil
		}
		h.cfg.FinishTurn = func(_ context.Context, _ loop.TurnContext) (loop.TurnDecision, error) {
			if len(asked) == 1 {
				return loop.DecisionContinue, nil
			}
			return loop.DecisionNone, nil
		}
		h.provider.answer(says("a"), says("b"))
		h.mustRun("hi")
		Expect(asked).To(Equal([]string{"test", "test"}))
		Expect([]string{h.provider.request(0).APIKey, h.provider.request(1).APIKey}).To(Equal([]string{"resolved", "fallback"}))
	})
})

// reusingStream streams by mutating one partial message, as pi-ai's providers do: start, then
// a text block and a response id appear on the same object, then done.
type reusingStream struct {
	partial, final *loop.AssistantMessage
	step           int
}

func (s *reusingStream) Next(context.Context) (loop.StreamEvent, bool, error) {
	s.step++
	switch s.step {
	case 1:
		return loop.StreamEvent{Type: loop.StreamStart, Partial: s.partial}, true, nil
	case 2:
		s.partial.Content = append(s.partial.Content, text("a"))
		s.partial.ResponseID = "r1"
		return loop.StreamEvent{Type: loop.StreamTextStart, Partial: s.partial}, true, nil
	case 3:
		return loop.StreamEvent{Type: loop.StreamDone, Reason: loop.StopStop, Message: s.final}, true, nil
	}
	return loop.StreamEvent{}, false, nil
}

func (s *reusingStream) Result(context.Context) (*loop.AssistantMessage, error) { return s.final, nil }
