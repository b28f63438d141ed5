package piwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// The types below serve a port whose own types read and write pi's JSON (json tags of pi's
// names): M its message type, T its tool type, Mo its model type. PortHooks builds each
// hook's payload from them in pi's shape and decodes each answer into them, so the port
// writes no payload and no answer type of its own.

// PortContext is a context on a port's types, as a hook is given it and answers it: the
// messages, and the tools (a hook sees them by name).
type PortContext[M, T any] struct {
	Messages []M
	Tools    []T
}

// PortTurn is a completed turn on a port's types, as prepareNextTurn and finishTurn are
// given it. ToolResults is a slice of the port's tool-result messages, written [] when nil.
type PortTurn[M, T any] struct {
	Message     any
	ToolResults any
	Context     PortContext[M, T]
	NewMessages []M
}

// PortUpdate is the answer of prepareRequest and prepareNextTurn on a port's types: nil keeps
// the current value; Messages (prepareNextTurn only) are appended.
type PortUpdate[M, T, Mo any] struct {
	Context       *PortContext[M, T]
	Messages      []M
	Model         *Mo
	ThinkingLevel *string
}

// PortToolCall is the payload of beforeToolCall and afterToolCall on a port's types; Result
// and IsError are afterToolCall's only. Result nil leaves result out (an execute resolving
// undefined); json.RawMessage("null") writes it null.
type PortToolCall[M, T any] struct {
	AssistantMessage any
	ToolCall         any
	Args             any
	Result           any
	IsError          bool
	Context          PortContext[M, T]
}

// PortHooks calls each hook for a port on its own types: payloads in pi's shape (a context's
// tools by name, empty lists as [], a model as id, api and provider only), answers decoded
// into M, T and Mo. An error is the hook throwing, or an answer the port's types cannot read.
// Signalled hooks get ctx as their abort signal, as Hooks does.
type PortHooks[M, T, Mo any] struct {
	Env Hooker
	// Tools are all the port's tools: a context a hook answers with names some of them.
	Tools []T
	// Name is a tool's name; without it a context has no tools.
	Name func(T) string
}

// ConvertToLLM calls convertToLlm.
func (h PortHooks[M, T, Mo]) ConvertToLLM(ctx context.Context, msgs []M) ([]M, error) {
	return h.messages(ctx, false, "convertToLlm", map[string]any{"messages": nonNil(msgs)})
}

// TransformContext calls transformContext, given ctx as its signal.
func (h PortHooks[M, T, Mo]) TransformContext(ctx context.Context, msgs []M) ([]M, error) {
	return h.messages(ctx, true, "transformContext", map[string]any{"messages": nonNil(msgs)})
}

// GetSteeringMessages calls getSteeringMessages.
func (h PortHooks[M, T, Mo]) GetSteeringMessages(ctx context.Context) ([]M, error) {
	return h.messages(ctx, false, "getSteeringMessages", map[string]any{})
}

// GetFollowUpMessages calls getFollowUpMessages.
func (h PortHooks[M, T, Mo]) GetFollowUpMessages(ctx context.Context) ([]M, error) {
	return h.messages(ctx, false, "getFollowUpMessages", map[string]any{})
}

// GetAPIKey calls getApiKey; "" is no key.
func (h PortHooks[M, T, Mo]) GetAPIKey(_ context.Context, provider string) (string, error) {
	var out struct {
		APIKey string `json:"apiKey"`
	}
	err := h.Env.Hook("getApiKey", map[string]string{"provider": provider}, &out)
	return out.APIKey, err
}

// PrepareRequest calls prepareRequest, given ctx as its signal; model is the port's model
// (its JSON has id, api and provider).
func (h PortHooks[M, T, Mo]) PrepareRequest(ctx context.Context, c PortContext[M, T], model any, level string) (PortUpdate[M, T, Mo], error) {
	data := map[string]any{"context": h.wire(c), "model": wireModelOf{model}, "thinkingLevel": level}
	return h.update(ctx, "prepareRequest", data)
}

// PrepareNextTurn calls prepareNextTurn, given ctx as its signal (pi's loop gives it none:
// pass context.Background(); pi's Agent its active run's).
func (h PortHooks[M, T, Mo]) PrepareNextTurn(ctx context.Context, t PortTurn[M, T]) (PortUpdate[M, T, Mo], error) {
	return h.update(ctx, "prepareNextTurn", h.turn(t))
}

// FinishTurn calls finishTurn, given ctx as its signal, and returns its action.
func (h PortHooks[M, T, Mo]) FinishTurn(ctx context.Context, t PortTurn[M, T]) (string, error) {
	var out struct {
		Action string `json:"action"`
	}
	err := Hooks{Env: h.Env}.signalled(ctx, "finishTurn", h.turn(t), &out)
	return out.Action, err
}

// BeforeToolCall calls beforeToolCall, given ctx as its signal, and decodes its answer into
// out (a BeforeToolCallAnswer or a type of the port's). The answer's setArgs are set on
// c.Args in place when it is a map[string]any, as pi's hook mutates its args.
func (h PortHooks[M, T, Mo]) BeforeToolCall(ctx context.Context, c PortToolCall[M, T], out any) error {
	data := map[string]any{"assistantMessage": c.AssistantMessage, "toolCall": c.ToolCall, "args": c.Args, "context": h.wire(c.Context)}
	var raw json.RawMessage
	if err := (Hooks{Env: h.Env}).signalled(ctx, "beforeToolCall", data, &raw); err != nil {
		return err
	}
	var set struct {
		SetArgs map[string]any `json:"setArgs"`
	}
	if err := errors.Join(decodeAnswer(raw, &set), decodeAnswer(raw, out)); err != nil {
		return fmt.Errorf("beforeToolCall's answer: %w", err)
	}
	if args, ok := c.Args.(map[string]any); ok {
		for k, v := range set.SetArgs {
			args[k] = v
		}
	}
	return nil
}

