package piwire_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/piwire"
)

// A hand-made port's own types: messages that read and write pi's JSON, tools that are
// structs with a name, a model with fields pi's wire does not carry.
type (
	myMsg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	myResult struct {
		Role       string `json:"role"`
		ToolCallID string `json:"toolCallId"`
	}
	myTool  struct{ name string }
	myModel struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		API           string `json:"api"`
		Provider      string `json:"provider"`
		ContextWindow int    `json:"contextWindow"`
	}
	myBefore struct {
		Block  *bool   `json:"block"`
		Reason *string `json:"reason"`
	}
	myHooks = piwire.PortHooks[myMsg, myTool, myModel]
	myCtx   = piwire.PortContext[myMsg, myTool]
)

// world records each hook call (its payload as JSON, and whether it came with a ctx) and
// answers with the JSON given for its name; a name in fail throws.
type world struct {
	answers map[string]string
	fail    map[string]string
	calls   []string
	payload map[string]string
	signal  map[string]context.Context
}

func newWorld(answers map[string]string) *world {
	return &world{answers: answers, payload: map[string]string{}, signal: map[string]context.Context{}}
}

func (w *world) Hook(name string, data any, out any) error {
	return w.HookContext(context.TODO(), name, data, out) // TODO: no signal, never the run's ctx
}

func (w *world) HookContext(ctx context.Context, name string, data any, out any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	w.calls, w.payload[name], w.signal[name] = append(w.calls, name), string(raw), ctx
	if msg, ok := w.fail[name]; ok {
		return errors.New(msg)
	}
	if a := w.answers[name]; a != "" {
		return json.Unmarshal([]byte(a), out)
	}
	return nil
}

func hooksOn(w *world) myHooks {
	return myHooks{Env: w, Tools: []myTool{{"read"}, {"write"}, {"grep"}},
		Name: func(t myTool) string { return t.name }}
}

func TestPortHooksWritePisPayloads(t *testing.T) {
	w := newWorld(nil)
	h := hooksOn(w)
	ctx := context.Background()
	c := myCtx{Messages: []myMsg{{"user", "hi"}}, Tools: []myTool{{"write"}, {"read"}}}
	model := &myModel{ID: "m", Name: "Model M", API: "a", Provider: "p", ContextWindow: 8}
	var results []myResult // nil: written []
	turn := piwire.PortTurn[myMsg, myTool]{Message: myMsg{"assistant", "ok"}, ToolResults: results, Context: c}
	call := piwire.PortToolCall[myMsg, myTool]{AssistantMessage: myMsg{"assistant", "ok"}, ToolCall: map[string]any{"id": "c1"},
		Args: map[string]any{"path": "x"}, Context: myCtx{}}
	_, _ = h.ConvertToLLM(ctx, nil)
	_, _ = h.TransformContext(ctx, c.Messages)
	_, _ = h.GetSteeringMessages(ctx)
	_, _ = h.GetAPIKey(ctx, "p")
	_, _ = h.PrepareRequest(ctx, c, model, "low")
	_, _ = h.PrepareNextTurn(ctx, turn)
	_, _ = h.FinishTurn(ctx, piwire.PortTurn[myMsg, myTool]{})
	_ = h.BeforeToolCall(ctx, call, nil)
	call.Result, call.IsError = map[string]any{"content": []any{}}, true
	_ = h.AfterToolCall(ctx, call, nil)
	want := map[string]string{
		"convertToLlm":        `{"messages":[]}`,
		"transformContext":    `{"messages":[{"role":"user","content":"hi"}]}`,
		"getSteeringMessages": `{}`,
		"getApiKey":           `{"provider":"p"}`,
		"prepareRequest": `{"context":{"messages":[{"role":"user","content":"hi"}],"tools":["write","read"]},` +
			`"model":{"id":"m","api":"a","provider":"p"},"thinkingLevel":"low"}`,
		"prepareNextTurn": `{"turn":{"context":{"messages":[{"role":"user","content":"hi"}],"tools":["write","read"]},` +
			`"message":{"role":"assistant","content":"ok"},"newMessages":[],"toolResults":[]}}`,
		"finishTurn": `{"turn":{"context":{"messages":[],"tools":[]},"message":null,"newMessages":[],"toolResults":[]}}`,
		"beforeToolCall": `{"args":{"path":"x"},"assistantMessage":{"role":"assistant","content":"ok"},` +
			`"context":{"messages":[],"tools":[]},"toolCall":{"id":"c1"}}`,
		"afterToolCall": `{"args":{"path":"x"},"assistantMessage":{"role":"assistant","content":"ok"},` +
			`"context":{"messages":[],"tools":[]},"isError":true,"result":{"content":[]},"toolCall":{"id":"c1"}}`,
	}
	for name, payload := range want {
		if got := w.payload[name]; got != payload {
			t.Errorf("%s's payload:\n got  %s\n want %s", name, got, payload)
		}
	}
}

