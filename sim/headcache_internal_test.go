package sim

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

// TestHeadCacheWritesAsAppendMessage: assistant messages written through a head cache read as
// appendMessage writes them, whether their head is remembered (the same fields, other content),
// new, or pushed out by more heads than the cache holds.
func TestHeadCacheWritesAsAppendMessage(t *testing.T) {
	h := &headCache{}
	var msgs []*loop.AssistantMessage
	for i := range 6 {
		m := &loop.AssistantMessage{API: "api", Model: fmt.Sprintf("m%d", i%5), StopReason: loop.StopPending, Timestamp: int64(i % 2)}
		msgs = append(msgs, m)
		for _, content := range [][]loop.Block{nil, {}, {loop.TextContent{Text: "a<b"}}, {loop.ToolCall{ID: "t", Name: "n"}}} {
			c := *m
			c.Content = content
			msgs = append(msgs, &c)
		}
		done := *m
		done.StopReason, done.ThinkingLevel = loop.StopToolUse, "off"
		msgs = append(msgs, &done)
	}
	for round := range 2 {
		for i, m := range msgs {
			got := h.assistant([]byte("x"), m)
			want := appendMessage([]byte("x"), m)
			if !bytes.Equal(got, want) {
				t.Fatalf("round %d, message %d: got %s, want %s", round, i, got, want)
			}
		}
	}
}
