package sim

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
)

// TestHandWrittenValuesAreCanonicalJSON: the types encodevalues.go writes by hand come out as
// jsonvalue.Canonical(json.Marshal(v)), omitted members and nils included.
func TestHandWrittenValuesAreCanonicalJSON(t *testing.T) {
	v := "1.0"
	user := &loop.UserMessage{Text: "<hi>", Timestamp: 3}
	for _, x := range []any{
		Outcome{ID: "u1", Op: "prompt", Outcome: "accepted"},
		Outcome{ID: "u2", Op: "abort", Outcome: "refused", Error: "no", State: &AgentState{}},
		Outcome{ID: "u3", Op: "prompt", Outcome: "resolved", State: &AgentState{IsStreaming: true, Messages: []loop.Message{user},
			ErrorMessage: "e", PendingToolCalls: []string{"c1"}, StreamingMessage: &loop.AssistantMessage{}, Queued: []loop.Message{user}, HasQueuedMessages: true}},
		wireOp{opFields: opFields{Op: "prompt"}},
		wireOp{opFields: opFields{Op: "steer", Text: "t", Mode: "all", Queue: "q", Tools: []string{"a"}, Barrier: "b"}, Messages: []loop.Message{user}, Message: user},
		wireOp{opFields: opFields{Op: "prompt", Tools: []string{}}, Messages: []loop.Message{}},
		[]*loop.ToolResultMessage(nil),
		[]*loop.ToolResultMessage{{ToolCallID: "c", Content: loop.Text("x")}},
		loop.ToolCall{ID: "c", Name: "n"},
		map[string]string(nil),
		map[string]string{"b": "<", "a": ""},
		&AgentSetup{SteeringMode: "all", FollowUpMode: "one-at-a-time"},
		&AgentSetup{SteeringMode: "all", SystemPrompt: "s", Barriers: []BarrierSetup{{ID: "b1", Event: "turn_end", Nth: 2, UntilAbort: true}, {ID: "b2"}}},
		(*AgentSetup)(nil),
		&loop.Identity{},
		&loop.Identity{UserAgent: "short", NoAttribution: true, Version: &v},
		&loop.Identity{UserAgent: map[string]any{"custom": "x"}, Attribution: &loop.Attribution{Name: "n", URL: "u", Categories: []string{"c"}}},
		&loop.Identity{Attribution: &loop.Attribution{Categories: []string{}}},
		(*loop.Identity)(nil),
	} {
		data, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := appendCanonical(nil, x), jsonvalue.Canonical(data); !bytes.Equal(got, want) {
			t.Errorf("%T %+v:\nby hand  %s\nmarshal  %s", x, x, got, want)
		}
	}
}
