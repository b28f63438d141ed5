package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// build turns a Setup into the loop's context, config and prompts, every hook and tool
// reaching the world through the port.
func (r *Reference) build(setup Setup) (loop.Context, loop.Config, []loop.Message, error) {
	messages, err := decodeMessages(setup.Messages)
	if err != nil {
		return loop.Context{}, loop.Config{}, nil, fmt.Errorf("setup messages: %w", err)
	}
	prompts, err := decodeMessages(setup.Prompts)
	if err != nil {
		return loop.Context{}, loop.Config{}, nil, fmt.Errorf("setup prompts: %w", err)
	}
	pool := toolPool{}
	for _, ts := range setup.Tools {
		pool[ts.Name] = r.tool(ts)
	}
	actx := loop.Context{Messages: messages, Tools: pool.byName(setup.ActiveTools)}
	cfg := loop.Config{
		Model:         loop.Model{ID: setup.Model.ID, API: setup.Model.API, Provider: setup.Model.Provider},
		ThinkingLevel: loop.ThinkingLevel(setup.ThinkingLevel),
		APIKey:        setup.APIKey,
		ToolExecution: loop.ExecutionMode(setup.ToolExecution),
		Behaviour:     r.behaviour,
		Runtime:       r,
		SessionID:     setup.SessionID,
		Identity:      setup.Identity,
		Stream: func(ctx context.Context, req loop.StreamRequest) (loop.AssistantStream, error) {
			return r.stream(ctx, req, setup.StreamOptions)
		},
		OnEvent: func(e loop.Event) { r.event(&e) },
	}
	r.bindHooks(&cfg, setup.Hooks, pool)
	return actx, cfg, prompts, nil
}

// toolPool is the setup's executable tools by name.
type toolPool map[string]*loop.Tool

// byName is the tools named, those the pool has, in order.
func (p toolPool) byName(names []string) []*loop.Tool {
	var out []*loop.Tool
	for _, n := range names {
		if t := p[n]; t != nil {
			out = append(out, t)
		}
	}
	return out
}

// context decodes a hook's replacement context; nil when it gives none.
func (p toolPool) context(raw *wireContext) (*loop.Context, error) {
	if raw == nil {
		return nil, nil
	}
	msgs, err := decodeMessages(raw.Messages)
	if err != nil {
		return nil, err
	}
	return &loop.Context{Messages: msgs, Tools: p.byName(raw.Tools)}, nil
}

// bindHooks sets in cfg each hook installed, as a call through the port.
func (r *Reference) bindHooks(cfg *loop.Config, hooks []string, pool toolPool) {
	installed := func(name string) bool { return slices.Contains(hooks, name) }
	if installed(trace.HookConvertToLLM) {
		cfg.ConvertToLLM = func(ctx context.Context, msgs []loop.Message) ([]loop.Message, error) {
			return r.messagesHook(ctx, trace.HookConvertToLLM, map[string]any{"messages": nonNilMessages(msgs)})
		}
	}
	if installed(trace.HookTransformContext) {
		cfg.TransformContext = func(ctx context.Context, msgs []loop.Message) ([]loop.Message, error) {
			return r.messagesHook(ctx, trace.HookTransformContext, map[string]any{"messages": nonNilMessages(msgs)})
		}
	}
	if installed(trace.HookGetAPIKey) {
		cfg.GetAPIKey = r.getAPIKey
	}
	if installed(trace.HookPrepareRequest) {
		cfg.PrepareRequest = func(ctx context.Context, req loop.RequestState) (*loop.RequestUpdate, error) {
			return r.prepareRequest(ctx, req, pool)
		}
	}
	if installed(trace.HookPrepareNextTurn) {
		cfg.PrepareNextTurn = func(ctx context.Context, turn loop.TurnContext) (*loop.TurnUpdate, error) {
			return r.prepareNextTurn(ctx, turn, pool)
		}
	}
	if installed(trace.HookFinishTurn) {
		cfg.FinishTurn = r.finishTurn
	}
	if installed(trace.HookSteering) {
		cfg.GetSteeringMessages = func(ctx context.Context) ([]loop.Message, error) {
			return r.messagesHook(ctx, trace.HookSteering, noData)
		}
	}
	if installed(trace.HookFollowUp) {
		cfg.GetFollowUpMessages = func(ctx context.Context) ([]loop.Message, error) {
			return r.messagesHook(ctx, trace.HookFollowUp, noData)
		}
	}
	if installed(trace.HookBeforeToolCall) {
		cfg.BeforeToolCall = r.beforeToolCall
	}
	if installed(trace.HookAfterToolCall) {
		cfg.AfterToolCall = r.afterToolCall
	}
}

