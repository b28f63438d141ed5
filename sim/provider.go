package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// abortedText is the errorMessage of a response cut short by an abort, as in pi-ai's
// providers.
const abortedText = "Request was aborted"

// streamRequest is what the world needs of a stream call's data: {model, messages,
// thinkingLevel, apiKey}.
type streamRequest struct {
	Model ModelSetup `json:"model"`
}

// openStream answers a provider request with the next scripted response, scheduling its
// events. value is the in-process form of data, when there is one.
func (w *world) openStream(data json.RawMessage, value any) Answer {
	var req streamRequest
	if sc, ok := value.(*streamCall); ok {
		req.Model = sc.Model
	} else if m, ok := value.(map[string]any); ok {
		req.Model, _ = m["model"].(ModelSetup)
	} else if err := json.Unmarshal(data, &req); err != nil {
		w.requests++
		w.fail("protocol", fmt.Sprintf("request %d: bad stream call: %v", w.requests, err))
		return Answer{Error: "bad stream call: " + err.Error()}
	}
	return w.openStreamFor(req.Model)
}

// openStreamFor is openStream for a request naming model.
func (w *world) openStreamFor(model ModelSetup) Answer {
	w.requests++
	n := w.requests
	var resp *Response
	switch {
	case n <= len(w.sc.Responses):
		resp = &w.sc.Responses[n-1]
	case w.sc.ExtraResponse != nil:
		resp = w.sc.ExtraResponse
	default:
		text := fmt.Sprintf("request %d was not scripted", n)
		w.fail("script", text)
		return Answer{Error: text}
	}
	if resp.OpenError != "" {
		return Answer{Error: resp.OpenError}
	}
	s := &streamRun{id: strconv.Itoa(n), resp: resp}
	// The streams that finished are let go: only those open are looked at (by an abort).
	w.streams = slices.DeleteFunc(w.streams, func(s *streamRun) bool { return s.finished })
	w.streams = append(w.streams, s)
	final := finalMessage(resp, model, w.now)
	s.final = final
	partial := loop.ShallowCopy(final).(*loop.AssistantMessage)
	partial.Content = []loop.Block{}
	partial.StopReason = loop.StopPending
	s.partial = partial
	t := w.now + resp.Delay
	if w.aborted && !resp.IgnoresAbort {
		ev := abortedEvent(partial)
		w.pushStreamEvent(s, t, &ev)
		return Answer{Data: json.RawMessage(`{"stream":"` + s.id + `"}`)}
	}
	events := streamEvents(resp, final)
	s.pending = make([]*scheduled, 0, len(events)+1)
	for i := range events {
		if i > 0 {
			t += resp.ChunkDelay
		}
		w.pushStreamEvent(s, t, &events[i])
	}
	switch {
	case resp.StreamError != "":
		w.pushStreamDelivery(s, t, Delivery{Kind: trace.DeliverStreamFail, Data: w.enc.valueBytes(map[string]string{"error": resp.StreamError})})
	case resp.NoDone:
		w.pushStreamDelivery(s, t, Delivery{Kind: trace.DeliverStreamEnd, Data: w.enc.valueBytes(map[string]any{"message": final})})
	}
	return Answer{Data: json.RawMessage(`{"stream":"` + s.id + `"}`)}
}

// pushStreamEvent schedules one stream event; releasing it updates the stream's partial.
// Its JSON is written when it is released (deliveryData).
func (w *world) pushStreamEvent(s *streamRun, t int64, ev *loop.StreamEvent) {
	w.pushStreamDelivery(s, t, Delivery{Kind: trace.DeliverStreamEvent}).event = ev
}

// pushStreamDelivery schedules one of the stream's deliveries; released, it updates the
// stream (streamRun.released).
func (w *world) pushStreamDelivery(s *streamRun, t int64, d Delivery) *scheduled {
	d.Target = s.id
	d.Now = t
	sch := w.at(t, d)
	sch.stream = s
	s.pending = append(s.pending, sch)
	return sch
}

// released takes the stream's next delivery, d, as released: its partial becomes the
// stream's, and the stream is finished after its last event or after an end or failure.
func (s *streamRun) released(d *scheduled) {
	s.pending[0] = nil
	s.pending = s.pending[1:]
	ev := d.event
	if ev == nil {
		s.finished = true
		return
	}
	if ev.Partial != nil {
		s.partial = ev.Partial
	}
	if ev.Type == loop.StreamDone || ev.Type == loop.StreamError {
		s.finished = true
	}
}

