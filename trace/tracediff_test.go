package trace_test

import (
	"bytes"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestEveryOneByteChangeIsADifference mutates one byte of a trace's JSON lines anywhere and
// requires the divergence at the entry holding that byte, with the field (or the bytes)
// that differ named.
func TestEveryOneByteChangeIsADifference(t *testing.T) {
	var traces [][]byte
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		sc := f.Scenario
		if !strings.HasPrefix(sc.Name, "tools-parallel/") || len(traces) == 4 {
			continue
		}
		tr, err := sim.Run(sc, sim.NewReference())
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, tr.JSONL())
	}
	rapid.Check(t, func(t *rapid.T) {
		want := traces[rapid.IntRange(0, len(traces)-1).Draw(t, "trace")]
		pos := rapid.IntRange(0, len(want)-1).Draw(t, "pos")
		b := rapid.Byte().Filter(func(b byte) bool { return b != want[pos] }).Draw(t, "byte")
		got := bytes.Clone(want)
		got[pos] = b
		for _, pair := range [][2][]byte{{want, got}, {got, want}} {
			d, differ := trace.FirstTraceDivergence(pair[0], pair[1], 3)
			if !differ {
				t.Fatalf("byte %d changed to %q: called identical", pos, b)
			}
			entry := bytes.Count(want[:pos], []byte("\n")) + 1
			if d.Entry != entry {
				t.Fatalf("byte %d (entry %d) changed to %q: divergence at entry %d", pos, entry, b, d.Entry)
			}
			if d.Field == "" && !d.WantEnd && !d.GotEnd {
				t.Fatalf("byte %d changed to %q: no field named:\n%s", pos, b, d)
			}
		}
	})
}

func TestTraceDivergenceNamesTheField(t *testing.T) {
	want := []byte(`{"seq":1,"t":0,"kind":"event","name":"agent_start","data":{"type":"agent_start"}}` + "\n" +
		`{"seq":2,"t":5,"kind":"call","name":"finishTurn","data":{"a":[1,2]},"answer":{"action":"end"}}` + "\n")
	for _, c := range []struct{ from, to, field string }{
		{`"t":5`, `"t":6`, "field t: 5 vs 6"},
		{`"seq":2`, `"seq":3`, "field seq: 2 vs 3"},
		{`[1,2]`, `[1,2.0]`, "field data.a[1]: 2 vs 2.0"},
		{`"action":"end"`, `"action":"continue"`, `field answer.action: "end" vs "continue"`},
		{`,"answer":{"action":"end"}`, ``, `field answer: {"action":"end"} vs (absent)`},
		{`"kind":"call"`, `"kind":"cal"`, `field kind: "call" vs "cal"`},
		{`"end"}}` + "\n", `"end"}} ` + "\n", "equal JSON values but differ in their bytes"},
		{`"seq":2,`, `"seq":2;`, "the lines differ at byte 9"},
	} {
		got := bytes.Replace(want, []byte(c.from), []byte(c.to), 1)
		d, differ := trace.FirstTraceDivergence(want, got, 1)
		if !differ || d.Entry != 2 || !strings.Contains(d.String(), c.field) {
			t.Errorf("%s -> %s: %v\n%s", c.from, c.to, differ, d)
		}
	}
	d, differ := trace.FirstTraceDivergence(want, want[:bytes.IndexByte(want, '\n')+1], 1)
	if !differ || d.Entry != 2 || !d.GotEnd || !strings.Contains(d.String(), "+ (end: no more entries)") {
		t.Errorf("a shorter trace: %v\n%s", differ, d)
	}
}
