package sim

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

// roomScenarios are runs of the benchmark's shapes and a few more: parallel tool calls,
// many turns, many text deltas, and a mix.
func roomScenarios() []*Scenario {
	tool := func(name string) ToolSpec {
		return ToolSpec{Name: name, Description: "d", Parameters: map[string]any{"type": "object"},
			Behaviour: Behaviour{Result: loop.ToolResult{Content: loop.Text("ok"), Details: map[string]any{}}}}
	}
	calls := func(turns, width int) *Scenario {
		sc := &Scenario{Name: fmt.Sprintf("%dx%d", turns, width), Prompts: []loop.Message{&loop.UserMessage{Text: "go"}}}
		for i := range width {
			sc.Tools = append(sc.Tools, tool(fmt.Sprintf("t%d", i)))
		}
		for n := range turns {
			var content []loop.Block
			for i := range width {
				content = append(content, loop.ToolCall{ID: fmt.Sprintf("c%d-%d", n, i), Name: fmt.Sprintf("t%d", i), Arguments: map[string]any{"i": float64(n)}})
			}
			sc.Responses = append(sc.Responses, Response{Content: content})
		}
		sc.Responses = append(sc.Responses, Response{Content: loop.Text("done")})
		sc.Budget.Bytes = 1 << 30
		return sc
	}
	deltas := &Scenario{Name: "deltas", Prompts: []loop.Message{&loop.UserMessage{Text: "go"}},
		Responses: []Response{{Content: loop.Text(strings.Repeat("x", 1000)), DeltaSize: 1}}}
	mixed := calls(20, 1)
	for i := range mixed.Responses {
		mixed.Responses[i].Content = append([]loop.Block{loop.TextContent{Text: strings.Repeat("words ", 40)}}, mixed.Responses[i].Content...)
		mixed.Responses[i].DeltaSize = 7
	}
	return []*Scenario{calls(10, 2), calls(100, 1), calls(3, 5), deltas, mixed}
}

// TestArenaAndLinksLeaveLittleRoom: the arena's chunks are sized for what the run is expected
// to record yet, so that its last chunk is not left mostly unused, and the
// trace's room for entries, the memo's for messages and the contexts' are about what the run
// takes.
func TestArenaAndLinksLeaveLittleRoom(t *testing.T) {
	for _, sc := range roomScenarios() {
		w := newWorld(sc)
		// A new encoder: one a run gave back starts in what its arena's last chunk left.
		w.enc = newFreshEncoder(min(expectedMessages(sc), 1<<12))
		tr, err := w.play(NewReference(), false) // run, without giving the encoder to the next
		if err != nil || tr.Failed() {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		arena := w.enc.spent + len(w.enc.arena)
		if left := cap(w.enc.arena) - len(w.enc.arena); left > max(firstChunk, arena/8) {
			t.Errorf("%s: the arena's last chunk leaves %d bytes of %d unused (%d written)", sc.Name, left, cap(w.enc.arena), arena)
		}
		if n, room := len(tr.Entries), cap(tr.Entries); room > n+n/8+8 || room < n {
			t.Errorf("%s: room for %d entries, %d recorded", sc.Name, room, n)
		}
		if n, room := w.enc.memo.n, len(w.enc.memo.keys); 2*n > room || room > 4*memoSize(expectedMessages(sc)) {
			t.Errorf("%s: memo of %d slots for %d messages", sc.Name, room, n)
		}
		if l, room := w.lin.streamList, min(expectedMessages(sc), 1<<12); cap(l.encs) != room || cap(l.msgs) != room || len(l.encs) > room {
			t.Errorf("%s: the stream calls' context holds %d messages in room for %d (%d made)", sc.Name, len(l.encs), cap(l.encs), room)
		}
		t.Logf("%s: arena %d of %d, entries %d of %d, memo %d of %d", sc.Name,
			arena, w.enc.spent+cap(w.enc.arena), len(tr.Entries), cap(tr.Entries), w.enc.memo.n, len(w.enc.memo.keys))
		w.recycle()
	}
}

// TestReusedEncodersWriteAsNewOnes: a run whose encoder an earlier run gave back (its memo's
// tables, its heads' buffers, its arena's last chunk), and whose Reference's streams and tool
// calls come from chunks earlier runs gave back, records the trace a run with a new encoder
// records, whatever ran before it; and the earlier run's trace stays as it was.
func TestReusedEncodersWriteAsNewOnes(t *testing.T) {
	scenarios := roomScenarios()
	fresh := func(sc *Scenario) []byte {
		w := newWorld(sc)
		w.enc = newFreshEncoder(expectedMessages(sc))
		tr, err := w.play(NewReference(), false)
		if err != nil {
			t.Fatal(err)
		}
		return tr.JSONL()
	}
	want := make([][]byte, len(scenarios))
	for i, sc := range scenarios {
		want[i] = fresh(sc)
	}
	for round := range 3 {
		var traces []*Scenario
		var got [][]byte
		var kept []func() []byte
		for k := range 2 * len(scenarios) {
			i := (k*(round+2) + round) % len(scenarios) // each after different ones
			tr, err := Run(scenarios[i], NewReference())
			if err != nil {
				t.Fatal(err)
			}
			traces = append(traces, scenarios[i])
			got = append(got, tr.JSONL())
			kept = append(kept, tr.JSONL)
			if !bytes.Equal(got[k], want[i]) {
				t.Fatalf("round %d, run %d (%s): the trace differs from a new encoder's", round, k, scenarios[i].Name)
			}
		}
		for k, again := range kept {
			if !bytes.Equal(again(), got[k]) {
				t.Fatalf("round %d, run %d (%s): the trace changed after later runs", round, k, traces[k].Name)
			}
		}
	}
}
