package loop

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Message is one entry of a transcript: *SystemMessage, *UserMessage, *AssistantMessage,
// *ToolResultMessage, or *CustomMessage for any other role, which the loop carries through
// untouched.
type Message interface {
	// Role is the message's "role" in JSON.
	Role() string
}

// StopReason says why a model response ended.
type StopReason string

// The stop reasons of pi-ai. Only StopError and StopAborted end a run at once; StopLength
// fails the response's tool calls without running them.
const (
	StopStop     StopReason = "stop"
	StopLength   StopReason = "length"
	StopToolUse  StopReason = "toolUse"
	StopError    StopReason = "error"
	StopAborted  StopReason = "aborted"
	StopPending  StopReason = "pending"
	StopDeferred StopReason = "deferred"
)

// SystemMessage carries instructions and tool declarations at its point of the transcript.
// Content is Text, or Blocks when Blocks is non-nil (pi: string | TextContent[]).
type SystemMessage struct {
	Text   string
	Blocks []Block
	// Sections patches named prompt sections; a nil value removes one.
	Sections     map[string]*string
	ToolsAdded   []ToolDeclaration
	ToolsRemoved []ToolReference
	Timestamp    int64
}

// UserMessage is a message from the user. Content is Text, or Blocks when Blocks is non-nil.
type UserMessage struct {
	Text      string
	Blocks    []Block
	Timestamp int64
}

// AssistantMessage is a model response, partial while it streams.
type AssistantMessage struct {
	Content               []Block    `json:"content"`
	API                   string     `json:"api"`
	Provider              string     `json:"provider"`
	Model                 string     `json:"model"`
	ResponseModel         string     `json:"responseModel,omitempty"`
	ResponseID            string     `json:"responseId,omitempty"`
	ProviderThinkingLevel string     `json:"providerThinkingLevel,omitempty"`
	ThinkingLevel         string     `json:"thinkingLevel,omitempty"`
	Usage                 Usage      `json:"usage"`
	StopReason            StopReason `json:"stopReason"`
	ErrorMessage          string     `json:"errorMessage,omitempty"`
	RawStopReason         string     `json:"rawStopReason,omitempty"`
	EndTurn               *bool      `json:"endTurn,omitempty"`
	Timestamp             int64      `json:"timestamp"`
	DurationMs            *int64     `json:"durationMs,omitempty"`
}

// ToolResultMessage is the outcome of one tool call, as the model sees it.
type ToolResultMessage struct {
	ToolCallID string  `json:"toolCallId"`
	ToolName   string  `json:"toolName"`
	Content    []Block `json:"content"`
	Details    any     `json:"details,omitempty"`
	Usage      *Usage  `json:"usage,omitempty"`
	IsError    bool    `json:"isError"`
	DurationMs *int64  `json:"durationMs,omitempty"`
	Timestamp  int64   `json:"timestamp"`
}

// CustomMessage is a message of an application-defined role. Fields is its whole JSON object,
// "role" included.
type CustomMessage struct {
	Fields map[string]any
}

// Usage counts the tokens and cost of a response.
type Usage struct {
	Input        int64  `json:"input"`
	Output       int64  `json:"output"`
	CacheRead    int64  `json:"cacheRead"`
	CacheWrite   int64  `json:"cacheWrite"`
	CacheWrite1h *int64 `json:"cacheWrite1h,omitempty"`
	Reasoning    *int64 `json:"reasoning,omitempty"`
	TotalTokens  int64  `json:"totalTokens"`
	Cost         Cost   `json:"cost"`
}

// Cost is the money side of Usage.
type Cost struct {
	Input             float64 `json:"input"`
	Output            float64 `json:"output"`
	CacheRead         float64 `json:"cacheRead"`
	CacheWrite        float64 `json:"cacheWrite"`
	Total             float64 `json:"total"`
	TotalFromProvider bool    `json:"totalFromProvider,omitempty"`
}

// Role implements Message.
func (*SystemMessage) Role() string { return "system" }

// Role implements Message.
func (*UserMessage) Role() string { return "user" }

