package explore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// faulty is the reference with a fault injected into its port traffic: a wrapper sees every
// call, notification and delivery, and may change, drop, reorder or add to them.
type faulty struct {
	inner *sim.Reference
	world sim.Port
	fault fault
	// state the faults keep
	calls      []string // tool-call ids of the last response
	held       []sim.Notification
	extra      string // the stream id of an extra request, whose deliveries are dropped
	requests   int
	batchEnded []sim.Notification
}

// fault is what a faulty implementation does to its traffic. Each hook returns whether the
// item goes through unchanged (true) or was handled.
type fault struct {
	name string
	// notify may change or swallow an event before it reaches the world.
	notify func(f *faulty, n sim.Notification, ev map[string]any) bool
	// call may change a call's answer.
	call func(f *faulty, c sim.Call, a sim.Answer) sim.Answer
	// before runs before a call reaches the world; rewrite may change it.
	before  func(f *faulty, c sim.Call)
	rewrite func(f *faulty, c sim.Call) sim.Call
	// invariant is the one expected to catch the fault without the differential comparison.
	invariant string
}

func (f *faulty) Start(setup sim.Setup, world sim.Port) error {
	f.world = world
	f.inner = sim.NewReference()
	return f.inner.Start(setup, (*faultPort)(f))
}

func (f *faulty) Deliver(d sim.Delivery) error {
	if f.extra != "" && d.Target == f.extra && strings.HasPrefix(d.Kind, "stream") {
		return nil
	}
	return f.inner.Deliver(d)
}

func (f *faulty) Stop() error { return f.inner.Stop() }

// faultPort is the port the inner reference sees.
type faultPort faulty

func (p *faultPort) Call(c sim.Call) sim.Answer {
	f := (*faulty)(p)
	f.flush()
	if f.fault.before != nil {
		f.fault.before(f, c)
	}
	if f.fault.rewrite != nil {
		c = f.fault.rewrite(f, c)
	}
	a := f.world.Call(c)
	if f.fault.call != nil {
		a = f.fault.call(f, c, a)
	}
	return a
}

func (p *faultPort) Notify(n sim.Notification) {
	f := (*faulty)(p)
	if n.Kind != sim.NotifyEvent || f.fault.notify == nil {
		f.flush()
		f.world.Notify(n)
		return
	}
	var ev map[string]any
	_ = json.Unmarshal(n.Data, &ev)
	if ev["type"] == "message_end" {
		if m, _ := ev["message"].(map[string]any); m["role"] == "assistant" {
			f.calls = nil
			for _, b := range m["content"].([]any) {
				if bm := b.(map[string]any); bm["type"] == "toolCall" {
					f.calls = append(f.calls, bm["id"].(string))
				}
			}
		}
	}
	if f.fault.notify(f, n, ev) {
		f.world.Notify(n)
	}
}

// flush releases held notifications.
func (f *faulty) flush() {
	held := f.held
	f.held = nil
	for _, n := range held {
		f.world.Notify(n)
	}
}

func encode(ev map[string]any) sim.Notification {
	data, _ := json.Marshal(ev)
	return sim.Notification{Kind: sim.NotifyEvent, Data: data}
}

func toolCallID(ev map[string]any) string {
	m, _ := ev["message"].(map[string]any)
	id, _ := m["toolCallId"].(string)
	return id
}

func role(ev map[string]any) string {
	m, _ := ev["message"].(map[string]any)
	r, _ := m["role"].(string)
	return r
}

