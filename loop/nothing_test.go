package loop_test

// Expectations checked against pi 1.6.0, 1.4.0, 1.3.0, 0.99.1 and 0.87.1 by
// testdata/pi/releases/nothing.mjs and testdata/pi/releases/options.mjs.

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("A tool resolving nothing", func() {
	var h *harness
	BeforeEach(func() { h = newHarness() })

	nothing := func(null bool) execFunc {
		return func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			return loop.ToolResult{}, loop.Nothing{Null: null}
		}
	}

	It("gets pi's TypeError as its error result, with durationMs", func() {
		h.addTool("nil", nothing(false))
		h.addTool("null", nothing(true))
		h.provider.answer(calls(call("a", "nil", nil), call("b", "null", nil)), says("done"))
		msgs := h.mustRun("hi")
		Expect(resultTexts(msgs)).To(Equal([]string{
			"Cannot read properties of undefined (reading 'isError')",
			"Cannot read properties of null (reading 'isError')",
		}))
		end := h.rec.toolEnd("a")
		Expect(end.IsError).To(BeTrue())
		Expect(end.DurationMs).NotTo(BeNil())
	})

	It("before 0.99.1 ends the call with no result and fails the run building its message", func() {
		h.cfg.Behaviour = loop.Behaviour{}.Without(loop.ToolResultNothing)
		h.addTool("ok", nil)
		h.addTool("nil", nothing(false))
		h.provider.answer(calls(call("a", "ok", nil), call("b", "nil", nil)), says("done"))
		_, err := h.run("hi")
		Expect(err).To(MatchError(ContainSubstring("Cannot read properties of undefined (reading 'content')")))
		end := h.rec.toolEnd("b")
		Expect(end.IsError).To(BeFalse())
		data, _ := json.Marshal(end)
		Expect(string(data)).NotTo(ContainSubstring(`"result"`))
		Expect(h.rec.Of(loop.AgentEnd)).To(BeEmpty())
		Expect(h.rec.Of(loop.MessageEnd)).To(HaveLen(4)) // user, assistant, a's result; not b's
	})

	It("before 0.99.1 fails the call when afterToolCall leaves a field out, null included", func() {
		h.cfg.Behaviour = loop.Behaviour{}.Without(loop.ToolResultNothing)
		h.addTool("null", nothing(true))
		h.cfg.AfterToolCall = func(_ context.Context, c loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
			Expect(c.Nothing).To(Equal(&loop.Nothing{Null: true}))
			return &loop.AfterToolCallResult{Content: loop.Text("x")}, nil
		}
		h.provider.answer(calls(call("a", "null", nil)), says("done"))
		msgs := h.mustRun("hi")
		Expect(resultTexts(msgs)).To(Equal([]string{"Cannot read properties of null (reading 'details')"}))
	})
})

var _ = Describe("Stream options", func() {
	var h *harness
	BeforeEach(func() { h = newHarness() })

	identityJSON := func(id *loop.Identity) string {
		data, err := json.Marshal(id)
		Expect(err).NotTo(HaveOccurred())
		return string(data)
	}

	It("passes the session id and pi's default identity merged with the configured one", func() {
		v := "2.0"
		h.cfg.SessionID = "s-1"
		h.cfg.Identity = &loop.Identity{UserAgent: "short", Version: &v}
		h.provider.answer(says("hi"))
		h.mustRun("hi")
		req := h.provider.request(0)
		Expect(req.SessionID).To(Equal("s-1"))
		Expect(identityJSON(req.Identity)).To(MatchJSON(`{"attribution":{"name":"pi","url":"https://pi.dev","categories":["cli-agent"]},"userAgent":"short","version":"2.0"}`))
	})

	It("keeps attribution null over the default", func() {
		h.cfg.Identity = &loop.Identity{NoAttribution: true, UserAgent: map[string]any{"custom": "me"}}
		h.provider.answer(says("hi"))
		h.mustRun("hi")
		Expect(identityJSON(h.provider.request(0).Identity)).To(MatchJSON(`{"attribution":null,"userAgent":{"custom":"me"}}`))
	})

	It("before 1.4.0 passes the configured identity as it is, and none when unset", func() {
		h.cfg.Behaviour = loop.Behaviour{}.Without(loop.RequestIdentity)
		h.provider.answer(says("hi"))
		h.mustRun("hi")
		Expect(h.provider.request(0).Identity).To(BeNil())
	})

	It("reads and writes attribution null", func() {
		var id loop.Identity
		Expect(json.Unmarshal([]byte(`{"attribution":null,"version":"1"}`), &id)).To(Succeed())
		Expect(id.NoAttribution).To(BeTrue())
		Expect(identityJSON(&id)).To(MatchJSON(`{"attribution":null,"version":"1"}`))
	})
})
