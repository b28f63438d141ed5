package invariant

import "testing"

// TestShowMessageListsByRoles: two lists of messages whose roles differ are shown by their
// roles, which says the difference where a hundred characters of JSON would not (a stranger's
// review: "finishTurn sees turn.newMessages [{…600 characters…" was cut before it); lists of
// the same roles, and other values, are shown as JSON.
func TestShowMessageListsByRoles(t *testing.T) {
	asst := map[string]any{"role": "assistant", "content": []any{}}
	result := map[string]any{"role": "toolResult", "toolCallId": "c1"}
	got, want := showMessageLists([]any{asst}, []any{asst, result})
	if got != "[assistant]" || want != "[assistant toolResult]" {
		t.Errorf("by roles: %s, %s", got, want)
	}
	other := map[string]any{"role": "assistant", "content": []any{"x"}}
	got, want = showMessageLists([]any{asst}, []any{other})
	if got != `[{"content":[],"role":"assistant"}]` || want != `[{"content":["x"],"role":"assistant"}]` {
		t.Errorf("same roles: %s, %s", got, want)
	}
	if got, want = showMessageLists(asst, nil); got != `{"content":[],"role":"assistant"}` || want != "null" {
		t.Errorf("not lists: %s, %s", got, want)
	}
}