// getAPIKey is the getApiKey hook through the port.
func (r *Reference) getAPIKey(ctx context.Context, provider string) (string, error) {
	var out struct {
		APIKey string `json:"apiKey"`
	}
	err := r.hook(ctx, trace.HookGetAPIKey, map[string]string{"provider": provider}, &out)
	return out.APIKey, err
}

// prepareRequest is the prepareRequest hook through the port.
func (r *Reference) prepareRequest(ctx context.Context, req loop.RequestState, pool toolPool) (*loop.RequestUpdate, error) {
	var out wireUpdate
	data := map[string]any{"context": toWireContext(req.Context), "model": wireModel(req.Model), "thinkingLevel": req.ThinkingLevel}
	if err := r.hook(ctx, trace.HookPrepareRequest, data, &out); err != nil {
		return nil, err
	}
	c, err := pool.context(out.Context)
	if err != nil {
		return nil, err
	}
	return &loop.RequestUpdate{Context: c, Model: out.model(), ThinkingLevel: out.ThinkingLevel}, nil
}

// prepareNextTurn is the prepareNextTurn hook through the port.
func (r *Reference) prepareNextTurn(ctx context.Context, turn loop.TurnContext, pool toolPool) (*loop.TurnUpdate, error) {
	var out wireUpdate
	if err := r.hook(ctx, trace.HookPrepareNextTurn, map[string]any{"turn": toWireTurn(turn)}, &out); err != nil {
		return nil, err
	}
	c, err := pool.context(out.Context)
	if err != nil {
		return nil, err
	}
	added, err := decodeMessages(out.Messages)
	if err != nil {
		return nil, err
	}
	return &loop.TurnUpdate{Context: c, Messages: added, Model: out.model(), ThinkingLevel: out.ThinkingLevel}, nil
}

// finishTurn is the finishTurn hook through the port.
func (r *Reference) finishTurn(ctx context.Context, turn loop.TurnContext) (loop.TurnDecision, error) {
	var out struct {
		Action loop.TurnDecision `json:"action"`
	}
	err := r.hook(ctx, trace.HookFinishTurn, map[string]any{"turn": toWireTurn(turn)}, &out)
	return out.Action, err
}

// beforeToolCall is the beforeToolCall hook through the port; setArgs changes the call's
// arguments in place.
func (r *Reference) beforeToolCall(ctx context.Context, c loop.BeforeToolCallContext) (*loop.BeforeToolCallResult, error) {
	var out struct {
		Block     bool           `json:"block"`
		Reason    string         `json:"reason"`
		Terminate bool           `json:"terminate"`
		SetArgs   map[string]any `json:"setArgs"`
	}
	data := map[string]any{"assistantMessage": c.AssistantMessage, "toolCall": c.ToolCall, "args": c.Args, "context": toWireContext(c.Context)}
	if err := r.hook(ctx, trace.HookBeforeToolCall, data, &out); err != nil {
		return nil, err
	}
	for k, v := range out.SetArgs {
		c.Args[k] = v
	}
	return &loop.BeforeToolCallResult{Block: out.Block, Reason: out.Reason, Terminate: out.Terminate}, nil
}

// afterToolCall is the afterToolCall hook through the port.
func (r *Reference) afterToolCall(ctx context.Context, c loop.AfterToolCallContext) (*loop.AfterToolCallResult, error) {
	var out struct {
		Content           []json.RawMessage `json:"content"`
		Details           any               `json:"details"`
		StructuredContent any               `json:"structuredContent"`
		IsError           *bool             `json:"isError"`
		Terminate         *bool             `json:"terminate"`
		Usage             *loop.Usage       `json:"usage"`
	}
	data := map[string]any{"assistantMessage": c.AssistantMessage, "toolCall": c.ToolCall, "args": c.Args,
		"result": c.Result, "isError": c.IsError, "context": toWireContext(c.Context)}
	switch {
	case c.Nothing != nil && c.Nothing.Null:
		data["result"] = nil
	case c.Nothing != nil:
		delete(data, "result") // undefined: JSON leaves it out
	}
	if err := r.hook(ctx, trace.HookAfterToolCall, data, &out); err != nil {
		return nil, err
	}
	content, err := loop.DecodeBlocks(out.Content)
	if err != nil {
		return nil, err
	}
	return &loop.AfterToolCallResult{Content: content, Details: out.Details, StructuredContent: out.StructuredContent,
		IsError: out.IsError, Terminate: out.Terminate, Usage: out.Usage}, nil
}

