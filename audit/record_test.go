package audit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

var record = flag.Bool("record", false, "rerecord testdata/pi/*.events.jsonl by running pi (needs npm ci in conformance/adapters/pi)")

// recorded are the curated scenarios whose runs by pi are the audit's honest recordings:
// text, tools (sequential, parallel, updates, content null, unknown tool), truncation,
// aborts and errors, tool declarations in the transcript, queues, finishTurn, streams
// without start or done, and a run that fails.
var recorded = []string{
	"events/text-only", "events/tool-turn", "events/several-turns", "events/steering-turn-events",
	"tools-parallel/completion-order", "tools-parallel/interleaved-updates",
	"tools-sequential/updates", "tools-sequential/content-null", "tools-sequential/unknown-tool",
	"tools-sequential/validation-failure", "truncation/basic",
	"abort-error/abort-during-stream", "abort-error/abort-parallel-tools", "abort-error/stream-error",
	"abort-error/error-with-tool-calls", "abort-error/stream-throws-fails-run",
	"transcript/removal-only", "transcript/initial-declaration", "continue/undeclared-tools",
	"queues/follow-up-one-at-a-time", "finish-turn/continue-one-extra-request", "streaming/no-start",
	"streaming/no-start-no-done",
}

// TestRecordPi rewrites the recordings: each scenario run by pi 1.6.0 through its adapter,
// its loop events (pi's AgentEvents, as pi emitted them) one a line, as an app that logs
// agent events would write them. Run it with -record.
func TestRecordPi(t *testing.T) {
	if !*record {
		t.Skip("rerecord with: go test ./audit -run TestRecordPi -record")
	}
	adapter, err := filepath.Abs("../conformance/adapters/pi/adapter.mjs")
	if err != nil {
		t.Fatal(err)
	}
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sim.Scenario{}
	for _, f := range files {
		byName[f.Scenario.Name] = f.Scenario
	}
	pi := &protocol.Process{Command: []string{"node", adapter}, Stderr: os.Stderr, HelloTimeout: time.Minute}
	defer pi.Close()
	for _, name := range recorded {
		sc := byName[name]
		if sc == nil {
			t.Fatalf("no scenario %q", name)
		}
		tr, err := sim.Run(sc, pi)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var buf bytes.Buffer
		for _, e := range tr.Entries {
			if e.Kind != trace.KindEvent {
				continue
			}
			var v any
			if err := json.Unmarshal(e.Data, &v); err != nil {
				t.Fatal(err)
			}
			line, _ := json.Marshal(v)
			buf.Write(line)
			buf.WriteByte('\n')
		}
		out := filepath.Join("testdata", "pi", strings.ReplaceAll(name, "/", "--")+".events.jsonl")
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
