package docs

import "testing"

// TestUnpinnedReason: a rule's "Not pinned by a scenario" paragraph, over several lines, is
// read whole as its reason; a rule without one has none. (Every rule of SEMANTICS.md is pinned
// today, so the paragraph is tested on a document of its own.)
func TestUnpinnedReason(t *testing.T) {
	doc := "## Events\n\n### R-A: first\n\nText.\n\n*Not pinned by a scenario:* the harness answers at once,\nso nothing shows.\n\n### R-B: second\n\nMore text.\n"
	rules := parseRules(doc)
	if len(rules) != 2 || rules[0].ID != "R-A" || rules[1].ID != "R-B" {
		t.Fatalf("rules %+v", rules)
	}
	if want := "the harness answers at once, so nothing shows."; rules[0].Unpinned != want {
		t.Errorf("R-A's reason %q, want %q", rules[0].Unpinned, want)
	}
	if rules[1].Unpinned != "" {
		t.Errorf("R-B has a reason: %q", rules[1].Unpinned)
	}
}
