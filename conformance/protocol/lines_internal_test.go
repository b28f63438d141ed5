package protocol

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestLinesWrittenByHandAreTheMessages: the answer and deliver lines the harness writes
// without encoding/json decode to the messages encoding/json would have written.
func TestLinesWrittenByHandAreTheMessages(t *testing.T) {
	data := []json.RawMessage{nil, json.RawMessage(`{}`), json.RawMessage(`{"a":"<b> & é \u2028","n":[1,2.5,null]}`)}
	for _, d := range data {
		for _, abort := range []bool{false, true} {
			got, err := answerLine(7, sim.Answer{Data: d, Abort: abort})
			if err != nil {
				t.Fatal(err)
			}
			wantData := d
			if len(wantData) == 0 {
				wantData = json.RawMessage("null")
			}
			want, _ := encode(Message{Type: TypeAnswer, ID: 7, Data: wantData, Abort: abort})
			sameJSON(t, got, want)
		}
		for _, target := range []string{"", "t1", `a"<é>`} {
			dl := sim.Delivery{Kind: trace.DeliverToolResult, Now: 42, Target: target, Data: d}
			got, err := deliverLine(3, &dl)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := encode(Message{Type: TypeDeliver, Session: 3, Delivery: &dl})
			sameJSON(t, got, want)
		}
	}
}

func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	if !bytes.HasSuffix(got, []byte("\n")) || bytes.Count(got, []byte("\n")) != 1 {
		t.Fatalf("not one line: %q", got)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	_ = json.Unmarshal(want, &w)
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
