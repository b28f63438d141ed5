package loop_test

// Expectations checked against pi by testdata/pi/failures.mjs.

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Run failures", func() {
	var h *harness

	boom := errors.New("boom")
	// failAfter returns a hook outcome: nil the first skip times, then boom.
	failAfter := func(skip int) func() error {
		n := 0
		return func() error {
			if n++; n > skip {
				return boom
			}
			return nil
		}
	}

	BeforeEach(func() {
		h = newHarness()
		h.addTool("echo", nil)
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
	})

	DescribeTable("fail the run with the error, emitting no agent_end",
		func(hook string, install func(fail func() error), requests int, lastLine string) {
			install(failAfter(0))
			msgs, err := h.run("hi")
			Expect(err).To(MatchError(boom))
			var he *loop.HookError
			Expect(errors.As(err, &he)).To(BeTrue())
			Expect(he.Hook).To(Equal(hook))
			Expect(h.rec.Of(loop.AgentEnd)).To(BeEmpty())
			Expect(h.provider.Requests()).To(Equal(requests))
			lines := h.rec.Lines()
			Expect(lines[len(lines)-1]).To(Equal(lastLine))
			Expect(roles(msgs)).NotTo(BeEmpty())
		},
		Entry("prepareRequest", "prepareRequest", func(fail func() error) {
			h.cfg.PrepareRequest = func(context.Context, loop.RequestState) (*loop.RequestUpdate, error) { return nil, fail() }
		}, 0, "message_end user"),
		Entry("prepareNextTurn", "prepareNextTurn", func(fail func() error) {
			h.cfg.PrepareNextTurn = func(context.Context, loop.TurnContext) (*loop.TurnUpdate, error) { return nil, fail() }
		}, 1, "turn_end"),
		Entry("finishTurn", "finishTurn", func(fail func() error) {
			h.cfg.FinishTurn = func(context.Context, loop.TurnContext) (loop.TurnDecision, error) { return "", fail() }
		}, 1, "message_end toolResult"),
		Entry("steering poll A", "getSteeringMessages", func(fail func() error) {
			h.cfg.GetSteeringMessages = func(context.Context) ([]loop.Message, error) { return nil, fail() }
		}, 0, "message_end user"),
		Entry("follow-up poll", "getFollowUpMessages", func(fail func() error) {
			h.cfg.GetFollowUpMessages = func(context.Context) ([]loop.Message, error) { return nil, fail() }
		}, 2, "turn_end"),
		Entry("transformContext", "transformContext", func(fail func() error) {
			h.cfg.TransformContext = func(context.Context, []loop.Message) ([]loop.Message, error) { return nil, fail() }
		}, 0, "message_end user"),
		Entry("convertToLlm", "convertToLlm", func(fail func() error) {
			h.cfg.ConvertToLLM = func(context.Context, []loop.Message) ([]loop.Message, error) { return nil, fail() }
		}, 0, "message_end user"),
		Entry("getApiKey", "getApiKey", func(fail func() error) {
			h.cfg.GetAPIKey = func(context.Context, string) (string, error) { return "", fail() }
		}, 0, "message_end user"),
	)

	It("fails the run when steering poll C fails", func() {
		fail := failAfter(1)
		h.cfg.GetSteeringMessages = func(context.Context) ([]loop.Message, error) { return nil, fail() }
		_, err := h.run("hi")
		Expect(err).To(MatchError(boom))
		Expect(h.rec.Of(loop.AgentEnd)).To(BeEmpty())
		Expect(h.rec.Lines()[len(h.rec.Lines())-1]).To(Equal("turn_end"))
		Expect(h.provider.Requests()).To(Equal(1))
	})

	DescribeTable("fail the run when the provider side fails",
		func(hook string, setup func(), lastLine string) {
			h.provider.script = nil
			setup()
			_, err := h.run("hi")
			Expect(err).To(MatchError(boom))
			var he *loop.HookError
			Expect(errors.As(err, &he)).To(BeTrue())
			Expect(he.Hook).To(Equal(hook))
			Expect(h.rec.Of(loop.AgentEnd)).To(BeEmpty())
			lines := h.rec.Lines()
			Expect(lines[len(lines)-1]).To(Equal(lastLine))
		},
		Entry("the stream function", "stream function", func() { h.provider.openErr = boom }, "message_end user"),
		Entry("the stream's iteration", "provider stream", func() {
			h.provider.push(response{final: reply(loop.StopStop), terminal: "none", nextErr: boom})
		}, "message_start assistant"),
		Entry("the stream's result", "provider stream result", func() {
			h.provider.push(response{final: says(""), noStart: true, resultErr: boom})
		}, "message_end user"),
	)
})
