package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestEveryChangeIsDetected flips each modelled behaviour change off in the reference (an
// in-process mutant behaving as pi just before that change) and requires the curated suite to
// catch it: at least one scenario runnable at the newest pi must differ. The detecting
// scenarios are logged (docs/VERSIONS.md lists them).
func TestEveryChangeIsDetected(t *testing.T) {
	t.Parallel() // whole-suite runs, each on one core: two at a time
	suite := curatedSuite(t)
	newest, err := loop.BehaviourOf(loop.NewestVersion)
	if err != nil {
		t.Fatal(err)
	}
	// The reference's traces, once: a scenario catches a mutant when the mutant's trace
	// differs from them or its run fails (as conformance.Verify judges it, without diagnosing
	// the failures, which this test does not read).
	want := make([]*trace.Trace, len(suite))
	wantErr := make([]error, len(suite))
	for i, sc := range suite {
		want[i], wantErr[i] = sim.Run(sc, sim.NewReferenceWith(newest))
	}
	for _, c := range loop.Changes() {
		if !c.Modelled() {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			mutant := loop.Behaviour{}.Without(c)
			var caught []string
			for i, sc := range suite {
				if wantErr[i] != nil {
					caught = append(caught, sc.Name) // Verify fails a scenario the reference cannot run
					continue
				}
				got, err := sim.Run(sc, sim.NewReferenceWith(mutant))
				if err != nil || !trace.Compare(want[i], got, trace.Strict).Equal() {
					caught = append(caught, sc.Name)
				}
			}
			if len(caught) == 0 {
				t.Fatalf("no curated scenario catches the loop without %s (pi %s)", c, c.Since())
			}
			t.Logf("%s (%s) caught by %d: %s", c, c.Since(), len(caught), strings.Join(caught, " "))
		})
	}
}

// TestReferenceAtEveryRelease: the reference at each release runs the curated suite, skipping
// exactly the scenarios of a later pi, and its traces keep every invariant at that release.
func TestReferenceAtEveryRelease(t *testing.T) {
	suite := curatedSuite(t)
	for _, v := range loop.Releases {
		t.Run(v, func(t *testing.T) {
			ref, err := sim.NewReferenceAt(v)
			if err != nil {
				t.Fatal(err)
			}
			report := conformance.Verify(context.Background(), suite, ref, conformance.Options{Tracks: v})
			for _, res := range report.Results {
				sc := findScenario(suite, res.Scenario)
				wantSkip := sc.Since != "" && loop.VersionLess(v, sc.Since)
				switch {
				case wantSkip && res.Status != conformance.Skip:
					t.Errorf("%s (since %s) was not skipped at %s: %s", res.Scenario, sc.Since, v, res.Status)
				case !wantSkip && res.Status != conformance.Pass:
					t.Errorf("%s at %s: %s %s\n%s", res.Scenario, v, res.Status, res.Reason, conformance.FindingsText(res.Findings, "  ", 0))
				}
			}
		})
	}
}

// TestTracksOutOfRange: an implementation tracking a pi the reference cannot behave as is one
// start error that says so (no scenario is run, none passes), instead of being compared with
// the newest pi.
func TestTracksOutOfRange(t *testing.T) {
	suite := curatedSuite(t)[:2]
	for _, tracks := range []string{"0.80", "latest"} {
		report := conformance.Verify(context.Background(), suite, sim.NewReference(), conformance.Options{Tracks: tracks})
		if report.Passed != 0 || report.OK() {
			t.Fatalf("tracks %q: %s (start error %q), want no scenario run", tracks, report.Summary(), report.StartError)
		}
		if r := report.StartError; !strings.Contains(r, "cannot behave as") {
			t.Errorf("tracks %q: start error %q does not say the reference cannot behave as that pi", tracks, r)
		}
	}
}

func findScenario(suite []*sim.Scenario, name string) *sim.Scenario {
	for _, sc := range suite {
		if sc.Name == name {
			return sc
		}
	}
	return &sim.Scenario{}
}

