package diagnose

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

// listChange says which items make two lists of different lengths differ: those of the
// reference's list that the implementation's lacks and those it has in addition, found by
// aligning the two on their equal items (trace.Align; at most three of each named, 1-based).
func listChange(want, got []any) string {
	var missing, extra []string
	for _, s := range trace.Align(trace.ItemKeys(want), trace.ItemKeys(got)) {
		switch s.Op {
		case trace.Missing:
			missing = append(missing, fmt.Sprintf("%d %s", s.Want+1, brief(want[s.Want])))
		case trace.Extra:
			extra = append(extra, fmt.Sprintf("%d %s", s.Got+1, brief(got[s.Got])))
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "lacks the reference's item"+plural(len(missing))+" "+listSome(missing))
	}
	if len(extra) > 0 {
		parts = append(parts, "has in addition item"+plural(len(extra))+" "+listSome(extra))
	}
	return strings.Join(parts, ", and ")
}

// listSome joins up to three items and counts the rest.
func listSome(items []string) string {
	const most = 3
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:most], ", ") + fmt.Sprintf(" and %d more", len(items)-most)
}

// brief names a list item in a few words: an object by its identity members (role, type,
// toolCallId, …: trace.CompareMembers) when it has some, else its JSON, cut at 40 characters.
func brief(v any) string {
	if m, ok := v.(map[string]any); ok {
		var ids []string
		for _, k := range trace.IdentityMembers() {
			if s, ok := m[k].(string); ok {
				ids = append(ids, k+" "+s)
			}
		}
		if len(ids) > 0 {
			return "(" + strings.Join(ids, ", ") + ")"
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	if r := []rune(string(data)); len(r) > 40 {
		return "(" + string(r[:40]) + "…)"
	}
	return "(" + string(data) + ")"
}