var faults = []fault{
	{
		name: "drops-a-tool-result", invariant: "results",
		notify: func(f *faulty, n sim.Notification, ev map[string]any) bool {
			// The last result of a batch of two or more calls is never reported.
			t := ev["type"]
			return !((t == "message_start" || t == "message_end") && role(ev) == "toolResult" &&
				len(f.calls) >= 2 && toolCallID(ev) == f.calls[len(f.calls)-1])
		},
	},
	{
		name: "swaps-tool-end-with-next-event", invariant: "grammar",
		notify: func(f *faulty, n sim.Notification, ev map[string]any) bool {
			if len(f.held) > 0 {
				f.world.Notify(n)
				f.flush()
				return false
			}
			if ev["type"] == "tool_execution_end" {
				f.held = append(f.held, n)
				return false
			}
			return true
		},
	},
	{
		name: "makes-an-extra-request", invariant: "grammar",
		before: func(f *faulty, c sim.Call) {
			if c.Kind != trace.CallStream {
				return
			}
			f.requests++
			if f.requests == 2 {
				a := f.world.Call(c)
				var s struct {
					Stream string `json:"stream"`
				}
				_ = json.Unmarshal(a.Data, &s)
				f.extra = s.Stream
			}
		},
	},
	{
		name: "ignores-finish-turn-end", invariant: "finish-turn",
		call: func(f *faulty, c sim.Call, a sim.Answer) sim.Answer {
			if c.Kind == trace.CallHook && c.Name == trace.HookFinishTurn && strings.Contains(string(a.Data), `"end"`) {
				a.Data = json.RawMessage(`{}`)
			}
			return a
		},
	},
	{
		name: "polls-follow-up-while-tools-run", invariant: "queue-timing",
		notify: func(f *faulty, n sim.Notification, ev map[string]any) bool {
			if ev["type"] == "tool_execution_start" {
				f.world.Notify(n)
				f.world.Call(sim.Call{Kind: trace.CallHook, Name: trace.HookFollowUp, Data: json.RawMessage(`{}`)})
				return false
			}
			return true
		},
	},
	{
		name: "forgets-thinking-level", invariant: "snapshots",
		notify: func(f *faulty, n sim.Notification, ev map[string]any) bool {
			if ev["type"] == "message_end" && role(ev) == "assistant" {
				delete(ev["message"].(map[string]any), "thinkingLevel")
				f.world.Notify(encode(ev))
				return false
			}
			return true
		},
	},
	{
		name: "ends-parallel-tools-in-source-order", invariant: "results",
		notify: func(f *faulty, n sim.Notification, ev map[string]any) bool {
			switch {
			case ev["type"] == "tool_execution_end" && len(f.calls) > 1:
				f.batchEnded = append(f.batchEnded, n)
				return false
			case len(f.batchEnded) > 0 && ev["type"] != "tool_execution_update" && ev["type"] != "tool_execution_start":
				ended := f.batchEnded
				f.batchEnded = nil
				slices.SortStableFunc(ended, func(a, b sim.Notification) int {
					var x, y map[string]any
					_ = json.Unmarshal(a.Data, &x)
					_ = json.Unmarshal(b.Data, &y)
					return slices.Index(f.calls, x["toolCallId"].(string)) - slices.Index(f.calls, y["toolCallId"].(string))
				})
				for _, e := range ended {
					f.world.Notify(e)
				}
			}
			return true
		},
	},
	{
		name: "loses-steering-messages", invariant: "queue-timing",
		call: func(f *faulty, c sim.Call, a sim.Answer) sim.Answer {
			if c.Kind == trace.CallHook && c.Name == trace.HookSteering {
				a.Data = json.RawMessage(`{"messages":[]}`)
			}
			return a
		},
	},
	{
		name: "hides-declaration-events", invariant: "reports",
		notify: func(f *faulty, n sim.Notification, ev map[string]any) bool {
			m, _ := ev["message"].(map[string]any)
			return !(role(ev) == "system" && m["toolsAdded"] != nil)
		},
	},
	{
		name: "tells-the-model-no-tools", invariant: "replay",
		rewrite: func(f *faulty, c sim.Call) sim.Call {
			if c.Kind != trace.CallStream {
				return c
			}
			var req map[string]any
			_ = json.Unmarshal(c.Data, &req)
			for _, m := range req["messages"].([]any) {
				delete(m.(map[string]any), "toolsAdded")
				delete(m.(map[string]any), "toolsRemoved")
			}
			c.Data, _ = json.Marshal(req)
			return c
		},
	},
}