// finalMessage is the scripted response's final assistant message.
func finalMessage(resp *Response, model ModelSetup, now int64) *loop.AssistantMessage {
	stop := resp.StopReason
	if stop == "" {
		stop = loop.StopStop
		if len(loop.ToolCalls(resp.Content)) > 0 {
			stop = loop.StopToolUse
		}
	}
	usage := loop.Usage{}
	if resp.Usage != nil {
		usage = *resp.Usage
	}
	content := resp.Content
	if content == nil {
		content = []loop.Block{}
	}
	return &loop.AssistantMessage{
		Content: content, API: model.API, Provider: model.Provider, Model: model.ID,
		Usage: usage, StopReason: stop, ErrorMessage: resp.ErrorMessage, Timestamp: now,
	}
}

// StreamEvents is the whole event stream the simulator delivers for a response to a request
// to model at virtual time now, for benchmarks and tools that replay it without the world.
func StreamEvents(resp *Response, model loop.Model, now int64) []loop.StreamEvent {
	return streamEvents(resp, finalMessage(resp, ModelSetup{ID: model.ID, API: model.API, Provider: model.Provider}, now))
}

// StreamEventCount is len(StreamEvents(resp, …)), counted without building the events (a
// text streamed one character a delta makes a million of them, each with its partial).
func StreamEventCount(resp *Response) int {
	n := 0
	if !resp.NoStart {
		n++
	}
	for _, b := range resp.Content {
		switch b := b.(type) {
		case loop.ThinkingContent:
			n += 2 + pieces(b.Thinking, resp.DeltaSize)
		case loop.TextContent:
			n += 2 + pieces(b.Text, resp.DeltaSize)
		case loop.ToolCall:
			args, _ := json.Marshal(b.Arguments)
			if b.Arguments == nil {
				args = []byte("{}")
			}
			n += 2 + pieces(string(args), resp.DeltaSize)
		}
	}
	if !resp.NoDone && resp.StreamError == "" {
		n++
	}
	return n
}

// pieces is len(split(s, size)).
func pieces(s string, size int) int {
	if size <= 0 {
		return 1
	}
	return max(1, (utf8.RuneCountInString(s)+size-1)/size)
}

// abortedEvent is the error event of a stream cut short by an abort (pi-ai's faux
// createAbortedMessage: the partial so far, stopReason aborted).
func abortedEvent(partial *loop.AssistantMessage) loop.StreamEvent {
	m := loop.ShallowCopy(partial).(*loop.AssistantMessage)
	m.StopReason = loop.StopAborted
	m.ErrorMessage = abortedText
	return loop.StreamEvent{Type: loop.StreamError, Reason: loop.StopAborted, Message: m}
}