// Role implements Message.
func (*AssistantMessage) Role() string { return "assistant" }

// Role implements Message.
func (*ToolResultMessage) Role() string { return "toolResult" }

// Role implements Message: the "role" field, or "" when it is missing or not a string.
func (m *CustomMessage) Role() string {
	r, _ := m.Fields["role"].(string)
	return r
}

// textOrBlocks is the JSON form of pi's `string | Block[]` content.
func textOrBlocks(text string, blocks []Block) any {
	if blocks != nil {
		return blocks
	}
	return text
}

// parseTextOrBlocks reads pi's `string | Block[]` content.
func parseTextOrBlocks(raw json.RawMessage) (string, []Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return "", nil, err
	}
	blocks, err := DecodeBlocks(items)
	if blocks == nil {
		blocks = []Block{}
	}
	return "", blocks, err
}

// MarshalJSON writes pi's shape of a system message.
func (m *SystemMessage) MarshalJSON() ([]byte, error) {
	if b, ok := messageJSON(m); ok {
		return b, nil
	}
	return m.marshalJSON()
}

// marshalJSON is MarshalJSON through encoding/json.
func (m *SystemMessage) marshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Role         string             `json:"role"`
		Content      any                `json:"content"`
		Sections     map[string]*string `json:"sections,omitempty"`
		ToolsAdded   []ToolDeclaration  `json:"toolsAdded,omitempty"`
		ToolsRemoved []ToolReference    `json:"toolsRemoved,omitempty"`
		Timestamp    int64              `json:"timestamp"`
	}{"system", textOrBlocks(m.Text, m.Blocks), m.Sections, m.ToolsAdded, m.ToolsRemoved, m.Timestamp})
}

// UnmarshalJSON reads pi's shape of a system message.
func (m *SystemMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		Content      json.RawMessage    `json:"content"`
		Sections     map[string]*string `json:"sections"`
		ToolsAdded   []ToolDeclaration  `json:"toolsAdded"`
		ToolsRemoved []ToolReference    `json:"toolsRemoved"`
		Timestamp    int64              `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	text, blocks, err := parseTextOrBlocks(aux.Content)
	if err != nil {
		return fmt.Errorf("system message content: %w", err)
	}
	*m = SystemMessage{Text: text, Blocks: blocks, Sections: aux.Sections, ToolsAdded: aux.ToolsAdded, ToolsRemoved: aux.ToolsRemoved, Timestamp: aux.Timestamp}
	return nil
}

// MarshalJSON writes pi's shape of a user message.
func (m *UserMessage) MarshalJSON() ([]byte, error) {
	if b, ok := messageJSON(m); ok {
		return b, nil
	}
	return m.marshalJSON()
}

// marshalJSON is MarshalJSON through encoding/json.
func (m *UserMessage) marshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Role      string `json:"role"`
		Content   any    `json:"content"`
		Timestamp int64  `json:"timestamp"`
	}{"user", textOrBlocks(m.Text, m.Blocks), m.Timestamp})
}

// UnmarshalJSON reads pi's shape of a user message.
func (m *UserMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		Content   json.RawMessage `json:"content"`
		Timestamp int64           `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	text, blocks, err := parseTextOrBlocks(aux.Content)
	if err != nil {
		return fmt.Errorf("user message content: %w", err)
	}
	*m = UserMessage{Text: text, Blocks: blocks, Timestamp: aux.Timestamp}
	return nil
}

// MarshalJSON writes pi's shape of an assistant message; nil content is written as [].
func (m *AssistantMessage) MarshalJSON() ([]byte, error) {
	if b, ok := messageJSON(m); ok {
		return b, nil
	}
	return m.marshalJSON()
}

// marshalJSON is MarshalJSON through encoding/json.
func (m *AssistantMessage) marshalJSON() ([]byte, error) {
	type plain AssistantMessage
	p := plain(*m)
	if p.Content == nil {
		p.Content = []Block{}
	}
	return json.Marshal(struct {
		Role string `json:"role"`
		plain
	}{"assistant", p})
}

