package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository's root, where the CLI's paths in these tests start.
var repoRoot, _ = filepath.Abs("../..")

// turnstile runs the CLI in-process, from the repository root, and returns its output and
// exit code.
func turnstile(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Chdir(repoRoot)
	var out, errOut bytes.Buffer
	code = execute(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestRunPrintsTimelinesAndChecksExpectations(t *testing.T) {
	out, _, code := turnstile(t, "run", "scenarios/truncation")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"=== truncation/basic", "tool_execution_end w1 write error", "ok   expectations met"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestRunJSONLIsIdenticalEveryTime(t *testing.T) {
	a, _, code := turnstile(t, "run", "scenarios/tools-parallel", "--format", "jsonl")
	b, _, _ := turnstile(t, "run", "scenarios/tools-parallel", "--format", "jsonl")
	if code != 0 || a != b || a == "" {
		t.Fatalf("exit %d; identical: %v", code, a == b)
	}
	for _, line := range strings.Split(strings.TrimSpace(a), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("not a JSON line: %s", line)
		}
	}
}

func TestInputErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"run", "no-such-file.yaml"},
		{"run", "--format", "xml"},
		{"conform", "--shard", "3/2"},
		{"conform", "--profile", "loose"},
		{"run", "scenarios/testdata/invalid/unknown-top-key.yaml"},
		{"frobnicate"},
	} {
		_, errOut, code := turnstile(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
		if !strings.HasPrefix(errOut, "turnstile: ") || strings.Count(errOut, "turnstile: ") != 1 {
			t.Errorf("%v: the error is not printed once, plainly: %q", args, errOut)
		}
	}
}

func TestValidateReportsPositions(t *testing.T) {
	_, errOut, code := turnstile(t, "validate", "scenarios/testdata/invalid/unknown-tool-key.yaml")
	if code != 1 || !strings.Contains(errOut, "unknown-tool-key.yaml:4:5: unknown key \"descripton\"") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out, _, code := turnstile(t, "validate", "scenarios")
	if code != 0 || !strings.Contains(out, "scenario files are valid") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestTestComparesGoldens(t *testing.T) {
	out, _, code := turnstile(t, "test")
	if code != 0 || !strings.HasSuffix(out, " passed, 0 failed\n") {
		t.Fatalf("exit %d: %s", code, out)
	}
	dir := t.TempDir()
	out, _, code = turnstile(t, "test", "scenarios/truncation", "--golden", dir)
	if code != 1 || !strings.Contains(out, "no golden file") {
		t.Fatalf("missing goldens: exit %d: %s", code, out)
	}
	if _, _, code = turnstile(t, "test", "scenarios/truncation", "--golden", dir, "--update"); code != 0 {
		t.Fatalf("update: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "truncation", "basic.golden")); err != nil {
		t.Fatal(err)
	}
	if out, _, code = turnstile(t, "test", "scenarios/truncation", "--golden", dir); code != 0 {
		t.Fatalf("after update: exit %d: %s", code, out)
	}
}

func TestDiffShowsFirstDivergence(t *testing.T) {
	out, _, code := turnstile(t, "diff", "golden/testdata/truncation/basic.golden", "scenarios/truncation/several-calls.yaml")
	if code != 1 || !strings.Contains(out, "first difference at line") || !strings.Contains(out, "(- expected, + actual)") {
		t.Fatalf("exit %d: %s", code, out)
	}
	out, _, code = turnstile(t, "diff", "golden/testdata/truncation/basic.golden", "scenarios/truncation/basic.yaml")
	if code != 0 || !strings.Contains(out, "identical") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestConformEndsWithTheSummaryLine(t *testing.T) {
	out, _, code := turnstile(t, "conform", "--suite", "scenarios/queues", "--jobs", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || !strings.HasSuffix(lines[len(lines)-1], " passed, 0 failed") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestSchemaIsJSON(t *testing.T) {
	out, _, code := turnstile(t, "schema")
	if code != 0 || !json.Valid([]byte(out)) {
		t.Fatalf("exit %d", code)
	}
}

func TestHelpTeachesWithExamples(t *testing.T) {
	for _, verb := range []string{"run", "validate", "schema", "test", "diff", "conform", "adapter", "explore"} {
		out, _, code := turnstile(t, verb, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help: exit %d, no examples:\n%s", verb, code, out)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	got, err := splitCommand(`node "my adapter.mjs" --flag='a b' x\ y`)
	want := []string{"node", "my adapter.mjs", "--flag=a b", "x y"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := splitCommand(`node "unterminated`); err == nil {
		t.Fatal("an unterminated quote was accepted")
	}
}

func TestExploreFindsNothingWrongWithTheReference(t *testing.T) {
	out, errOut, code := turnstile(t, "explore", "--runs", "50", "--seed", "0123456789abcdef0123456789abcdef01234567", "--out", t.TempDir())
	if code != 0 || !strings.Contains(out, "50 runs") || !strings.HasPrefix(errOut, "seed=") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	if _, _, code := turnstile(t, "explore", "--seed", "not-a-seed"); code != 2 {
		t.Errorf("a bad seed: exit %d, want 2", code)
	}
}

func TestRunWithAnImplementation(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TURNSTILE_TEST_ADAPTER", "1")
	a, _, code := turnstile(t, "run", "scenarios/truncation/basic.yaml", "--format", "jsonl", "--impl", strconv.Quote(self))
	b, _, _ := turnstile(t, "run", "scenarios/truncation/basic.yaml", "--format", "jsonl")
	if code != 0 || a != b {
		t.Fatalf("exit %d; the adapter's trace equals the reference's: %v", code, a == b)
	}
}

// TestMain lets this test binary stand in for `turnstile adapter`.
func TestMain(m *testing.M) {
	if os.Getenv("TURNSTILE_TEST_ADAPTER") != "" {
		os.Exit(execute([]string{"adapter"}, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestConformInputErrorsAreOneErrorAndExitTwo(t *testing.T) {
	list := filepath.Join(t.TempDir(), "known.txt")
	if err := os.WriteFile(list, []byte("# known\nqueues/steering-al\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := turnstile(t, "conform", "--suite", "scenarios/queues", "--expect-fail", list)
	if code != 2 || !strings.Contains(errOut, `"queues/steering-al" is not a scenario of the suite (did you mean "queues/steering-all"?)`) {
		t.Errorf("unknown expected failure: exit %d, %q", code, errOut)
	}
	if out != "" {
		t.Errorf("output before the error:\n%s", out)
	}
	out, errOut, code = turnstile(t, "conform", "--suite", "scenarios/queues", "--impl", "/nonexistent/adapter")
	if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "the implementation did not start") || out != "" {
		t.Errorf("missing implementation: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
}

func TestConformJSONIsTheWholeReport(t *testing.T) {
	out, _, code := turnstile(t, "conform", "--suite", "scenarios/truncation", "--format", "json")
	var doc struct {
		Summary string
		Results []struct{ Scenario, Status string }
		Causes  []any
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if len(doc.Results) != 5 || doc.Summary != "5 passed, 0 failed" || doc.Causes == nil {
		t.Errorf("report %+v", doc)
	}
}
