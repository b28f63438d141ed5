package agent_test

import (
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/agent"
)

// TestGoDefersTheRun: with Options.Go holding the body, a started run is active but has done
// nothing — no event, no request — until the caller runs it, on its own goroutine.
func TestGoDefersTheRun(t *testing.T) {
	var bodies []func()
	p := newProvider(says("hello"))
	a := newRecorded(p, agent.Options{Go: func(body func()) { bodies = append(bodies, body) }})
	run, err := a.StartPrompt(user("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 1 || len(a.Lines()) != 0 || len(p.Requests()) != 0 || !a.State().IsStreaming {
		t.Fatalf("before the body runs: %d bodies, lines %q, %d requests, streaming %v", len(bodies), a.Lines(), len(p.Requests()), a.State().IsStreaming)
	}
	if err := a.PromptText("again"); err != agent.ErrBusyPrompt {
		t.Fatalf("a second prompt: %v", err)
	}
	a.Steer(user("s1")) // taken by the run's first poll, once it runs
	if closed(run.Done()) {
		t.Fatal("the run is over before its body ran")
	}
	bodies[0]()
	if !closed(run.Done()) || a.State().IsStreaming {
		t.Fatal("the run is not over after its body returned")
	}
	want := [][]string{{"user:hi", "user:s1"}}
	if got := p.Requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
}

// TestGoSynchronous: a Go that runs the body at once makes Prompt and Continue synchronous,
// without deadlocking on the Agent's lock.
func TestGoSynchronous(t *testing.T) {
	p := newProvider(says("r1"), says("r2"))
	a := newRecorded(p, agent.Options{Go: func(body func()) { body() }})
	if err := a.PromptText("hi"); err != nil {
		t.Fatal(err)
	}
	a.FollowUp(user("f1"))
	if err := a.Continue(); err != nil {
		t.Fatal(err)
	}
	want := []string{"user[blocks]:hi", "assistant:stop:r1", "user:f1", "assistant:stop:r2"}
	if got := a.messages(); !reflect.DeepEqual(got, want) {
		t.Errorf("transcript %q, want %q", got, want)
	}
	if err := a.Continue(); err != agent.ErrContinueFromAssistant {
		t.Errorf("continue from the assistant tail with empty queues: %v", err)
	}
}