// UnmarshalJSON reads pi's shape of an assistant message.
func (m *AssistantMessage) UnmarshalJSON(data []byte) error {
	type plain AssistantMessage
	var aux struct {
		plain
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	blocks, err := DecodeBlocks(aux.Content)
	if err != nil {
		return fmt.Errorf("assistant message: %w", err)
	}
	*m = AssistantMessage(aux.plain)
	m.Content = blocks
	return nil
}

// MarshalJSON writes pi's shape of a tool-result message.
func (m *ToolResultMessage) MarshalJSON() ([]byte, error) {
	if b, ok := messageJSON(m); ok {
		return b, nil
	}
	return m.marshalJSON()
}

// marshalJSON is MarshalJSON through encoding/json.
func (m *ToolResultMessage) marshalJSON() ([]byte, error) {
	type plain ToolResultMessage
	p := plain(*m)
	if p.Content == nil {
		p.Content = []Block{}
	}
	return json.Marshal(struct {
		Role string `json:"role"`
		plain
	}{"toolResult", p})
}

// UnmarshalJSON reads pi's shape of a tool-result message.
func (m *ToolResultMessage) UnmarshalJSON(data []byte) error {
	type plain ToolResultMessage
	var aux struct {
		plain
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	blocks, err := DecodeBlocks(aux.Content)
	if err != nil {
		return fmt.Errorf("toolResult message: %w", err)
	}
	*m = ToolResultMessage(aux.plain)
	m.Content = blocks
	return nil
}

// MarshalJSON writes the custom message's fields as they are.
func (m *CustomMessage) MarshalJSON() ([]byte, error) { return json.Marshal(m.Fields) }

// DecodeMessage decodes one message from JSON, choosing its type by "role".
func DecodeMessage(data []byte) (Message, error) {
	if m, ok := decodeMessageFast(data); ok {
		return m, nil
	}
	return decodeMessageJSON(data)
}

// decodeMessageJSON is DecodeMessage through encoding/json.
func decodeMessageJSON(data []byte) (Message, error) {
	var head struct {
		Role string `json:"role"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	var m Message
	switch head.Role {
	case "system":
		m = &SystemMessage{}
	case "user":
		m = &UserMessage{}
	case "assistant":
		m = &AssistantMessage{}
	case "toolResult":
		m = &ToolResultMessage{}
	default:
		c := &CustomMessage{}
		if err := json.Unmarshal(data, &c.Fields); err != nil {
			return nil, fmt.Errorf("message with role %q: %w", head.Role, err)
		}
		return c, nil
	}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%s message: %w", head.Role, err)
	}
	return m, nil
}

// DecodeMessages decodes a JSON array of messages.
func DecodeMessages(data []byte) ([]Message, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	out := make([]Message, 0, len(raw))
	for i, r := range raw {
		m, err := DecodeMessage(r)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// assistantCopy is a copied assistant message allocated with room for its content list.
type assistantCopy struct {
	m      AssistantMessage
	blocks [2]Block
}

// ShallowCopy returns a copy of m whose top-level fields can change without affecting m, the
// way pi's `{ ...message }` does; its content list is copied too, so appending to or replacing
// blocks in one never shows in the other.
func ShallowCopy(m Message) Message {
	switch v := m.(type) {
	case *SystemMessage:
		c := *v
		c.Blocks = slices.Clone(v.Blocks)
		return &c
	case *UserMessage:
		c := *v
		c.Blocks = slices.Clone(v.Blocks)
		return &c
	case *AssistantMessage:
		if v.Content != nil && len(v.Content) <= len(assistantCopy{}.blocks) {
			// One allocation instead of two: a streamed partial is copied at every event.
			c := &assistantCopy{m: *v}
			n := copy(c.blocks[:], v.Content)
			c.m.Content = c.blocks[:n:n]
			return &c.m
		}
		c := *v
		c.Content = slices.Clone(v.Content)
		return &c
	case *ToolResultMessage:
		c := *v
		c.Content = slices.Clone(v.Content)
		return &c
	case *CustomMessage:
		return &CustomMessage{Fields: maps.Clone(v.Fields)}
	}
	return m
}
