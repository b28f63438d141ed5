package diagnose

import (
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/docs"
	"pgregory.net/rapid"
)

// TestTheGovernanceTableIsWellFormed: every row of SEMANTICS.md's "Which rule governs an
// entry" names a rule that exists (or none), situations the diagnosis knows, and entries.
func TestTheGovernanceTableIsWellFormed(t *testing.T) {
	rows := docs.Governance()
	if len(rows) < 40 {
		t.Fatalf("%d rows read from the table", len(rows))
	}
	for _, r := range rows {
		if r.Rule != "" && !docs.HasRule(r.Rule) {
			t.Errorf("row %+v: no rule %s", r, r.Rule)
		}
		if r.When != "" && !slices.Contains(knownWhen, r.When) {
			t.Errorf("row %+v: the diagnosis knows no situation %q", r, r.When)
		}
		if len(r.Entries) == 0 {
			t.Errorf("row %+v names no entry", r)
		}
	}
	for _, w := range knownWhen {
		if !slices.ContainsFunc(rows, func(r docs.Governs) bool { return r.When == w }) {
			t.Errorf("no row uses the situation %q", w)
		}
	}
}

// TestKeysMatchThePatternsOfTheTable: a "*" ends a prefix of one word; a pattern without a
// role matches every role.
func TestKeysMatchThePatternsOfTheTable(t *testing.T) {
	for _, c := range []struct {
		pattern, key string
		match        bool
	}{
		{"event message_* toolResult", "event message_end toolResult", true},
		{"event message_* toolResult", "event message_end assistant", false},
		{"event message_*", "event message_update assistant", true},
		{"call tool", "call tool", true},
		{"call tool", "call toolx", false},
		{"outcome *", "outcome steer", true},
		{"*", "deliver streamEvent", true},
		{"deliver *", "event agent_end", false},
	} {
		if got := keyMatches(c.pattern, c.key); got != c.match {
			t.Errorf("keyMatches(%q, %q) = %v", c.pattern, c.key, got)
		}
	}
}

// TestKeyMatchesSplitsAsFields: keyMatches reads words as strings.Fields splits them.
func TestKeyMatchesSplitsAsFields(t *testing.T) {
	byFields := func(pattern, key string) bool {
		if pattern == "*" {
			return true
		}
		pw, kw := strings.Fields(pattern), strings.Fields(key)
		if len(pw) > len(kw) {
			return false
		}
		for i, w := range pw {
			prefix, star := strings.CutSuffix(w, "*")
			if star && !strings.HasPrefix(kw[i], prefix) || !star && kw[i] != w {
				return false
			}
		}
		return true
	}
	text := rapid.StringOfN(rapid.SampledFrom([]rune("ab* \t\n\u00a0\u2028é")), 0, 12, -1)
	rapid.Check(t, func(t *rapid.T) {
		pattern, key := text.Draw(t, "pattern"), text.Draw(t, "key")
		if rapid.Bool().Draw(t, "key from pattern") {
			key = strings.ReplaceAll(pattern, "*", "") + key
		}
		if got, want := keyMatches(pattern, key), byFields(pattern, key); got != want {
			t.Fatalf("keyMatches(%q, %q) = %v, strings.Fields says %v", pattern, key, got, want)
		}
	})
}

// TestMessageFactsReadTextAndBlocks: a message whose content is a text is read as well as one
// whose content is blocks.
func TestMessageFactsReadTextAndBlocks(t *testing.T) {
	role, _, declares, _ := messageFacts([]byte(`{"message":{"content":"","role":"system","toolsAdded":[{"name":"a"}]}}`), false)
	if role != "system" || !declares {
		t.Errorf("a declaration with a text content: role %q, declares %v", role, declares)
	}
	if _, _, declares, _ := messageFacts([]byte(`{"message":{"content":"updated guidance","role":"system","toolsAdded":[{"name":"a"}]}}`), false); declares {
		t.Error("a pending system message that took the tool changes is read as the loop's own declaration")
	}
	role, stop, _, calls := messageFacts([]byte(`{"message":{"content":[{"type":"toolCall","id":"t1"},{"type":"text","text":"x"}],"role":"assistant","stopReason":"stop"}}`), false)
	if role != "assistant" || stop != "stop" || calls != 1 {
		t.Errorf("blocks: %q %q %d", role, stop, calls)
	}
}
