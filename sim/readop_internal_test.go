package sim

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// FuzzReadOp holds readOp, an operation's delivery data read by hand, to what encoding/json
// reads of it (opJSON, its messages decoded by loop.DecodeMessage).
func FuzzReadOp(f *testing.F) {
	for _, s := range []string{
		`{"op":"prompt","text":"hello <you> & me"}`,
		`{"messages":[{"content":"hi","role":"user","timestamp":3},{"content":[{"text":"a","type":"text"}],"role":"user","timestamp":4}],"op":"prompt"}`,
		`{"messages":[],"op":"prompt"}`,
		`{"messages":null,"op":"prompt"}`,
		`{"message":{"content":"steer","role":"user","timestamp":7},"op":"steer"}`,
		`{"message":{"content":"x","role":"custom","timestamp":7},"op":"followUp"}`,
		`{"op":"steer"}`,
		`{"op":"setTools","tools":["read","write"]}`,
		`{"op":"setTools","tools":[]}`,
		`{"mode":"all","op":"setSteeringMode"}`,
		`{"op":"clearQueues","queue":"steering"}`,
		`{"barrier":"b1","op":"release"}`,
		`{"op":"abort","op":"reset"}`,
		`{"Op":"abort"}`,
		`{"op":"continue","extra":1}`,
		` {"op" : "waitForIdle"} `,
		`{"message":{"content":[{"text":"t","type":"text"}],"role":"assistant","api":"faux","model":"m","provider":"p","stopReason":"stop","timestamp":1,"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}},"op":"steer"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := readOp(data)
		if !ok {
			return
		}
		var wire opJSON
		if err := json.Unmarshal(data, &wire); err != nil {
			t.Fatalf("%s: read by hand, encoding/json fails: %v", data, err)
		}
		want := wire.decoded()
		if !reflect.DeepEqual(got.opFields, want.opFields) || got.hasMessages != want.hasMessages ||
			!reflect.DeepEqual(got.messages, want.messages) || fmt.Sprint(got.messagesErr) != fmt.Sprint(want.messagesErr) ||
			!reflect.DeepEqual(got.message, want.message) || fmt.Sprint(got.messageErr) != fmt.Sprint(want.messageErr) {
			t.Fatalf("%s:\nby hand       %#v\nencoding/json %#v", data, got, want)
		}
	})
}

// FuzzReadStreamEnd holds readStreamEnd, a streamEnd delivery read by hand, to what
// encoding/json reads of it (streamEndJSON).
func FuzzReadStreamEnd(f *testing.F) {
	for _, s := range []string{
		`{"message":{"api":"faux","content":[{"text":"answer <1>","type":"text"},{"arguments":{"path":"a"},"id":"c1","name":"read","type":"toolCall"}],"model":"faux-1","provider":"faux","role":"assistant","stopReason":"toolUse","timestamp":0,"usage":{"cacheRead":0,"cacheWrite":0,"cost":{"cacheRead":0,"cacheWrite":0,"input":0,"output":0,"total":0},"input":1,"output":2,"totalTokens":3}}}`,
		`{"message":{"content":[],"role":"assistant","stopReason":"aborted","errorMessage":"stopped"}}`,
		`{"message":{"content":"hi","role":"user"}}`,
		`{"message":null}`,
		`{}`,
		`{"message":{"role":"assistant"},"message":{"role":"assistant"}}`,
		`{"Message":{"role":"assistant"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := readStreamEnd(data)
		if !ok {
			return
		}
		var want streamEndJSON
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("%s: read by hand, encoding/json fails: %v", data, err)
		}
		if !reflect.DeepEqual(got, want.Message) {
			t.Fatalf("%s:\nby hand       %#v\nencoding/json %#v", data, got, want.Message)
		}
	})
}
