package loop

import (
	"context"
	"encoding/json"
)

// StreamEventType names an event of a streamed model response (pi-ai's AssistantMessageEvent).
type StreamEventType string

// The stream events. Start opens the partial message; the *_start/_delta/_end events update
// it; Done or Error carries the final message.
const (
	StreamStart         StreamEventType = "start"
	StreamTextStart     StreamEventType = "text_start"
	StreamTextDelta     StreamEventType = "text_delta"
	StreamTextEnd       StreamEventType = "text_end"
	StreamThinkingStart StreamEventType = "thinking_start"
	StreamThinkingDelta StreamEventType = "thinking_delta"
	StreamThinkingEnd   StreamEventType = "thinking_end"
	StreamToolCallStart StreamEventType = "toolcall_start"
	StreamToolCallDelta StreamEventType = "toolcall_delta"
	StreamToolCallEnd   StreamEventType = "toolcall_end"
	StreamDone          StreamEventType = "done"
	StreamError         StreamEventType = "error"
)

// StreamEvent is one event of a streamed response. Partial is the message so far (all but
// done/error); ContentIndex, Delta, Content (text_end, thinking_end) and ToolCall
// (toolcall_end) describe the change; Reason and Message are set on done and error.
type StreamEvent struct {
	Type         StreamEventType
	ContentIndex int
	Delta        string
	Content      string
	ToolCall     *ToolCall
	Partial      *AssistantMessage
	Reason       StopReason
	Message      *AssistantMessage
}

// MarshalJSON writes the event in pi-ai's shape.
func (e StreamEvent) MarshalJSON() ([]byte, error) {
	out := map[string]any{"type": e.Type}
	switch e.Type {
	case StreamDone:
		out["reason"] = e.Reason
		out["message"] = e.Message
		return json.Marshal(out)
	case StreamError:
		out["reason"] = e.Reason
		out["error"] = e.Message
		return json.Marshal(out)
	case StreamStart:
	default:
		out["contentIndex"] = e.ContentIndex
	}
	switch e.Type {
	case StreamTextDelta, StreamThinkingDelta, StreamToolCallDelta:
		out["delta"] = e.Delta
	case StreamTextEnd, StreamThinkingEnd:
		out["content"] = e.Content
	case StreamToolCallEnd:
		out["toolCall"] = e.ToolCall
	}
	out["partial"] = e.Partial
	return json.Marshal(out)
}

// UnmarshalJSON reads the event in pi-ai's shape (the error event's message is "error").
func (e *StreamEvent) UnmarshalJSON(data []byte) error {
	var raw struct {
		Type         StreamEventType   `json:"type"`
		ContentIndex int               `json:"contentIndex"`
		Delta        string            `json:"delta"`
		Content      string            `json:"content"`
		ToolCall     *ToolCall         `json:"toolCall"`
		Partial      *AssistantMessage `json:"partial"`
		Reason       StopReason        `json:"reason"`
		Message      *AssistantMessage `json:"message"`
		Error        *AssistantMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*e = StreamEvent{Type: raw.Type, ContentIndex: raw.ContentIndex, Delta: raw.Delta, Content: raw.Content,
		ToolCall: raw.ToolCall, Partial: raw.Partial, Reason: raw.Reason, Message: raw.Message}
	if raw.Type == StreamError {
		e.Message = raw.Error
	}
	return nil
}

// ThinkingLevel is the reasoning effort asked of the model. "off" (or "") asks for none.
type ThinkingLevel string

// ThinkingOff asks for no reasoning.
const ThinkingOff ThinkingLevel = "off"

// Model identifies the model a request goes to.
type Model struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	API      string `json:"api"`
	Provider string `json:"provider"`
}

// StreamRequest is one provider request: the LLM context exactly as sent.
type StreamRequest struct {
	Model Model
	// Messages is the context after transformContext, convertToLlm and normalisation; tool
	// declarations are carried by its system messages.
	Messages []Message
	// ThinkingLevel is the requested level, ThinkingOff when none.
	ThinkingLevel ThinkingLevel
	// APIKey is getApiKey's answer, or Config.APIKey when that is empty.
	APIKey string
	// SessionID is Config.SessionID.
	SessionID string
	// Identity is DefaultIdentity merged with Config.Identity (pi 1.4.0 and later; before,
	// Config.Identity as it is, nil when unset).
	Identity *Identity
}

// StreamFunc opens a streamed response. Failures of the request belong in the stream, as a
// final message with StopError or StopAborted; a returned error fails the whole run (in pi a
// throwing stream function leaves the run unfinished).
type StreamFunc func(ctx context.Context, req StreamRequest) (AssistantStream, error)

