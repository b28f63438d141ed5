package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/loop"
)

// A failure is a version's when the implementation's trace equals the reference's with some
// of pi's behaviour changes (docs/VERSIONS.md, loop.Change) turned the other way: the loop
// behaves there as another pi release than the one it is held to. Said as the changes, one
// cause per change, it tells a port author which release's behaviour to take or leave.

// Flip is one behaviour change turned the other way from the pi an implementation is held
// to.
type Flip struct {
	Change loop.Change
	// Has says the implementation has the change where the held pi does not (it behaves as a
	// later pi); false: it lacks a change the held pi has (it behaves as an earlier pi).
	Has bool
}

// ExplainByVersion returns the fewest behaviour changes which, turned the other way in the
// reference held at behaviour held, make it agree with the implementation (matches reports
// whether the reference at a behaviour gives the implementation's trace): one change, else
// the changes between held and a release, each dropped that is not needed. Nil when no such
// set is found. It tries at most every modelled change, every release, then each change of
// the release found once more.
func ExplainByVersion(held loop.Behaviour, matches func(loop.Behaviour) bool) []Flip {
	var modelled []loop.Change
	for _, c := range loop.Changes() {
		if c.Modelled() {
			modelled = append(modelled, c)
		}
	}
	for _, c := range modelled {
		if set := []loop.Change{c}; matches(flipped(held, set)) {
			return flips(held, set)
		}
	}
	for _, v := range slices.Backward(loop.Releases) {
		b, err := loop.BehaviourOf(v)
		if err != nil {
			continue
		}
		var set []loop.Change
		for _, c := range modelled {
			if b.Has(c) != held.Has(c) {
				set = append(set, c)
			}
		}
		if len(set) < 2 || !matches(flipped(held, set)) {
			continue
		}
		for i := 0; i < len(set); {
			fewer := slices.Delete(slices.Clone(set), i, i+1)
			if matches(flipped(held, fewer)) {
				set = fewer
			} else {
				i++
			}
		}
		return flips(held, set)
	}
	return nil
}

// flipped is behaviour b with each change of set turned the other way.
func flipped(b loop.Behaviour, set []loop.Change) loop.Behaviour {
	for _, c := range set {
		if b.Has(c) {
			b = b.Without(c)
		} else {
			b = b.With(c)
		}
	}
	return b
}

func flips(held loop.Behaviour, set []loop.Change) []Flip {
	out := make([]Flip, len(set))
	for i, c := range set {
		out[i] = Flip{Change: c, Has: !held.Has(c)}
	}
	return out
}

// VersionFindings says each flip as a finding of kind Version, one signature per change and
// direction so that a suite groups them into one cause per change; heldTo names the pi the
// implementation is held to ("1.6.0").
func VersionFindings(flips []Flip, heldTo string) []Finding {
	rows := map[string]docs.VersionChange{}
	for _, r := range docs.VersionChanges() {
		rows[r.Name] = r
	}
	parts := make([]string, len(flips))
	for i, f := range flips {
		parts[i] = f.phrase()
	}
	out := make([]Finding, len(flips))
	for i, f := range flips {
		row := rows[f.Change.String()]
		rule := fmt.Sprintf("docs/VERSIONS.md, pi %s, %s: %s", f.Change.Since(), f.Change, strings.ReplaceAll(row.What, "**", ""))
		if len(row.Rules) > 0 {
			rule += " (" + strings.Join(row.Rules, ", ") + ")"
		}
		id := ""
		if len(row.Rules) > 0 {
			id = row.Rules[0] // one cause with the rule's own findings: the same defect
		}
		out[i] = Finding{
			Kind: Version, Rule: rule, RuleID: id,
			Says: fmt.Sprintf("the trace shows the reference at pi %s %s: here the loop behaves as pi %s, and it is held to pi %s (its hello's tracks, or --tracks); its other findings are diagnosed against the reference so turned",
				heldTo, strings.Join(parts, " and "), f.release(), heldTo),
			Signature: "version: " + f.phrase(),
			Headline:  fmt.Sprintf("behaves as pi %s: %s (docs/VERSIONS.md)", f.release(), f.phrase()),
		}
	}
	return out
}

// phrase is the flip as the reference takes it: "without duration-ms (pi 1.3.0)".
func (f Flip) phrase() string {
	how := "without"
	if f.Has {
		how = "with"
	}
	return fmt.Sprintf("%s %s (pi %s)", how, f.Change, f.Change.Since())
}

// release is the pi the flip behaves as: "before 1.3.0", "1.6.0 or later".
func (f Flip) release() string {
	if f.Has {
		return f.Change.Since() + " or later"
	}
	return "before " + f.Change.Since()
}
