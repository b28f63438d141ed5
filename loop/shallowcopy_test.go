package loop_test

import (
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

// TestShallowCopyIsIndependent: a copy equals its message, nil and empty content lists stay
// as they were, and neither a top-level field nor a content block changed in one, nor a block
// appended to one, shows in the other (for every number of blocks, the one-allocation copy of
// up to two included).
func TestShallowCopyIsIndependent(t *testing.T) {
	lists := [][]loop.Block{nil, {}, loop.Text("a"), {loop.TextContent{Text: "a"}, loop.TextContent{Text: "b"}},
		{loop.TextContent{Text: "a"}, loop.TextContent{Text: "b"}, loop.TextContent{Text: "c"}}}
	for _, content := range lists {
		orig := &loop.AssistantMessage{Content: content, Model: "m"}
		want := &loop.AssistantMessage{Content: append([]loop.Block(nil), content...), Model: "m"}
		if content != nil {
			want.Content = append([]loop.Block{}, content...)
		}
		c := loop.ShallowCopy(orig).(*loop.AssistantMessage)
		if !reflect.DeepEqual(c, orig) || (c.Content == nil) != (orig.Content == nil) {
			t.Fatalf("%d blocks: the copy %#v differs from %#v", len(content), c, orig)
		}
		c.Model = "changed"
		if len(c.Content) > 0 {
			c.Content[0] = loop.TextContent{Text: "changed"}
		}
		c.Content = append(c.Content, loop.TextContent{Text: "appended"})
		if !reflect.DeepEqual(orig, want) {
			t.Fatalf("%d blocks: changing the copy changed the message: %#v", len(content), orig)
		}
	}
}