// AssistantStream is a streamed response.
type AssistantStream interface {
	// Next returns the next event, or ok=false once the stream has ended. An error fails the run.
	Next(ctx context.Context) (ev StreamEvent, ok bool, err error)
	// Result returns the final message: the one of the done or error event, or the one the
	// stream ended with. The loop calls it after a done/error event or the end of the stream.
	Result(ctx context.Context) (*AssistantMessage, error)
}

// streamResponse runs one provider request and returns the final assistant message, which it
// leaves as the last message of cur (pi's streamAssistantResponse).
func (r *run) streamResponse(ctx context.Context) (*AssistantMessage, error) {
	messages := clip(r.context.Messages)
	var err error
	if r.cfg.TransformContext != nil {
		if messages, err = r.cfg.TransformContext(ctx, messages); err != nil {
			return nil, hookError("transformContext", err)
		}
	}
	convert := r.cfg.ConvertToLLM
	if convert == nil {
		convert = DefaultConvertToLLM
	}
	llm, err := convert(unsignalled(ctx), clip(messages))
	if err != nil {
		return nil, hookError("convertToLlm", err)
	}
	apiKey := ""
	if r.cfg.GetAPIKey != nil {
		if apiKey, err = r.cfg.GetAPIKey(unsignalled(ctx), r.cfg.Model.Provider); err != nil {
			return nil, hookError("getApiKey", err)
		}
	}
	if apiKey == "" {
		apiKey = r.cfg.APIKey
	}
	stream, err := r.cfg.Stream(ctx, StreamRequest{
		Model: r.cfg.Model, Messages: llm, ThinkingLevel: r.thinkingLevel(), APIKey: apiKey,
		SessionID: r.cfg.SessionID, Identity: r.requestIdentity(),
	})
	if err != nil {
		return nil, hookError("stream function", err)
	}
	var partial *AssistantMessage
	added := false
	for {
		ev, ok, err := stream.Next(ctx)
		if err != nil {
			return nil, hookError("provider stream", err)
		}
		if !ok {
			break
		}
		switch ev.Type {
		case StreamStart:
			partial = orEmpty(ev.Partial)
			r.context.Messages = append(r.context.Messages, partial)
			added = true
			r.emit(Event{Type: MessageStart, Message: ShallowCopy(partial)})
		case StreamTextStart, StreamTextDelta, StreamTextEnd,
			StreamThinkingStart, StreamThinkingDelta, StreamThinkingEnd,
			StreamToolCallStart, StreamToolCallDelta, StreamToolCallEnd:
			if partial == nil {
				continue
			}
			partial = orEmpty(ev.Partial)
			r.context.Messages[len(r.context.Messages)-1] = partial
			evCopy := ev
			r.emit(Event{Type: MessageUpdate, AssistantEvent: &evCopy, Message: ShallowCopy(partial)})
		case StreamDone, StreamError:
			return r.finishResponse(ctx, stream, added)
		}
	}
	return r.finishResponse(ctx, stream, added)
}

// finishResponse takes the stream's final message, stamps the requested thinking level and
// puts it in the context, emitting message_start first if no start event was seen.
func (r *run) finishResponse(ctx context.Context, stream AssistantStream, added bool) (*AssistantMessage, error) {
	final, err := stream.Result(ctx)
	if err != nil {
		return nil, hookError("provider stream result", err)
	}
	msg := ShallowCopy(orEmpty(final)).(*AssistantMessage)
	if r.cfg.Behaviour.Has(ThinkingLevelStamp) {
		msg.ThinkingLevel = string(r.thinkingLevel())
	}
	if added {
		r.context.Messages[len(r.context.Messages)-1] = msg
	} else {
		r.context.Messages = append(r.context.Messages, msg)
		r.emit(Event{Type: MessageStart, Message: ShallowCopy(msg)})
	}
	r.emit(Event{Type: MessageEnd, Message: msg})
	return msg, nil
}

func orEmpty(m *AssistantMessage) *AssistantMessage {
	if m == nil {
		return &AssistantMessage{}
	}
	return m
}

// DefaultConvertToLLM keeps the messages a model understands (system, user, assistant,
// toolResult) and drops every custom role, as pi's Agent does by default.
func DefaultConvertToLLM(_ context.Context, messages []Message) ([]Message, error) {
	out := make([]Message, 0, len(messages))
	for _, m := range messages {
		switch m.(type) {
		case *SystemMessage, *UserMessage, *AssistantMessage, *ToolResultMessage:
			out = append(out, m)
		}
	}
	return out, nil
}
