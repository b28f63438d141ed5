package loop

// EventType names one of the ten events of a run.
type EventType string

// The events, in pi's names.
const (
	AgentStart          EventType = "agent_start"
	AgentEnd            EventType = "agent_end"
	TurnStart           EventType = "turn_start"
	TurnEnd             EventType = "turn_end"
	MessageStart        EventType = "message_start"
	MessageUpdate       EventType = "message_update"
	MessageEnd          EventType = "message_end"
	ToolExecutionStart  EventType = "tool_execution_start"
	ToolExecutionUpdate EventType = "tool_execution_update"
	ToolExecutionEnd    EventType = "tool_execution_end"
)

// Event is one thing the loop reports. Which fields are set depends on Type:
//
//	agent_end              Messages (the run's new messages)
//	turn_end               Message (the assistant message), ToolResults
//	message_start/_end     Message
//	message_update         Message, AssistantEvent
//	tool_execution_start   ToolCallID, ToolName, Args
//	tool_execution_update  ToolCallID, ToolName, Args, PartialResult
//	tool_execution_end     ToolCallID, ToolName, Result, IsError, DurationMs (when execute ran)
type Event struct {
	Type           EventType
	Message        Message
	AssistantEvent *StreamEvent
	ToolResults    []*ToolResultMessage
	Messages       []Message
	ToolCallID     string
	ToolName       string
	Args           map[string]any
	PartialResult  *ToolResult
	Result         *ToolResult
	// ResultUndefined, on tool_execution_end, leaves the result field out (pi before 0.99.1,
	// for an execute that resolved undefined); a nil Result with it unset is written null.
	ResultUndefined bool
	IsError         bool
	DurationMs      *int64
}

// MarshalJSON writes the event in pi's shape, with exactly the fields of its type.
func (e Event) MarshalJSON() ([]byte, error) { return MarshalEvent(&e) }

// mapJSON is the event as the map of its members that encoding/json writes.
func (e *Event) mapJSON() map[string]any {
	type kv = map[string]any
	out := kv{"type": e.Type}
	switch e.Type {
	case AgentEnd:
		out["messages"] = nonNil(e.Messages)
	case TurnEnd:
		out["message"] = e.Message
		out["toolResults"] = nonNil(e.ToolResults)
	case MessageStart, MessageEnd:
		out["message"] = e.Message
	case MessageUpdate:
		out["message"] = e.Message
		out["assistantMessageEvent"] = e.AssistantEvent
	case ToolExecutionStart, ToolExecutionUpdate, ToolExecutionEnd:
		out["toolCallId"] = e.ToolCallID
		out["toolName"] = e.ToolName
		switch e.Type {
		case ToolExecutionEnd:
			if !e.ResultUndefined {
				out["result"] = e.Result
			}
			out["isError"] = e.IsError
			if e.DurationMs != nil {
				out["durationMs"] = *e.DurationMs
			}
		case ToolExecutionUpdate:
			out["args"] = nonNilArgs(e.Args)
			out["partialResult"] = e.PartialResult
		default:
			out["args"] = nonNilArgs(e.Args)
		}
	}
	return out
}

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
