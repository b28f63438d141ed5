package example_test

import (
	"context"
	"os"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestConformance is all a Go port needs: the curated suite, in-process, one subtest per
// scenario.
func TestConformance(t *testing.T) { porttest.Test(t, example.Port{}) }

// TestARepeatedToolCallIDGetsItsUpdates: a model may give a tool call the id of one in an
// earlier turn. The updates of the second call reach it, in-process and served over the
// protocol, although the first call with that id settled long before (updates to a settled
// call are dropped, as pi drops them). Found by explore against the example adapter.
func TestARepeatedToolCallIDGetsItsUpdates(t *testing.T) {
	f, err := scenarios.Parse("repeated-id.yaml", "repeated-id.yaml", []byte(`name: repeated-tool-call-id
tools:
  - {"name":"read","description":"the read tool","parameters":{"type":"object"},"behaviour":{"result":"ok"}}
  - {"name":"write","description":"the write tool","parameters":{"type":"object"},"behaviour":{"updates":[{"at":0,"result":"write 1"}],"result":"ok"}}
context:
  - "please retry"
hooks:
  steering: false
  followUp: false
provider:
  - {"content":[{"toolCall":{"id":"c3","name":"read"}}]}
  - {"content":[{"toolCall":{"id":"c3","name":"write"}}]}
  - "done"
run: []
`))
	if err != nil {
		t.Fatal(err)
	}
	porttest.TestFiles(t, example.Port{}, []*scenarios.File{f})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	served := &protocol.Process{Command: []string{exe}, Env: []string{serveEnv + "=1"}}
	defer served.Close()
	report := conformance.Verify(context.Background(), []*sim.Scenario{f.Scenario}, served, conformance.Options{})
	if report.Failed != 0 || report.Passed != 1 {
		t.Errorf("served over the protocol: %d passed, %d failed", report.Passed, report.Failed)
	}
}

// TestAgentConformance: the example Agent passes the whole curated suite, Agent scenarios
// included.
func TestAgentConformance(t *testing.T) { porttest.Test(t, example.AgentPort{}) }

// TestRunToolCallScenariosRunInProcess: the example loop and Agent have RunToolCall, so the
// runToolCall scenarios run and pass in-process rather than being skipped for want of it.
func TestRunToolCallScenariosRunInProcess(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	var rtc []*scenarios.File
	for _, f := range files {
		if f.Scenario.RunToolCall {
			rtc = append(rtc, f)
		}
	}
	if len(rtc) == 0 {
		t.Fatal("no runToolCall scenario in the suite")
	}
	for _, port := range []porttest.Port{example.Port{}, example.AgentPort{}} {
		var r porttest.Report
		porttest.TestFiles(t, port, rtc, porttest.Collect(&r))
		if r.Passed != len(rtc) || r.Failed != 0 || r.Skipped != 0 {
			t.Errorf("%T: %s, want all %d passed", port, r.Summary(), len(rtc))
		}
	}
}
