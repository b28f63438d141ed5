package conformance

import (
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/sim"
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
