package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/sim"
)

// Recheck is what re-running failed scenarios without the shortcuts showed: the scenarios
// re-run, and those of them that then passed. A failure that goes away lies in how the
// adapter takes the shortcuts; one that stays does not.
type Recheck struct {
	Checked []string `json:"checked"`
	Passed  []string `json:"passed"`
	// Untried counts the causes none of whose scenarios was re-run: the recheck says nothing
	// of them.
	Untried int `json:"untried,omitempty"`
}

// RecheckWithoutShortcuts re-runs up to max of the report's failed scenarios (from suite)
// against impl, which must take no shortcut (a Process with OneAtATime), and records the
// outcome in r.Recheck. It does nothing when the harness took no shortcut or nothing failed.
func RecheckWithoutShortcuts(ctx context.Context, r *Report, suite []*sim.Scenario, impl sim.Implementation, max int, opts Options) {
	if !r.DeliveriesAhead && !r.StandingAnswers || r.Failed == 0 {
		return
	}
	byName := map[string]*sim.Scenario{}
	for _, sc := range suite {
		byName[sc.Name] = sc
	}
	// One scenario per cause, the causes touching the most scenarios first: the verdict
	// then speaks for those causes, and says how many it leaves untried.
	var again []*sim.Scenario
	untried := 0
	for _, c := range r.Causes {
		if len(c.Explains) == 0 || byName[c.Explains[0]] == nil {
			continue
		}
		if len(again) == max {
			untried++
			continue
		}
		again = append(again, byName[c.Explains[0]])
	}
	if len(again) == 0 { // no cause: failures without findings
		for _, res := range r.Results {
			// A known failure that passed fails the run, but there is nothing to re-run:
			// passing again would blame the shortcuts for a stale list.
			if sc := byName[res.Scenario]; res.Status == Fail && !res.UnexpectedPass() && sc != nil && len(again) < max {
				again = append(again, sc)
			}
		}
	}
	r.Recheck = RerunWithoutShortcuts(ctx, again, impl, opts)
	r.Recheck.Untried = untried
}

// RerunWithoutShortcuts runs failed scenarios again against impl, which must take no
// shortcut (a Process with OneAtATime), and says which of them then pass; a scenario
// skipped or cut short by ctx is left out.
func RerunWithoutShortcuts(ctx context.Context, failed []*sim.Scenario, impl sim.Implementation, opts Options) *Recheck {
	opts.OnResult, opts.ExpectFail = nil, nil
	rerun := Verify(ctx, failed, impl, opts)
	rc := &Recheck{Checked: []string{}, Passed: []string{}}
	for _, res := range rerun.Results {
		if res.Status != Pass && res.Status != Fail || ctx.Err() != nil {
			continue
		}
		rc.Checked = append(rc.Checked, res.Scenario)
		if res.Status == Pass {
			rc.Passed = append(rc.Passed, res.Scenario)
		}
	}
	return rc
}

// untried says how many causes were not re-run, if any.
func (rc *Recheck) untried() string {
	if rc.Untried == 0 {
		return ""
	}
	return fmt.Sprintf("; %d more cause%s not re-run (--one-at-a-time tries them all)", rc.Untried, plural(rc.Untried))
}

// Note says what the recheck showed of the shortcuts s the harness took: they are the cause
// when a failure went away, and are ruled out when none did; "" when nothing was re-run.
func (rc *Recheck) Note(s protocol.Shortcuts) string {
	took, likely := s.Taken()
	switch {
	case len(took) == 0:
	case len(rc.Passed) > 0:
		verdict := fmt.Sprintf("%s:\nre-run one at a time (--one-at-a-time), %d of the %d failing scenarios re-run pass (%s), so those\n"+
			"failures lie in how the adapter takes the shortcuts, not in the loop: most likely the adapter %s",
			strings.Join(took, "; "), len(rc.Passed), len(rc.Checked), strings.Join(rc.Passed, ", "), strings.Join(likely, ", or "))
		return verdict + rc.untried() + "\n"
	case len(rc.Checked) > 0:
		fail := "fail"
		if len(rc.Checked) == 1 {
			fail = "fails"
		}
		return fmt.Sprintf("checked, one scenario per cause: %s %s without the exchange's shortcuts too (re-run one at a time, PROTOCOL.md §14-15), so the failures are the loop's, not the shortcuts'",
			strings.Join(rc.Checked, ", "), fail) + rc.untried() + "\n"
	}
	return ""
}