// TestExploreFindsFaults: explore finds each injected fault and shrinks it to a scenario
// making at most 3 requests, within a few seconds — with the comparison against the
// reference, and with the invariants alone.
func TestExploreFindsFaults(t *testing.T) {
	for _, fl := range faults {
		for _, noDiff := range []bool{false, true} {
			name := fl.name
			if noDiff {
				name += "/invariants-only"
			}
			t.Run(name, func(t *testing.T) {
				out := t.TempDir()
				start := time.Now()
				res := Run(context.Background(), Options{
					Impl: func() sim.Implementation { return &faulty{fault: fl} },
					Seed: 1, Runs: 3000, Out: out, NoDiff: noDiff, ShrinkTime: 20 * time.Second, MaxFailures: 1,
				})
				elapsed := time.Since(start)
				if len(res.Failures) == 0 {
					t.Fatalf("no failure found in %d runs", res.Runs)
				}
				f := res.Failures[0]
				if f.Flaky {
					t.Fatalf("reported flaky: %s", f.Message)
				}
				if noDiff && !slices.ContainsFunc(f.Original.Findings, func(fd diagnose.Finding) bool {
					return fd.Kind == diagnose.Invariant && fd.Invariant == fl.invariant
				}) {
					t.Errorf("expected invariant %s to catch it, got: %s", fl.invariant, f.Original.Message)
				}
				if f.Shrink.After.Requests > 3 {
					t.Errorf("the minimal scenario makes %d requests", f.Shrink.After.Requests)
				}
				for _, file := range []string{"minimal.yaml", "impl.timeline", "README.md"} {
					if _, err := os.Stat(filepath.Join(f.Dir, file)); err != nil {
						t.Error(err)
					}
				}
				t.Logf("run %d of %d found it (%s); shrunk in %s, %d tried, %d kept: %s; total %s",
					f.Run, res.Runs, f.Kind, f.Shrink.Elapsed.Round(time.Millisecond), f.Shrink.Tried, f.Shrink.Accepted, f.Shrink, elapsed.Round(time.Millisecond))
				if elapsed > 30*time.Second {
					t.Errorf("took %s", elapsed)
				}
			})
		}
	}
}

// TestPassThroughIsClean: the reference reached through a wrapping port (so over its JSON
// path) matches the in-process reference and breaks no invariant — no false alarms.
func TestPassThroughIsClean(t *testing.T) {
	runs := 200
	if testing.Short() {
		runs = 50
	}
	res := Run(context.Background(), Options{Seed: 11, Runs: runs, Impl: func() sim.Implementation { return &faulty{} }})
	if len(res.Failures) > 0 {
		t.Fatalf("%s\n%s", res.Failures[0].Message, res.Failures[0].Kind)
	}
}

// TestIgnoreAnInvariantIgnoresEachOfItsRules: an --ignore line naming an invariant alone
// ("invariant results", as causes.txt files held before causes named the rule) ignores its
// findings whatever rule they name (R-TOOL-RESULT-MESSAGE, …); a run is hidden only when
// nothing else is wrong with it.
func TestIgnoreAnInvariantIgnoresEachOfItsRules(t *testing.T) {
	fl := faultNamed(t, "drops-a-tool-result")
	impl := func() sim.Implementation { return &faulty{fault: fl} }
	seen := Run(context.Background(), Options{Impl: impl, Seed: 1, Runs: 50, NoDiff: true, ShrinkTime: -1})
	if len(seen.Failures) == 0 || !strings.HasPrefix(seen.Failures[0].Signature(), "R-") || seen.Failures[0].Cause().Invariant != "results" {
		t.Fatalf("the fault shows as %v", seen.Failures)
	}
	res := Run(context.Background(), Options{Impl: impl, Seed: 1, Runs: 50, NoDiff: true, ShrinkTime: -1,
		Ignore: map[string]bool{"invariant results": true}})
	// Its findings are left out, not the runs: a run that breaks another invariant too still
	// fails, with that one as its cause.
	for _, f := range res.Failures {
		if f.Cause().Invariant == "results" {
			t.Errorf("ignoring invariant results, it is still a cause: %s", f.Signature())
		}
	}
	if res.Ignored+res.Failing != seen.Failing {
		t.Errorf("ignoring invariant results: %d runs ignored, %d failing, of %d", res.Ignored, res.Failing, seen.Failing)
	}
}
