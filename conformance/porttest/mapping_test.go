package porttest_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/porttest"
)

// ownMessage stands for a port's own message type that reads pi's JSON.
type ownMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

func TestDecodeNamesTheMessageItCannotRead(t *testing.T) {
	got, err := porttest.Decode[ownMessage]([]json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`)})
	if err != nil || len(got) != 1 || got[0].Role != "user" || got[0].Content != "hi" {
		t.Fatalf("Decode = %+v, %v", got, err)
	}
	_, err = porttest.Decode[ownMessage]([]json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{"role":1}`)})
	if err == nil || !strings.HasPrefix(err.Error(), "message 1") {
		t.Errorf("Decode of a bad second message: %v, want an error naming message 1", err)
	}
}

// fakeStream yields its events, then its result or its error.
type fakeStream struct {
	events []string
	result string
	err    error
}

func (s *fakeStream) Next() (json.RawMessage, bool, error) {
	if len(s.events) == 0 {
		return nil, false, s.err
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return json.RawMessage(ev), true, nil
}

func (s *fakeStream) Result() (json.RawMessage, error) { return json.RawMessage(s.result), nil }

func TestPumpPushesEachEventThenEndsOrFails(t *testing.T) {
	type event struct{ Type string }
	var pushed []string
	var ended *ownMessage
	var failed error
	run := func(st porttest.Stream) {
		pushed, ended, failed = nil, nil, nil
		porttest.Pump(st, func(e event) { pushed = append(pushed, e.Type) },
			func(m ownMessage) { ended = &m }, func(err error) { failed = err })
	}
	run(&fakeStream{events: []string{`{"type":"start"}`, `{"type":"done"}`}, result: `{"role":"assistant"}`})
	if !reflect.DeepEqual(pushed, []string{"start", "done"}) || ended == nil || ended.Role != "assistant" || failed != nil {
		t.Errorf("a stream to its end: pushed %v, ended %+v, failed %v", pushed, ended, failed)
	}
	thrown := errors.New("provider down")
	run(&fakeStream{events: []string{`{"type":"start"}`}, err: thrown})
	if !reflect.DeepEqual(pushed, []string{"start"}) || ended != nil || !errors.Is(failed, thrown) {
		t.Errorf("a throwing stream: pushed %v, ended %+v, failed %v", pushed, ended, failed)
	}
	run(&fakeStream{events: []string{`[1]`}})
	if pushed != nil || ended != nil || failed == nil {
		t.Errorf("an event the port's type cannot read: pushed %v, ended %+v, failed %v", pushed, ended, failed)
	}
}

// toolEnv is an Env whose Tool sends two updates, then answers.
type toolEnv struct {
	porttest.Env
	result json.RawMessage
}

func (e toolEnv) Tool(id, name string, args any, onUpdate func(json.RawMessage)) (json.RawMessage, error) {
	onUpdate(json.RawMessage(`{"content":"1"}`))
	onUpdate(json.RawMessage(`{"content":"2"}`))
	return e.result, nil
}

func TestExecuteDecodesUpdatesAndResult(t *testing.T) {
	type result struct{ Content string }
	var updates []string
	got, err := porttest.Execute(toolEnv{result: json.RawMessage(`{"content":"done"}`)}, "c1", "work", nil,
		func(r result) { updates = append(updates, r.Content) })
	if err != nil || got.Content != "done" || !reflect.DeepEqual(updates, []string{"1", "2"}) {
		t.Errorf("Execute = %+v, %v; updates %v", got, err, updates)
	}
	got, err = porttest.Execute[result](toolEnv{}, "c2", "work", nil, func(result) {})
	if err != nil || got != (result{}) {
		t.Errorf("an execute resolving nothing: %+v, %v, want the zero result", got, err)
	}
}

// setupOnly is an Env whose only method the test calls is Setup.
type setupOnly struct {
	porttest.Env
	setup porttest.Setup
}

func (e setupOnly) Setup() porttest.Setup { return e.setup }

func TestInstalledIsTheHookOnlyWhenTheScenarioInstallsIt(t *testing.T) {
	env := setupOnly{setup: porttest.Setup{Hooks: []string{"finishTurn"}}}
	finish := func() string { return "finish" }
	if got := porttest.Installed(env, "finishTurn", finish); got == nil || got() != "finish" {
		t.Error("Installed(finishTurn), installed: nil or another func, want the hook")
	}
	if got := porttest.Installed(env, "beforeToolCall", finish); got != nil {
		t.Error("Installed(beforeToolCall), not installed: a hook, want nil")
	}
	if got := porttest.Installed(env, "finishturn", finish); got != nil {
		t.Error("Installed of a name pi does not spell so: a hook, want nil")
	}
}
