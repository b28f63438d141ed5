package explore

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/trace"
)

// Diagnosis lists what is wrong with got, an implementation's trace, compared with want, the
// reference's trace of the same scenario (nil when there is no comparison); none when nothing
// is. Every finding carries its cause signature.
type Diagnosis func(want, got *trace.Trace) []diagnose.Finding

// Diagnose is the diagnosis explore uses by default, conform's (package diagnose): every
// divergence of the two traces under profile, region by region and field by field, and every
// broken invariant of invs (nil: invariant.All()). Without want, the invariants alone.
func Diagnose(profile trace.Profile, invs []invariant.Invariant) Diagnosis {
	if invs == nil {
		invs = invariant.All()
	}
	opts := diagnose.Options{Invariants: invs}
	// Alone, the invariants are judged against a trace that breaks none: diagnose leaves out
	// what the reference's trace breaks too.
	none := &trace.Trace{}
	alone := opts
	alone.Invariants = make([]invariant.Invariant, len(invs))
	for i, inv := range invs {
		alone.Invariants[i] = invariant.Invariant{Name: inv.Name, Doc: inv.Doc, Check: func(tr *trace.Trace) []invariant.Violation {
			if tr == none {
				return nil
			}
			return inv.Check(tr)
		}}
	}
	return func(want, got *trace.Trace) []diagnose.Finding {
		// Most runs pass: those are told cheaply, without aligning the traces.
		broken := len(invariant.CheckAll(got, invs...)) > 0
		if want == nil {
			if !broken {
				return nil
			}
			var out []diagnose.Finding
			for _, f := range diagnose.Diagnose(diagnose.Scenario{}, trace.Compare(none, got, profile), alone) {
				if f.Kind == diagnose.Invariant {
					f.Consequence = false
					out = append(out, f)
				}
			}
			return out
		}
		c := trace.Compare(want, got, profile)
		if !broken && c.Equal() {
			return nil
		}
		return diagnose.Diagnose(diagnose.Scenario{}, c, opts)
	}
}

// causes returns the findings that can be a run's cause, the cause first. As in conform's
// grouping (diagnose.Group), only root findings can: a finding after the first divergence
// may be its consequence. Of those, the implementation's errors come first, then the broken
// invariants, earliest entry first (an invariant names its rule, and its signature does not
// depend on the shape of the scenario), then the first divergence and any other finding.
func causes(fs []diagnose.Finding) []diagnose.Finding {
	rank := func(f diagnose.Finding) int {
		switch f.Kind {
		case diagnose.Error:
			return 0
		case diagnose.Invariant:
			return 1
		case diagnose.Divergence:
			return 2
		}
		return 3
	}
	var out []diagnose.Finding
	for _, f := range fs {
		if !f.Consequence {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b diagnose.Finding) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 || a.Kind != diagnose.Invariant {
			return c
		}
		return cmp.Compare(entryOrder(a.At.Actual), entryOrder(b.At.Actual))
	})
	return out
}

// entryOrder places a finding of the trace as a whole (entry 0) after the others.
func entryOrder(entry int) int {
	if entry <= 0 {
		return math.MaxInt
	}
	return entry
}

// ReadSignatures reads a list of cause signatures, one a line, as `turnstile explore` writes
// them in causes.txt; blank lines and lines starting with # are ignored.
func ReadSignatures(r io.Reader) (map[string]bool, error) {
	out := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out[line] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading signatures: %w", err)
	}
	return out, nil
}
