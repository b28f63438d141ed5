package loop

import (
	"encoding/json"
	"fmt"
)

// Block is one content block of a message: TextContent, ThinkingContent, ImageContent or
// ToolCall. Its JSON form carries a "type" field naming the kind.
type Block interface {
	// BlockType is the block's "type" in JSON: "text", "thinking", "image" or "toolCall".
	BlockType() string
}

// TextContent is a block of text.
type TextContent struct {
	Text          string `json:"text"`
	TextSignature string `json:"textSignature,omitempty"`
}

// ThinkingContent is a block of model reasoning.
type ThinkingContent struct {
	Thinking          string `json:"thinking"`
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	Redacted          bool   `json:"redacted,omitempty"`
}

// ImageContent is an image, base64 encoded.
type ImageContent struct {
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// ToolCall is a request from the model to run a tool. When ArgumentsError is set the model's
// arguments were not a JSON object and Arguments is empty; validation then fails with it.
type ToolCall struct {
	ID               string         `json:"id"`
	Name             string         `json:"name"`
	Arguments        map[string]any `json:"arguments"`
	ThoughtSignature string         `json:"thoughtSignature,omitempty"`
	Namespace        string         `json:"namespace,omitempty"`
	ArgumentsError   string         `json:"argumentsError,omitempty"`
}

// BlockType implements Block.
func (TextContent) BlockType() string { return "text" }

// BlockType implements Block.
func (ThinkingContent) BlockType() string { return "thinking" }

// BlockType implements Block.
func (ImageContent) BlockType() string { return "image" }

// BlockType implements Block.
func (ToolCall) BlockType() string { return "toolCall" }

// MarshalJSON adds the "type" field.
func (b TextContent) MarshalJSON() ([]byte, error) {
	type plain TextContent
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"text", plain(b)})
}

// MarshalJSON adds the "type" field.
func (b ThinkingContent) MarshalJSON() ([]byte, error) {
	type plain ThinkingContent
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"thinking", plain(b)})
}

// MarshalJSON adds the "type" field.
func (b ImageContent) MarshalJSON() ([]byte, error) {
	type plain ImageContent
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"image", plain(b)})
}

// MarshalJSON adds the "type" field; nil arguments are written as {}.
func (b ToolCall) MarshalJSON() ([]byte, error) {
	type plain ToolCall
	p := plain(b)
	if p.Arguments == nil {
		p.Arguments = map[string]any{}
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"toolCall", p})
}

// DecodeBlocks decodes content blocks from their JSON forms; nil (JSON null) stays nil, []
// stays empty.
func DecodeBlocks(raw []json.RawMessage) ([]Block, error) {
	if raw == nil {
		return nil, nil
	}
	out := make([]Block, 0, len(raw))
	for i, r := range raw {
		b, err := DecodeBlock(r)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// DecodeBlock decodes one content block from its JSON form.
func DecodeBlock(data []byte) (Block, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("content block: %w", err)
	}
	var (
		b   Block
		err error
	)
	switch head.Type {
	case "text":
		var v TextContent
		err = json.Unmarshal(data, &v)
		b = v
	case "thinking":
		var v ThinkingContent
		err = json.Unmarshal(data, &v)
		b = v
	case "image":
		var v ImageContent
		err = json.Unmarshal(data, &v)
		b = v
	case "toolCall":
		var v ToolCall
		err = json.Unmarshal(data, &v)
		b = v
	default:
		return nil, fmt.Errorf("content block: unknown type %q", head.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("content block %s: %w", head.Type, err)
	}
	return b, nil
}

// ToolCalls returns the tool-call blocks of content, in order.
func ToolCalls(content []Block) []ToolCall {
	var calls []ToolCall
	for _, b := range content {
		if tc, ok := b.(ToolCall); ok {
			calls = append(calls, tc)
		}
	}
	return calls
}

// Text is a convenience constructor for a one-block text content list.
func Text(s string) []Block { return []Block{TextContent{Text: s}} }
