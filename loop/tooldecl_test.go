package loop_test

// Expectations checked against pi by testdata/pi/tooldecl.mjs.

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

// decl summarises a system message's declarations as [added names, removed names, text].
func decl(m *loop.SystemMessage) []any {
	return []any{names(m.ToolsAdded), refNames(m.ToolsRemoved), m.Text}
}

func decls(messages []loop.Message) [][]any {
	var out [][]any
	for _, s := range systemMessages(messages) {
		out = append(out, decl(s))
	}
	return out
}

var _ = Describe("Tool declarations in the transcript", func() {
	var h *harness

	plainTool := func(name string) *loop.Tool {
		return &loop.Tool{Name: name, Description: name + " tool", Parameters: emptySchema, Execute: answers(okResult(name + " ok"))}
	}
	// swapTools makes prepareNextTurn install sets[n] before turn n+1 (and messages[n], if any).
	swapTools := func(sets [][]*loop.Tool, messages ...[]loop.Message) {
		n := 0
		h.cfg.PrepareNextTurn = func(_ context.Context, turn loop.TurnContext) (*loop.TurnUpdate, error) {
			if n++; n >= len(sets) {
				return nil, nil
			}
			next := turn.Context
			next.Tools = sets[n]
			update := &loop.TurnUpdate{Context: &next}
			if n-1 < len(messages) {
				update.Messages = messages[n-1]
			}
			return update, nil
		}
	}
	// replayed is, per request, the tool names a replay of what it sent gives.
	replayed := func() [][]string {
		var out [][]string
		for i := range h.provider.Requests() {
			out = append(out, names(loop.CurrentTools(h.provider.request(i).Messages)))
		}
		return out
	}

	BeforeEach(func() { h = newHarness() })

	It("declares the executable tools in a system message before the prompt", func() {
		h.addTool("echo", nil)
		h.addTool("grep", nil)
		h.provider.answer(says("a"))
		msgs := h.mustRun("hi")
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant"}))
		sys := msgs[0].(*loop.SystemMessage)
		Expect(sys.ToolsAdded).To(Equal([]loop.ToolDeclaration{
			{Name: "echo", Description: "echo tool", Parameters: emptySchema},
			{Name: "grep", Description: "grep tool", Parameters: emptySchema},
		}))
		Expect(sys.ToolsRemoved).To(BeEmpty())
		Expect(sys.Text).To(BeEmpty())
	})

	It("declares nothing when the transcript already declares the executable tools", func() {
		h.addTool("echo", nil)
		h.addTool("grep", nil)
		h.provider.answer(says("a"), says("b"))
		h.history = h.mustRun("hi")
		msgs := h.mustRun("again")
		Expect(roles(msgs)).To(Equal([]string{"user", "assistant"}))
	})

	It("declares nothing without tools, and removes every tool the transcript declares when none is executable", func() {
		h.provider.answer(says("a"), says("b"))
		Expect(roles(h.mustRun("hi"))).To(Equal([]string{"user", "assistant"}))
		h.history = []loop.Message{&loop.SystemMessage{ToolsAdded: []loop.ToolDeclaration{plainTool("echo").Declaration()}}}
		Expect(decls(h.mustRun("hi"))).To(Equal([][]any{{[]string{}, []string{"echo"}, ""}}))
	})

	Context("when the executable tools change between turns", func() {
		var msgs []loop.Message

		BeforeEach(func() {
			ls := plainTool("ls")
			ls.Description = "list files"
			initial := []*loop.Tool{plainTool("echo"), plainTool("grep")}
			h.tools = initial
			swapTools([][]*loop.Tool{initial, {plainTool("grep"), plainTool("ls")}, {plainTool("grep"), ls}})
			h.provider.answer(calls(call("t1", "echo", nil)), calls(call("t2", "grep", nil)), calls(call("t3", "ls", nil)), says("done"))
		})

		It("inserts a system message with the exact delta at the start of the next turn; a changed definition is removed and added", func() {
			msgs = h.mustRun("hi")
			Expect(decls(msgs)).To(Equal([][]any{
				{[]string{"echo", "grep"}, []string{}, ""},
				{[]string{"ls"}, []string{"echo"}, ""},
				{[]string{"ls"}, []string{"ls"}, ""},
			}))
			Expect(h.rec.Lines()[13:17]).To(Equal([]string{"turn_start", "message_start system", "message_end system", "message_start assistant"}))
		})

		It("shows each request, by replay of what it sent, exactly the tools executable then", func() {
			h.mustRun("hi")
			Expect(replayed()).To(Equal([][]string{{"echo", "grep"}, {"grep", "ls"}, {"grep", "ls"}, {"grep", "ls"}}))
			Expect(loop.CurrentTools(h.provider.request(3).Messages)[1].Description).To(Equal("list files"))
		})

		It("never edits a message already sent", func() {
			atEnd := map[loop.Message]string{}
			h.listen = func(e loop.Event) {
				if e.Type == loop.MessageEnd {
					data, err := json.Marshal(e.Message)
					Expect(err).NotTo(HaveOccurred())
					atEnd[e.Message] = string(data)
				}
			}
			msgs = h.mustRun("hi")
			for _, m := range msgs {
				data, err := json.Marshal(m)
				Expect(err).NotTo(HaveOccurred())
				Expect(string(data)).To(Equal(atEnd[m]))
			}
			Expect(decl(msgs[0].(*loop.SystemMessage))).To(Equal([]any{[]string{"echo", "grep"}, []string{}, ""}))
		})
	})

	It("replaces the tool fields of a pending system message by the exact delta, leaving the caller's message alone", func() {
		initial := []*loop.Tool{plainTool("echo")}
		h.tools = initial
		prepared := &loop.SystemMessage{
			Text:         "note",
			ToolsAdded:   []loop.ToolDeclaration{{Name: "bogus", Parameters: map[string]any{}}},
			ToolsRemoved: []loop.ToolReference{{Name: "echo"}},
		}
		swapTools([][]*loop.Tool{initial, {plainTool("echo"), plainTool("grep")}}, []loop.Message{prepared, user("u")})
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		msgs := h.mustRun("hi")
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "system", "user", "assistant"}))
		Expect(decls(msgs)).To(Equal([][]any{{[]string{"echo"}, []string{}, ""}, {[]string{"grep"}, []string{}, "note"}}))
		Expect(replayed()).To(Equal([][]string{{"echo"}, {"echo", "grep"}}))
		Expect(decl(prepared)).To(Equal([]any{[]string{"bogus"}, []string{"echo"}, "note"}))
	})

	It("keeps a pending system message that declares nothing as it is when nothing changed", func() {
		h.addTool("echo", nil)
		plain := &loop.SystemMessage{Text: "plain"}
		h.cfg.PrepareNextTurn = func(context.Context, loop.TurnContext) (*loop.TurnUpdate, error) {
			return &loop.TurnUpdate{Messages: []loop.Message{plain}}, nil
		}
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		Expect(h.mustRun("hi")).To(ContainElement(BeIdenticalTo(plain)))
	})

	It("clears the declarations of a pending system message when nothing changed", func() {
		echo := h.addTool("echo", nil)
		noisy := &loop.SystemMessage{Text: "noisy", ToolsAdded: []loop.ToolDeclaration{echo.Declaration()}}
		h.cfg.PrepareNextTurn = func(context.Context, loop.TurnContext) (*loop.TurnUpdate, error) {
			return &loop.TurnUpdate{Messages: []loop.Message{noisy}}, nil
		}
		h.provider.answer(calls(call("t1", "echo", nil)), says("done"))
		Expect(decls(h.mustRun("hi"))).To(Equal([][]any{{[]string{"echo"}, []string{}, ""}, {[]string{}, []string{}, "noisy"}}))
	})

	It("uses the last system message among the prompts rather than inserting one", func() {
		h.addTool("echo", nil)
		h.provider.answer(says("a"))
		msgs, err := loop.Run(context.Background(), []loop.Message{&loop.SystemMessage{Text: "s1"}, user("u"), &loop.SystemMessage{Text: "s2"}}, h.context(), h.config())
		Expect(err).NotTo(HaveOccurred())
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "system", "assistant"}))
		Expect(decls(msgs)).To(Equal([][]any{{[]string{}, []string{}, "s1"}, {[]string{"echo"}, []string{}, "s2"}}))
	})

	It("inserts the declaration before the first non-system prompt", func() {
		h.addTool("echo", nil)
		h.provider.answer(says("a"))
		Expect(roles(h.mustRun("u1", "u2"))).To(Equal([]string{"system", "user", "user", "assistant"}))
	})
})
