package conformance_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestStandingAnswers: the reference served over the protocol takes standing answers (§15).
// A start promises the queue polls' answers when no user action can fill the queues; the
// adapter then marks those calls standing and waits for no answer, and the trace is the one
// of the plain exchange, byte for byte, also when a budget ends the run at any entry (the
// world then answers with errors, which the adapter no longer waits for). With user actions
// nothing is promised.
func TestStandingAnswers(t *testing.T) {
	quiet := sim.Scenario{
		Name: "standing", Model: testModel, Prompts: []loop.Message{user("go")},
		Tools: []sim.ToolSpec{tool("a", ok("1", 0)), tool("b", ok("2", 3))},
		Responses: []sim.Response{
			{Content: []loop.Block{call("a1", "a", map[string]any{}), call("b1", "b", map[string]any{})}},
			{Content: []loop.Block{call("a2", "a", map[string]any{})}},
			{Content: loop.Text("done"), DeltaSize: 1},
		},
	}
	steered := quiet
	steered.Name = "standing-steered"
	steered.User = []sim.UserAction{{On: &sim.Trigger{Event: loop.ToolExecutionEnd, ToolCallID: "a1"}, Steer: []loop.Message{user("and?")}}}
	noSteering := quiet
	noSteering.Name, noSteering.Hooks = "standing-no-steering", sim.Hooks{NoSteering: true}
	both := servedBothWays(t)
	for _, sc := range append([]*sim.Scenario{&steered, &noSteering}, withEntryBudgets(quiet, 3, 50)...) {
		t.Run(sc.Name, func(t *testing.T) {
			standing, plain, _ := both.run(t, sc)
			marked := strings.Count(standing, `"standing":true`)
			promisedOrTaken := func(log string) bool {
				return strings.Contains(log, `"standingAnswers":{`) || strings.Contains(log, `"standing":true`)
			}
			switch {
			case promisedOrTaken(plain):
				t.Errorf("OneAtATime: standing answers promised or taken:\n%s", plain)
			case sc.User != nil && promisedOrTaken(standing):
				t.Errorf("a scenario with user actions: standing answers promised or taken:\n%s", standing)
			case sc.User == nil && !strings.Contains(standing, `"standingAnswers":{"getFollowUpMessages":{"messages":[]}`):
				t.Errorf("no promise of the follow-up poll's answer at the start:\n%s", standing)
			case sc.User == nil && sc.Budget.Entries == 0 && (marked < 1 || marked != polls(plain)):
				t.Errorf("%d calls marked standing; want every queue poll (%d):\n%s", marked, polls(plain), standing)
			case sc.Hooks.NoSteering && strings.Contains(standing, `"getSteeringMessages":{"messages":[]}`):
				t.Errorf("a promise for a hook the scenario does not install:\n%s", standing)
			}
			if answers := strings.Count(standing, `"type":"answer"`); sc.User == nil && sc.Budget.Entries == 0 && answers+marked != strings.Count(plain, `"type":"answer"`) {
				t.Errorf("%d answers and %d standing calls; the plain exchange has %d answers", answers, marked, strings.Count(plain, `"type":"answer"`))
			}
		})
	}
}

// polls counts the queue polls of a protocol log.
func polls(log string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, `< {"type":"call"`) && (strings.Contains(line, `"name":"getSteeringMessages"`) || strings.Contains(line, `"name":"getFollowUpMessages"`)) {
			n++
		}
	}
	return n
}

// liar serves a scenario through a Process with a world that passes on the real world's
// promise of standing answers and breaks it: it answers the second steering poll with a
// message.
type liar struct{ *protocol.Process }

func (l liar) Start(setup sim.Setup, world sim.Port) error {
	return l.Process.Start(setup, &brokenPromise{Port: world, standing: world.(sim.Standing)})
}

type brokenPromise struct {
	sim.Port
	standing sim.Standing
	polls    int
}

func (b *brokenPromise) StandingAnswers() map[string]json.RawMessage {
	return b.standing.StandingAnswers()
}

func (b *brokenPromise) Ended() bool { return b.standing.Ended() }

func (b *brokenPromise) Call(c sim.Call) sim.Answer {
	a := b.Port.Call(c)
	if c.Name == trace.HookSteering {
		if b.polls++; b.polls == 2 {
			a.Data = json.RawMessage(`{"messages":[{"role":"user","content":"surprise","timestamp":0}]}`)
		}
	}
	return a
}

// TestABrokenPromiseIsAnInternalError: should the world answer a call marked standing with
// anything but what it promised, the scenario fails with an internal error that says so (the
// adapter went on with the promised answer: the trace would not be the exchange's).
func TestABrokenPromiseIsAnInternalError(t *testing.T) {
	sc := &sim.Scenario{
		Name: "broken-promise", Model: testModel, Prompts: []loop.Message{user("go")},
		Tools:     []sim.ToolSpec{tool("a", ok("1", 0))},
		Responses: []sim.Response{{Content: []loop.Block{call("a1", "a", map[string]any{})}}, {Content: loop.Text("done")}},
	}
	_, err := sim.Run(sc, liar{selfadapter.Process(t, "serve")})
	want := `internal error: the world promised getSteeringMessages the standing answer {"messages":[]}, but answered call id 4 with {"messages":[{"role":"user","content":"surprise"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant an error containing %s", err, want)
	}
}
