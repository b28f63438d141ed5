package loop

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// TestEventJSONIsTheMapsJSON: an event written by hand (MarshalEvent, MarshalJSON, and
// json.Marshal over MarshalJSON) is what encoding/json writes of its map, byte for byte, or
// both fail; on every event type (and an unknown one) with random members: each message type,
// stream events of every type, tool results with and without their optional members, HTML
// and invalid UTF-8 in texts, numbers at the exponent's bounds, nil pointers, custom messages.
func TestEventJSONIsTheMapsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 39))
	types := []EventType{AgentStart, AgentEnd, TurnStart, TurnEnd, MessageStart, MessageUpdate, MessageEnd,
		ToolExecutionStart, ToolExecutionUpdate, ToolExecutionEnd, "unknown"}
	byHand := 0
	for i := range 4000 {
		e := randomEvent(rng, types[i%len(types)])
		want, wantErr := json.Marshal(e.mapJSON())
		got, err := MarshalEvent(&e)
		if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%#v:\nMarshalEvent %s (%v)\nthe map      %s (%v)", e, got, err, want, wantErr)
		}
		viaJSON, err := json.Marshal(e)
		if (err == nil) != (wantErr == nil) || !bytes.Equal(viaJSON, want) {
			t.Fatalf("%#v:\njson.Marshal %s (%v)\nthe map      %s (%v)", e, viaJSON, err, want, wantErr)
		}
		if _, ok := eventJSON(&e); ok {
			byHand++
		}
	}
	if byHand < 2000 {
		t.Errorf("only %d of 4000 events written by hand", byHand)
	}
}

func randomEvent(rng *rand.Rand, typ EventType) Event {
	e := Event{Type: typ}
	switch typ {
	case AgentEnd:
		if rng.IntN(5) > 0 {
			for range rng.IntN(4) {
				e.Messages = append(e.Messages, randomMessage(rng))
			}
		}
	case TurnEnd:
		e.Message = randomMessage(rng)
		if rng.IntN(5) > 0 {
			e.ToolResults = []*ToolResultMessage{}
			for range rng.IntN(3) {
				m, _ := randomMessage(rng).(*ToolResultMessage)
				if m == nil && rng.IntN(3) > 0 {
					m = &ToolResultMessage{ToolCallID: "t<1>", Content: Text("ok")}
				}
				e.ToolResults = append(e.ToolResults, m)
			}
		}
	case MessageStart, MessageEnd:
		e.Message = randomMessage(rng)
	case MessageUpdate:
		e.Message = randomMessage(rng)
		if rng.IntN(6) > 0 {
			se := randomStreamEvent(rng)
			e.AssistantEvent = &se
		}
	default:
		e.ToolCallID, e.ToolName = randomText(rng), randomText(rng)
		if rng.IntN(4) > 0 {
			e.Args = randomArgs(rng)
		}
		e.PartialResult = randomToolResult(rng)
		e.Result = randomToolResult(rng)
		e.ResultUndefined = rng.IntN(4) == 0
		e.IsError = rng.IntN(2) == 0
		if rng.IntN(2) == 0 {
			d := rng.Int64N(1000)
			e.DurationMs = &d
		}
	}
	return e
}

func randomStreamEvent(rng *rand.Rand) StreamEvent {
	types := []StreamEventType{StreamStart, StreamTextStart, StreamTextDelta, StreamTextEnd, StreamThinkingStart,
		StreamThinkingDelta, StreamThinkingEnd, StreamToolCallStart, StreamToolCallDelta, StreamToolCallEnd, StreamDone, StreamError, "other"}
	se := StreamEvent{Type: types[rng.IntN(len(types))], ContentIndex: rng.IntN(3), Delta: randomText(rng), Content: randomText(rng),
		Reason: StopReason(randomText(rng))}
	if rng.IntN(4) > 0 {
		se.Partial = randomAssistant(rng)
	}
	if rng.IntN(4) > 0 {
		se.Message = randomAssistant(rng)
	}
	if rng.IntN(3) > 0 {
		se.ToolCall = &ToolCall{ID: randomText(rng), Name: randomText(rng), Arguments: randomArgs(rng)}
	}
	return se
}

func randomMessage(rng *rand.Rand) Message {
	switch rng.IntN(9) {
	case 0:
		return nil
	case 1:
		return &UserMessage{Text: randomText(rng), Timestamp: rng.Int64N(100)}
	case 2:
		return &SystemMessage{Text: randomText(rng)}
	case 3, 4:
		return randomAssistant(rng)
	case 5, 6:
		m := &ToolResultMessage{ToolCallID: randomText(rng), ToolName: "t", Content: Text(randomText(rng)), IsError: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			m.Details = randomArgs(rng)
		}
		return m
	case 7:
		if rng.IntN(2) == 0 {
			return (*UserMessage)(nil)
		}
		return &CustomMessage{Fields: map[string]any{"role": "note", "text": randomText(rng)}}
	}
	return &UserMessage{Blocks: []Block{TextContent{Text: randomText(rng)}, ImageContent{Data: "AA==", MimeType: "image/png"}}}
}

func randomAssistant(rng *rand.Rand) *AssistantMessage {
	m := &AssistantMessage{API: "faux", Provider: "faux", Model: "m", StopReason: StopReason(randomText(rng)), Timestamp: rng.Int64N(1e6)}
	if rng.IntN(3) > 0 {
		m.Content = []Block{TextContent{Text: randomText(rng)}, ThinkingContent{Thinking: randomText(rng), Redacted: rng.IntN(2) == 0},
			ToolCall{ID: "c1", Name: "n", Arguments: randomArgs(rng)}}
	}
	m.Usage.Cost.Total = randomFloat(rng)
	return m
}

func randomToolResult(rng *rand.Rand) *ToolResult {
	if rng.IntN(5) == 0 {
		return nil
	}
	r := &ToolResult{IsError: rng.IntN(2) == 0, Terminate: rng.IntN(3) == 0, TerminateSet: rng.IntN(2) == 0}
	if rng.IntN(4) > 0 {
		r.Content = Text(randomText(rng))
	}
	if rng.IntN(2) == 0 {
		r.Details = randomArgs(rng)
	}
	if rng.IntN(3) == 0 {
		r.StructuredContent = []any{randomFloat(rng), randomText(rng)}
	}
	if rng.IntN(3) == 0 {
		r.Usage = &Usage{Input: 3, Cost: Cost{Total: randomFloat(rng)}}
	}
	return r
}

func randomArgs(rng *rand.Rand) map[string]any {
	switch rng.IntN(6) {
	case 0:
		return nil
	case 1:
		return map[string]any{"n": rng.IntN(9)} // an int: left to encoding/json inside
	}
	return map[string]any{"z": randomFloat(rng), "a": randomText(rng), "list": []any{true, nil, randomText(rng)}, "o": map[string]any{}}
}

func randomText(rng *rand.Rand) string {
	texts := []string{"", "plain", "a<b>&c", "line\nbreak\t\"q\"", "\u2028\u2029", "bad\xffutf8", "é€😀", "\x01\x1f"}
	return texts[rng.IntN(len(texts))]
}

func randomFloat(rng *rand.Rand) float64 {
	fs := []float64{0, 1.5, -2, 1e21, 1e-7, 123456789.125, 1e20, -0.000001, math.Copysign(0, -1)}
	if rng.IntN(40) == 0 {
		return math.NaN()
	}
	return fs[rng.IntN(len(fs))]
}
