package loop

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// Writing messages by hand: what their MarshalJSON writes through encoding/json's
// reflection, byte for byte (members in the structs' order, omitempty's left out, numbers as
// encoding/json formats them), for the simulator's setup and answers. A value encoding/json
// might write otherwise or refuse (a field of any holding another Go type than decoded JSON
// gives, a NaN) makes the writer give up, and encoding/json writes the message.
// FuzzMessageJSON holds the two to the same bytes.

// jsonWriter appends JSON to b; ok turns false at the first value it leaves to encoding/json.
type jsonWriter struct {
	b  []byte
	ok bool
}

func (w *jsonWriter) raw(s string)   { w.b = append(w.b, s...) }
func (w *jsonWriter) str(s string)   { w.b = jsonvalue.AppendString(w.b, s) }
func (w *jsonWriter) int(n int64)    { w.b = strconv.AppendInt(w.b, n, 10) }
func (w *jsonWriter) key(k string)   { w.b = append(append(append(w.b, ",\""...), k...), "\":"...) }
func (w *jsonWriter) first(k string) { w.b = append(append(append(w.b, "{\""...), k...), "\":"...) }

func (w *jsonWriter) boolean(v bool) {
	if v {
		w.raw("true")
	} else {
		w.raw("false")
	}
}

// float writes f as encoding/json does.
func (w *jsonWriter) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.ok = false
		return
	}
	w.b = jsonvalue.AppendMarshalFloat(w.b, f)
}

// value writes a value of decoded JSON as encoding/json does.
func (w *jsonWriter) value(v any) {
	var ok bool
	if w.b, ok = jsonvalue.AppendMarshal(w.b, v); !ok {
		w.ok = false
	}
}

// blocks writes a content list (nil as null, as encoding/json writes a nil slice).
func (w *jsonWriter) blocks(list []Block) {
	if list == nil {
		w.raw("null")
		return
	}
	w.raw("[")
	for i, blk := range list {
		if i > 0 {
			w.raw(",")
		}
		w.block(blk)
	}
	w.raw("]")
}

// block writes a content block as its MarshalJSON does.
func (w *jsonWriter) block(blk Block) {
	switch x := blk.(type) {
	case TextContent:
		w.first("type")
		w.raw(`"text","text":`)
		w.str(x.Text)
		if x.TextSignature != "" {
			w.key("textSignature")
			w.str(x.TextSignature)
		}
	case ThinkingContent:
		w.first("type")
		w.raw(`"thinking","thinking":`)
		w.str(x.Thinking)
		if x.ThinkingSignature != "" {
			w.key("thinkingSignature")
			w.str(x.ThinkingSignature)
		}
		if x.Redacted {
			w.raw(`,"redacted":true`)
		}
	case ImageContent:
		w.first("type")
		w.raw(`"image","data":`)
		w.str(x.Data)
		w.key("mimeType")
		w.str(x.MimeType)
	case ToolCall:
		w.first("type")
		w.raw(`"toolCall","id":`)
		w.str(x.ID)
		w.key("name")
		w.str(x.Name)
		w.key("arguments")
		if x.Arguments == nil {
			w.raw("{}")
		} else {
			w.value(x.Arguments)
		}
		if x.ThoughtSignature != "" {
			w.key("thoughtSignature")
			w.str(x.ThoughtSignature)
		}
		if x.Namespace != "" {
			w.key("namespace")
			w.str(x.Namespace)
		}
		if x.ArgumentsError != "" {
			w.key("argumentsError")
			w.str(x.ArgumentsError)
		}
	default:
		w.ok = false
		return
	}
	w.raw("}")
}

// content writes pi's `string | Block[]` content.
func (w *jsonWriter) content(text string, blocks []Block) {
	if blocks != nil {
		w.blocks(blocks)
	} else {
		w.str(text)
	}
}

// usage writes a Usage.
func (w *jsonWriter) usage(u *Usage) {
	w.first("input")
	w.int(u.Input)
	w.key("output")
	w.int(u.Output)
	w.key("cacheRead")
	w.int(u.CacheRead)
	w.key("cacheWrite")
	w.int(u.CacheWrite)
	if u.CacheWrite1h != nil {
		w.key("cacheWrite1h")
		w.int(*u.CacheWrite1h)
	}
	if u.Reasoning != nil {
		w.key("reasoning")
		w.int(*u.Reasoning)
	}
	w.key("totalTokens")
	w.int(u.TotalTokens)
	w.key("cost")
	c := &u.Cost
	w.first("input")
	w.float(c.Input)
	w.key("output")
	w.float(c.Output)
	w.key("cacheRead")
	w.float(c.CacheRead)
	w.key("cacheWrite")
	w.float(c.CacheWrite)
	w.key("total")
	w.float(c.Total)
	if c.TotalFromProvider {
		w.raw(`,"totalFromProvider":true`)
	}
	w.raw("}}")
}

