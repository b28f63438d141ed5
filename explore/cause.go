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
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/trace"
)

// Diagnosis lists what is wrong with got, an implementation's trace, compared with want, the
// reference's trace of the same scenario (nil when there is no comparison); none when nothing
// is. Every finding carries its cause signature. It must not keep the traces, or anything
// that shares their memory, past its return: explore writes later traces over those of a run
// it found nothing wrong with.
type Diagnosis func(want, got *trace.Trace) []diagnose.Finding

// newDiagnosis is the diagnosis explore uses by default, conform's (package diagnose): every
// divergence of the two traces under profile, region by region and field by field, and every
// broken invariant of invs (nil: invariant.All()). Without want, the invariants alone. At
// levels.Core both traces are judged in their core view, apart from the conventions the
// implementation does not follow (follows lists those it does). Rules newer than tracks, the
// pi the implementation is held to, name no finding.
func newDiagnosis(profile trace.Profile, invs []invariant.Invariant, level levels.Level, follows []string, tracks string) Diagnosis {
	if invs == nil {
		invs = invariant.All()
	}
	if level == levels.Core {
		invs = levels.Invariants(invs)
		pi := newDiagnosis(profile, invs, levels.Pi, nil, tracks)
		followed := map[string]bool{}
		for _, id := range follows {
			followed[id] = true
		}
		return func(want, got *trace.Trace) []diagnose.Finding {
			if want != nil {
				want = levels.View(want, followed)
			}
			return levels.Findings(pi(want, levels.View(got, followed)), followed)
		}
	}
	opts := diagnose.Options{Invariants: invs, Tracks: tracks}
	return func(want, got *trace.Trace) []diagnose.Finding {
		// Most runs pass: those are told cheaply, without aligning the traces.
		broken := len(invariant.CheckAll(got, invs...)) > 0
		if want == nil {
			if !broken {
				return nil
			}
			var out []diagnose.Finding
			for _, f := range diagnose.Diagnose(diagnose.Scenario{}, &trace.Comparison{Profile: profile, Got: got.Expanded().Entries}, opts) {
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
// grouping (diagnose.Group), only root findings can: a finding marked a consequence of an
// earlier one cannot. Of those, the implementation's errors come first, then the others by
// where they show in the implementation's trace (a finding of the whole trace last).
func causes(fs []diagnose.Finding) []diagnose.Finding {
	var out []diagnose.Finding
	for _, f := range fs {
		if !f.Consequence {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b diagnose.Finding) int {
		if ea, eb := a.Kind == diagnose.Error, b.Kind == diagnose.Error; ea != eb {
			if ea {
				return -1
			}
			return 1
		}
		return cmp.Compare(entryOrder(cmp.Or(a.At.Actual, a.At.Expected)), entryOrder(cmp.Or(b.At.Actual, b.At.Expected)))
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
