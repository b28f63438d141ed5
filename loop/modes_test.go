package loop_test

// Expectations checked against pi by testdata/pi/modes.mjs.

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("Sequential and parallel execution", func() {
	var h *harness

	// toolLines are the lines of the first turn's tool phase, up to its turn_end.
	toolLines := func() []string {
		lines := h.rec.Lines()
		return lines[8 : len(lines)-5]
	}
	sequentialLines := []string{
		"tool_execution_start a", "tool_execution_end a ok", "message_start toolResult", "message_end toolResult",
		"tool_execution_start b", "tool_execution_end b ok", "message_start toolResult", "message_end toolResult",
		"turn_end",
	}
	parallelLines := []string{
		"tool_execution_start a", "tool_execution_start b", "tool_execution_end a ok", "tool_execution_end b ok",
		"message_start toolResult", "message_end toolResult", "message_start toolResult", "message_end toolResult",
		"turn_end",
	}

	BeforeEach(func() {
		h = newHarness()
		h.addTool("a", nil)
		h.addTool("b", nil)
		h.provider.answer(calls(call("a", "a", nil), call("b", "b", nil)), says("done"))
	})

	It("finishes each call, result message included, before the next when the config says sequential", func() {
		h.cfg.ToolExecution = loop.Sequential
		h.mustRun("hi")
		Expect(toolLines()).To(Equal(sequentialLines))
	})

	It("prepares every call first and emits the result messages after all ends by default", func() {
		h.mustRun("hi")
		Expect(toolLines()).To(Equal(parallelLines))
	})

	It("runs the whole batch sequentially when one called tool is executionMode sequential", func() {
		h.tools[1].ExecutionMode = loop.Sequential
		h.mustRun("hi")
		Expect(toolLines()).To(Equal(sequentialLines))
	})

	It("stays parallel when the sequential tool is not called", func() {
		h.addTool("s", nil).ExecutionMode = loop.Sequential
		h.mustRun("hi")
		Expect(toolLines()).To(Equal(parallelLines))
	})

	Context("with executions held on gates", func() {
		var g *gates

		BeforeEach(func() {
			h = newHarness()
			h.rt.concurrent = true
			g = newGates("a", "c")
			h.addTool("slow", g.exec)
			h.addTool("calc", nil).Parameters = map[string]any{
				"type":       "object",
				"properties": map[string]any{"n": map[string]any{"type": "number"}},
				"required":   []any{"n"},
			}
		})

		It("starts every execution before any completes, ends in completion order, results in source order", func() {
			h.provider.answer(calls(call("a", "slow", nil), call("c", "slow", nil)), says("done"))
			wait := h.runAsync(context.Background(), "hi")
			Expect(g.awaitStarted(2)).To(ConsistOf("a", "c"))
			h.completeInOrder(g, "c", "a")
			msgs := wait()
			Expect(toolLines()).To(Equal([]string{
				"tool_execution_start a", "tool_execution_start c",
				"tool_execution_end c ok", "tool_execution_end a ok",
				"message_start toolResult", "message_end toolResult", "message_start toolResult", "message_end toolResult",
				"turn_end",
			}))
			Expect(resultTexts(msgs)).To(Equal([]string{"a done", "c done"}))
		})

		DescribeTable("the preflight example: immediate failures end at once, executions as they complete",
			func(order []string, ends []string) {
				h.provider.answer(calls(call("a", "slow", nil), call("b", "ghost", nil), call("c", "slow", nil), call("d", "calc", map[string]any{"n": "x"})), says("done"))
				wait := h.runAsync(context.Background(), "hi")
				Expect(g.awaitStarted(2)).To(ConsistOf("a", "c"))
				h.completeInOrder(g, order...)
				msgs := wait()
				want := append([]string{
					"tool_execution_start a",
					"tool_execution_start b", "tool_execution_end b err",
					"tool_execution_start c",
					"tool_execution_start d", "tool_execution_end d err",
				}, ends...)
				for range 4 {
					want = append(want, "message_start toolResult", "message_end toolResult")
				}
				Expect(toolLines()).To(Equal(append(want, "turn_end")))
				var ids []string
				for _, r := range toolResults(msgs) {
					ids = append(ids, r.ToolCallID)
				}
				Expect(ids).To(Equal([]string{"a", "b", "c", "d"}))
				Expect(resultTexts(msgs)).To(Equal([]string{
					"a done", "Tool ghost not found", "c done",
					"Validation failed for tool \"calc\":\n  - n: expected number, got string\n\nReceived arguments:\n{\n  \"n\": \"x\"\n}",
				}))
			},
			Entry("a completing first", []string{"a", "c"}, []string{"tool_execution_end a ok", "tool_execution_end c ok"}),
			Entry("c completing first", []string{"c", "a"}, []string{"tool_execution_end c ok", "tool_execution_end a ok"}),
		)
	})
})
