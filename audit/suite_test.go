package audit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// auditSuite runs every curated scenario against impl and audits each trace: no finding,
// and a note only for a run that failed (agentLoop emits no agent_end then).
func auditSuite(t *testing.T, impl sim.Implementation) {
	t.Helper()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		tr, err := sim.Run(f.Scenario, impl)
		if err != nil {
			t.Fatalf("%s: %v", f.Scenario.Name, err)
		}
		sum, err := Check(bytes.NewReader(tr.JSONL()), Options{}, func(x Finding) {
			t.Errorf("%s: %s", f.Scenario.Name, x)
		})
		if err != nil {
			t.Errorf("%s: %v", f.Scenario.Name, err)
		}
		// A run that started and failed ends inside the run: a note. (A continue that
		// refuses to start fails with no event at all.)
		failed := tr.Entries[len(tr.Entries)-1].Error != ""
		started := false
		for _, e := range tr.Entries {
			started = started || e.Kind == trace.KindEvent
		}
		if sum.Format != Trace || (len(sum.Notes) > 0) != (failed && started) {
			t.Errorf("%s: format %q, notes %q, run failed %v", f.Scenario.Name, sum.Format, sum.Notes, failed)
		}
	}
}

// The reference's run of every curated scenario passes the audit.
func TestReferenceOnTheSuite(t *testing.T) { auditSuite(t, sim.NewReference()) }

// pi's own run of every curated scenario passes the audit (needs node and
// `npm ci --prefix conformance/adapters/pi`, as CI has).
func TestPiOnTheSuite(t *testing.T) {
	adapter, _ := filepath.Abs("../conformance/adapters/pi/adapter.mjs")
	if _, err := os.Stat(filepath.Join(filepath.Dir(adapter), "node_modules")); err != nil {
		t.Skip("pi's adapter is not installed: npm ci --prefix conformance/adapters/pi")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	// A generous hello limit: node starts slowly on a loaded machine.
	pi := &protocol.Process{Command: []string{"node", adapter}, Stderr: os.Stderr, HelloTimeout: time.Minute}
	defer pi.Close()
	auditSuite(t, pi)
}
