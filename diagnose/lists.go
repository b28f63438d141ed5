package diagnose

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

// maxListItems bounds the lists listChange aligns (their lengths multiplied): a longer pair is
// only counted.
const maxListItems = 250_000

// listChange says which items make two lists of different lengths differ: those of the
// reference's list that the implementation's lacks and those it has in addition, found by
// aligning the two on their equal items (at most three of each named, 1-based). "" when the
// lists are too long to align.
func listChange(want, got []any) string {
	if len(want)*len(got) > maxListItems {
		return ""
	}
	// lcs[i][j]: the longest common subsequence of want[i:] and got[j:].
	lcs := make([][]int, len(want)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(got)+1)
	}
	for i := len(want) - 1; i >= 0; i-- {
		for j := len(got) - 1; j >= 0; j-- {
			if reflect.DeepEqual(want[i], got[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var missing, extra []string
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case i < len(want) && j < len(got) && reflect.DeepEqual(want[i], got[j]):
			i, j = i+1, j+1
		case j == len(got) || i < len(want) && lcs[i+1][j] >= lcs[i][j+1]:
			missing = append(missing, fmt.Sprintf("%d %s", i+1, brief(want[i])))
			i++
		default:
			extra = append(extra, fmt.Sprintf("%d %s", j+1, brief(got[j])))
			j++
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
