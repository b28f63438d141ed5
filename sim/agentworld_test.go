package sim

import (
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// agentScenario is a small Agent scenario: one prompt at 0ms answered after 5ms, and more.
func agentScenario(barriers []Barrier, more ...UserAction) *Scenario {
	at := int64(0)
	return &Scenario{
		Name:      "agent",
		Responses: []Response{{Content: []loop.Block{loop.TextContent{Text: "hi"}}, Delay: 5}},
		Agent:     &AgentScript{Barriers: barriers},
		User: append([]UserAction{{At: &at, Op: &AgentOp{Op: trace.OpPrompt, Messages: []loop.Message{&loop.UserMessage{Text: "hello"}}}}},
			more...),
	}
}

// failures are the trace's fail entries, as "name: error".
func failures(tr *trace.Trace) []string {
	var out []string
	for _, e := range tr.Entries {
		if e.Kind == trace.KindFail {
			out = append(out, e.Name+": "+e.Error)
		}
	}
	return out
}

// TestAgentStuck: a barrier never released holds the run: the prompt never settles, and the
// trace says both, after the final state operation.
func TestAgentStuck(t *testing.T) {
	tr, err := Run(agentScenario([]Barrier{{ID: "b1", Event: loop.AgentEnd}}), NewReference())
	if err != nil {
		t.Fatal(err)
	}
	got := failures(tr)
	want := "stuck: prompt u1 (delivered at 0ms) never settled; barrier b1 still holds the listener"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("failures %q, want %q\n%s", got, want, tr.Timeline())
	}
	if !strings.Contains(string(tr.Timeline()), "final state accepted streaming") {
		t.Errorf("no final state while the run is held:\n%s", tr.Timeline())
	}
}

// babbler is the reference with extra notifications after each operation delivery.
type babbler struct {
	*Reference
	port  Port
	extra func(d Delivery, p Port)
}

func (b *babbler) Start(s Setup, p Port) error { b.port = p; return b.Reference.Start(s, p) }

func (b *babbler) Deliver(d Delivery) error {
	if err := b.Reference.Deliver(d); err != nil {
		return err
	}
	if d.Kind == trace.DeliverAgent {
		b.extra(d, b.port)
	}
	return nil
}

// TestAgentProtocolMistakes: an outcome for an operation never delivered, a second outcome,
// and an end notification are each a protocol failure in the
func TestAgentProtocolMistakes(t *testing.T) {
	outcome := func(id, op string) Notification {
		return Notification{Kind: NotifyOutcome, Data: mustJSON(Outcome{ID: id, Op: op, Outcome: trace.OutcomeAccepted})}
	}
	at := int64(20)
	for _, c := range []struct {
		name  string
		extra func(d Delivery, p Port)
		want  string
	}{
		{"unknown id", func(d Delivery, p Port) { p.Notify(outcome("zz", trace.OpState)) }, `an outcome of operation "zz", which was never delivered`},
		{"second outcome", func(d Delivery, p Port) {
			if d.Target == "u2" {
				p.Notify(outcome("u2", trace.OpState))
			}
		}, `a second outcome of operation "u2" (state)`},
		{"wrong op", func(d Delivery, p Port) {
			if d.Target == "u2" {
				p.Notify(Notification{Kind: NotifyOutcome, Data: mustJSON(Outcome{ID: "u1", Op: trace.OpContinue, Outcome: trace.OutcomeResolved})})
			}
		}, `the outcome of operation "u1" names op "continue"; it was "prompt"`},
		{"end", func(d Delivery, p Port) {
			if d.Target == "u2" {
				p.Notify(Notification{Kind: NotifyEnd, Data: []byte(`{"messages":[]}`)})
			}
		}, "an end notification in an Agent scenario"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := agentScenario(nil, UserAction{At: &at, Op: &AgentOp{Op: trace.OpState}})
			tr, _ := Run(sc, &babbler{Reference: NewReference(), extra: c.extra})
			got := strings.Join(failures(tr), "\n")
			if !strings.Contains(got, "protocol: "+c.want) {
				t.Errorf("failures:\n%s\nwant protocol: %s", got, c.want)
			}
		})
	}
}
