package trace_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestMemoComparesAsCompare: an implementation's trace compared through a Memo with the
// reference turned one change at a time, twice over (the second time from what the memo
// remembers), gives Compare's comparison each time.
func TestMemoComparesAsCompare(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	oldest, err := loop.BehaviourOf("0.87.1")
	if err != nil {
		t.Fatal(err)
	}
	compared, differing, taken := 0, 0, 0
	for _, f := range files {
		sc := f.Scenario
		if !strings.HasPrefix(sc.Name, "tools-") || taken == 8 {
			continue
		}
		taken++
		got, err := sim.Run(sc, sim.NewReferenceWith(oldest))
		if err != nil {
			t.Fatal(err)
		}
		for _, profile := range []trace.Profile{trace.Strict, trace.Semantic} {
			memo := trace.NewMemo(got, profile)
			for range 2 {
				for _, c := range loop.Changes() {
					want, err := sim.Run(sc, sim.NewReferenceWith(loop.Behaviour{}.Without(c)))
					if err != nil {
						t.Fatal(err)
					}
					plain, memoized := trace.Compare(want, got, profile), memo.Compare(want)
					if !reflect.DeepEqual(plain, memoized) {
						t.Fatalf("%s, %s, reference without %s: the memo's comparison differs from Compare's", sc.Name, profile, c)
					}
					compared++
					if !plain.Equal() {
						differing++
					}
				}
			}
		}
	}
	t.Logf("%d comparisons, %d with differences", compared, differing)
	if compared < 100 || differing < 20 {
		t.Fatalf("%d comparisons, %d with differences: want more of both", compared, differing)
	}
}
