package sim

import (
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

// otherMessage is a message type of no memoable kind, for TestSameMemoable.
type otherMessage struct{ loop.UserMessage }

// TestSameMemoable: a message of each memoable type is the same as itself and not as an equal
// copy, another type's or nil; a message of another type is never the same, even as itself.
func TestSameMemoable(t *testing.T) {
	msgs := []loop.Message{
		&loop.AssistantMessage{Model: "m"}, &loop.ToolResultMessage{ToolCallID: "t"}, &loop.UserMessage{Text: "u"},
		&loop.SystemMessage{Text: "s"}, &loop.CustomMessage{Fields: map[string]any{"role": "x"}},
	}
	copies := []loop.Message{
		&loop.AssistantMessage{Model: "m"}, &loop.ToolResultMessage{ToolCallID: "t"}, &loop.UserMessage{Text: "u"},
		&loop.SystemMessage{Text: "s"}, &loop.CustomMessage{Fields: map[string]any{"role": "x"}},
	}
	for i, m := range msgs {
		if !sameMemoable(m, m) {
			t.Errorf("%T is not the same as itself", m)
		}
		if sameMemoable(m, copies[i]) {
			t.Errorf("%T is the same as an equal copy", m)
		}
		if sameMemoable(m, msgs[(i+1)%len(msgs)]) || sameMemoable(m, nil) || sameMemoable(nil, m) {
			t.Errorf("%T is the same as another message or nil", m)
		}
	}
	other := loop.Message(&otherMessage{})
	if sameMemoable(other, other) || sameMemoable(nil, nil) {
		t.Error("a message of no memoable type, or nil, is the same as itself")
	}
}
