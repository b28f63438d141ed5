package trace_test

import (
	"bytes"
	"fmt"
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
		if space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }; space(want[pos]) && space(b) {
			return // whitespace between JSON tokens is no difference
		}
		got := bytes.Clone(want)
		got[pos] = b
		entry := bytes.Count(want[:pos], []byte("\n")) + 1
		wt, err := trace.ReadJSONL(want)
		if err != nil {
			t.Fatal(err)
		}
		gt, err := trace.ReadJSONL(got)
		if err != nil {
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("line %d:", entry)) && b != '\n' && want[pos] != '\n' {
				t.Fatalf("byte %d changed to %q: %v, want an error at line %d", pos, b, err, entry)
			}
			return
		}
		for _, pair := range [][2]*trace.Trace{{wt, gt}, {gt, wt}} {
			c := trace.Compare(pair[0], pair[1], trace.Strict)
			k := c.First()
			if k < 0 {
				t.Fatalf("byte %d changed to %q: called identical", pos, b)
			}
			if s := c.Steps[k]; s.Want+1 != entry && s.Got+1 != entry {
				t.Fatalf("byte %d (entry %d) changed to %q: first difference at %+v\n%s", pos, entry, b, s, c.Text(1))
			}
		}
	})
}

func TestComparisonTextNamesTheField(t *testing.T) {
	want := []byte(`{"seq":1,"t":0,"kind":"event","name":"agent_start","data":{"type":"agent_start"}}` + "\n" +
		`{"seq":2,"t":5,"kind":"call","name":"finishTurn","data":{"a":[1,2]},"answer":{"action":"end"}}` + "\n")
	wt, err := trace.ReadJSONL(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, text string }{
		{`"t":5`, `"t":6`, "field t: 5 vs 6"},
		{`[1,2]`, `[1,2.0]`, "field data.a[1]: 2 vs 2.0"},
		{`"action":"end"`, `"action":"continue"`, `field answer.action: "end" vs "continue"`},
		{`,"answer":{"action":"end"}`, ``, `field answer: {"action":"end"} vs (absent)`},
		{`"kind":"call"`, `"kind":"cal"`, "  - "},
	} {
		gt, err := trace.ReadJSONL(bytes.Replace(want, []byte(c.from), []byte(c.to), 1))
		if err != nil {
			t.Fatal(err)
		}
		cmp := trace.Compare(wt, gt, trace.Strict)
		if text := cmp.Text(1); cmp.Equal() || !strings.Contains(text, "entry 2") || !strings.Contains(text, c.text) {
			t.Errorf("%s -> %s:\n%s", c.from, c.to, text)
		}
	}
	short, _ := trace.ReadJSONL(want[:bytes.IndexByte(want, '\n')+1])
	if text := trace.Compare(wt, short, trace.Strict).Text(1); !strings.Contains(text, "reference entry 2") || !strings.Contains(text, "  - ") {
		t.Errorf("a shorter trace:\n%s", text)
	}
}

// TestComparisonTextSaysAnEntryMoved swaps two entries and moves one back: the difference
// names where the other trace has the entry, not a loss.
func TestComparisonTextSaysAnEntryMoved(t *testing.T) {
	line := func(seq int, name string) string {
		return fmt.Sprintf(`{"seq":%d,"t":0,"kind":"call","name":%q,"data":{}}`+"\n", seq, name)
	}
	read := func(names ...string) *trace.Trace {
		var b strings.Builder
		for i, n := range names {
			b.WriteString(line(i+1, n))
		}
		tr, err := trace.ReadJSONL([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	ref := read("a", "b", "c", "d", "e")
	for _, c := range []struct {
		got  []string
		want string
	}{
		{[]string{"a", "c", "b", "d", "e"}, "(moved: the actual trace has it later, at entry 3)"},
		{[]string{"a", "d", "b", "c", "e"}, "(moved: the reference has it later, at entry 4)"},
		// Moved later past entries the actual trace lacks: later by the alignment, though at a
		// smaller index than the reference's.
		{[]string{"a", "e", "d"}, "(moved: the actual trace has it later, at entry 3)"},
	} {
		if text := trace.Compare(ref, read(c.got...), trace.Strict).Text(1); !strings.Contains(text, c.want) {
			t.Errorf("%v: want %q in\n%s", c.got, c.want, text)
		}
	}
	if text := trace.Compare(ref, read("a", "b", "d", "e", "x"), trace.Strict).Text(1); strings.Contains(text, "moved") {
		t.Errorf("an entry lost and another added is not a move:\n%s", text)
	}
}
