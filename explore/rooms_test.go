package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/turnstile-dev/turnstile/sim"
)

// TestAProblemKeepsItsTrace: the trace of a problem found stays as it was while later checks
// run, their traces written in the rooms of the checks that found nothing.
func TestAProblemKeepsItsTrace(t *testing.T) {
	f := faultNamed(t, "drops-a-tool-result")
	x := newExplorer(Options{Impl: func() sim.Implementation { return &faulty{fault: f} }}.withDefaults())
	var kept []*Problem
	var passing *sim.Scenario
	for i := range 200 {
		sc := GenerateScenario(RunSeed(11, i))
		prob, _ := x.check(sc)
		if prob == nil {
			passing = sc
		} else {
			kept = append(kept, prob)
		}
	}
	if len(kept) == 0 || passing == nil {
		t.Fatalf("%d problems, passing %v: the test needs both", len(kept), passing != nil)
	}
	for _, p := range kept {
		sum := sha256.Sum256(p.trace.JSONL())
		if hex.EncodeToString(sum[:]) != p.Hash {
			t.Fatalf("a problem's trace changed after later checks: %s", p.Message)
		}
	}
	x.rooms = nil
	x.check(passing)
	if len(x.rooms) != 2 {
		t.Fatalf("a check that found nothing gave back %d rooms, not its two", len(x.rooms))
	}
}
