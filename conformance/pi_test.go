package conformance_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
)

// checkPi fails the test for every scenario pi did not pass.
func checkPi(t *testing.T, report conformance.Report, p *protocol.Process) {
	t.Helper()
	for _, res := range report.Results {
		if res.Status == conformance.Pass {
			continue
		}
		t.Errorf("%s: %s\n%s", res.Scenario, res.Reason, divergenceText(res))
	}
	if t.Failed() {
		t.Logf("pi adapter stderr:\n%s", p.Stderr)
	}
	t.Log(report.Summary())
}

// piAdapter is a Process running the pi adapter, or skips the test when node or the adapter's
// node_modules are missing.
func piAdapter(t testing.TB) *protocol.Process {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the pi adapter cannot run")
	}
	dir := filepath.Join("adapters", "pi")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@earendil-works", "pi-agent-core")); err != nil {
		t.Skip("conformance/adapters/pi/node_modules is missing: run `npm ci` in conformance/adapters/pi")
	}
	p := &protocol.Process{Command: []string{node, filepath.Join(dir, "adapter.mjs")}, Stderr: &lockedBuffer{}}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

// TestPiMatchesReference runs every scenario through pi's own loop, over the protocol, and
// requires byte-identical traces (strict profile), except for the known differences.
func TestPiMatchesReference(t *testing.T) {
	p := piAdapter(t)
	report := conformance.Verify(context.Background(), allScenarios(), p, conformance.Options{})
	if !strings.HasPrefix(report.Implementation, "pi-agent-core 1.6.0") {
		t.Errorf("implementation %q", report.Implementation)
	}
	checkPi(t, report, p)
}
