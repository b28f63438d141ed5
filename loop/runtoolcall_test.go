package loop_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

// runToolCallTools are the tools of pi's runToolCall cases: echo (one update, its value as
// content and structured content) and failing (an isError result with details).
func runToolCallTools() []*loop.Tool {
	value := map[string]any{"type": "object", "properties": map[string]any{"value": map[string]any{"type": "string"}}, "required": []any{"value"}}
	echo := &loop.Tool{Name: "echo", Description: "Echo tool", Parameters: value,
		Execute: func(_ context.Context, _ string, args map[string]any, onUpdate func(loop.ToolResult)) (loop.ToolResult, error) {
			onUpdate(loop.ToolResult{Content: []loop.Block{text("partial")}, Details: map[string]any{}})
			v, _ := args["value"].(string)
			return loop.ToolResult{Content: []loop.Block{text(v)}, Details: map[string]any{}, StructuredContent: map[string]any{"value": v}}, nil
		}}
	failing := &loop.Tool{Name: "failing", Description: "Returns an error result", Parameters: map[string]any{"type": "object", "properties": map[string]any{}},
		Execute: func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
			return loop.ToolResult{Content: []loop.Block{text("bad")}, Details: map[string]any{"partial": true}, IsError: true}, nil
		}}
	return []*loop.Tool{echo, failing}
}

func toolCall(id, name string, args map[string]any) loop.ToolCall {
	return loop.ToolCall{ID: id, Name: name, Arguments: args}
}

// pi: agent-loop.test.ts, runToolCall "validates, runs the hooks, and reports failures as
// error outcomes".
func TestRunToolCallValidatesRunsHooksAndReportsFailures(t *testing.T) {
	var hooks []string
	var updates []string
	opts := loop.RunToolCallOptions{
		Tools:            runToolCallTools(),
		AssistantMessage: calls(),
		BeforeToolCall: func(_ context.Context, c loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
			hooks = append(hooks, "before "+c.ToolCall.ID)
			if c.Args["value"] == "blocked" {
				return &loop.BeforeToolCallResult{Block: true, Reason: "nope"}, nil
			}
			return nil, nil
		},
		AfterToolCall: func(_ context.Context, c loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
			hooks = append(hooks, "after "+c.ToolCall.ID)
			return nil, nil
		},
		OnUpdate: func(p loop.ToolResult) { updates = append(updates, blocksText(p.Content)) },
	}
	ctx := context.Background()
	a := loop.RunToolCall(ctx, toolCall("a", "echo", map[string]any{"value": "a"}), opts)
	if a.ToolCall.ID != "a" || a.IsError || !reflect.DeepEqual(a.Result.StructuredContent, map[string]any{"value": "a"}) {
		t.Errorf("echo a = %+v, want a success with structured content {value: a}", a)
	}
	if b := loop.RunToolCall(ctx, toolCall("b", "echo", map[string]any{"value": map[string]any{"nested": true}}), opts); !b.IsError {
		t.Errorf("invalid arguments = %+v, want an error outcome", b)
	}
	if c := loop.RunToolCall(ctx, toolCall("c", "echo", map[string]any{"value": "blocked"}), opts); !c.IsError || blocksText(c.Result.Content) != "nope" {
		t.Errorf("blocked = %+v, want the error outcome nope", c)
	}
	if d := loop.RunToolCall(ctx, toolCall("d", "missing", map[string]any{}), opts); !d.IsError || blocksText(d.Result.Content) != "Tool missing not found" {
		t.Errorf("unknown tool = %+v, want the error outcome Tool missing not found", d)
	}
	if e := loop.RunToolCall(ctx, toolCall("e", "failing", map[string]any{}), opts); !e.IsError || !reflect.DeepEqual(e.Result.Details, map[string]any{"partial": true}) {
		t.Errorf("isError result = %+v, want an error outcome keeping its details", e)
	}
	if want := []string{"partial"}; !reflect.DeepEqual(updates, want) {
		t.Errorf("updates = %q, want %q", updates, want)
	}
	if want := []string{"before a", "after a", "before c", "before e", "after e"}; !reflect.DeepEqual(hooks, want) {
		t.Errorf("hooks = %q, want %q", hooks, want)
	}
	aborted, cancel := context.WithCancel(ctx)
	cancel()
	if f := loop.RunToolCall(aborted, toolCall("f", "echo", map[string]any{"value": "f"}), opts); !f.IsError || blocksText(f.Result.Content) != "Operation aborted" || len(hooks) != 5 {
		t.Errorf("aborted = %+v (hooks %q), want the error outcome Operation aborted before any hook", f, hooks)
	}
}

// pi: agent-loop.test.ts, runToolCall "lets afterToolCall replace structured content and
// drops it when only content is replaced".
func TestRunToolCallAfterToolCallStructuredContent(t *testing.T) {
	cases := []struct {
		name  string
		after loop.AfterToolCallResult
		want  any
	}{
		{"content alone drops it", loop.AfterToolCallResult{Content: []loop.Block{text("redacted")}}, nil},
		{"replaced", loop.AfterToolCallResult{StructuredContent: map[string]any{"value": "replaced"}}, map[string]any{"value": "replaced"}},
		{"replaced with content", loop.AfterToolCallResult{Content: []loop.Block{text("redacted")}, StructuredContent: map[string]any{"value": "both"}}, map[string]any{"value": "both"}},
		{"kept by details", loop.AfterToolCallResult{Details: map[string]any{"note": "kept"}}, map[string]any{"value": "original"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := loop.RunToolCall(context.Background(), toolCall("x", "echo", map[string]any{"value": "original"}), loop.RunToolCallOptions{
				Tools: runToolCallTools(),
				AfterToolCall: func(context.Context, loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
					after := tc.after
					return &after, nil
				},
			})
			if !reflect.DeepEqual(o.Result.StructuredContent, tc.want) {
				t.Fatalf("structured content = %#v, want %#v", o.Result.StructuredContent, tc.want)
			}
		})
	}
}
