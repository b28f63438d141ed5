package conformance

import (
	"slices"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// invariantsOf returns the invariants at the pi behaviour of the reference ref (the newest
// when ref is not the reference loop), so that an implementation tracking an older pi is not
// held to a later one's rules.
func invariantsOf(ref sim.Implementation) []invariant.Invariant {
	if r, ok := ref.(*sim.Reference); ok {
		return invariant.AllAt(r.Behaviour())
	}
	return invariant.All()
}

// behavesAsNewest reports whether ref is the reference behaving as the newest pi, the pi a
// scenario's expect: block describes.
func behavesAsNewest(ref sim.Implementation) bool {
	r, ok := ref.(*sim.Reference)
	return !ok || r.Behaviour() == (loop.Behaviour{})
}

// explainByVersion puts first, when the implementation's trace got is the reference's with
// some of pi's behaviour changes turned the other way from held (diagnose.ExplainByVersion),
// a finding per change, and marks the scenario's other findings as their consequences.
func explainByVersion(sc *sim.Scenario, held loop.Behaviour, got *trace.Trace, profile Profile, findings []diagnose.Finding) []diagnose.Finding {
	flips := diagnose.ExplainByVersion(held, func(b loop.Behaviour) bool {
		tr, err := sim.Run(sc, sim.NewReferenceWith(b))
		return err == nil && Compare(tr, got, profile, 0) == nil
	})
	if flips == nil {
		return findings
	}
	for i := range findings {
		findings[i].Consequence = true
	}
	return append(diagnose.VersionFindings(flips, releaseOf(held)), findings...)
}

// releaseOf names the pi release whose behaviour b is (the newest release of that behaviour),
// or says b is none.
func releaseOf(b loop.Behaviour) string {
	for _, v := range slices.Backward(loop.Releases) {
		if rb, err := loop.BehaviourOf(v); err == nil && rb == b {
			return v
		}
	}
	return "(" + b.String() + ")"
}
