package faults_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// fault is one deliberate bug: in file (under loop/), each old text is replaced by its new
// one.
type fault struct {
	name, file string
	patches    []patch
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

// build compiles a turnstile binary whose loop carries the fault, returning its path.
func build(t *testing.T, f fault, dir string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "loop", f.file))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, p := range f.patches {
		if n := strings.Count(text, p.old); n != 1 {
			t.Fatalf("the patch for %q no longer applies: loop/%s holds its text %d times; update it", f.name, f.file, n)
		}
		text = strings.Replace(text, p.old, p.new, 1)
	}
	patched := filepath.Join(dir, f.file)
	if err := os.WriteFile(patched, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {src: patched}})
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "turnstile")
	cmd := exec.Command("go", "build", "-overlay", ov, "-o", bin, "../cmd/turnstile")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the faulty loop: %v\n%s", err, out)
	}
	return bin
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
	suite := make([]*sim.Scenario, 0, len(files))
	for _, f := range files {
		suite = append(suite, f.Scenario)
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			bin := build(t, f, t.TempDir())
			// A faulty loop may never stop; 10 s is ample for any curated scenario.
			p := &conformance.Process{Command: []string{bin, "adapter"}, Timeout: 10 * time.Second}
			defer p.Close()
			report := conformance.Verify(context.Background(), suite, p, conformance.Options{})
			if report.Failed == 0 {
				t.Fatalf("no curated scenario catches %q (%s)", f.name, report.Summary())
			}
			var caught []string
			for _, r := range report.Results {
				if r.Status == conformance.Fail {
					caught = append(caught, r.Scenario)
				}
			}
			t.Logf("caught by %d scenarios, e.g. %s", len(caught), strings.Join(caught[:min(3, len(caught))], ", "))
		})
	}
}

// TestExploreCatchesEveryFault explores random scenarios against each faulty loop through the
// protocol and requires a counterexample within a minute, shrunk to at most 3 requests.
func TestExploreCatchesEveryFault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds one binary per fault")
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			bin := build(t, f, t.TempDir())
			res := explore.Run(context.Background(), explore.Options{
				Impl: func() sim.Implementation {
					return &conformance.Process{Command: []string{bin, "adapter"}, Timeout: 10 * time.Second}
				},
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
				if e.Kind == sim.KindCall && e.Name == sim.CallStream {
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
