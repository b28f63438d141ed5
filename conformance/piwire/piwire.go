// Package piwire holds Go types for pi's JSON, the shapes a Go port reports and receives
// through porttest.Env: messages, content blocks, events, stream events, tool results,
// and every hook's payload and answer (conformance/PROTOCOL.md §5). A port maps its own types
// to these instead of writing JSON by hand; they write exactly what pi writes (empty lists
// as [], never omitted; a tool result's absent details stay absent).
//
// The message, event and result types are package loop's, which the reference is built on
// and which is checked against pi byte for byte; the payload types and the Hooks caller are
// this package's. A port whose own types read and write pi's JSON calls the hooks on them
// with PortHooks, and streams with PortStreamRequest, mapping nothing to these.
package piwire

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
)

// Messages and their parts, in pi's JSON (package loop's types).
type (
	// Message is a user, assistant, toolResult, system or custom message.
	Message           = loop.Message
	UserMessage       = loop.UserMessage
	AssistantMessage  = loop.AssistantMessage
	ToolResultMessage = loop.ToolResultMessage
	SystemMessage     = loop.SystemMessage
	CustomMessage     = loop.CustomMessage
	// Block is a content block: TextContent, ThinkingContent, ImageContent or ToolCall.
	Block           = loop.Block
	TextContent     = loop.TextContent
	ThinkingContent = loop.ThinkingContent
	ImageContent    = loop.ImageContent
	ToolCall        = loop.ToolCall
	Usage           = loop.Usage
	StopReason      = loop.StopReason
	Model           = loop.Model
	ThinkingLevel   = loop.ThinkingLevel
	// ToolResult is what a tool's execute resolves (and a tool_execution_* event carries):
	// Details nil is no details key at all.
	ToolResult = loop.ToolResult
	// Event is a loop event (agent_start … tool_execution_end) with exactly its type's fields.
	Event     = loop.Event
	EventType = loop.EventType
	// StreamEvent is a pi-ai stream event (start … done, error).
	StreamEvent = loop.StreamEvent
)

// DecodeMessage reads one message of pi's JSON.
func DecodeMessage(raw json.RawMessage) (Message, error) { return loop.DecodeMessage(raw) }

// DecodeMessages reads messages of pi's JSON; nil stays nil.
func DecodeMessages(raw []json.RawMessage) ([]Message, error) {
	if raw == nil {
		return nil, nil
	}
	out := make([]Message, 0, len(raw))
	for i, r := range raw {
		m, err := loop.DecodeMessage(r)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// DecodeBlocks reads content blocks of pi's JSON; nil stays nil, [] stays empty.
func DecodeBlocks(raw []json.RawMessage) ([]Block, error) { return loop.DecodeBlocks(raw) }

// Context is a hook's view of the context: the messages, and the tools by name.
type Context struct {
	Messages []Message
	Tools    []string
}

// MarshalJSON writes {messages, tools}, empty lists as [].
func (c Context) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Messages []Message `json:"messages"`
		Tools    []string  `json:"tools"`
	}{nonNil(c.Messages), nonNil(c.Tools)})
}

// AnswerContext is a context a hook answers with: messages and tool names, each nil when
// the answer leaves it out.
type AnswerContext struct {
	Messages []Message
	Tools    []string
}