// tool builds an executable tool whose execute and prepareArguments reach the world.
func (r *Reference) tool(ts ToolSetup) *loop.Tool {
	t := &loop.Tool{
		Name: ts.Name, Description: ts.Description, Parameters: ts.Parameters,
		ExecutionMode: loop.ExecutionMode(ts.ExecutionMode),
		Execute: func(ctx context.Context, id string, args map[string]any, onUpdate func(loop.ToolResult)) (loop.ToolResult, error) {
			if prev := r.calls[id]; prev != nil && !prev.settled {
				// Its deliveries could not be told apart from the running call's.
				return loop.ToolResult{}, fmt.Errorf("tool call %s is already running", id)
			}
			c := r.callRoom.next(&refToolCallChunks, 32)
			r.calls[id] = c
			var data any = &toolCall{ID: id, Name: ts.Name, Args: args} // the world takes it as it is
			if r.world == nil {
				data = map[string]any{"toolCallId": id, "toolName": ts.Name, "args": args}
			}
			if _, err := r.call(trace.CallTool, "", data); err != nil {
				return loop.ToolResult{}, err
			}
			for {
				switch {
				case len(c.updates) > 0:
					u := c.updates[0]
					c.updates = c.updates[1:]
					onUpdate(u)
					continue
				case c.settled:
					return c.result, c.err
				case r.closed:
					return loop.ToolResult{}, errSessionClosed
				}
				// As a stream's Next does: the next happening, when it is this call's, is
				// taken here rather than through the driver.
				if r.world != nil && r.sched.Alone() {
					if d := r.world.releaseResultFor(r, id); d != nil {
						r.now = d.delivery.Now
						res := d.delivery.Value.(loop.ToolResult)
						if d.delivery.Kind == trace.DeliverToolUpdate {
							c.updates = append(c.updates, res)
						} else {
							c.settled, c.result = true, res
						}
						continue
					}
				}
				r.park(&c.waiter)
			}
		},
	}
	if ts.PrepareArguments != nil {
		t.PrepareArguments = func(args map[string]any) map[string]any { return ts.Prepare(args) }
	}
	return t
}

// stream opens a provider request through the port; with options, the call's data has what
// the stream function got besides the model and the context ({sessionId?, identity?}).
func (r *Reference) stream(_ context.Context, req loop.StreamRequest, options bool) (loop.AssistantStream, error) {
	sc := &r.streamData // the world reads it during the call only
	*sc = streamCall{Model: wireModel(req.Model), Messages: nonNilMessages(req.Messages), ThinkingLevel: req.ThinkingLevel, APIKey: req.APIKey}
	if options {
		o := map[string]any{}
		if req.SessionID != "" {
			o["sessionId"] = req.SessionID
		}
		if req.Identity != nil {
			o["identity"] = req.Identity
		}
		sc.Options = o
	}
	var data any = sc // the world takes it as it is
	if r.world == nil {
		data = sc.asMap()
	}
	raw, err := r.call(trace.CallStream, "", data)
	if err != nil {
		return nil, err
	}
	id, err := streamID(raw)
	if err != nil {
		return nil, err
	}
	s := r.streamRoom.next(&refStreamChunks, 32)
	s.r, s.id = r, id
	r.streams[id] = s
	return s, nil
}

// toolCall is a tool call's data, {args, toolCallId, toolName}, as the in-process reference
// hands it to the world, which writes it as the map of the same members.
type toolCall struct {
	ID, Name string
	Args     map[string]any
}

// noData is the data of a queue poll, {}: one map for every poll, which nothing changes.
var noData = map[string]any{}

// streamCall is a stream call's data, {apiKey, messages, model, options?, thinkingLevel}, as
// the in-process reference hands it to the world: the map of the same members (asMap), which
// the world writes alike, without building the map for every request.
type streamCall struct {
	APIKey        string
	Messages      []loop.Message
	Model         ModelSetup
	Options       map[string]any // nil: no options member
	ThinkingLevel loop.ThinkingLevel
}

