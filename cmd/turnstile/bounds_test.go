package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds every hostile input is held to, as a separate process: a verdict or a clear error
// within boundTime, at most boundRSS resident. boundTime tells a hang (these inputs once
// took minutes) from a slow machine, not a speed target: the runaway shell adapters alone
// take 10-15 s to print 100,000 lines on two loaded cores.
const (
	boundTime = 45 * time.Second
	boundRSS  = 512 << 20
)

// builtCLI is the command of this test binary standing in for the turnstile binary (see
// TestMain); the environment of the process running it must hold cliEnv.
func builtCLI(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// bounded runs the CLI with args from the repository root and requires it to end within
// boundTime and boundRSS; it returns stdout and stderr together, and the exit code. A
// run past the bounds is killed (at 4 GB of address space where prlimit exists, so that a
// regression fails the test instead of the machine).
func bounded(t *testing.T, args ...string) (string, int) {
	t.Helper()
	bin := builtCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*boundTime)
	defer cancel()
	name, argv := bin, args
	if p, err := exec.LookPath("prlimit"); err == nil && runtime.GOOS == "linux" {
		name, argv = p, append([]string{"--as=4000000000", bin}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if took > boundTime {
		t.Errorf("%v took %v; bound %v", args, took.Round(time.Millisecond), boundTime)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && runtime.GOOS == "linux" {
		if rss := int64(ru.Maxrss) << 10; rss > boundRSS { // kilobytes on Linux
			t.Errorf("%v reached %d MB resident; bound %d MB", args, rss>>20, boundRSS>>20)
		}
	}
	return string(out), code
}

// TestHostileInputsEndWithinBounds: scenario files, traces and recordings that once ran the
// process out of memory, or for minutes, end with a clear error in bounded time and memory.
func TestHostileInputsEndWithinBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI")
	}
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deep := write("deep.yaml", "provider:\n  - {content: [{toolCall: {id: c1, name: t, arguments: {a: "+
		strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)+"}}}]}\nrun: [go]\n")
	var bomb strings.Builder
	bomb.WriteString("tools:\n  - name: t\n    description: T\n    parameters:\n      type: object\n      properties:\n")
	bomb.WriteString(`        a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i < 9; i++ {
		bomb.WriteString("        a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" +
			strings.TrimSuffix(strings.Repeat("*a"+string(rune('0'+i-1))+",", 10), ",") + "]\n")
	}
	bomb.WriteString("    behaviour: {result: ok}\nprovider: [hi]\nrun: [go]\n")
	bombPath := write("bomb.yaml", bomb.String())
	deltas := write("deltas.yaml", "provider:\n  - {text: \""+strings.Repeat("a", 1_000_000)+"\", deltaSize: 1}\nrun: [go]\n")
	golden := "scenarios/truncation/basic.golden"
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"validate", deep}, 1, "deep.yaml:2:153: mappings and lists nest more than 100 levels deep"},
		{[]string{"validate", bombPath}, 1, "bomb.yaml:11:46: with its aliases expanded"},
		{[]string{"validate", deltas}, 0, "1 scenario files are valid"},
		// A million one-character deltas: the world schedules one at a time, and the run ends
		// at the bytes budget (each delta's partial is written in full as the trace in full).
		{[]string{"run", "--format", "jsonl", deltas}, 1, `"target":"bytes","error":"the trace in full reached`},
		{[]string{"run", deltas}, 1, "FAIL the run exceeded its budget: the trace in full reached"},
		{[]string{"conform", "--suite", deltas}, 1, "FAIL  deltas: the reference failed (a bug in the scenario or the harness): the trace in full reached"},
		{[]string{"conform", "--impl", builtCLI(t) + " adapter", "--suite", deltas}, 1, "FAIL  deltas: the reference failed (a bug in the scenario or the harness): the trace in full reached"},
		{[]string{"run", deep}, 2, "nest more than 100 levels deep"},
		{[]string{"validate", "/dev/zero"}, 1, "/dev/zero: the file is larger than 4 MiB"},
		{[]string{"run", "/dev/zero"}, 2, "/dev/zero: the file is larger than 4 MiB"},
		{[]string{"audit", "/dev/zero"}, 2, `/dev/zero:1:1: not a JSON object: the line starts with "\x00"`},
		{[]string{"diff", golden, "/dev/zero"}, 2, "/dev/zero holds a NUL byte (at offset 0)"},
		// Adapters that run away, at the default budgets, or exit leaving a child on stdout.
		{[]string{"conform", "--impl", "sh conformance/testdata/runawayrequests.sh", "--run", "events/text-only"}, 1,
			"FAIL  events/text-only: the run made 1,000 requests; budget 1,000"},
		{[]string{"conform", "--impl", "sh conformance/testdata/runawayevents.sh", "--run", "events/text-only"}, 1,
			"FAIL  events/text-only: the trace reached 100,000 entries; budget 100,000"},
		{[]string{"conform", "--impl", "sh conformance/testdata/exitchild.sh", "--run", "events/"}, 1,
			"FAIL  events/text-only: scenario events/text-only: start: the implementation exited (exit status 0) during start"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:1], " ")+" "+filepath.Base(c.args[min(2, len(c.args)-1)]), func(t *testing.T) {
			t.Parallel()
			out, code := bounded(t, c.args...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d (want %d): %.500s\nwant %q", code, c.code, out, c.want)
			}
		})
	}
}
