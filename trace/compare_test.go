package trace_test

import (
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/trace"
)

func TestAlignKeepsOrder(t *testing.T) {
	want := []string{"event a", "event b", "call c", "event d"}
	got := []string{"event a", "call x", "event d", "event e"}
	var ops []string
	for _, s := range trace.Align(want, got) {
		ops = append(ops, [...]string{"=", "-", "+"}[s.Op])
	}
	if strings.Join(ops, "") != "=--+=+" {
		t.Fatalf("ops %q", strings.Join(ops, ""))
	}
}

// TestALongTraceAlignsEntryByEntry: one entry lacking in the middle of a trace of thousands
// is one step Missing, not the whole middle replaced.
func TestALongTraceAlignsEntryByEntry(t *testing.T) {
	var want []string
	for i := range 5000 {
		want = append(want, []string{"event turn_start", "call stream", "event message_end assistant", "call getSteeringMessages", "event turn_end"}[i%5])
	}
	got := append(append([]string{}, want[:2503]...), want[2504:]...)
	got = append(got, "event extra")
	var missing, extra int
	for _, s := range trace.Align(want, got) {
		switch s.Op {
		case trace.Missing:
			missing++
		case trace.Extra:
			extra++
		}
	}
	if missing != 1 || extra != 1 {
		t.Fatalf("%d missing, %d extra; want 1 and 1", missing, extra)
	}
}

// TestFieldsGivesEveryMemberThatDiffers: every member that differs is a field, however many;
// once an identity member differs, the rest of that object is not.
func TestFieldsGivesEveryMemberThatDiffers(t *testing.T) {
	want := map[string]any{"a": 1.0, "b": 2.0, "c": map[string]any{"toolCallId": "x", "text": "one"}}
	got := map[string]any{"a": 9.0, "b": 8.0, "c": map[string]any{"toolCallId": "y", "text": "two"}}
	var paths []string
	for _, f := range trace.Fields(want, got, nil) {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, " ") != "a b c.toolCallId" {
		t.Errorf("fields %q", paths)
	}
}