// AfterToolCall calls afterToolCall, given ctx as its signal, and decodes its answer into out
// (an AfterToolCallAnswer, which tells a null details from an absent one, or a type of the
// port's).
func (h PortHooks[M, T, Mo]) AfterToolCall(ctx context.Context, c PortToolCall[M, T], out any) error {
	data := map[string]any{"assistantMessage": c.AssistantMessage, "toolCall": c.ToolCall, "args": c.Args,
		"isError": c.IsError, "context": h.wire(c.Context)}
	if c.Result != nil {
		data["result"] = c.Result
	}
	return Hooks{Env: h.Env}.signalled(ctx, "afterToolCall", data, out)
}

// Named is those of h.Tools named in names, in names' order.
func (h PortHooks[M, T, Mo]) Named(names []string) []T {
	var out []T
	for _, n := range names {
		for _, t := range h.Tools {
			if h.Name != nil && h.Name(t) == n {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// messages calls a hook answering {messages}, given ctx as its signal if signalled; an answer
// without messages is none.
func (h PortHooks[M, T, Mo]) messages(ctx context.Context, signalled bool, name string, data any) ([]M, error) {
	var out struct {
		Messages []M `json:"messages"`
	}
	call := Hooks{Env: h.Env}
	var err error
	if signalled {
		err = call.signalled(ctx, name, data, &out)
	} else {
		err = h.Env.Hook(name, data, &out)
	}
	if err != nil {
		return nil, err
	}
	return nonNil(out.Messages), nil
}

// update calls a hook answering an update, its context's tools resolved by name.
func (h PortHooks[M, T, Mo]) update(ctx context.Context, name string, data any) (PortUpdate[M, T, Mo], error) {
	var out struct {
		Context *struct {
			Messages []M      `json:"messages"`
			Tools    []string `json:"tools"`
		} `json:"context"`
		Messages      []M     `json:"messages"`
		Model         *Mo     `json:"model"`
		ThinkingLevel *string `json:"thinkingLevel"`
	}
	if err := (Hooks{Env: h.Env}).signalled(ctx, name, data, &out); err != nil {
		return PortUpdate[M, T, Mo]{}, err
	}
	u := PortUpdate[M, T, Mo]{Messages: out.Messages, Model: out.Model, ThinkingLevel: out.ThinkingLevel}
	if out.Context != nil {
		u.Context = &PortContext[M, T]{Messages: out.Context.Messages, Tools: h.Named(out.Context.Tools)}
	}
	return u, nil
}

// wire is c as hooks see it: messages, and the tools by name.
func (h PortHooks[M, T, Mo]) wire(c PortContext[M, T]) map[string]any {
	names := []string{}
	for _, t := range c.Tools {
		if h.Name != nil {
			names = append(names, h.Name(t))
		}
	}
	return map[string]any{"messages": nonNil(c.Messages), "tools": names}
}

// turn is t as prepareNextTurn and finishTurn are given it.
func (h PortHooks[M, T, Mo]) turn(t PortTurn[M, T]) map[string]any {
	results := t.ToolResults
	if v := reflect.ValueOf(results); !v.IsValid() || v.Kind() == reflect.Slice && v.IsNil() {
		results = []any{}
	}
	return map[string]any{"turn": map[string]any{"message": t.Message, "toolResults": results,
		"context": h.wire(t.Context), "newMessages": nonNil(t.NewMessages)}}
}

// decodeAnswer decodes a hook's answer into out; an absent answer (undefined) or a nil out
// decodes nothing.
func decodeAnswer(raw json.RawMessage, out any) error {
	if out == nil || len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// PortStreamRequest is a stream call's data on a port's types: the port's model (written as
// id, api and provider only), its messages (M, written [] when nil), and Options as
// StreamRequest's.
type PortStreamRequest[M any] struct {
	Model         any
	Messages      []M
	ThinkingLevel string
	APIKey        string
	Options       *StreamOptions
}

// MarshalJSON writes {model, messages, thinkingLevel, apiKey, options?}.
func (r PortStreamRequest[M]) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Model         wireModelOf    `json:"model"`
		Messages      []M            `json:"messages"`
		ThinkingLevel string         `json:"thinkingLevel"`
		APIKey        string         `json:"apiKey"`
		Options       *StreamOptions `json:"options,omitempty"`
	}{wireModelOf{r.Model}, nonNil(r.Messages), r.ThinkingLevel, r.APIKey, r.Options})
}

// wireModelOf writes a port's model as the wire carries it: id, api and provider only.
type wireModelOf struct{ model any }

func (m wireModelOf) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(m.model)
	if err != nil || string(data) == "null" {
		return data, err
	}
	var w struct {
		ID       string `json:"id"`
		API      string `json:"api"`
		Provider string `json:"provider"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("model %s: %w", data, err)
	}
	return json.Marshal(w)
}
