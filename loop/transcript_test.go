package loop_test

// Expectations checked against pi by testdata/pi/transcript.mjs.

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Transcript replay", func() {
	d := func(name string, description ...string) loop.ToolDeclaration {
		desc := name + " tool"
		if len(description) > 0 {
			desc = description[0]
		}
		return loop.ToolDeclaration{Name: name, Description: desc, Parameters: emptySchema}
	}
	sys := func(added []loop.ToolDeclaration, removed ...string) *loop.SystemMessage {
		m := &loop.SystemMessage{ToolsAdded: added}
		for _, r := range removed {
			m.ToolsRemoved = append(m.ToolsRemoved, loop.ToolReference{Name: r})
		}
		return m
	}
	view := func(tools []loop.ToolDeclaration) []string {
		out := []string{}
		for _, t := range tools {
			out = append(out, t.Name+":"+t.Description)
		}
		return out
	}

	It("replays every prefix: removals before additions, in JavaScript Map order", func() {
		transcript := []loop.Message{
			sys([]loop.ToolDeclaration{d("a"), d("b"), d("c")}),
			user("u"),
			sys([]loop.ToolDeclaration{d("a", "new a")}),
			sys([]loop.ToolDeclaration{d("b")}, "b"),
			sys(nil, "c"),
			sys([]loop.ToolDeclaration{d("c")}),
		}
		var replays [][]string
		for i := range transcript {
			replays = append(replays, view(loop.CurrentTools(transcript[:i+1])))
		}
		Expect(replays).To(Equal([][]string{
			{"a:a tool", "b:b tool", "c:c tool"},
			{"a:a tool", "b:b tool", "c:c tool"},
			{"a:new a", "b:b tool", "c:c tool"},
			{"a:new a", "c:c tool", "b:b tool"},
			{"a:new a", "b:b tool"},
			{"a:new a", "b:b tool", "c:c tool"},
		}))
		Expect(loop.CurrentTools(nil)).To(BeEmpty())
	})

	It("compares tool sets: additions in the current order, removals in the previous order, a change as both", func() {
		changes := loop.ToolStateChanges(
			[]loop.ToolDeclaration{d("a"), d("b"), d("c")},
			[]loop.ToolDeclaration{d("c", "changed"), d("d"), d("a")})
		Expect(view(changes.Added)).To(Equal([]string{"c:changed", "d:d tool"}))
		Expect(refNames(changes.Removed)).To(Equal([]string{"b", "c"}))
		Expect(changes.Empty()).To(BeFalse())
	})

	It("sees no change when only the order differs", func() {
		Expect(loop.ToolStateChanges([]loop.ToolDeclaration{d("a"), d("b")}, []loop.ToolDeclaration{d("b"), d("a")}).Empty()).To(BeTrue())
	})

	It("gives, on every prefix of a run's transcript, the tool set the model was shown there", func() {
		h := newHarness()
		tool := func(name string) *loop.Tool {
			return &loop.Tool{Name: name, Description: name + " tool", Parameters: emptySchema, Execute: answers(okResult("ok"))}
		}
		sets := [][]*loop.Tool{{tool("echo"), tool("grep")}, {tool("grep"), tool("ls")}, {tool("ls")}}
		h.tools = sets[0]
		n := 0
		h.cfg.PrepareNextTurn = func(_ context.Context, turn loop.TurnContext) (*loop.TurnUpdate, error) {
			if n++; n >= len(sets) {
				return nil, nil
			}
			next := turn.Context
			next.Tools = sets[n]
			return &loop.TurnUpdate{Context: &next}, nil
		}
		h.provider.answer(calls(call("t1", "echo", nil)), calls(call("t2", "grep", nil)), calls(call("t3", "ls", nil)), says("done"))
		msgs := h.mustRun("hi")
		Expect(roles(msgs)).To(Equal([]string{"system", "user", "assistant", "toolResult", "system", "assistant", "toolResult", "system", "assistant", "toolResult", "assistant"}))
		var replays [][]string
		for i := range msgs {
			replays = append(replays, names(loop.CurrentTools(msgs[:i+1])))
		}
		Expect(replays).To(Equal([][]string{
			{"echo", "grep"}, {"echo", "grep"}, {"echo", "grep"}, {"echo", "grep"},
			{"grep", "ls"}, {"grep", "ls"}, {"grep", "ls"},
			{"ls"}, {"ls"}, {"ls"}, {"ls"},
		}))
	})

	// pi's declareToolChanges is internal; tooldecl.mjs checks the same cases through the loop.
	It("DeclareToolChanges returns the pending messages untouched when nothing differs", func() {
		declared := []loop.Message{sys([]loop.ToolDeclaration{d("a")})}
		pending := []loop.Message{user("u")}
		out := loop.DeclareToolChanges(declared, []loop.ToolDeclaration{d("a")}, pending, 7)
		Expect(out).To(HaveLen(1))
		Expect(out[0]).To(BeIdenticalTo(pending[0]))
	})

	It("DeclareToolChanges stamps an inserted system message with the given time", func() {
		out := loop.DeclareToolChanges(nil, []loop.ToolDeclaration{d("a")}, []loop.Message{user("u")}, 7)
		Expect(roles(out)).To(Equal([]string{"system", "user"}))
		Expect(out[0].(*loop.SystemMessage).Timestamp).To(Equal(int64(7)))
		Expect(names(out[0].(*loop.SystemMessage).ToolsAdded)).To(Equal([]string{"a"}))
	})
})