// UnmarshalJSON reads {messages, tools}.
func (c *AnswerContext) UnmarshalJSON(data []byte) error {
	var raw struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []string          `json:"tools"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	msgs, err := DecodeMessages(raw.Messages)
	c.Messages, c.Tools = msgs, raw.Tools
	return err
}

// Turn is the payload of prepareNextTurn and finishTurn: {turn: {message, toolResults,
// context, newMessages}}.
type Turn struct {
	Message     *AssistantMessage
	ToolResults []*ToolResultMessage
	Context     Context
	NewMessages []Message
}

// MarshalJSON writes the turn, empty lists as [].
func (t Turn) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Message     *AssistantMessage    `json:"message"`
		ToolResults []*ToolResultMessage `json:"toolResults"`
		Context     Context              `json:"context"`
		NewMessages []Message            `json:"newMessages"`
	}{t.Message, nonNil(t.ToolResults), t.Context, nonNil(t.NewMessages)})
}

// Request is prepareRequest's payload.
type Request struct {
	Context       Context       `json:"context"`
	Model         Model         `json:"model"`
	ThinkingLevel ThinkingLevel `json:"thinkingLevel"`
}

// Update is the answer of prepareRequest and prepareNextTurn: nil or "" keeps the current
// value; Messages (prepareNextTurn only) are appended.
type Update struct {
	Context       *AnswerContext `json:"context"`
	Messages      []Message      `json:"-"`
	Model         *Model         `json:"model"`
	ThinkingLevel ThinkingLevel  `json:"thinkingLevel"`
}

// UnmarshalJSON reads the answer with its messages.
func (u *Update) UnmarshalJSON(data []byte) error {
	type plain Update
	var raw struct {
		plain
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*u = Update(raw.plain)
	var err error
	u.Messages, err = DecodeMessages(raw.Messages)
	return err
}

// BeforeToolCall is beforeToolCall's payload.
type BeforeToolCall struct {
	AssistantMessage *AssistantMessage `json:"assistantMessage"`
	ToolCall         ToolCall          `json:"toolCall"`
	Args             map[string]any    `json:"args"`
	Context          Context           `json:"context"`
}

// BeforeToolCallAnswer is beforeToolCall's answer; SetArgs are keys to set on the arguments
// in place before execute (pi's hook mutating args).
type BeforeToolCallAnswer struct {
	Block     bool           `json:"block"`
	Reason    string         `json:"reason"`
	Terminate bool           `json:"terminate"`
	SetArgs   map[string]any `json:"setArgs"`
}

// AfterToolCall is afterToolCall's payload. Result nil leaves result out (an execute that
// resolved undefined, before pi 0.99.1); ResultNull writes it null.
type AfterToolCall struct {
	AssistantMessage *AssistantMessage
	ToolCall         ToolCall
	Args             map[string]any
	Result           *ToolResult
	ResultNull       bool
	IsError          bool
	Context          Context
}

// MarshalJSON writes the payload, result as its fields say.
func (a AfterToolCall) MarshalJSON() ([]byte, error) {
	out := map[string]any{"assistantMessage": a.AssistantMessage, "toolCall": a.ToolCall, "args": nonNilArgs(a.Args),
		"isError": a.IsError, "context": a.Context}
	switch {
	case a.ResultNull:
		out["result"] = nil
	case a.Result != nil:
		out["result"] = a.Result
	}
	return json.Marshal(out)
}

// AfterToolCallAnswer overrides the executed result field by field: nil keeps a field;
// Content [] (empty, not nil) replaces the content with none. Details and
// StructuredContent are JSON: nil is absent, "null" is null (pi keeps the result's
// details for null).
type AfterToolCallAnswer struct {
	Content           []Block
	Details           json.RawMessage
	StructuredContent json.RawMessage
	IsError           *bool
	Terminate         *bool
	Usage             *Usage
}

// UnmarshalJSON reads the answer with its content blocks.
func (a *AfterToolCallAnswer) UnmarshalJSON(data []byte) error {
	var raw struct {
		Content           []json.RawMessage `json:"content"`
		Details           json.RawMessage   `json:"details"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           *bool             `json:"isError"`
		Terminate         *bool             `json:"terminate"`
		Usage             *Usage            `json:"usage"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	content, err := DecodeBlocks(raw.Content)
	*a = AfterToolCallAnswer{Content: content, Details: raw.Details, StructuredContent: raw.StructuredContent,
		IsError: raw.IsError, Terminate: raw.Terminate, Usage: raw.Usage}
	return err
}

// StreamRequest is a stream call's data: {model, messages, thinkingLevel, apiKey,
// options?}. Options is set only when the setup asks for stream options (protocol 2).
type StreamRequest struct {
	Model         Model          `json:"model"`
	Messages      []Message      `json:"messages"`
	ThinkingLevel ThinkingLevel  `json:"thinkingLevel"`
	APIKey        string         `json:"apiKey"`
	Options       *StreamOptions `json:"options,omitempty"`
}

// MarshalJSON writes the request, messages [] when none.
func (r StreamRequest) MarshalJSON() ([]byte, error) {
	if b, ok := r.requestJSON(); ok {
		return b, nil
	}
	return r.requestJSONByReflection()
}

// StreamOptions is what the stream function got besides the model and the context.
type StreamOptions struct {
	SessionID string         `json:"sessionId,omitempty"`
	Identity  *loop.Identity `json:"identity,omitempty"`
}

// WireModel is a model as the wire carries it: id, api, provider (no name).
func WireModel(m Model) Model { return Model{ID: m.ID, API: m.API, Provider: m.Provider} }

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilArgs(a map[string]any) map[string]any {
	if a == nil {
		return map[string]any{}
	}
	return a
}

// Hooker calls a hook through the world: porttest.Env is one.
type Hooker interface {
	Hook(name string, data any, out any) error
}

// ContextHooker is a Hooker that gives a hook an abort signal (porttest.Env is one): an
// answer waiting until the abort returns once ctx is done (feature waitingHooks).
type ContextHooker interface {
	Hooker
	HookContext(ctx context.Context, name string, data any, out any) error
}

// Hooks calls each hook with its payload and decodes its answer; its methods have package
// loop's hook signatures, and a port on other types calls them from its own hooks. An
// error is the hook throwing. The hooks pi gives an abort signal (transformContext,
// prepareRequest, finishTurn, beforeToolCall, afterToolCall, and prepareNextTurn in pi's
// Agent) are given their ctx as it, when Env is a ContextHooker; the others none.
type Hooks struct {
	Env Hooker
	// Tools maps the tool names of a context a hook answers with to the port's tools.
	Tools func(names []string) []*loop.Tool
}

// signalled calls hook name given ctx as its abort signal.
func (h Hooks) signalled(ctx context.Context, name string, data, out any) error {
	if ch, ok := h.Env.(ContextHooker); ok {
		return ch.HookContext(ctx, name, data, out)
	}
	return h.Env.Hook(name, data, out)
}

// messages calls a hook answering {messages}, given ctx as its signal (nil: none).
func (h Hooks) messages(ctx context.Context, name string, data any) ([]Message, error) {
	var out struct {
		Messages []json.RawMessage `json:"messages"`
	}
	call := h.Env.Hook
	if ctx != nil {
		call = func(name string, data, out any) error { return h.signalled(ctx, name, data, out) }
	}
	if err := call(name, data, &out); err != nil {
		return nil, err
	}
	msgs, err := DecodeMessages(out.Messages)
	if msgs == nil && err == nil {
		msgs = []Message{}
	}
	return msgs, err
}

// ContextOf is c as hooks see it.
func ContextOf(c loop.Context) Context {
	names := []string{}
	for _, t := range c.Tools {
		names = append(names, t.Name)
	}
	return Context{Messages: c.Messages, Tools: names}
}

func (h Hooks) context(c *AnswerContext) *loop.Context {
	if c == nil {
		return nil
	}
	var tools []*loop.Tool
	if h.Tools != nil {
		tools = h.Tools(c.Tools)
	}
	return &loop.Context{Messages: c.Messages, Tools: tools}
}

// ConvertToLLM calls convertToLlm.
func (h Hooks) ConvertToLLM(_ context.Context, msgs []Message) ([]Message, error) {
	return h.messages(nil, "convertToLlm", map[string]any{"messages": nonNil(msgs)})
}

// TransformContext calls transformContext, given ctx as its signal.
func (h Hooks) TransformContext(ctx context.Context, msgs []Message) ([]Message, error) {
	return h.messages(ctx, "transformContext", map[string]any{"messages": nonNil(msgs)})
}

// GetSteeringMessages calls getSteeringMessages.
func (h Hooks) GetSteeringMessages(context.Context) ([]Message, error) {
	return h.messages(nil, "getSteeringMessages", map[string]any{})
}

// GetFollowUpMessages calls getFollowUpMessages.
func (h Hooks) GetFollowUpMessages(context.Context) ([]Message, error) {
	return h.messages(nil, "getFollowUpMessages", map[string]any{})
}

// GetAPIKey calls getApiKey.
func (h Hooks) GetAPIKey(_ context.Context, provider string) (string, error) {
	var out struct {
		APIKey string `json:"apiKey"`
	}
	err := h.Env.Hook("getApiKey", map[string]string{"provider": provider}, &out)
	return out.APIKey, err
}

// PrepareRequest calls prepareRequest, given ctx as its signal.
func (h Hooks) PrepareRequest(ctx context.Context, req loop.RequestState) (*loop.RequestUpdate, error) {
	var u Update
	if err := h.signalled(ctx, "prepareRequest", Request{ContextOf(req.Context), WireModel(req.Model), req.ThinkingLevel}, &u); err != nil {
		return nil, err
	}
	return &loop.RequestUpdate{Context: h.context(u.Context), Model: wireModel(u.Model), ThinkingLevel: u.ThinkingLevel}, nil
}

// TurnOf is a completed turn as hooks see it.
func TurnOf(t loop.TurnContext) map[string]Turn {
	return map[string]Turn{"turn": {t.Message, t.ToolResults, ContextOf(t.Context), t.NewMessages}}
}

// PrepareNextTurn calls prepareNextTurn, given ctx as its signal: pi's loop gives it none
// (package loop passes a ctx never done), pi's Agent its active run's.
func (h Hooks) PrepareNextTurn(ctx context.Context, turn loop.TurnContext) (*loop.TurnUpdate, error) {
	var u Update
	if err := h.signalled(ctx, "prepareNextTurn", TurnOf(turn), &u); err != nil {
		return nil, err
	}
	return &loop.TurnUpdate{Context: h.context(u.Context), Messages: u.Messages, Model: wireModel(u.Model), ThinkingLevel: u.ThinkingLevel}, nil
}

// FinishTurn calls finishTurn, given ctx as its signal.
func (h Hooks) FinishTurn(ctx context.Context, turn loop.TurnContext) (loop.TurnDecision, error) {
	var out struct {
		Action loop.TurnDecision `json:"action"`
	}
	err := h.signalled(ctx, "finishTurn", TurnOf(turn), &out)
	return out.Action, err
}

// BeforeToolCall calls beforeToolCall, given ctx as its signal; SetArgs are set on c.Args in
// place.
func (h Hooks) BeforeToolCall(ctx context.Context, c loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
	var a BeforeToolCallAnswer
	if err := h.signalled(ctx, "beforeToolCall", BeforeToolCall{c.AssistantMessage, c.ToolCall, nonNilArgs(c.Args), ContextOf(c.Context)}, &a); err != nil {
		return nil, err
	}
	for k, v := range a.SetArgs {
		c.Args[k] = v
	}
	return &loop.BeforeToolCallResult{Block: a.Block, Reason: a.Reason, Terminate: a.Terminate}, nil
}

// AfterToolCall calls afterToolCall, given ctx as its signal.
func (h Hooks) AfterToolCall(ctx context.Context, c loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
	in := AfterToolCall{AssistantMessage: c.AssistantMessage, ToolCall: c.ToolCall, Args: c.Args, Result: &c.Result,
		IsError: c.IsError, Context: ContextOf(c.Context)}
	if c.Nothing != nil {
		in.Result, in.ResultNull = nil, c.Nothing.Null
	}
	var a AfterToolCallAnswer
	if err := h.signalled(ctx, "afterToolCall", in, &a); err != nil {
		return nil, err
	}
	return &loop.AfterToolCallResult{Content: a.Content, Details: jsonValue(a.Details), StructuredContent: jsonValue(a.StructuredContent),
		IsError: a.IsError, Terminate: a.Terminate, Usage: a.Usage}, nil
}

// jsonValue decodes raw JSON; absent and null are nil.
func jsonValue(raw json.RawMessage) any {
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

func wireModel(m *Model) *Model {
	if m == nil {
		return nil
	}
	w := WireModel(*m)
	return &w
}

// DecodeStreamEvent reads a pi-ai stream event, as porttest.Stream's Next gives it.
func DecodeStreamEvent(raw json.RawMessage) (StreamEvent, error) {
	var ev StreamEvent
	err := json.Unmarshal(raw, &ev)
	return ev, err
}

// DecodeAssistant reads an assistant message, as porttest.Stream's Result gives it.
func DecodeAssistant(raw json.RawMessage) (*AssistantMessage, error) {
	m := &AssistantMessage{}
	return m, json.Unmarshal(raw, m)
}

// DecodeToolResult reads what porttest.Env's Tool returns: a result, or, for an execute
// resolving nothing (protocol 2), loop.Nothing as the error (nil: undefined; null).
func DecodeToolResult(raw json.RawMessage) (ToolResult, error) {
	switch string(raw) {
	case "":
		return ToolResult{}, loop.Nothing{}
	case "null":
		return ToolResult{}, loop.Nothing{Null: true}
	}
	var r ToolResult
	err := json.Unmarshal(raw, &r)
	return r, err
}

// RawStream is an open provider request as porttest.Stream gives it.
type RawStream interface {
	Next() (event json.RawMessage, ok bool, err error)
	Result() (json.RawMessage, error)
}

// Stream is raw as package loop's stream, its events and final message decoded.
func Stream(raw RawStream) loop.AssistantStream { return stream{raw} }

type stream struct{ raw RawStream }

func (s stream) Next(context.Context) (ev StreamEvent, ok bool, err error) {
	raw, ok, err := s.raw.Next()
	if ok {
		ev, err = DecodeStreamEvent(raw)
	}
	return ev, ok, err
}

func (s stream) Result(context.Context) (*AssistantMessage, error) {
	raw, err := s.raw.Result()
	if err != nil {
		return &AssistantMessage{}, err
	}
	return DecodeAssistant(raw)
}

// ToolRunner runs a tool's execute in the world, as porttest.Env's Tool does.
type ToolRunner interface {
	Tool(toolCallID, toolName string, args any, onUpdate func(partial json.RawMessage)) (json.RawMessage, error)
}

// Execute is package loop's execute of tool name, run in the world: its updates and result
// decoded, an execute resolving nothing as loop.Nothing.
func Execute(env ToolRunner, name string) func(context.Context, string, map[string]any, func(ToolResult)) (ToolResult, error) {
	return func(_ context.Context, id string, args map[string]any, onUpdate func(ToolResult)) (ToolResult, error) {
		raw, err := env.Tool(id, name, args, func(p json.RawMessage) {
			u, _ := DecodeToolResult(p)
			onUpdate(u)
		})
		if err != nil {
			return ToolResult{}, err
		}
		return DecodeToolResult(raw)
	}
}

// requestJSON is what StreamRequest's MarshalJSON wrote through encoding/json's reflection,
// byte for byte, written by hand (each message by loop.MarshalMessage); ok is false when it
// is left to encoding/json (an identity among the options, a message it cannot write).
// TestStreamRequestJSONIsReflections holds the two to the same bytes. (In this file: the
// faults' tests build a copy of the example port over this file alone.)
func (r *StreamRequest) requestJSON() (b []byte, ok bool) {
	if r.Options != nil && r.Options.Identity != nil {
		return nil, false
	}
	b = append(b, `{"model":{"id":`...)
	b = jsonvalue.AppendString(b, r.Model.ID)
	if r.Model.Name != "" {
		b = append(b, `,"name":`...)
		b = jsonvalue.AppendString(b, r.Model.Name)
	}
	b = append(b, `,"api":`...)
	b = jsonvalue.AppendString(b, r.Model.API)
	b = append(b, `,"provider":`...)
	b = jsonvalue.AppendString(b, r.Model.Provider)
	b = append(b, `},"messages":`...)
	if b, ok = jsonvalue.AppendMarshalList(b, nonNil(r.Messages), loop.AppendMessage); !ok {
		return nil, false
	}
	b = append(b, `,"thinkingLevel":`...)
	b = jsonvalue.AppendString(b, string(r.ThinkingLevel))
	b = append(b, `,"apiKey":`...)
	b = jsonvalue.AppendString(b, r.APIKey)
	if r.Options != nil {
		b = append(b, `,"options":{`...)
		if r.Options.SessionID != "" {
			b = append(b, `"sessionId":`...)
			b = jsonvalue.AppendString(b, r.Options.SessionID)
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// requestJSONByReflection is the request through encoding/json, messages [] when none.
func (r StreamRequest) requestJSONByReflection() ([]byte, error) {
	type plain StreamRequest
	r.Messages = nonNil(r.Messages)
	return json.Marshal(plain(r))
}