func TestPortHooksDecodeAnswersIntoThePortsTypes(t *testing.T) {
	w := newWorld(map[string]string{
		"transformContext": `{"messages":[{"role":"user","content":"kept"}]}`,
		"prepareRequest": `{"context":{"messages":[{"role":"user","content":"new"}],"tools":["grep","nope","read"]},` +
			`"model":{"id":"m2","api":"a2","provider":"p2"},"thinkingLevel":"high"}`,
		"prepareNextTurn": `{"messages":[{"role":"user","content":"next"}]}`,
		"finishTurn":      `{"action":"continue"}`,
		"getApiKey":       `{"apiKey":"k"}`,
	})
	h := hooksOn(w)
	ctx := context.Background()
	msgs, err := h.TransformContext(ctx, nil)
	if err != nil || !reflect.DeepEqual(msgs, []myMsg{{"user", "kept"}}) {
		t.Errorf("TransformContext = %v, %v", msgs, err)
	}
	if msgs, err := h.GetFollowUpMessages(ctx); err != nil || msgs == nil || len(msgs) != 0 {
		t.Errorf("GetFollowUpMessages answering nothing = %#v, %v; want an empty list", msgs, err)
	}
	u, err := h.PrepareRequest(ctx, myCtx{}, myModel{}, "off")
	if err != nil || u.Context == nil || u.Model == nil || u.ThinkingLevel == nil {
		t.Fatalf("PrepareRequest = %+v, %v", u, err)
	}
	// the answer's tools are the port's own, in the answer's order; an unknown name is none
	if !reflect.DeepEqual(u.Context.Tools, []myTool{{"grep"}, {"read"}}) || !reflect.DeepEqual(u.Context.Messages, []myMsg{{"user", "new"}}) {
		t.Errorf("PrepareRequest's context = %+v", *u.Context)
	}
	if *u.Model != (myModel{ID: "m2", API: "a2", Provider: "p2"}) || *u.ThinkingLevel != "high" {
		t.Errorf("PrepareRequest's model and level = %+v, %q", *u.Model, *u.ThinkingLevel)
	}
	u, err = h.PrepareNextTurn(ctx, piwire.PortTurn[myMsg, myTool]{})
	if err != nil || u.Context != nil || u.Model != nil || u.ThinkingLevel != nil || !reflect.DeepEqual(u.Messages, []myMsg{{"user", "next"}}) {
		t.Errorf("PrepareNextTurn answering only messages = %+v, %v; want the rest kept (nil)", u, err)
	}
	if action, err := h.FinishTurn(ctx, piwire.PortTurn[myMsg, myTool]{}); action != "continue" || err != nil {
		t.Errorf("FinishTurn = %q, %v", action, err)
	}
	if key, err := h.GetAPIKey(ctx, "p"); key != "k" || err != nil {
		t.Errorf("GetAPIKey = %q, %v", key, err)
	}
}

