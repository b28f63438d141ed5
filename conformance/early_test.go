package conformance_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// earlyCounter serves scenarios through a Process with the world as it is, counting the
// stream calls the world answered early (sim.EarlyAnswer).
type earlyCounter struct {
	*protocol.Process
	early *int
}

func (c earlyCounter) Start(setup sim.Setup, world sim.Port) error {
	return c.Process.Start(setup, countingWorld{world.(worldPort), c.early})
}

// worldPort is everything the world offers a Process.
type worldPort interface {
	sim.Port
	sim.Ahead
	sim.Standing
	sim.EarlyAnswer
}

type countingWorld struct {
	worldPort
	early *int
}

func (w countingWorld) OpenStream(c sim.Call, model sim.ModelSetup) (sim.Answer, func(), bool) {
	a, finish, ok := w.worldPort.OpenStream(c, model)
	if ok {
		*w.early++
	}
	return a, finish, ok
}

// TestEarlyAnswers: through the protocol, the world answers a stream call before it reads the
// call's context, and the trace is the reference's byte for byte: with tools, a request the
// script does not cover, a failing open, the requests budget, and a budget of entries that
// ends the run at every entry.
func TestEarlyAnswers(t *testing.T) {
	base := sim.Scenario{
		Name: "early", Model: testModel, Prompts: []loop.Message{user("go")},
		Tools: []sim.ToolSpec{tool("a", ok("1", 0)), tool("b", ok("2", 3))},
		Responses: []sim.Response{
			{Content: []loop.Block{call("a1", "a", map[string]any{}), call("b1", "b", map[string]any{})}},
			{Content: []loop.Block{call("a2", "a", map[string]any{})}, Delay: 2},
			{Content: loop.Text("done"), DeltaSize: 1},
		},
	}
	unscripted := base
	unscripted.Name, unscripted.Responses = "early-unscripted", base.Responses[:2]
	failing := base
	failing.Name, failing.Responses = "early-open-error", append([]sim.Response{base.Responses[0], {OpenError: "overloaded"}}, base.Responses[2:]...)
	requests := base
	requests.Name, requests.Budget = "early-requests", sim.Budget{Requests: 2}
	served := selfadapter.Process(t, "serve")
	for _, sc := range append([]*sim.Scenario{&unscripted, &failing, &requests}, withEntryBudgets(base, 3, 50)...) {
		t.Run(sc.Name, func(t *testing.T) {
			want, wantErr := sim.Run(sc, sim.NewReference())
			early := 0
			got, err := sim.Run(sc, earlyCounter{served, &early})
			var wantBudget, gotBudget *sim.BudgetError
			if errors.As(wantErr, &wantBudget) != errors.As(err, &gotBudget) || (wantErr == nil) != (err == nil) {
				t.Fatalf("error %v, the reference's %v", err, wantErr)
			}
			if !bytes.Equal(got.JSONL(), want.JSONL()) {
				t.Fatalf("traces differ\nwant:\n%s\ngot:\n%s", want.Timeline(), got.Timeline())
			}
			if sc.Budget.Entries == 0 && early < 2 {
				t.Errorf("%d stream calls answered early; want every one the world could", early)
			}
		})
	}
}

// plainWorld is the world without sim.EarlyAnswer: every stream call is answered after it is
// read and recorded, as before early answers.
type plainWorld struct {
	sim.Port
	sim.Ahead
	sim.Standing
}

type plainProcess struct{ *protocol.Process }

func (p plainProcess) Start(setup sim.Setup, world sim.Port) error {
	return p.Process.Start(setup, plainWorld{world, world.(sim.Ahead), world.(sim.Standing)})
}

// TestEarlyAnswersChangeNoVerdict: adapters that break the exchange where an early answer
// could tell get the trace and the verdict of the plain exchange (found by a review): a
// stream call holding a number no float64 holds (the world cannot read its data: no early
// answer), and a run whose stream call reaches the entries budget, with an adapter that dies
// at any delivery (nothing may be sent ahead of a run a budget stopped).
func TestEarlyAnswersChangeNoVerdict(t *testing.T) {
	for _, c := range []struct {
		script string
		budget sim.Budget
		want   string
	}{
		{"bignum.sh", sim.Budget{}, ""},
		{"crashondeliver.sh", sim.Budget{Entries: 1}, "the trace reached 1 entry; budget 1"},
	} {
		t.Run(c.script, func(t *testing.T) {
			sc := &sim.Scenario{Name: "verdict", Model: testModel, Prompts: []loop.Message{user("go")},
				Responses: []sim.Response{{Content: loop.Text("done")}}, Budget: c.budget}
			var traces [2]*trace.Trace
			var errs [2]error
			for i, plain := range []bool{false, true} {
				p := &protocol.Process{Command: []string{"sh", "testdata/" + c.script}, Timeout: 5 * time.Second}
				t.Cleanup(func() { _ = p.Close() })
				var impl sim.Implementation = p
				if plain {
					impl = plainProcess{p}
				}
				traces[i], errs[i] = sim.Run(sc, impl)
			}
			if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) || !bytes.Equal(traces[0].JSONL(), traces[1].JSONL()) {
				t.Fatalf("early: %v\n%s\nplain: %v\n%s", errs[0], traces[0].JSONL(), errs[1], traces[1].JSONL())
			}
			if c.want != "" && (errs[0] == nil || !strings.Contains(errs[0].Error(), c.want)) {
				t.Fatalf("verdict %v; want %q", errs[0], c.want)
			}
			if c.script == "bignum.sh" && !bytes.Contains(traces[0].JSONL(), []byte("bad stream call")) {
				t.Fatalf("the stream call with 1e400 was read:\n%s", traces[0].JSONL())
			}
		})
	}
}
