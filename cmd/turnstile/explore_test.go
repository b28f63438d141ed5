package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestExploreInputErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"explore", "--profile", "loose"},
		{"explore", "--ignore", "no-such-file.txt"},
		{"explore", "--runs", "-1"},
		{"explore", "--jobs", "-2"},
		{"explore", "--impl", "  ", "--runs", "3"},
		{"explore", "--impl", "/no/such/adapter", "--runs", "3"},
	} {
		_, errOut, code := turnstile(t, args...)
		if code != 2 || strings.Count(errOut, "turnstile: ") != 1 {
			t.Errorf("%v: exit %d, want 2 and one error: %q", args, code, errOut)
		}
	}
}

// TestExploreThroughTheProtocol explores the reference served over the protocol by this test
// binary (see TestMain): nothing fails, the summary is printed, and an ignore file is read.
func TestExploreThroughTheProtocol(t *testing.T) {
	self := selfAdapter(t)
	ignore := filepath.Join(t.TempDir(), "known.txt")
	if err := os.WriteFile(ignore, []byte("# known causes\ninvariant grammar\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// One adapter process, and two runs at once, each with its own.
	for _, jobs := range []string{"1", "2"} {
		out, errOut, code := turnstile(t, "explore", "--impl", strconv.Quote(self), "--runs", "20", "--seed", "4",
			"--profile", "semantic", "--ignore", ignore, "--out", t.TempDir(), "--jobs", jobs)
		if code != 0 || !strings.Contains(out, "seed 4: 20 runs in") || !strings.Contains(out, "no failure found") || !strings.HasPrefix(errOut, "seed=4\n") {
			t.Fatalf("--jobs %s: exit %d:\n%s\n%s", jobs, code, out, errOut)
		}
	}
}

// TestMinimalScenarioCommandHoldsToTheSamePi: the reference served over the protocol (pi
// 1.6.0's behaviour) held to pi 1.0.3 fails; the command given to run a cause's minimal
// scenario holds it to 1.0.3 too, or it would pass.
func TestMinimalScenarioCommandHoldsToTheSamePi(t *testing.T) {
	self := selfAdapter(t)
	out, errOut, code := turnstile(t, "explore", "--impl", strconv.Quote(self), "--runs", "40", "--seed", "4", "--tracks", "1.0.3",
		"--max-causes", "1", "--out", t.TempDir())
	if all := out + errOut; code != 1 || !strings.Contains(all, "the minimal scenario: turnstile conform --impl") || !strings.Contains(all, " --tracks 1.0.3 --suite ") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
}

// TestReproduceCommandRepeatsTheProcessFlags: the command explore prints to reproduce a run
// repeats --timeout and --hello-timeout when they are not the default, and --one-at-a-time.
func TestReproduceCommandRepeatsTheProcessFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--timeout", "10s"}, ""},
		{[]string{"--timeout", "2s", "--one-at-a-time"}, " --timeout 2s --one-at-a-time"},
		{[]string{"--hello-timeout", "10s"}, ""},
		{[]string{"--hello-timeout", "30s", "--timeout", "2s"}, " --timeout 2s --hello-timeout 30s"},
	} {
		var p processFlags
		f := pflag.NewFlagSet("explore", pflag.ContinueOnError)
		p.register(f, 10*time.Second, "run")
		if err := f.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if got := p.args(); got != c.want {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
}

// TestARunOutlastsTheProcessTimeout: explore bounds a run of an --impl command by more than
// the process's own timeouts (a scenario's and, when the run starts the process, its hello's), so that a hung process is named by that timeout (what it was
// waiting for, its stderr) rather than by the run's bound (only "did not finish").
func TestARunOutlastsTheProcessTimeout(t *testing.T) {
	for _, d := range []time.Duration{300 * time.Millisecond, 10 * time.Second, 11 * time.Second, time.Minute} {
		if got := (processFlags{timeout: d, helloTimeout: d}).runBound(); got <= 2*d {
			t.Errorf("--timeout %v: a run is bounded by %v", d, got)
		}
	}
}
