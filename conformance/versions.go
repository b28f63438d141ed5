package conformance

import (
	"bytes"
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

// diagnoseByVersion diagnoses a failing trace got against the reference held at behaviour
// held, naming first what pi's behaviour changes explain: it turns, one at a time, the change
// (docs/VERSIONS.md) that leaves the fewest findings, for as long as one leaves fewer, and
// says each turned change as a finding of kind Version; the rest of the trace is diagnosed
// against the reference with those changes turned. Nil when no change explains anything.
func diagnoseByVersion(sc *sim.Scenario, held loop.Behaviour, got *trace.Trace, profile trace.Profile, desc diagnose.Scenario, opts diagnose.Options) []diagnose.Finding {
	// Most changes leave a scenario's reference trace as it is: a trace met before has the
	// findings it had (the diagnosis is a function of the two traces), and is not compared
	// and diagnosed again; the implementation's trace is expanded and decoded once, with the
	// objects both traces write alike decoded to one value (trace.Memo).
	var met []diagnosed
	memo := trace.NewMemo(got, profile)
	diagnoseAt := func(b loop.Behaviour) []diagnose.Finding {
		want, err := sim.Run(sc, sim.NewReferenceWith(b))
		if err != nil {
			return nil
		}
		for _, m := range met {
			if sameEntries(m.want, want) {
				return m.findings
			}
		}
		fs := []diagnose.Finding{}
		if c := memo.Compare(want); !c.Equal() {
			fs = diagnose.Diagnose(desc, c, opts)
		}
		met = append(met, diagnosed{want, fs})
		return fs
	}
	var turned []loop.Change
	b := held
	best := diagnoseAt(b)
	for best != nil && len(best) > 0 {
		var next []diagnose.Finding
		var change loop.Change
		for _, c := range loop.Changes() {
			if !c.Modelled() || slices.Contains(turned, c) {
				continue
			}
			if fs := diagnoseAt(flip(b, c)); fs != nil && explainsSome(fs, best) && (next == nil || weight(fs) < weight(next)) {
				next, change = fs, c
			}
		}
		if next == nil {
			break
		}
		turned, b, best = append(turned, change), flip(b, change), next
	}
	if len(turned) == 0 {
		return nil
	}
	flips := make([]diagnose.Flip, len(turned))
	for i, c := range turned {
		flips[i] = diagnose.Flip{Change: c, Has: !held.Has(c)}
	}
	return append(diagnose.VersionFindings(flips, releaseOf(held)), best...)
}

// diagnosed is a reference trace and the findings of the implementation's trace against it.
type diagnosed struct {
	want     *trace.Trace
	findings []diagnose.Finding
}

// sameEntries reports whether two traces of one scenario are the same run: the same entries,
// field for field, and the same unfired actions.
func sameEntries(a, b *trace.Trace) bool {
	if len(a.Entries) != len(b.Entries) || !slices.Equal(a.Unfired, b.Unfired) {
		return false
	}
	for i := range a.Entries {
		x, y := &a.Entries[i], &b.Entries[i]
		if x.Seq != y.Seq || x.T != y.T || x.Kind != y.Kind || x.Name != y.Name || x.Target != y.Target ||
			x.Error != y.Error || x.Canonical != y.Canonical || (x.Link == nil) != (y.Link == nil) ||
			x.Link != nil && *x.Link != *y.Link || !bytes.Equal(x.Data, y.Data) || !bytes.Equal(x.Answer, y.Answer) {
			return false
		}
	}
	return true
}

// explainsSome reports whether the diagnosis after turning a change says less than before
// and nothing new: the change explains some of what was wrong, and only that. A finding it
// explains goes: one that only shrinks (fewer entries lacking, where the reference so turned
// does less and the implementation something else) is not explained.
func explainsSome(after, before []diagnose.Finding) bool {
	had := map[string]bool{}
	for _, f := range before {
		had[f.Signature] = true
	}
	left := map[string]bool{}
	for _, f := range after {
		if !had[f.Signature] {
			return false
		}
		left[f.Signature] = true
	}
	return len(left) < len(had) && weight(after) < weight(before)
}

// weight is how much a diagnosis says is wrong: its findings, each counted for the entries it
// stands for.
func weight(fs []diagnose.Finding) int {
	n := 0
	for _, f := range fs {
		n += max(1, f.Count)
	}
	return n
}

// flip is behaviour b with change c turned the other way.
func flip(b loop.Behaviour, c loop.Change) loop.Behaviour {
	if b.Has(c) {
		return b.Without(c)
	}
	return b.With(c)
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
