package conformance

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// badEventPort emits an event that cannot be encoded, then returns.
type badEventPort struct{}

func (badEventPort) Hello() Hello { return Hello{Name: "bad", Tracks: "1.6.0"} }

func (badEventPort) Run(_ context.Context, env Env) (any, error) {
	env.Emit(map[string]any{"type": "agent_start", "oops": make(chan int)})
	return []any{}, nil
}

// TestUnencodableEventIsAFinding: in-process, an event a Go port emits that cannot be
// encoded is an error finding, never recorded as a made-up event.
func TestUnencodableEventIsAFinding(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	f := files[0]
	synctest.Test(t, func(t *testing.T) {
		res := verifyOne(f.Scenario, sim.NewReference(), &inProcess{port: badEventPort{}}, Strict, 3, diagnose.FromFile(f), nil)
		if res.Status != Fail {
			t.Fatalf("status %s", res.Status)
		}
		var errs []diagnose.Finding
		for _, fd := range res.Findings {
			if fd.Kind == diagnose.Error {
				errs = append(errs, fd)
			}
			if strings.Contains(fd.Actual, "unencodable") {
				t.Errorf("a made-up value was recorded: %s", fd.Actual)
			}
		}
		if len(errs) != 1 || !strings.Contains(errs[0].Says, "cannot be encoded as JSON") {
			t.Fatalf("error findings %v", errs)
		}
	})
}
