package conformance

import (
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
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

// behavesAsNewest reports whether ref is the reference behaving as the newest pi, the pi a
// scenario's expect: block describes.
func behavesAsNewest(ref sim.Implementation) bool {
	r, ok := ref.(*sim.Reference)
	return !ok || r.Behaviour() == (loop.Behaviour{})
}
