package loop_test

// Expectations checked against pi by testdata/pi/noturncap.mjs.

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/turnstile-dev/turnstile/loop"
)

var _ = Describe("No turn limit", func() {
	It("runs 1,000 tool turns of the same tool to the end", func() {
		h := newHarness()
		h.addTool("echo", nil)
		h.provider.respond = func(n int, _ loop.StreamRequest) *loop.AssistantMessage {
			if n <= 1000 {
				return calls(call(fmt.Sprintf("t%d", n), "echo", nil))
			}
			return says("finally")
		}
		msgs := h.mustRun("hi")
		count := func(line string) int {
			n := 0
			for _, l := range h.rec.Lines() {
				if l == line || strings.HasPrefix(l, line+" ") {
					n++
				}
			}
			return n
		}
		Expect([]int{h.provider.Requests(), count("turn_start"), count("turn_end"), count("tool_execution_end"), count("agent_end")}).
			To(Equal([]int{1001, 1001, 1001, 1000, 1}))
		Expect([]int{len(msgs), len(toolResults(msgs))}).To(Equal([]int{2003, 1000}))
		Expect(textOf(msgs[len(msgs)-1])).To(Equal("finally"))
	})
})
