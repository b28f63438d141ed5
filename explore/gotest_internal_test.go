package explore

import (
	"testing"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestAPortIsExploredAtThePiItTracks: explore.Test judges a port that tracks pi 0.87.1
// against the reference and invariants of 0.87.1, as turnstile explore does a served one; a
// port of the newest pi, or options that set a reference, are left as they are.
func TestAPortIsExploredAtThePiItTracks(t *testing.T) {
	old, err := loop.BehaviourOf("0.87.1")
	if err != nil {
		t.Fatal(err)
	}
	opts := heldTo(Options{}, "0.87.1")
	ref, ok := opts.Reference().(*sim.Reference)
	if !ok || ref.Behaviour() != old {
		t.Fatalf("the reference of a port of 0.87.1 is %#v", opts.Reference())
	}
	if len(opts.Invariants) != len(invariant.AllAt(old)) {
		t.Errorf("%d invariants, want those of 0.87.1", len(opts.Invariants))
	}
	if opts := heldTo(Options{}, loop.NewestVersion); opts.Reference != nil {
		t.Error("a port of the newest pi gets a reference of its own")
	}
	own := func() sim.Implementation { return sim.NewReference() }
	if opts := heldTo(Options{Reference: own}, "0.87.1"); opts.Invariants != nil {
		t.Error("options that set a reference are changed")
	}
}
