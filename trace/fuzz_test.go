package trace_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// FuzzReader feeds the trace reader mutated JSON lines (curated runs, in the linear form and
// in full): it must never panic; an error names its line (or its entry, for a link); what
// it reads is what ReadJSONL and Expand read; and a trace compared with itself entry by
// entry is identical.
func FuzzReader(f *testing.F) {
	files, err := scenarios.Suite()
	if err != nil {
		f.Fatal(err)
	}
	for _, sc := range scenarios.Scenarios(files) {
		if !strings.HasPrefix(sc.Name, "events/") && sc.Name != "tools-parallel/after-hook-at-completion" {
			continue
		}
		linear, _ := sim.Run(sc, sim.NewReference())
		full, _ := sim.RunFull(sc, sim.NewReference())
		f.Add(linear.JSONL())
		f.Add(full.JSONL())
	}
	f.Add([]byte("{\"seq\":1,\"kind\":\"event\"}\r\n{\"seq\":2,\"kind\":\"event\",}\n"))
	f.Add([]byte("{\"seq\":1,\"kind\":\"event\",\"data\":" + strings.Repeat("[", 10_001)))
	f.Add([]byte("\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newSource(data)
		var got trace.Trace
		var readErr error
		for {
			e, err := s.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				readErr = err
				break
			}
			if e.Seq != len(got.Entries)+1 || e.Link != nil {
				t.Fatalf("entry %d read as seq %d, link %v", len(got.Entries)+1, e.Seq, e.Link)
			}
			got.Entries = append(got.Entries, e)
		}
		read, err := trace.ReadJSONL(data)
		var re *trace.ReadError
		switch {
		case errors.As(readErr, &re):
			// The lines before it are entries: read whole, the same line is the first error.
			if err == nil || err.Error() != readErr.Error() || re.Line < 1 || re.Col < 0 {
				t.Fatalf("read entry by entry: %v; whole: %v", readErr, err)
			}
			return
		case readErr != nil && err != nil:
			// A link that does not resolve stops the reading there; read whole, a later line
			// may be the first error.
			if !errors.As(err, &re) || re.Line <= len(got.Entries)+1 {
				t.Fatalf("entry %d: %v; read whole: %v", len(got.Entries)+1, readErr, err)
			}
			return
		case err != nil:
			t.Fatalf("read whole: %v, entry by entry: %v", err, readErr)
		}
		full, expandErr := read.Expand()
		if (readErr == nil) != (expandErr == nil) || readErr != nil && readErr.Error() != expandErr.Error() {
			t.Fatalf("expanded entry by entry: %v; whole: %v", readErr, expandErr)
		}
		if readErr != nil {
			return
		}
		if !bytes.Equal(got.JSONL(), full.JSONL()) {
			t.Fatalf("expanded entry by entry:\n%s\nwhole:\n%s", got.JSONL(), full.JSONL())
		}
		c, err := trace.CompareStream(newSource(data), newSource(data), trace.Strict, 2)
		if err != nil {
			t.Fatal(err)
		}
		if at, _ := c.At(); at != 0 {
			t.Fatalf("a trace differs from itself at entry %d:\n%s", at, c.Text(2))
		}
	})
}
