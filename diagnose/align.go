package diagnose

import (
	"encoding/json"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

// Op is one step of an alignment.
type Op int

// The steps of an alignment.
const (
	// Same: the two entries are of the same kind, name and role (their fields may differ).
	Same Op = iota
	// Missing: the reference's entry has no counterpart in the implementation's trace.
	Missing
	// Extra: the implementation's entry has no counterpart in the reference's trace.
	Extra
)

// Step is one step of an alignment: indexes (0-based) into the reference's trace (Want) and
// the implementation's (Got); -1 on the side that has no entry.
type Step struct {
	Op        Op
	Want, Got int
}

// maxCells bounds the alignment's table: beyond it, the unequal middle of the two traces is
// taken as one replaced region rather than aligned entry by entry.
const maxCells = 4 << 20

// Align aligns two traces: the longest common subsequence of their entries' keys (kind,
// name, and the role of the message or the kind of stream event they carry), after the
// common prefix and suffix. Matched entries come as Same steps, in order; the others as
// Missing (reference only) and Extra (implementation only), a region's Missing steps before
// its Extra ones.
func Align(want, got []trace.Entry) []Step {
	wk, gk := keys(want), keys(got)
	var steps []Step
	pre := 0
	for pre < len(wk) && pre < len(gk) && wk[pre] == gk[pre] {
		steps = append(steps, Step{Same, pre, pre})
		pre++
	}
	suf := 0
	for suf < len(wk)-pre && suf < len(gk)-pre && wk[len(wk)-1-suf] == gk[len(gk)-1-suf] {
		suf++
	}
	w, g := wk[pre:len(wk)-suf], gk[pre:len(gk)-suf]
	steps = append(steps, middle(w, g, pre)...)
	for i := suf; i > 0; i-- {
		steps = append(steps, Step{Same, len(wk) - i, len(gk) - i})
	}
	return steps
}

// middle aligns the unequal middle parts (offset is their start in both traces).
func middle(w, g []string, off int) []Step {
	n, m := len(w), len(g)
	var steps []Step
	region := func(wi, wj, gi, gj int) {
		for i := wi; i < wj; i++ {
			steps = append(steps, Step{Missing, off + i, -1})
		}
		for j := gi; j < gj; j++ {
			steps = append(steps, Step{Extra, -1, off + j})
		}
	}
	if n == 0 || m == 0 || (n+1)*(m+1) > maxCells {
		region(0, n, 0, m)
		return steps
	}
	// lcs[i][j] is the length of the longest common subsequence of w[i:] and g[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if w[i] == g[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	si, sj := 0, 0 // start of the current unmatched region
	for i < n && j < m {
		switch {
		case w[i] == g[j]:
			region(si, i, sj, j)
			steps = append(steps, Step{Same, off + i, off + j})
			i, j = i+1, j+1
			si, sj = i, j
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	region(si, n, sj, m)
	return steps
}

func keys(es []trace.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = Key(e)
	}
	return out
}

// Key is what an entry is, without the scenario's values: its kind and name, and for a
// message event the message's role, for a stream update the kind of stream event ("event
// message_end assistant", "call stream", "dlv text_delta").
func Key(e trace.Entry) string {
	parts := []string{e.Kind}
	if e.Name != "" {
		parts = append(parts, e.Name)
	}
	if e.Kind == trace.KindEvent {
		switch e.Name {
		case "message_start", "message_update", "message_end":
			var d struct {
				Message struct {
					Role string `json:"role"`
				} `json:"message"`
			}
			if json.Unmarshal(e.Data, &d) == nil && d.Message.Role != "" {
				parts = append(parts, d.Message.Role)
			}
		}
	}
	return strings.Join(parts, " ")
}
