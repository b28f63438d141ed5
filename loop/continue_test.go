package loop_test

// Expectations checked against pi by testdata/pi/continue.mjs.

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Continue", func() {
	var h *harness

	BeforeEach(func() { h = newHarness() })

	It("refuses an empty transcript with pi's text, before any event or request", func() {
		msgs, err := h.resume()
		Expect(err).To(MatchError("Cannot continue: no messages in context"))
		Expect(err).To(MatchError(loop.ErrContinueEmpty))
		Expect(msgs).To(BeEmpty())
		Expect(h.rec.All()).To(BeEmpty())
		Expect(h.provider.Requests()).To(BeZero())
	})

	It("refuses a transcript ending with an assistant message with pi's text, before any event", func() {
		h.history = []loop.Message{user("hi"), says("hello")}
		_, err := h.resume()
		Expect(err).To(MatchError("Cannot continue from message role: assistant"))
		Expect(err).To(MatchError(loop.ErrContinueFromAssistant))
		Expect(h.rec.All()).To(BeEmpty())
		Expect(h.provider.Requests()).To(BeZero())
	})

	It("resumes from a user message with agent_start, turn_start and no message of its own", func() {
		h.history = []loop.Message{user("hi")}
		h.provider.answer(says("again"))
		msgs, err := h.resume()
		Expect(err).NotTo(HaveOccurred())
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(roles(msgs)).To(Equal([]string{"assistant"}))
		Expect(h.provider.sentRoles(0)).To(Equal([]string{"user"}))
	})

	It("resumes from tool results whose tools are declared without declaring them again", func() {
		echo := h.addTool("echo", nil)
		h.history = []loop.Message{
			&loop.SystemMessage{ToolsAdded: []loop.ToolDeclaration{echo.Declaration()}},
			user("hi"),
			calls(call("t1", "echo", nil)),
			&loop.ToolResultMessage{ToolCallID: "t1", ToolName: "echo", Content: loop.Text("echo ok")},
		}
		h.provider.answer(says("done"))
		msgs, err := h.resume()
		Expect(err).NotTo(HaveOccurred())
		Expect(roles(msgs)).To(Equal([]string{"assistant"}))
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
	})

	It("declares executable but undeclared tools first, appending the system message after the transcript", func() {
		h.addTool("echo", nil)
		h.history = []loop.Message{user("hi")}
		h.provider.answer(says("done"))
		msgs, err := h.resume()
		Expect(err).NotTo(HaveOccurred())
		Expect(h.rec.Lines()).To(Equal([]string{
			"agent_start", "turn_start",
			"message_start system", "message_end system",
			"message_start assistant", "message_end assistant",
			"turn_end", "agent_end",
		}))
		Expect(roles(msgs)).To(Equal([]string{"system", "assistant"}))
		Expect(names(msgs[0].(*loop.SystemMessage).ToolsAdded)).To(Equal([]string{"echo"}))
		Expect(h.provider.sentRoles(0)).To(Equal([]string{"user", "system"}))
	})
})
