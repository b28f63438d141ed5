package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/scenarios"
)

// agentFaults are deliberate bugs of the Agent (agent/), each with the rule its cause must
// name: the id of docs/SEMANTICS.md or the Agent invariant that judges it.
var agentFaults = []struct {
	fault
	rule string
}{
	// Both patch the same return; each keeps it for when it is switched off.
	{one("drains every message in one-at-a-time mode", "agent/run.go",
		"\t\treturn a.steering.Drain(), nil\n",
		"\t\tif @ON {\n\t\t\tvar all []loop.Message\n\t\t\tfor m := a.steering.Drain(); len(m) > 0; m = a.steering.Drain() {\n\t\t\t\tall = append(all, m...)\n\t\t\t}\n\t\t\treturn all, nil\n\t\t}\n\t\treturn a.steering.Drain(), nil\n"),
		"R-AGENT-QUEUES"},
	{one("delivers a follow-up while running", "agent/run.go",
		"\t\treturn a.steering.Drain(), nil\n",
		"\t\tif @ON {\n\t\t\tif m := a.steering.Drain(); len(m) > 0 {\n\t\t\t\treturn m, nil\n\t\t\t}\n\t\t\treturn a.followUp.Drain(), nil\n\t\t}\n\t\treturn a.steering.Drain(), nil\n"),
		"R-AGENT-QUEUES"},
}

// wrongAgents are the Agent's deliberate bugs explore must find: agentFaults, and three that
// no curated scenario need touch.
var wrongAgents = append(agentFaultsOnly(), []fault{
	// continue() refused while a run is active takes the oldest steering message with it.
	one("a refused continue() drains a queue", "agent/run.go",
		"\tif a.active != nil {\n\t\treturn nil, nil, ErrBusyContinue\n\t}\n",
		"\tif a.active != nil {\n\t\tif @ON {\n\t\t\ta.steering.Drain()\n\t\t}\n\t\treturn nil, nil, ErrBusyContinue\n\t}\n"),
	// peekQueuedMessages shows every queued message, whatever the queue's mode.
	one("peek ignores the mode", "agent/agent.go",
		"\tif s := a.steering.Peek(); len(s) > 0 {\n\t\treturn s\n\t}\n\treturn a.followUp.Peek()\n",
		"\tif @ON {\n\t\tpeekAll := func(q *loop.Queue) []loop.Message {\n\t\t\tmode := q.Mode()\n\t\t\tq.SetMode(loop.All)\n\t\t\tdefer q.SetMode(mode)\n\t\t\treturn q.Peek()\n\t\t}\n"+
			"\t\tif s := peekAll(a.steering); len(s) > 0 {\n\t\t\treturn s\n\t\t}\n\t\treturn peekAll(a.followUp)\n\t}\n"+
			"\tif s := a.steering.Peek(); len(s) > 0 {\n\t\treturn s\n\t}\n\treturn a.followUp.Peek()\n"),
	// The run goes on while a listener has not returned: the listener's barrier holds nothing
	// (where the reference's listener would wait for its release).
	one("a listener not awaited", "sim/refagent.go",
		"\t\tb.held = true\n\t\tfor b.held && !r.closed && !(b.UntilAbort && ctx.Err() != nil) {\n\t\t\tr.park(&b.waiter)\n\t\t}\n",
		"\t\tb.held = true\n\t\tfor !@ON && b.held && !r.closed && !(b.UntilAbort && ctx.Err() != nil) {\n\t\t\tr.park(&b.waiter)\n\t\t}\n"),
}...)

func agentFaultsOnly() []fault {
	var out []fault
	for _, f := range agentFaults {
		out = append(out, f.fault)
	}
	return out
}

// TestExploreFindsEveryWrongAgent: explore, generating Agent sessions only, finds each wrong
// Agent through the protocol within 2,000 runs, and shrinks its first cause to a session of
// at most three operations.
func TestExploreFindsEveryWrongAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty binary")
	}
	for _, f := range wrongAgents {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			bin := faultyBinary(t)
			procs := &protocol.Pool{New: func() *protocol.Process {
				return faultyProcess(bin, roleReference, 10*time.Second, f)
			}}
			defer procs.Close()
			res := explore.Run(context.Background(), explore.Options{
				Impl:        procs.Impl,
				Seed:        37,
				Runs:        2000,
				Entry:       explore.EntryAgent,
				MaxFailures: 1,
				ShrinkTime:  20 * time.Second,
			})
			if res.Err != nil || !res.Failed() {
				t.Fatalf("explore found nothing in %d runs (%v)", res.Runs, res.Err)
			}
			fail := res.Failures[0]
			data, _ := scenarios.Write(fail.Minimal)
			if ops := explore.Operations(fail.Minimal); fail.Flaky || ops > 3 {
				t.Errorf("flaky %v; the minimal session has %d operations (want at most 3):\n%s", fail.Flaky, ops, data)
			}
			t.Logf("found at run %d (%d runs in %s): %s; minimal: %s\n%s", fail.Run, res.Runs, res.Elapsed.Round(time.Millisecond),
				fail.Signature(), fail.Shrink.After, data)
		})
	}
}

// TestWrongAgentsFailNamingTheRule: an Agent with a deliberate queue bug, served through the
// protocol, fails the curated Agent scenarios, and the report's first cause names the rule it
// breaks.
func TestWrongAgentsFailNamingTheRule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty binary")
	}
	files, err := scenarios.SuiteNamed("agent")
	if err != nil {
		t.Fatal(err)
	}
	suite := scenarios.Scenarios(files)
	for _, f := range agentFaults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			p := faultyProcess(faultyBinary(t), roleReference, 10*time.Second, f.fault)
			defer p.Close()
			r := conformance.Verify(context.Background(), suite, p, conformance.Options{Scenarios: diagnose.FromFiles(files)})
			logCauses(t, r)
			if r.Failed == 0 {
				t.Fatalf("no Agent scenario catches %q: %s", f.name, r.Summary())
			}
			if len(r.Causes) == 0 || !namesRule(r.Causes[0].Rule, f.rule) {
				t.Errorf("the first cause does not name %s", f.rule)
			}
		})
	}
}