// asMap is the call's data as a map, for a port that takes JSON.
func (sc *streamCall) asMap() map[string]any {
	m := map[string]any{"model": sc.Model, "messages": sc.Messages, "thinkingLevel": sc.ThinkingLevel, "apiKey": sc.APIKey}
	if sc.Options != nil {
		m["options"] = sc.Options
	}
	return m
}

// streamID reads a stream call's answer, {"stream": id}: on its bytes when it is written as
// the world writes it (that member alone, an id of valid UTF-8 that needs no escape),
// otherwise through encoding/json.
func streamID(raw json.RawMessage) (string, error) {
	const head, tail = `{"stream":"`, `"}`
	if len(raw) >= len(head)+len(tail) && string(raw[:len(head)]) == head && string(raw[len(raw)-len(tail):]) == tail {
		if id := raw[len(head) : len(raw)-len(tail)]; unescaped(id) {
			return string(id), nil
		}
	}
	var out struct {
		Stream string `json:"stream"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("stream answer: %w", err)
	}
	return out.Stream, nil
}

// unescaped reports whether b, put between quotes, is a JSON string as it is: valid UTF-8
// with no quote, backslash or control character.
func unescaped(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(b)
}

// messagesHook calls a hook that answers {messages}.
func (r *Reference) messagesHook(ctx context.Context, name string, data any) ([]loop.Message, error) {
	raw, err := r.callHook(ctx, name, data)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(raw, noMessages) {
		return []loop.Message{}, nil // what decoding it gives
	}
	if msgs, ok := readMessagesAnswer(raw); ok {
		return msgs, nil
	}
	var out struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := decodeAnswer(name, raw, &out); err != nil {
		return nil, err
	}
	return decodeMessages(out.Messages)
}

// readMessagesAnswer reads an answer {messages} by hand, as messagesHook decodes it; ok is
// false when the answer is left to encoding/json (anything but that one member, a message
// loop.ReadMessage leaves).
func readMessagesAnswer(raw []byte) (msgs []loop.Message, ok bool) {
	var r jsonvalue.Reader
	r.Reset(raw)
	seen := false
	ok = r.Object(func(key []byte) bool {
		if string(key) != "messages" || seen {
			return false
		}
		seen, msgs = true, []loop.Message{}
		return r.Array(func() bool {
			m, ok := loop.ReadMessage(&r)
			msgs = append(msgs, m)
			return ok
		})
	})
	return msgs, ok && r.Done()
}

// wireContext is a context on the port: messages, and tools by name.
type wireContext struct {
	Messages []json.RawMessage `json:"messages"`
	Tools    []string          `json:"tools"`
}

// wireUpdate is a prepareRequest / prepareNextTurn answer on the port.
type wireUpdate struct {
	Context       *wireContext       `json:"context"`
	Messages      []json.RawMessage  `json:"messages"`
	Model         *ModelSetup        `json:"model"`
	ThinkingLevel loop.ThinkingLevel `json:"thinkingLevel"`
}

func (u wireUpdate) model() *loop.Model {
	if u.Model == nil {
		return nil
	}
	return &loop.Model{ID: u.Model.ID, API: u.Model.API, Provider: u.Model.Provider}
}

func wireModel(m loop.Model) ModelSetup {
	return ModelSetup{ID: m.ID, API: m.API, Provider: m.Provider}
}

func toWireContext(c loop.Context) map[string]any {
	names := []string{}
	for _, t := range c.Tools {
		names = append(names, t.Name)
	}
	return map[string]any{"messages": nonNilMessages(c.Messages), "tools": names}
}

func toWireTurn(t loop.TurnContext) map[string]any {
	results := t.ToolResults
	if results == nil {
		results = []*loop.ToolResultMessage{}
	}
	return map[string]any{"message": t.Message, "toolResults": results, "context": toWireContext(t.Context), "newMessages": nonNilMessages(t.NewMessages)}
}

func decodeMessages(raw []json.RawMessage) ([]loop.Message, error) {
	if raw == nil {
		return nil, nil
	}
	out := make([]loop.Message, 0, len(raw))
	for i, m := range raw {
		msg, err := loop.DecodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out = append(out, msg)
	}
	return out, nil
}
