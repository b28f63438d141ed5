package conformance_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

var update = flag.Bool("update", false, "rewrite the worked example in PROTOCOL.md")

// exampleScenario is the worked example of PROTOCOL.md §11.
func exampleScenario() *sim.Scenario {
	return &sim.Scenario{
		Name:  "clock",
		Model: testModel,
		Tools: []sim.ToolSpec{{Name: "clock", Description: "Reads the clock", Parameters: map[string]any{"type": "object"},
			Behaviour: sim.Behaviour{Duration: 10, Result: loop.ToolResult{Content: loop.Text("12:00")},
				Updates: []sim.Update{{At: 4, Result: loop.ToolResult{Content: loop.Text("reading…")}}}}}},
		Hooks:   sim.Hooks{NoFollowUp: true},
		Prompts: []loop.Message{user("What time is it?")},
		Responses: []sim.Response{
			{Content: []loop.Block{call("t1", "clock", map[string]any{})}, Delay: 5},
			{Content: loop.Text("It is noon."), Delay: 5},
		},
	}
}

// TestProtocolExampleIsCurrent checks that the complete exchange shown in PROTOCOL.md is what
// the reference adapter says today; -update rewrites it.
func TestProtocolExampleIsCurrent(t *testing.T) {
	var log bytes.Buffer
	p := selfadapter.Process(t, "serve")
	p.Log = &log
	p.OneAtATime = true // §11 shows the plain exchange; §14 the deliveries sent ahead
	if _, err := sim.Run(exampleScenario(), p); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The reference's version depends on how the test binary was built: show it as "devel".
	got := strings.Replace(log.String(), `"version":"`+versionIn(log.String())+`"`, `"version":"devel"`, 1)

	doc, start, end := fencedAfter(t, "(`>` harness to adapter, `<` adapter to\nharness; recorded, not edited):")
	if string(doc[start:end]) == got {
		return
	}
	if *update {
		out := append(append(append([]byte{}, doc[:start]...), got...), doc[end:]...)
		if err := os.WriteFile("PROTOCOL.md", out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the worked example in PROTOCOL.md is out of date; run go test ./conformance -run TestProtocolExampleIsCurrent -update\nnow:\n%s", got)
}

// fencedAfter reads PROTOCOL.md and finds the first fenced block after marker: the doc and
// where the block's lines lie.
func fencedAfter(t *testing.T, marker string) (doc []byte, start, end int) {
	t.Helper()
	doc, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(doc, []byte(marker))
	if at < 0 {
		t.Fatalf("PROTOCOL.md: %q is missing", marker)
	}
	open := bytes.Index(doc[at:], []byte("```\n"))
	if open < 0 {
		t.Fatalf("PROTOCOL.md: no fenced block after %q", marker)
	}
	start = at + open + len("```\n")
	end = bytes.Index(doc[start:], []byte("```\n"))
	if end < 0 {
		t.Fatalf("PROTOCOL.md: the block after %q is not closed", marker)
	}
	return doc, start, start + end
}

func versionIn(log string) string {
	const key = `"name":"turnstile-reference","version":"`
	i := strings.Index(log, key)
	if i < 0 {
		return "devel"
	}
	rest := log[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')]
}

// TestProtocolAheadExampleIsCurrent checks the exchange §14 shows (elided by hand, so not
// rewritten by -update) against the worked example served with deliveries ahead: the same
// lines in the same order, by direction, message type and event type.
func TestProtocolAheadExampleIsCurrent(t *testing.T) {
	doc, start, end := fencedAfter(t, "Example (§11's first turn, ahead)")
	block := doc[start:end]
	types := regexp.MustCompile(`"type":"(\w+)"`)
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(block)), "\n") {
		if line == "…" {
			continue
		}
		shape := line[:1]
		for _, m := range types.FindAllStringSubmatch(line, 2) {
			shape += " " + m[1]
		}
		want = append(want, shape)
	}

	var log bytes.Buffer
	p := selfadapter.Process(t, "serve")
	p.Log = &log
	if _, err := sim.Run(exampleScenario(), p); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(log.String(), "\n")
	first := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, `> {"type":"answer","id":2,`) })
	if first < 0 || first+len(want) > len(lines) {
		t.Fatalf("no answer to call 2 with %d lines after it:\n%s", len(want), log.String())
	}
	var got []string
	for _, line := range lines[first : first+len(want)] {
		var m struct {
			Type         string
			Delivery     struct{ Data struct{ Type string } }
			Notification struct{ Data struct{ Type string } }
		}
		if err := json.Unmarshal([]byte(line[2:]), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		shape := line[:1] + " " + m.Type
		if ev := m.Delivery.Data.Type + m.Notification.Data.Type; ev != "" {
			shape += " " + ev
		}
		got = append(got, shape)
	}
	if !slices.Equal(got, want) {
		t.Errorf("PROTOCOL.md §14's example is out of date:\n doc: %q\n now: %q", want, got)
	}
}
