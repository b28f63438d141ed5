package porttest_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	suite "github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// stuckGoPort breaks the Go kit's rule: it waits on a mutex nobody unlocks, a wait no
// synctest bubble can see through.
type stuckGoPort struct{}

func (stuckGoPort) Hello() protocol.Hello {
	return protocol.Hello{Name: "stuck", Tracks: "1.6.0"}
}

func (stuckGoPort) Run(context.Context, porttest.Env) (any, error) {
	var mu sync.Mutex
	mu.Lock()
	mu.Lock()
	return nil, nil
}

// TestAServedPortBreakingTheKitsRuleIsReportedAsSuch: served, a port waiting on a mutex
// fails each scenario with an error naming the kit's rule and the goroutine that breaks
// it, after the stall limit, and the next scenario still runs (the session is abandoned,
// not the adapter).
func TestAServedPortBreakingTheKitsRuleIsReportedAsSuch(t *testing.T) {
	files, err := suite.Suite()
	if err != nil {
		t.Fatal(err)
	}
	var one *suite.File
	for _, f := range files {
		if len(f.Scenario.Hooks.Installed()) == 0 && f.Scenario.Agent == nil {
			one = f
			break
		}
	}
	again := *one.Scenario
	again.Name += "-again"
	two := []*sim.Scenario{one.Scenario, &again}
	p := selfadapter.Process(t, "stuck-port")
	r := conformance.Verify(context.Background(), two, p, conformance.Options{})
	if r.Failed != 2 {
		t.Fatalf("%s, want both scenarios failed", r.Summary())
	}
	for _, res := range r.Results {
		for _, want := range []string{"not idle after 1s", "breaks the kit's rule", "sync.Mutex", "stuckGoPort.Run"} {
			if !strings.Contains(res.Reason, want) {
				t.Errorf("%s: the reason lacks %q:\n%s", res.Scenario, want, res.Reason)
			}
		}
	}
}