func TestPortHooksBeforeToolCallSetsArgsInPlace(t *testing.T) {
	w := newWorld(map[string]string{"beforeToolCall": `{"block":true,"reason":"no","setArgs":{"path":"y","n":2}}`})
	h := hooksOn(w)
	args := map[string]any{"path": "x", "keep": true}
	var out myBefore
	if err := h.BeforeToolCall(context.Background(), piwire.PortToolCall[myMsg, myTool]{Args: args}, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(args, map[string]any{"path": "y", "n": 2.0, "keep": true}) {
		t.Errorf("args after setArgs = %v", args)
	}
	if out.Block == nil || !*out.Block || out.Reason == nil || *out.Reason != "no" {
		t.Errorf("answer decoded into the port's type = %+v", out)
	}
	var answer piwire.BeforeToolCallAnswer
	if err := h.BeforeToolCall(context.Background(), piwire.PortToolCall[myMsg, myTool]{Args: "not an object"}, &answer); err != nil ||
		!answer.Block || answer.SetArgs["path"] != "y" {
		t.Errorf("into BeforeToolCallAnswer, args not an object: %+v, %v", answer, err)
	}
	w.answers["beforeToolCall"] = `{"block":"yes"}`
	err := h.BeforeToolCall(context.Background(), piwire.PortToolCall[myMsg, myTool]{}, &out)
	if err == nil || !strings.Contains(err.Error(), "beforeToolCall's answer") {
		t.Errorf("an answer the port's type cannot read: %v, want an error naming it", err)
	}
}

func TestPortHooksAfterToolCallTellsNullFromAbsent(t *testing.T) {
	w := newWorld(map[string]string{"afterToolCall": `{"details":null,"isError":false}`})
	var answer piwire.AfterToolCallAnswer
	if err := hooksOn(w).AfterToolCall(context.Background(), piwire.PortToolCall[myMsg, myTool]{}, &answer); err != nil {
		t.Fatal(err)
	}
	if string(answer.Details) != "null" || answer.IsError == nil || *answer.IsError {
		t.Errorf("AfterToolCall's answer = details %q, isError %v", answer.Details, answer.IsError)
	}
	if strings.Contains(w.payload["afterToolCall"], `"result"`) {
		t.Errorf("a nil Result: payload %s, want no result", w.payload["afterToolCall"])
	}
	_ = hooksOn(w).AfterToolCall(context.Background(), piwire.PortToolCall[myMsg, myTool]{Result: json.RawMessage("null")}, nil)
	if !strings.Contains(w.payload["afterToolCall"], `"result":null`) {
		t.Errorf("a null Result: payload %s, want result null", w.payload["afterToolCall"])
	}
}

func TestPortHooksGiveTheSignalToTheHooksPiDoes(t *testing.T) {
	w := newWorld(nil)
	h := hooksOn(w)
	ctx := context.WithValue(context.Background(), struct{}{}, "run")
	_, _ = h.ConvertToLLM(ctx, nil)
	_, _ = h.TransformContext(ctx, nil)
	_, _ = h.GetSteeringMessages(ctx)
	_, _ = h.GetFollowUpMessages(ctx)
	_, _ = h.GetAPIKey(ctx, "p")
	_, _ = h.PrepareRequest(ctx, myCtx{}, nil, "off")
	_, _ = h.PrepareNextTurn(ctx, piwire.PortTurn[myMsg, myTool]{})
	_, _ = h.FinishTurn(ctx, piwire.PortTurn[myMsg, myTool]{})
	_ = h.BeforeToolCall(ctx, piwire.PortToolCall[myMsg, myTool]{}, nil)
	_ = h.AfterToolCall(ctx, piwire.PortToolCall[myMsg, myTool]{}, nil)
	signalled := map[string]bool{"transformContext": true, "prepareRequest": true, "prepareNextTurn": true,
		"finishTurn": true, "beforeToolCall": true, "afterToolCall": true}
	if len(w.calls) != 10 {
		t.Fatalf("calls = %v, want all ten hooks", w.calls)
	}
	for _, name := range w.calls {
		if got := w.signal[name] == ctx; got != signalled[name] {
			t.Errorf("%s given the run's ctx: %v, want %v", name, got, signalled[name])
		}
	}
	if !strings.Contains(w.payload["prepareRequest"], `"model":null`) {
		t.Errorf("a nil model: payload %s, want model null", w.payload["prepareRequest"])
	}
}

func TestPortHooksReturnWhatTheHookThrew(t *testing.T) {
	w := newWorld(nil)
	w.fail = map[string]string{"finishTurn": "boom", "prepareRequest": "bang", "getSteeringMessages": "poll"}
	h := hooksOn(w)
	ctx := context.Background()
	if _, err := h.FinishTurn(ctx, piwire.PortTurn[myMsg, myTool]{}); err == nil || err.Error() != "boom" {
		t.Errorf("FinishTurn: %v, want boom", err)
	}
	if _, err := h.PrepareRequest(ctx, myCtx{}, nil, "off"); err == nil || err.Error() != "bang" {
		t.Errorf("PrepareRequest: %v, want bang", err)
	}
	if msgs, err := h.GetSteeringMessages(ctx); err == nil || msgs != nil {
		t.Errorf("GetSteeringMessages: %v, %v, want no messages and the error", msgs, err)
	}
}

func TestPortStreamRequestWritesPisRequest(t *testing.T) {
	req := piwire.PortStreamRequest[myMsg]{Model: &myModel{ID: "m", Name: "M", API: "a", Provider: "p", ContextWindow: 3},
		ThinkingLevel: "off", APIKey: "k"}
	raw, err := json.Marshal(req)
	want := `{"model":{"id":"m","api":"a","provider":"p"},"messages":[],"thinkingLevel":"off","apiKey":"k"}`
	if err != nil || string(raw) != want {
		t.Errorf("request = %s, %v\nwant %s", raw, err, want)
	}
	req.Messages, req.Options = []myMsg{{"user", "hi"}}, &piwire.StreamOptions{SessionID: "s"}
	raw, _ = json.Marshal(req)
	want = `{"model":{"id":"m","api":"a","provider":"p"},"messages":[{"role":"user","content":"hi"}],` +
		`"thinkingLevel":"off","apiKey":"k","options":{"sessionId":"s"}}`
	if string(raw) != want {
		t.Errorf("request with options = %s\nwant %s", raw, want)
	}
	if _, err := json.Marshal(piwire.PortStreamRequest[myMsg]{Model: "not a model"}); err == nil {
		t.Error("a model whose JSON is not an object: no error")
	}
}
