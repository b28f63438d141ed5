package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/trace"
)

// fault is one deliberate bug: in file (under loop/, or a path from the repository's root
// such as agent/run.go), each old text is replaced by its new one.
type fault struct {
	name, file string
	patches    []patch
}

// path is the patched file's path from this package's directory.
func (f fault) path() string {
	if strings.Contains(f.file, "/") {
		return filepath.Join("..", filepath.FromSlash(f.file))
	}
	return filepath.Join("..", "loop", f.file)
}

type patch struct{ old, new string }

func one(name, file, old, new string) fault { return fault{name, file, []patch{{old, new}}} }

var faults = []fault{
	one("follow-up polled too early", "run.go",
		"if pending, err = r.steering(ctx); err != nil { // poll C\n\t\t\t\treturn r.fail(\"\", err)\n\t\t\t}",
		"if pending, err = r.steering(ctx); err != nil { // poll C\n\t\t\t\treturn r.fail(\"\", err)\n\t\t\t}\n\t\t\tif len(pending) == 0 && r.cfg.GetFollowUpMessages != nil {\n\t\t\t\tpending, _ = r.cfg.GetFollowUpMessages(ctx)\n\t\t\t}"),
	one("terminate when any result asks", "execute.go",
		"batch.terminate = len(outcomes) > 0\n\tfor _, o := range outcomes {\n\t\tif !o.result.Terminate {\n\t\t\tbatch.terminate = false\n\t\t}\n\t}",
		"for _, o := range outcomes {\n\t\tif o.result.Terminate {\n\t\t\tbatch.terminate = true\n\t\t}\n\t}"),
	one("runs a truncated batch", "run.go",
		"if msg.StopReason == StopLength {",
		"if false && msg.StopReason == StopLength {"),
	one("trusts stopReason", "run.go",
		"if calls := ToolCalls(msg.Content); len(calls) > 0 {",
		"if calls := ToolCalls(msg.Content); len(calls) > 0 && msg.StopReason != StopStop {"),
	// A continue answer remembered across turns: the request it asked for happens (tool
	// results), and yet one more context-only request is made at the end.
	{"extra continuation request", "run.go", []patch{
		{"explicitContinuation = decision == DecisionContinue", "explicitContinuation = explicitContinuation || decision == DecisionContinue"},
		{"if hasMoreToolCalls || len(pending) > 0 {\n\t\t\t\texplicitContinuation = false\n\t\t\t}", ""},
	}},
	one("turn cap of 2", "run.go",
		"for hasMoreToolCalls || len(pending) > 0 {",
		"for (hasMoreToolCalls || len(pending) > 0) && r.turns < 2 {"),
	one("steering re-polled although messages are pending", "run.go",
		"if len(pending) == 0 { // poll B",
		"if true { // poll B"),
	one("finishTurn end ignored", "run.go",
		"if decision == DecisionEnd {",
		"if false && decision == DecisionEnd {"),
}

// binDir holds the faulty binaries, shared by every test of the binary (TestMain removes it).
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "turnstile-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// built is one fault's binary, built at most once per test binary whichever test asks
// first.
type built struct {
	once sync.Once
	bin  string
	err  error
}

var builds = make([]built, len(faults))

// binary returns the path of a turnstile binary whose loop carries faults[i], building it
// on first use.
func binary(t *testing.T, i int) string {
	t.Helper()
	b := &builds[i]
	b.once.Do(func() { b.bin, b.err = build(faults[i], filepath.Join(binDir, strconv.Itoa(i))) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// agentBuilds are the binaries of faults outside faults (the Agent's), by name, each built
// at most once per test binary: two tests judge each of agentFaults.
var (
	agentBuildsMu sync.Mutex
	agentBuilds   = map[string]*built{}
)

// binaryOf returns the path of a turnstile binary carrying f, building it on first use.
func binaryOf(t *testing.T, f fault) string {
	t.Helper()
	agentBuildsMu.Lock()
	b, ok := agentBuilds[f.name]
	if !ok {
		b = &built{}
		agentBuilds[f.name] = b
	}
	agentBuildsMu.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp(binDir, "agent-")
		if err != nil {
			b.err = err
			return
		}
		b.bin, b.err = build(f, dir)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// build compiles a turnstile binary whose loop carries the fault into dir, returning its
// path.
func build(f fault, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src, err := filepath.Abs(f.path())
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	text := string(data)
	for _, p := range f.patches {
		if n := strings.Count(text, p.old); n != 1 {
			return "", fmt.Errorf("the patch for %q no longer applies: %s holds its text %d times; update it", f.name, f.path(), n)
		}
		text = strings.Replace(text, p.old, p.new, 1)
	}
	patched := filepath.Join(dir, filepath.Base(f.file))
	if err := os.WriteFile(patched, []byte(text), 0o644); err != nil {
		return "", err
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {src: patched}})
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "turnstile")
	cmd := exec.Command("go", "build", "-overlay", ov, "-o", bin, "../cmd/turnstile")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the faulty loop for %q: %v\n%s", f.name, err, out)
	}
	return bin, nil
}

// TestCuratedSuiteCatchesEveryFault runs the curated suite against each faulty loop through
// the protocol and requires at least one failing scenario.
func TestCuratedSuiteCatchesEveryFault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds one binary per fault")
	}
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	suite := scenarios.Scenarios(files)
	for i, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			bin := binary(t, i)
			// A faulty loop may never stop; 10 s is ample for any curated scenario.
			p := &protocol.Process{Command: []string{bin, "adapter"}, Timeout: 10 * time.Second}
			defer p.Close()
			// One failing scenario is the proof: the rest of the suite is skipped once one
			// fails.
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			var caught string
			report := conformance.Verify(ctx, suite, p, conformance.Options{OnResult: func(r conformance.Result) {
				if r.Status == conformance.Fail && caught == "" {
					caught = r.Scenario
					stop()
				}
			}})
			if report.Failed == 0 {
				t.Fatalf("no curated scenario catches %q (%s)", f.name, report.Summary())
			}
			t.Logf("caught by %s after %d scenarios", caught, report.Passed+report.Failed)
		})
	}
}

// TestExploreCatchesEveryFault explores random scenarios against each faulty loop through the
// protocol and requires a counterexample within a minute, shrunk to at most 3 requests.
func TestExploreCatchesEveryFault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds one binary per fault")
	}
	for i, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			bin := binary(t, i)
			// A faulty loop may never stop; 10 s is ample for any generated scenario.
			procs := &protocol.Pool{New: func() *protocol.Process {
				return &protocol.Process{Command: []string{bin, "adapter"}, Timeout: 10 * time.Second}
			}}
			defer procs.Close()
			res := explore.Run(context.Background(), explore.Options{
				Impl:        procs.Impl,
				Seed:        1,
				Duration:    60 * time.Second,
				MaxFailures: 1,
				ShrinkTime:  20 * time.Second,
			})
			if !res.Failed() {
				t.Fatalf("explore found nothing in %d runs (%s)", res.Runs, res.Elapsed.Round(time.Millisecond))
			}
			fail := res.Failures[0]
			requests := 0
			for _, e := range fail.RefTrace.Entries {
				if e.Kind == trace.KindCall && e.Name == trace.CallStream {
					requests++
				}
			}
			if fail.Flaky || requests > 3 {
				t.Errorf("flaky %v; the minimal scenario makes %d requests (want at most 3)", fail.Flaky, requests)
			}
			t.Logf("found after %d runs in %s; minimal scenario: %d requests", res.Runs, res.Elapsed.Round(time.Millisecond), requests)
		})
	}
}
