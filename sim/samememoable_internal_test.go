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

// TestSameMemoables: the length of the common beginning of two lists as sameMemoable says,
// whatever the place of the first difference (a message, a copy, another type, nil).
func TestSameMemoables(t *testing.T) {
	a, b, c := &loop.AssistantMessage{}, &loop.ToolResultMessage{}, &loop.UserMessage{}
	other := loop.Message(&otherMessage{})
	list := []loop.Message{c, a, b, a, b, a, b}
	for n := 0; n <= len(list); n++ {
		for _, odd := range []loop.Message{&loop.AssistantMessage{}, other, nil} {
			changed := append([]loop.Message(nil), list...)
			want := n
			if n < len(list) {
				changed[n] = odd
			} else {
				want = len(list)
			}
			if got := sameMemoables(list, changed, 0); got != want {
				t.Errorf("first difference at %d (%T): got %d", n, odd, got)
			}
			if got := sameMemoables(changed[:n], list, 0); got != n {
				t.Errorf("a shorter list of %d: got %d", n, got)
			}
		}
	}
	for known := 0; known <= len(list); known++ {
		if got := sameMemoables(list, list, known); got != len(list) {
			t.Errorf("%d known memoable: got %d", known, got)
		}
	}
	withOther := []loop.Message{a, b, other, a}
	if got := sameMemoables(withOther, withOther, 0); got != 2 {
		t.Errorf("a message of no memoable type at 2: got %d", got)
	}
}