// TestAFailureIsNamedByThePiChangeItShows: a loop behaving as another pi release than it is
// held to fails with one cause per behaviour change of pi (docs/VERSIONS.md), whichever way
// it goes, and the scenarios' expect: blocks (pi 1.6.0's) are not held against an older pi.
func TestAFailureIsNamedByThePiChangeItShows(t *testing.T) {
	t.Parallel() // whole-suite runs, each on one core: two at a time
	suite, desc := curatedWithRules(t)
	at := func(v string) loop.Behaviour {
		b, err := loop.BehaviourOf(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A pi change is said by its version finding, the cause's example.
	causes := func(r conformance.Report) []string {
		var out []string
		for _, c := range r.Causes {
			if c.Kind == diagnose.Version {
				out = append(out, c.Example.Signature)
			} else {
				out = append(out, c.Signature)
			}
		}
		return out
	}
	// A port of pi 1.5.2 that took 1.6.0's completed batch on abort.
	early := conformance.Verify(context.Background(), suite, sim.NewReferenceWith(at("1.5.2").With(loop.AbortCompletesBatch)),
		conformance.Options{Tracks: "1.5.2", Scenarios: desc})
	if got := causes(early); early.Failed == 0 || !slices.Equal(got, []string{"version: with abort-completes-batch (pi 1.6.0)"}) {
		t.Errorf("%s; causes %q", early.Summary(), got)
	}
	for _, res := range early.Results {
		for _, f := range res.Findings {
			if f.Kind == diagnose.Expectation {
				t.Errorf("%s: an expect: block held against pi 1.5.2: %s", res.Scenario, f.Says)
			}
		}
	}
	// pi 0.87.1 held to 1.6.0: every change it lacks that the suite shows, each a cause.
	old := conformance.Verify(context.Background(), suite, sim.NewReferenceWith(at("0.87.1")), conformance.Options{Tracks: "1.6.0", Scenarios: desc})
	want := []string{
		"version: without thinking-level-stamp (pi 0.99.1)", "version: without duration-ms (pi 1.3.0)",
		"version: without abort-completes-batch (pi 1.6.0)", "version: without tool-result-is-error (pi 0.99.1)",
	}
	got := causes(old)
	for _, sig := range want {
		if !slices.Contains(got, sig) {
			t.Errorf("no cause %q among %q", sig, got)
		}
	}
	if len(got) == 0 || got[0] != want[0] {
		t.Errorf("causes %q", got)
	}
}

// TestOlderPortWithItsOwnDefect: a port of pi 0.87.1 held to pi 1.6.0 with a defect of its own
// (its assistant message_end says stopReason stop where the stream said toolUse) gets a cause
// per pi change it lacks and one for its defect, named by the rule it breaks and ranked above
// every other cause that is not a pi change — the pi changes do not hide it. A scenario
// where a change and the defect meet may show as a small cause of its own (one scenario
// each), as may pi 1.5.0's validator texts, which the reference does not model.
func TestOlderPortWithItsOwnDefect(t *testing.T) {
	t.Parallel() // whole-suite runs, each on one core: two at a time
	suite := curatedSuite(t)
	old, err := sim.NewReferenceAt("0.87.1")
	if err != nil {
		t.Fatal(err)
	}
	impl := rewriting{Reference: old, rewrite: func(kind string, data json.RawMessage) json.RawMessage {
		if kind == sim.NotifyEvent && bytes.Contains(data, []byte(`"type":"message_end"`)) {
			return bytes.ReplaceAll(data, []byte(`"stopReason":"toolUse"`), []byte(`"stopReason":"stop"`))
		}
		return data
	}}
	report := conformance.Verify(context.Background(), suite, impl, conformance.Options{Tracks: "1.6.0"})
	var own *diagnose.Cause
	versions, others := 0, 0
	for i, c := range report.Causes {
		t.Logf("cause %d: %s (%s) explains %d: %v", i+1, c.Title, c.Kind, len(c.Explains), c.Explains[:min(3, len(c.Explains))])
		switch {
		case c.Kind == diagnose.Version:
			versions++
		case own == nil && strings.HasPrefix(c.Rule, "R-STREAM-END"):
			own = &report.Causes[i]
		case own == nil:
			t.Errorf("cause %d (%s) ranks above the port's own defect", i+1, c.Title)
		default:
			others += len(c.Explains)
		}
	}
	if versions < 5 {
		t.Errorf("%d causes name pi changes the port lacks, want 5 or more", versions)
	}
	if own == nil || len(own.Explains) < 100 {
		t.Fatalf("no cause names the port's own defect by R-STREAM-END, or it explains under 100 scenarios")
	}
	if others > 3 {
		t.Errorf("the causes that are neither explain %d scenarios, want 3 at most", others)
	}
}
