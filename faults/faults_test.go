package faults_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/internal/gctarget"
	"github.com/turnstile-dev/turnstile/trace"
)

// fault is one deliberate bug, as a seam in the sources: in file (under loop/, or a path
// from the repository's root such as agent/run.go), each old text is replaced by its new
// one, in which @ON stands for the fault's switch. A switched-off fault runs the original
// code; a switched-on one runs the bug.
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
		"if pending, err = r.steering(ctx); err != nil { // poll C\n\t\t\t\treturn r.fail(\"\", err)\n\t\t\t}\n\t\t\tif @ON && len(pending) == 0 && r.cfg.GetFollowUpMessages != nil {\n\t\t\t\tpending, _ = r.cfg.GetFollowUpMessages(ctx)\n\t\t\t}"),
	one("terminate when any result asks", "execute.go",
		"batch.terminate = len(outcomes) > 0\n\tfor _, o := range outcomes {\n\t\tif !o.result.Terminate {\n\t\t\tbatch.terminate = false\n\t\t}\n\t}",
		"if @ON {\n\t\tfor _, o := range outcomes {\n\t\t\tif o.result.Terminate {\n\t\t\t\tbatch.terminate = true\n\t\t\t}\n\t\t}\n\t} else {\n\t\tbatch.terminate = len(outcomes) > 0\n\t\tfor _, o := range outcomes {\n\t\t\tif !o.result.Terminate {\n\t\t\t\tbatch.terminate = false\n\t\t\t}\n\t\t}\n\t}"),
	one("runs a truncated batch", "run.go",
		"if msg.StopReason == StopLength {",
		"if !@ON && msg.StopReason == StopLength {"),
	one("trusts stopReason", "run.go",
		"if calls := ToolCalls(msg.Content); len(calls) > 0 {",
		"if calls := ToolCalls(msg.Content); len(calls) > 0 && (!@ON || msg.StopReason != StopStop) {"),
	// A continue answer remembered across turns: the request it asked for happens (tool
	// results), and yet one more context-only request is made at the end.
	{"extra continuation request", "run.go", []patch{
		{"explicitContinuation = decision == DecisionContinue", "explicitContinuation = (@ON && explicitContinuation) || decision == DecisionContinue"},
		{"if hasMoreToolCalls || len(pending) > 0 {\n\t\t\t\texplicitContinuation = false\n\t\t\t}", "if !@ON && (hasMoreToolCalls || len(pending) > 0) {\n\t\t\t\texplicitContinuation = false\n\t\t\t}"},
	}},
	one("turn cap of 2", "run.go",
		"for hasMoreToolCalls || len(pending) > 0 {",
		"for (hasMoreToolCalls || len(pending) > 0) && (!@ON || r.turns < 2) {"),
	one("steering re-polled although messages are pending", "run.go",
		"if len(pending) == 0 { // poll B",
		"if @ON || len(pending) == 0 { // poll B"),
	one("finishTurn end ignored", "run.go",
		"if decision == DecisionEnd {",
		"if !@ON && decision == DecisionEnd {"),
}

// The environment variables that switch faults on, each a list of fault names separated by
// "|": in the packages of the repository (loop/, agent/, sim/), and in faultyport's copy of
// loop/ (TestThreeFaultsThroughConformanceTest).
const (
	faultsEnv     = "TURNSTILE_FAULTS"
	portFaultsEnv = "TURNSTILE_PORT_FAULTS"
)

// allFaults is every fault, of the loop and of the Agent.
func allFaults() []fault { return append(slices.Clone(faults), wrongAgents...) }

// binDir holds the faulty binary (TestMain removes it).
var binDir string

func TestMain(m *testing.M) {
	// The CLI's GC target: the whole-suite verifications of these tests collect as often as
	// conform's do (a tenth less CPU than at Go's default).
	gctarget.Set()
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

var (
	faultyOnce sync.Once
	faultyBin  string
	faultyErr  error
)

// faultyBinary returns the path of the one binary carrying every fault, switched off until
// its environment switches them on (see faultyport): built once per test binary, whichever
// test asks first.
func faultyBinary(t *testing.T) string {
	t.Helper()
	faultyOnce.Do(func() { faultyBin, faultyErr = buildFaulty(binDir) })
	if faultyErr != nil {
		t.Fatal(faultyErr)
	}
	return faultyBin
}

// Roles of the faulty binary, chosen by its first argument (see faultyport's TestMain).
const (
	roleReference = "reference" // the reference, as `turnstile adapter` serves it
	roleExample   = "example"   // the example Go port, as conformance/example/adapter serves it
)

// faultyProcess is the faulty binary bin serving role over the protocol with fs switched on.
func faultyProcess(bin, role string, timeout time.Duration, fs ...fault) *protocol.Process {
	return &protocol.Process{Command: []string{bin, role}, Env: []string{faultsEnv + "=" + names(fs)}, Timeout: timeout}
}

// names is the value of faultsEnv that switches fs on.
func names(fs []fault) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.name)
	}
	return strings.Join(out, "|")
}

// TestExploreCatchesEveryFault explores random scenarios against each faulty loop through the
// protocol and requires a counterexample within a minute, shrunk to at most 3 requests.
func TestExploreCatchesEveryFault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty binary")
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			bin := faultyBinary(t)
			// A faulty loop may never stop; 10 s is ample for any generated scenario.
			procs := &protocol.Pool{New: func() *protocol.Process {
				return faultyProcess(bin, roleReference, 10*time.Second, f)
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
