package trace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// source reads JSON lines entry by entry and restores their links with an Expander.
type source struct {
	r *trace.Reader
	x *trace.Expander
}

func newSource(jsonl []byte) *source {
	return &source{r: trace.NewReader(bytes.NewReader(jsonl), 0), x: trace.NewExpander()}
}

func (s *source) Next() (trace.Entry, error) {
	e, err := s.r.Next()
	if err != nil {
		return e, err
	}
	return s.x.Next(e)
}

// readAll is every entry of a source.
func readAll(t *testing.T, s trace.Source) *trace.Trace {
	t.Helper()
	tr := &trace.Trace{}
	for {
		e, err := s.Next()
		if errors.Is(err, io.EOF) {
			return tr
		}
		if err != nil {
			t.Fatal(err)
		}
		tr.Entries = append(tr.Entries, e)
	}
}

// TestExpanderIsExpand: every curated and many generated runs, read line by line and
// expanded entry by entry, are byte for byte the trace the world writes in full.
func TestExpanderIsExpand(t *testing.T) {
	for i, sc := range linearCorpus(t) {
		if testing.Short() && i%4 != 0 {
			continue
		}
		linear, _ := sim.Run(sc, sim.NewReference())
		full, _ := sim.RunFull(sc, sim.NewReference())
		if got, want := readAll(t, newSource(linear.JSONL())).JSONL(), full.JSONL(); !bytes.Equal(got, want) {
			d, _ := trace.FirstDivergence(trace.Lines(want), trace.Lines(got), 1)
			t.Fatalf("%s: read entry by entry, expanded:\n%s", sc.Name, d)
		}
		// The world's own entries, canonical, expand on their bytes alike, holding no recent
		// entry but the one before: every link names what the expander holds for links.
		x := trace.NewExpanderHolding(1)
		var inMemory trace.Trace
		for _, e := range linear.Entries {
			e, err := x.Next(e)
			if err != nil {
				t.Fatalf("%s: %v", sc.Name, err)
			}
			inMemory.Entries = append(inMemory.Entries, e)
		}
		if !bytes.Equal(inMemory.JSONL(), full.JSONL()) {
			t.Fatalf("%s: the world's entries expanded one by one, holding what links name, are not the trace in full", sc.Name)
		}
	}
}

