package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCheck feeds audit mutated recordings (pi's events and sessions, a turnstile trace): it
// must never panic, and a recording it cannot read is an *InputError at a line and column
// within the input.
func FuzzCheck(f *testing.F) {
	paths, _ := filepath.Glob("testdata/pi/*.jsonl")
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil && len(data) < 16<<10 {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"seq":1,"t":0,"kind":"event","name":"agent_start","data":{"type":"agent_start"}}` + "\n" +
		`{"seq":2,"t":0,"kind":"end","name":"run","data":{"messages":[]}}` + "\n"))
	f.Add([]byte("\x00\x00\n"))
	f.Add([]byte("{\"type\":\"agent_start\"}\r\n" + strings.Repeat("{", 100)))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum, err := Check(bytes.NewReader(data), Options{MaxLine: 4096}, func(Finding) {})
		lines := bytes.Count(data, []byte("\n")) + 1
		if sum.Lines > lines {
			t.Fatalf("%d lines read of %d", sum.Lines, lines)
		}
		if err == nil {
			return
		}
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("not an input error: %v", err)
		}
		if ie.Line < 1 || ie.Line > lines || ie.Col < 1 {
			t.Fatalf("error at %d:%d of %d lines: %v", ie.Line, ie.Col, lines, err)
		}
	})
}