// system writes a system message as its MarshalJSON does.
func (w *jsonWriter) system(m *SystemMessage) {
	w.raw(`{"role":"system","content":`)
	w.content(m.Text, m.Blocks)
	if len(m.Sections) > 0 {
		w.key("sections")
		keys := make([]string, 0, len(m.Sections))
		for k := range m.Sections {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.raw("{")
		for i, k := range keys {
			if i > 0 {
				w.raw(",")
			}
			w.str(k)
			w.raw(":")
			if v := m.Sections[k]; v == nil {
				w.raw("null")
			} else {
				w.str(*v)
			}
		}
		w.raw("}")
	}
	if len(m.ToolsAdded) > 0 {
		w.key("toolsAdded")
		for i, d := range m.ToolsAdded {
			if i == 0 {
				w.raw("[")
			} else {
				w.raw(",")
			}
			w.first("name")
			w.str(d.Name)
			w.key("description")
			w.str(d.Description)
			w.key("parameters")
			if d.Parameters == nil {
				w.raw("null")
			} else {
				w.value(d.Parameters)
			}
			if d.ConstrainedSampling != nil {
				w.key("constrainedSampling")
				w.value(d.ConstrainedSampling)
			}
			w.raw("}")
		}
		w.raw("]")
	}
	if len(m.ToolsRemoved) > 0 {
		w.key("toolsRemoved")
		for i, r := range m.ToolsRemoved {
			if i == 0 {
				w.raw("[")
			} else {
				w.raw(",")
			}
			w.first("name")
			w.str(r.Name)
			w.raw("}")
		}
		w.raw("]")
	}
	w.key("timestamp")
	w.int(m.Timestamp)
	w.raw("}")
}

// assistant writes an assistant message as its MarshalJSON does (nil content as []).
func (w *jsonWriter) assistant(m *AssistantMessage) {
	w.raw(`{"role":"assistant","content":`)
	if m.Content == nil {
		w.raw("[]")
	} else {
		w.blocks(m.Content)
	}
	w.key("api")
	w.str(m.API)
	w.key("provider")
	w.str(m.Provider)
	w.key("model")
	w.str(m.Model)
	for _, f := range [...]struct{ k, v string }{{"responseModel", m.ResponseModel}, {"responseId", m.ResponseID},
		{"providerThinkingLevel", m.ProviderThinkingLevel}, {"thinkingLevel", m.ThinkingLevel}} {
		if f.v != "" {
			w.key(f.k)
			w.str(f.v)
		}
	}
	w.key("usage")
	w.usage(&m.Usage)
	w.key("stopReason")
	w.str(string(m.StopReason))
	if m.ErrorMessage != "" {
		w.key("errorMessage")
		w.str(m.ErrorMessage)
	}
	if m.RawStopReason != "" {
		w.key("rawStopReason")
		w.str(m.RawStopReason)
	}
	if m.EndTurn != nil {
		w.key("endTurn")
		w.boolean(*m.EndTurn)
	}
	w.key("timestamp")
	w.int(m.Timestamp)
	if m.DurationMs != nil {
		w.key("durationMs")
		w.int(*m.DurationMs)
	}
	w.raw("}")
}

// toolResult writes a tool-result message as its MarshalJSON does (nil content as []).
func (w *jsonWriter) toolResult(m *ToolResultMessage) {
	w.raw(`{"role":"toolResult","toolCallId":`)
	w.str(m.ToolCallID)
	w.key("toolName")
	w.str(m.ToolName)
	w.key("content")
	if m.Content == nil {
		w.raw("[]")
	} else {
		w.blocks(m.Content)
	}
	if m.Details != nil {
		w.key("details")
		w.value(m.Details)
	}
	if m.Usage != nil {
		w.key("usage")
		w.usage(m.Usage)
	}
	w.key("isError")
	w.boolean(m.IsError)
	if m.DurationMs != nil {
		w.key("durationMs")
		w.int(*m.DurationMs)
	}
	w.key("timestamp")
	w.int(m.Timestamp)
	w.raw("}")
}

// user writes a user message as its MarshalJSON does.
func (w *jsonWriter) user(m *UserMessage) {
	w.raw(`{"role":"user","content":`)
	w.content(m.Text, m.Blocks)
	w.key("timestamp")
	w.int(m.Timestamp)
	w.raw("}")
}

// MarshalMessage is json.Marshal(m), written by hand where it can be (without encoding/json
// going over the MarshalJSON's output again).
func MarshalMessage(m Message) ([]byte, error) {
	if b, ok := messageJSON(m); ok {
		return b, nil
	}
	return json.Marshal(m)
}

// AppendMessage appends MarshalMessage(m); ok is false when it fails.
func AppendMessage(b []byte, m Message) ([]byte, bool) {
	data, err := MarshalMessage(m)
	return append(b, data...), err == nil
}

// messageJSON is m as its MarshalJSON writes it, by hand; ok is false when it is left to
// encoding/json (a nil pointer among them, which json.Marshal writes as null).
func messageJSON(m Message) (b []byte, ok bool) {
	w := jsonWriter{ok: true}
	switch x := m.(type) {
	case *SystemMessage:
		if x == nil {
			return nil, false
		}
		w.system(x)
	case *UserMessage:
		if x == nil {
			return nil, false
		}
		w.user(x)
	case *AssistantMessage:
		if x == nil {
			return nil, false
		}
		w.assistant(x)
	case *ToolResultMessage:
		if x == nil {
			return nil, false
		}
		w.toolResult(x)
	default:
		return nil, false
	}
	return w.b, w.ok
}