// streamEvents streams a response the way pi-ai's faux provider does: start, then per block
// its start, deltas and end, then done or error. Each event carries its own partial.
func streamEvents(resp *Response, final *loop.AssistantMessage) []loop.StreamEvent {
	partial := loop.ShallowCopy(final).(*loop.AssistantMessage)
	partial.Content = []loop.Block{}
	partial.StopReason = loop.StopPending
	snap := func() *loop.AssistantMessage { return loop.ShallowCopy(partial).(*loop.AssistantMessage) }
	out := make([]loop.StreamEvent, 0, streamEventsAbout(resp, final))
	if !resp.NoStart {
		out = append(out, loop.StreamEvent{Type: loop.StreamStart, Partial: snap()})
	}
	for i, b := range final.Content {
		switch b := b.(type) {
		case loop.ThinkingContent:
			partial.Content = append(partial.Content, loop.ThinkingContent{})
			out = append(out, loop.StreamEvent{Type: loop.StreamThinkingStart, ContentIndex: i, Partial: snap()})
			at, acc := 0, ""
			for _, d := range split(b.Thinking, resp.DeltaSize) {
				// The text so far is a prefix of the block's: sharing its bytes keeps a
				// k-delta response O(k), not O(k²), and equal partials cheap to compare.
				at += len(d)
				partial.Content[i] = loop.ThinkingContent{Thinking: prefix(b.Thinking, at, d, &acc)}
				out = append(out, loop.StreamEvent{Type: loop.StreamThinkingDelta, ContentIndex: i, Delta: d, Partial: snap()})
			}
			partial.Content[i] = b
			out = append(out, loop.StreamEvent{Type: loop.StreamThinkingEnd, ContentIndex: i, Content: b.Thinking, Partial: snap()})
		case loop.TextContent:
			partial.Content = append(partial.Content, loop.TextContent{})
			out = append(out, loop.StreamEvent{Type: loop.StreamTextStart, ContentIndex: i, Partial: snap()})
			at, acc := 0, ""
			for _, d := range split(b.Text, resp.DeltaSize) {
				at += len(d)
				partial.Content[i] = loop.TextContent{Text: prefix(b.Text, at, d, &acc)}
				out = append(out, loop.StreamEvent{Type: loop.StreamTextDelta, ContentIndex: i, Delta: d, Partial: snap()})
			}
			partial.Content[i] = b
			out = append(out, loop.StreamEvent{Type: loop.StreamTextEnd, ContentIndex: i, Content: b.Text, Partial: snap()})
		case loop.ToolCall:
			partial.Content = append(partial.Content, loop.ToolCall{ID: b.ID, Name: b.Name, Arguments: map[string]any{}})
			out = append(out, loop.StreamEvent{Type: loop.StreamToolCallStart, ContentIndex: i, Partial: snap()})
			args, _ := json.Marshal(b.Arguments)
			if b.Arguments == nil {
				args = []byte("{}")
			}
			for _, d := range split(string(args), resp.DeltaSize) {
				out = append(out, loop.StreamEvent{Type: loop.StreamToolCallDelta, ContentIndex: i, Delta: d, Partial: snap()})
			}
			partial.Content[i] = b
			call := b
			out = append(out, loop.StreamEvent{Type: loop.StreamToolCallEnd, ContentIndex: i, ToolCall: &call, Partial: snap()})
		default:
			partial.Content = append(partial.Content, b)
		}
	}
	if resp.NoDone || resp.StreamError != "" {
		return out
	}
	if resp.ErrorEvent || final.StopReason == loop.StopError || final.StopReason == loop.StopAborted {
		return append(out, loop.StreamEvent{Type: loop.StreamError, Reason: final.StopReason, Message: final})
	}
	return append(out, loop.StreamEvent{Type: loop.StreamDone, Reason: final.StopReason, Message: final})
}

// streamEventsAbout is a capacity for streamEvents' list: start and done, per block its start,
// its end and a delta, and per text or thinking block a delta for every DeltaSize bytes (split
// cuts runes, so never fewer than it makes; a tool call's arguments cut in several deltas
// may still grow the list).
func streamEventsAbout(resp *Response, final *loop.AssistantMessage) int {
	n := 2
	for _, b := range final.Content {
		size := 0
		switch b := b.(type) {
		case loop.TextContent:
			size = len(b.Text)
		case loop.ThinkingContent:
			size = len(b.Thinking)
		}
		n += 3
		if resp.DeltaSize > 0 {
			n += size / resp.DeltaSize
		}
	}
	return n
}

// prefix is the text streamed so far once delta (ending at byte at of whole) is added to
// *acc: whole[:at], sharing whole's bytes, when the deltas are pieces of whole (valid UTF-8,
// which split cuts without re-encoding); otherwise the deltas concatenated.
func prefix(whole string, at int, delta string, acc *string) string {
	if at <= len(whole) && whole[at-len(delta):at] == delta && (*acc == "" || whole[:at-len(delta)] == *acc) {
		*acc = whole[:at]
		return *acc
	}
	*acc += delta
	return *acc
}

// split cuts s into pieces of size runes (one piece when size <= 0; one empty piece for "").
// The pieces of valid UTF-8 are substrings of s; invalid bytes become U+FFFD, as in a
// conversion to runes.
func split(s string, size int) []string {
	if size <= 0 {
		return []string{s}
	}
	if utf8.ValidString(s) {
		if utf8.RuneCountInString(s) <= size {
			return []string{s}
		}
		var out []string
		start, n := 0, 0
		for i := range s {
			if n == size {
				out = append(out, s[start:i])
				start, n = i, 0
			}
			n++
		}
		return append(out, s[start:])
	}
	r := []rune(s)
	if len(r) <= size {
		return []string{s}
	}
	var out []string
	for i := 0; i < len(r); i += size {
		out = append(out, string(r[i:min(i+size, len(r))]))
	}
	return out
}
