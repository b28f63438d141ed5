package loop

import (
	"reflect"
	"strings"
	"testing"
)

// decodeSeeds are messages of every role and field, and texts encoding/json decodes
// otherwise than a careless reader would (a key in other case, one written twice, a number
// with a fraction into an int64, nulls, escapes).
var decodeSeeds = []string{
	`{"content":"hi","role":"user","timestamp":1}`,
	`{"content":[{"text":"a","type":"text"},{"data":"AAA","mimeType":"image/png","type":"image"}],"role":"user","timestamp":1733000000000}`,
	`{"content":"be brief","role":"system","timestamp":0,"toolsAdded":[{"description":"d","name":"t","parameters":{"properties":{},"type":"object"}}],"toolsRemoved":[{"name":"u"}]}`,
	`{"content":[],"role":"system","timestamp":0,"toolsAdded":[],"toolsRemoved":[]}`,
	`{"content":"x","role":"system","sections":{"a":"b","c":null},"timestamp":0}`,
	`{"api":"faux","content":[{"thinking":"hm","thinkingSignature":"s","redacted":true,"type":"thinking"},{"arguments":{"n":1.5,"s":"x","l":[1,true,null]},"id":"c1","name":"t","type":"toolCall"}],"model":"faux-1","provider":"faux","role":"assistant","stopReason":"toolUse","timestamp":3,"usage":{"cacheRead":0,"cacheWrite":0,"cost":{"cacheRead":0,"cacheWrite":0,"input":0.25,"output":1e-7,"total":3},"input":10,"output":5,"totalTokens":15}}`,
	`{"api":"a","content":[],"durationMs":12,"endTurn":false,"errorMessage":"e","model":"m","provider":"p","providerThinkingLevel":"low","rawStopReason":"r","responseId":"i","responseModel":"rm","role":"assistant","stopReason":"error","thinkingLevel":"high","timestamp":-4,"usage":{"cacheRead":1,"cacheWrite":2,"cacheWrite1h":3,"cost":{"cacheRead":0,"cacheWrite":0,"input":0,"output":0,"total":0,"totalFromProvider":true},"input":4,"output":5,"reasoning":6,"totalTokens":7}}`,
	`{"content":[{"text":"out","type":"text"}],"details":{"k":[1,2]},"durationMs":3,"isError":true,"role":"toolResult","timestamp":9,"toolCallId":"c1","toolName":"t","usage":{"input":1}}`,
	`{"content":[{"arguments":null,"argumentsError":"bad","id":"c","name":"n","namespace":"ns","thoughtSignature":"ts","type":"toolCall"}],"role":"assistant","stopReason":"stop","timestamp":1}`,
	`{"content":null,"role":"assistant","timestamp":1}`,
	`{"role":"assistant"}`,
	`{"role":"custom","x":1}`,
	`{"content":"hi","role":"user","Timestamp":2}`,
	`{"content":"hi","role":"user","timestamp":1,"timestamp":2}`,
	`{"content":"hi","role":"user","timestamp":1.0}`,
	`{"content":"hi","role":"user","timestamp":1e3}`,
	`{"content":"hi","role":"user","timestamp":99999999999999999999}`,
	`{"content":"hi","role":"user","timestamp":null}`,
	`{"content":"a\nb\u00e9\ud83d\ude00","role":"user","timestamp":1}`,
	`{"content":"\xff","role":"user","timestamp":1}`,
	`{"content":"hi","role":"user","timestamp":1} x`,
	` { "content" : "hi" , "role" : "user" , "timestamp" : 1 } `,
	`{"content":"hi","\u0072ole":"user","timestamp":1}`,
	`{"content":[{"text":"a","type":"thinking"}],"role":"user","timestamp":1}`,
	`{"content":[{"text":"a","type":"video"}],"role":"user","timestamp":1}`,
	`{"content":[{"text":"a"}],"role":"user","timestamp":1}`,
	`{"content":[{"arguments":[],"id":"c","name":"n","type":"toolCall"}],"role":"assistant","timestamp":1}`,
	`{"content":"x","role":"assistant","timestamp":1}`,
	`{"content":[],"role":"toolResult","timestamp":1,"toolCallId":"c","toolName":"t","isError":"no"}`,
	`{"content":[],"role":"toolResult","timestamp":1,"toolCallId":"c","toolName":"t","usage":null}`,
	`{"content":[],"role":"toolResult","timestamp":1,"toolCallId":"c","toolName":"t","details":null}`,
	`{"content":[{"text":"a","type":"text","type":"text"}],"role":"user","timestamp":1}`,
	`{"content":"hi","role":"user","timestamp":-0}`,
	`{"content":"hi","role":"user","timestamp":-9223372036854775808}`,
	`{"content":"hi","role":"user","timestamp":9223372036854775808}`,
	`{"role":"user","content":"hi","timestamp":01}`,
	`[]`,
	`{}`,
	`{"role":"system","toolsRemoved":[{"name":""},{}]}`,
	`{"role":"assistant","usage":{"cost":{"total":1e400}}}`,
}

// FuzzDecodeMessage holds the decoding by hand to encoding/json's: where it reads a text, it
// gives the same message.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeMessageFast(data)
		if !ok {
			return
		}
		want, err := decodeMessageJSON(data)
		if err != nil {
			t.Fatalf("%s: read by hand as %#v, but encoding/json fails: %v", data, fast, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("%s:\nby hand       %#v\nencoding/json %#v", data, fast, want)
		}
	})
}

// TestDecodeMessageByHand checks that the common messages are read by hand, not left to
// encoding/json: what makes DecodeMessage cheap.
func TestDecodeMessageByHand(t *testing.T) {
	for _, s := range decodeSeeds[:9] {
		if strings.Contains(s, "sections") {
			continue // left to encoding/json
		}
		if _, ok := decodeMessageFast([]byte(s)); !ok {
			t.Errorf("left to encoding/json: %s", s)
		}
	}
}