// TestExpanderSaysWhatItNoLongerHolds: a link to an entry further back than the expander
// holds, and not one the linear form names, is an error saying so; the same link within
// reach expands.
func TestExpanderSaysWhatItNoLongerHolds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"seq":1,"t":0,"kind":"deliver","name":"streamEvent","target":"1","data":{"partial":{"content":[]},"type":"start"}}` + "\n")
	b.WriteString(`{"seq":2,"t":0,"kind":"deliver","name":"streamEvent","target":"1","data":{"partial":{"content":[{"text":"","type":"text"}]},"type":"text_start","contentIndex":0}}` + "\n")
	n := 2
	for ; n < 3000; n++ {
		fmt.Fprintf(&b, `{"seq":%d,"t":0,"kind":"event","name":"turn_start","data":{"type":"turn_start"}}`+"\n", n+1)
	}
	// Entry 2 is the stream's last delivery (a link of the linear form names it); entry 1 is not.
	near := fmt.Sprintf(`{"seq":%d,"t":0,"kind":"deliver","name":"streamEvent","target":"1","data":{"contentIndex":0,"delta":"x","type":"text_delta"},"link":{"advances":2}}`, n+1)
	far := fmt.Sprintf(`{"seq":%d,"t":0,"kind":"deliver","name":"streamEvent","target":"1","data":{"contentIndex":0,"delta":"x","type":"text_delta"},"link":{"advances":1}}`, n+1)
	tr := readAll(t, newSource([]byte(b.String()+near+"\n")))
	if last := string(tr.Entries[len(tr.Entries)-1].Data); !strings.Contains(last, `"text":"x"`) {
		t.Errorf("the stream's last delivery, 3,000 entries back: %s", last)
	}
	s := newSource([]byte(b.String() + far + "\n"))
	var err error
	for err == nil {
		_, err = s.Next()
	}
	if want := "entry 3001: the link refers to entry 1, further back than a trace read entry by entry is held"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestReaderRefusesWhatIsNoEntryInItsPlace: each way a line is not a trace entry in its
// place is an error at that line (and column, for JSON that breaks), after the entries
// before it were read.
func TestReaderRefusesWhatIsNoEntryInItsPlace(t *testing.T) {
	first := `{"seq":1,"t":0,"kind":"event","name":"agent_start"}` + "\n"
	for _, c := range []struct {
		text, want string
	}{
		{"nope\n", "line 2: not a trace entry (a JSON object with seq and kind)"},
		{"\n", "line 2: not a trace entry (a JSON object with seq and kind)"},
		{`{"seq":2}` + "\n", "line 2: not a trace entry (a JSON object with seq and kind)"},
		{`{"seq":1,"kind":"event"}` + "\n", "line 2: a second trace begins here (seq 1 again)"},
		{`{"seq":3,"kind":"event"}` + "\n", "line 2: not a trace entry in its place: seq 3 on line 2"},
		{`{"seq":2,"kind":"event","colour":1}` + "\n", `line 2: not a trace entry: json: unknown field "colour"`},
		{`{"seq":2,"kind":"event"} {}` + "\n", "line 2:26: invalid JSON: invalid character '{' after top-level value"},
		{`  {"seq":2,"kind":"event",}` + "\n", "line 2:27: invalid JSON: invalid character '}'"},
		{`{"seq":2,"kind":"event","data":` + strings.Repeat("[", 10_001) + "\n", "line 2:10031: the JSON nests more than 10,000 levels deep"},
		{`{"seq":2,"kind":"event","name":"` + strings.Repeat("x", 200) + `"}`, "line 2:201: the line is longer than 200 bytes"},
	} {
		limit := 0
		if strings.Contains(c.want, "longer than") {
			limit = 200
		}
		r := trace.NewReader(strings.NewReader(first+c.text), limit)
		if e, err := r.Next(); err != nil || e.Seq != 1 {
			t.Fatalf("%.80q: the first entry: %v", c.text, err)
		}
		_, err := r.Next()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80q: error %.200v, want %q", c.text, err, c.want)
		}
		if _, again := r.Next(); !errors.Is(again, io.EOF) {
			t.Errorf("%.80q: read on after the error: %v", c.text, again)
		}
	}
	// A line of exactly the limit, ended by CRLF or by the input's end, is read.
	line := `{"seq":1,"kind":"event","name":"` + strings.Repeat("x", 200-34) + `"}`
	for _, text := range []string{line + "\r\n", line} {
		if e, err := trace.NewReader(strings.NewReader(text), 200).Next(); err != nil || len(e.Name) != 200-34 {
			t.Errorf("a %d-byte line, limit 200: %v", len(line), err)
		}
	}
}

// diffCorpus is the JSON lines in full of a few curated runs.
func diffCorpus(t *testing.T) [][]string {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, sc := range scenarios.Scenarios(files) {
		if !strings.HasPrefix(sc.Name, "tools-parallel/") && !strings.HasPrefix(sc.Name, "queues/") || len(out) == 8 {
			continue
		}
		tr, _ := sim.RunFull(sc, sim.NewReference())
		out = append(out, trace.Lines(tr.JSONL()))
	}
	return out
}

// renumber writes lines (entries) with their seq their place.
func renumber(lines []string) []byte {
	var b bytes.Buffer
	for i, l := range lines {
		_, rest, _ := strings.Cut(l, ",")
		fmt.Fprintf(&b, `{"seq":%d,%s`+"\n", i+1, rest)
	}
	return b.Bytes()
}

// TestCompareStreamIsCompare: two traces, one edited (entries dropped, repeated, moved or
// changed), compare entry by entry as they compare whole: the same first difference, told
// in the same words.
func TestCompareStreamIsCompare(t *testing.T) {
	corpus := diffCorpus(t)
	rapid.Check(t, func(t *rapid.T) {
		want := corpus[rapid.IntRange(0, len(corpus)-1).Draw(t, "trace")]
		got := append([]string(nil), want...)
		for range rapid.IntRange(0, 3).Draw(t, "edits") {
			i := rapid.IntRange(0, len(got)-1).Draw(t, "at")
			switch rapid.IntRange(0, 3).Draw(t, "edit") {
			case 0:
				got = append(got[:i:i], got[i+1:]...)
			case 1:
				got = append(got[:i+1:i+1], got[i:]...)
			case 2:
				j := rapid.IntRange(0, len(got)-1).Draw(t, "to")
				got[i], got[j] = got[j], got[i]
			case 3:
				got[i] = strings.Replace(got[i], `"t":`, `"t":1`, 1)
			}
			if len(got) == 0 {
				return
			}
		}
		context := rapid.IntRange(0, 4).Draw(t, "context")
		a, b := renumber(want), renumber(got)
		if rapid.Bool().Draw(t, "swap") {
			a, b = b, a
		}
		wt, err1 := trace.ReadJSONL(a)
		gt, err2 := trace.ReadJSONL(b)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		whole := trace.Compare(wt, gt, trace.Strict)
		s, err := trace.CompareStream(newSource(a), newSource(b), trace.Strict, context)
		if err != nil {
			t.Fatal(err)
		}
		if s.Cut {
			t.Fatal("a short trace's window was cut")
		}
		if got, want := s.Text(context), whole.Text(context); got != want {
			t.Fatalf("entry by entry:\n%s\nwhole:\n%s", got, want)
		}
		at, ref := s.At()
		if k := whole.First(); k < 0 && at != 0 || k >= 0 && (ref != (whole.Steps[k].Op == trace.Missing)) {
			t.Fatalf("at %d (reference %v), whole: step %d", at, ref, k)
		}
	})
}

// TestCompareStreamWindow: past its window, CompareStream says the window was cut and still
// numbers the first difference in the traces; pairs that agree without being written alike
// (data written with other spacing) move the window on.
func TestCompareStreamWindow(t *testing.T) {
	entry := func(seq int, data string) string {
		return fmt.Sprintf(`{"seq":%d,"t":0,"kind":"call","name":"getSteeringMessages","data":%s,"answer":{"messages":[]}}`, seq, data)
	}
	var a, b bytes.Buffer
	for i := 1; i <= 1000; i++ {
		fmt.Fprintln(&a, entry(i, `{}`))
		switch {
		case i == 350:
			fmt.Fprintln(&b, entry(i, `{"x":1}`))
		case i > 20:
			fmt.Fprintln(&b, entry(i, `{ }`)) // the same value, written otherwise
		default:
			fmt.Fprintln(&b, entry(i, `{}`))
		}
	}
	s, err := trace.CompareStreamWithin(newSource(a.Bytes()), newSource(b.Bytes()), trace.Strict, 2, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if at, ref := s.At(); at != 350 || ref || !s.Cut {
		t.Fatalf("at %d (reference %v), cut %v", at, ref, s.Cut)
	}
	text := s.Text(2)
	for _, want := range []string{"first difference at entry 350:", "field data.x: (absent) vs 1", "the traces go on past them"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if whole := trace.Compare(mustRead(t, a.Bytes()), mustRead(t, b.Bytes()), trace.Strict); !strings.Contains(whole.Text(2), "first difference at entry 350:") {
		t.Errorf("compared whole:\n%s", whole.Text(2))
	}
}

func mustRead(t *testing.T, jsonl []byte) *trace.Trace {
	t.Helper()
	tr, err := trace.ReadJSONL(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A line is an entry only as written: a closing bracket after the object, or a member name
// in another case (which Go's decoder would take), is an error at that line.
func TestReaderRefusesWhatTheDecoderWouldForgive(t *testing.T) {
	for _, line := range []string{
		`{"seq":1,"t":0,"kind":"event","name":"agent_start"}]`,
		`{"seq":1,"t":0,"kind":"event","name":"agent_start"}` + "\v",
		`{"seq":1,"t":0,"kiNd":"event","name":"agent_start"}`,
		`{"seq":1,"T":0,"kind":"event","name":"agent_start"}`,
	} {
		if _, err := trace.ReadJSONL([]byte(line + "\n")); err == nil || !strings.HasPrefix(err.Error(), "line 1") {
			t.Errorf("%q: %v, want an error at line 1", line, err)
		}
	}
	if _, err := trace.ReadJSONL([]byte(`{"seq":1,"t":0,"kind":"event","name":"agent_start","data":{"Kind":1}}` + "\n")); err != nil {
		t.Errorf("a member of the data named in another case: %v", err)
	}
}
