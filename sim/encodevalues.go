package sim

import (
	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
)

// Canonical JSON of the notifications' and deliveries' own types, written as
// jsonvalue.Canonical(json.Marshal(v)) would be (members in sorted order, omitempty's
// members left out), without reflection: an Agent session reports an outcome with its whole
// state after each operation. TestValuesAndJSONGiveTheSameTrace compares them with their
// encoding through JSON.

// outcome writes an Agent operation's outcome; its state's transcript through the memo.
func (e *encoder) outcome(b []byte, x *Outcome) []byte {
	o := open(b)
	if x.Error != "" {
		o = o.str("error", x.Error)
	}
	o = o.str("id", x.ID)
	o = o.str("op", x.Op)
	o = o.str("outcome", x.Outcome)
	if x.State != nil {
		o = o.key("state")
		o.b = e.agentState(o.b, x.State)
	}
	return o.close()
}

// agentState writes an Agent's state: its transcript through the memo (transcript messages
// are never changed), the queued and the streaming message as they are now.
func (e *encoder) agentState(b []byte, s *AgentState) []byte {
	o := open(b)
	if s.ErrorMessage != "" {
		o = o.str("errorMessage", s.ErrorMessage)
	}
	o = o.boolean("hasQueuedMessages", s.HasQueuedMessages)
	o = o.boolean("isStreaming", s.IsStreaming)
	o = o.key("messages")
	o.b = e.messages(o.b, s.Messages)
	o = o.key("pendingToolCalls")
	o.b = jsonvalue.AppendList(o.b, s.PendingToolCalls, jsonvalue.AppendString)
	o = o.key("queued")
	o.b = jsonvalue.AppendList(o.b, s.Queued, appendMessage)
	if s.StreamingMessage != nil {
		o = o.key("streamingMessage")
		o.b = appendMessage(o.b, s.StreamingMessage)
	}
	return o.close()
}

// wireOp writes an Agent operation's delivery data.
func appendWireOp(b []byte, x *wireOp) []byte {
	o := open(b)
	if x.Barrier != "" {
		o = o.str("barrier", x.Barrier)
	}
	if x.Message != nil {
		o = o.key("message")
		o.b = appendMessage(o.b, x.Message)
	}
	if len(x.Messages) > 0 {
		o = o.key("messages")
		o.b = jsonvalue.AppendList(o.b, x.Messages, appendMessage)
	}
	if x.Mode != "" {
		o = o.str("mode", x.Mode)
	}
	o = o.str("op", x.Op)
	if x.Queue != "" {
		o = o.str("queue", x.Queue)
	}
	if x.Text != "" {
		o = o.str("text", x.Text)
	}
	if len(x.Tools) > 0 {
		o = o.key("tools")
		o.b = jsonvalue.AppendList(o.b, x.Tools, jsonvalue.AppendString)
	}
	return o.close()
}

// appendToolResults writes a turn's tool results.
func appendToolResults(b []byte, list []*loop.ToolResultMessage) []byte {
	return jsonvalue.AppendList(b, list, func(b []byte, m *loop.ToolResultMessage) []byte { return appendMessage(b, m) })
}

// appendStrings writes a map of strings, its keys in order.
func appendStrings(b []byte, m map[string]string) []byte {
	return jsonvalue.AppendMap(b, m, jsonvalue.AppendString)
}

// appendAgentSetup writes an Agent session's configuration, which opens its trace.
func appendAgentSetup(b []byte, x *AgentSetup) []byte {
	o := open(b)
	if len(x.Barriers) > 0 {
		o = o.key("barriers")
		o.b = jsonvalue.AppendList(o.b, x.Barriers, func(b []byte, bar BarrierSetup) []byte {
			o := open(b)
			o = o.str("event", bar.Event)
			o = o.str("id", bar.ID)
			if bar.Nth != 0 {
				o = o.num("nth", int64(bar.Nth))
			}
			if bar.UntilAbort {
				o = o.boolean("untilAbort", true)
			}
			return o.close()
		})
	}
	o = o.str("followUpMode", x.FollowUpMode)
	o = o.str("steeringMode", x.SteeringMode)
	if x.SystemPrompt != "" {
		o = o.str("systemPrompt", x.SystemPrompt)
	}
	return o.close()
}

// identity writes a request's identity as its MarshalJSON does: absent fields left out,
// attribution null when NoAttribution.
func (e *encoder) identity(b []byte, x *loop.Identity) []byte {
	o := open(b)
	switch {
	case x.Attribution != nil:
		a := x.Attribution
		o = o.key("attribution")
		a2 := open(o.b)
		if len(a.Categories) > 0 {
			a2 = a2.key("categories")
			a2.b = jsonvalue.AppendList(a2.b, a.Categories, jsonvalue.AppendString)
		}
		a2 = a2.str("name", a.Name)
		a2 = a2.str("url", a.URL)
		o.b = a2.close()
	case x.NoAttribution:
		o = o.key("attribution")
		o.b = append(o.b, "null"...)
	}
	if x.UserAgent != nil {
		o = o.key("userAgent")
		o.b = e.value(o.b, x.UserAgent)
	}
	if x.Version != nil {
		o = o.str("version", *x.Version)
	}
	return o.close()
}
