package loop

import "encoding/json"

// Writing events by hand: what Event.MarshalJSON wrote through a map and encoding/json's
// reflection (members in sorted key order, as encoding/json writes a map), byte for byte, for
// the served reference and the Go kit, which send every event the loop emits. Anything the
// writers leave (a custom message, a nil pointer among a list, a value encoding/json would
// refuse) goes through the map. TestEventJSONIsTheMapsJSON holds the two to the same bytes.

// MarshalEvent is json.Marshal(e), written by hand where it can be (without encoding/json
// going over the MarshalJSON's output again).
func MarshalEvent(e *Event) ([]byte, error) {
	if b, ok := eventJSON(e); ok {
		return b, nil
	}
	return json.Marshal(e.mapJSON())
}

// eventJSON is e as its MarshalJSON writes it, by hand; ok is false when it is left to
// encoding/json.
func eventJSON(e *Event) (b []byte, ok bool) {
	w := jsonWriter{ok: true}
	w.event(e)
	return w.b, w.ok
}

// event writes an event as its map's JSON: the members of its type, sorted.
func (w *jsonWriter) event(e *Event) {
	w.raw("{")
	switch e.Type {
	case AgentEnd:
		w.raw(`"messages":`)
		w.messages(e.Messages)
		w.raw(",")
	case TurnEnd:
		w.raw(`"message":`)
		w.message(e.Message)
		w.raw(`,"toolResults":`)
		if e.ToolResults == nil {
			w.raw("[]")
		} else {
			w.raw("[")
			for i, m := range e.ToolResults {
				if i > 0 {
					w.raw(",")
				}
				w.message(m)
			}
			w.raw("]")
		}
		w.raw(",")
	case MessageStart, MessageEnd:
		w.raw(`"message":`)
		w.message(e.Message)
		w.raw(",")
	case MessageUpdate:
		w.raw(`"assistantMessageEvent":`)
		if e.AssistantEvent == nil {
			w.raw("null")
		} else {
			w.streamEvent(e.AssistantEvent)
		}
		w.raw(`,"message":`)
		w.message(e.Message)
		w.raw(",")
	case ToolExecutionEnd:
		if e.DurationMs != nil {
			w.raw(`"durationMs":`)
			w.int(*e.DurationMs)
			w.raw(",")
		}
		w.raw(`"isError":`)
		w.boolean(e.IsError)
		w.raw(",")
		if !e.ResultUndefined {
			w.raw(`"result":`)
			w.toolResultValue(e.Result)
			w.raw(",")
		}
		w.toolExecution(e)
	case ToolExecutionStart, ToolExecutionUpdate:
		w.raw(`"args":`)
		w.args(e.Args)
		w.raw(",")
		if e.Type == ToolExecutionUpdate {
			w.raw(`"partialResult":`)
			w.toolResultValue(e.PartialResult)
			w.raw(",")
		}
		w.toolExecution(e)
	}
	w.raw(`"type":`)
	w.str(string(e.Type))
	w.raw("}")
}

// toolExecution writes a tool execution event's toolCallId and toolName members, each with
// its comma.
func (w *jsonWriter) toolExecution(e *Event) {
	w.raw(`"toolCallId":`)
	w.str(e.ToolCallID)
	w.raw(`,"toolName":`)
	w.str(e.ToolName)
	w.raw(",")
}

// args writes a call's arguments, nil as {}.
func (w *jsonWriter) args(a map[string]any) {
	if a == nil {
		w.raw("{}")
		return
	}
	w.value(a)
}

// messages writes a list of messages, nil as [].
func (w *jsonWriter) messages(list []Message) {
	w.raw("[")
	for i, m := range list {
		if i > 0 {
			w.raw(",")
		}
		w.message(m)
	}
	w.raw("]")
}

// message writes a message as its MarshalJSON does: nil as null; a nil pointer or a custom
// message is left to encoding/json.
func (w *jsonWriter) message(m Message) {
	switch x := m.(type) {
	case nil:
		w.raw("null")
	case *SystemMessage:
		if x == nil {
			w.ok = false
			return
		}
		w.system(x)
	case *UserMessage:
		if x == nil {
			w.ok = false
			return
		}
		w.user(x)
	case *AssistantMessage:
		if x == nil {
			w.ok = false
			return
		}
		w.assistant(x)
	case *ToolResultMessage:
		if x == nil {
			w.ok = false
			return
		}
		w.toolResult(x)
	default:
		w.ok = false
	}
}

// streamEvent writes a stream event as its MarshalJSON does: its map's members, sorted.
func (w *jsonWriter) streamEvent(e *StreamEvent) {
	w.raw("{")
	switch e.Type {
	case StreamDone, StreamError:
		if e.Type == StreamDone {
			w.raw(`"message":`)
		} else {
			w.raw(`"error":`)
		}
		w.assistantOrNull(e.Message)
		w.raw(`,"reason":`)
		w.str(string(e.Reason))
		w.raw(`,"type":`)
		w.str(string(e.Type))
		w.raw("}")
		return
	case StreamTextEnd, StreamThinkingEnd:
		w.raw(`"content":`)
		w.str(e.Content)
		w.raw(",")
	}
	if e.Type != StreamStart {
		w.raw(`"contentIndex":`)
		w.int(int64(e.ContentIndex))
		w.raw(",")
	}
	switch e.Type {
	case StreamTextDelta, StreamThinkingDelta, StreamToolCallDelta:
		w.raw(`"delta":`)
		w.str(e.Delta)
		w.raw(",")
	}
	w.raw(`"partial":`)
	w.assistantOrNull(e.Partial)
	if e.Type == StreamToolCallEnd {
		w.raw(`,"toolCall":`)
		if e.ToolCall == nil {
			w.raw("null")
		} else {
			w.block(*e.ToolCall)
		}
	}
	w.raw(`,"type":`)
	w.str(string(e.Type))
	w.raw("}")
}

// assistantOrNull writes an assistant message, nil as null.
func (w *jsonWriter) assistantOrNull(m *AssistantMessage) {
	if m == nil {
		w.raw("null")
		return
	}
	w.assistant(m)
}

// toolResultValue writes a tool result as its MarshalJSON does, nil as null: the struct's
// members in order, terminate last when true or set.
func (w *jsonWriter) toolResultValue(r *ToolResult) {
	if r == nil {
		w.raw("null")
		return
	}
	w.raw(`{"content":`)
	w.blocks(r.Content)
	if r.Details != nil {
		w.raw(`,"details":`)
		w.value(r.Details)
	}
	if r.StructuredContent != nil {
		w.raw(`,"structuredContent":`)
		w.value(r.StructuredContent)
	}
	if r.Usage != nil {
		w.raw(`,"usage":`)
		w.usage(r.Usage)
	}
	if r.IsError {
		w.raw(`,"isError":true`)
	}
	switch {
	case r.Terminate:
		w.raw(`,"terminate":true`)
	case r.TerminateSet:
		w.raw(`,"terminate":false`)
	}
	w.raw("}")
}
