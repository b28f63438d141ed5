package diagnose_test

import (
	"slices"
	"testing"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/loop"
)

// TestExplainByVersionFindsTheFewestChanges: of the changes between the held pi and a
// release, only those the trace shows are named, however many the release has; one change
// alone is found without a release; a trace no change explains gets none.
func TestExplainByVersionFindsTheFewestChanges(t *testing.T) {
	newest := loop.Behaviour{}
	// The trace shows two changes missing; the others make no difference to it.
	two := func(b loop.Behaviour) bool { return !b.Has(loop.ThinkingLevelStamp) && !b.Has(loop.DurationMs) }
	got := diagnose.ExplainByVersion(newest, two)
	want := []diagnose.Flip{{Change: loop.ThinkingLevelStamp}, {Change: loop.DurationMs}}
	if !slices.Equal(got, want) {
		t.Errorf("two changes: %+v", got)
	}
	held, err := loop.BehaviourOf("1.5.2")
	if err != nil {
		t.Fatal(err)
	}
	one := func(b loop.Behaviour) bool { return b.Has(loop.AbortFirst) }
	if got := diagnose.ExplainByVersion(held, one); !slices.Equal(got, []diagnose.Flip{{Change: loop.AbortFirst, Has: true}}) {
		t.Errorf("one change: %+v", got)
	}
	if got := diagnose.ExplainByVersion(newest, func(loop.Behaviour) bool { return false }); got != nil {
		t.Errorf("nothing explains it: %+v", got)
	}
	f := diagnose.VersionFindings(want, "1.6.0")
	if len(f) != 2 || f[1].Signature != "version: without duration-ms (pi 1.3.0)" || f[1].Kind != diagnose.Version ||
		f[1].Headline != "behaves as pi before 1.3.0: without duration-ms (pi 1.3.0) (docs/VERSIONS.md)" {
		t.Errorf("findings %+v", f)
	}
}
