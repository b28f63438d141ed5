package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/internal/gctarget"
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

// TestRunSaysWhenExpectationsAreLeftUnchecked: at core level (and at an older pi) expect:
// blocks are not checked, and a passing run does not claim they were met.
func TestRunSaysWhenExpectationsAreLeftUnchecked(t *testing.T) {
	out, _, code := turnstile(t, "run", "scenarios/truncation/basic.yaml", "--level", "core")
	if code != 0 || strings.Contains(out, "expectations met") || !strings.Contains(out, "ok   (its expect: block left unchecked)") {
		t.Errorf("exit %d:\n%s", code, out)
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
		{"conform", "--tracks", "0.80"},
		{"conform", "--tracks", "latest"},
		{"run", "scenarios/truncation/basic.yaml", "--tracks", "v1.0"},
		{"test", "--tracks", "0.5"},
		{"explore", "--runs", "1", "--tracks", "x"},
		{"conform", "--tracks", "16.0"}, // newer than the newest pi the reference knows: a typo for 1.6.0
		{"run", "scenarios/truncation/basic.yaml", "--tracks", "1.7.0"},
		{"test", "--tracks", "9.9.9"},
		{"explore", "--runs", "1", "--tracks", "2.0"},
		{"explore", "--runs", "0"},
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

// TestTestChecksTheExpectBlock: a scenario whose expect: block the reference does not meet
// fails turnstile test, and --update records no golden for it (a stranger's review recorded a
// golden of a scenario whose expectations were wrong, and test then passed it).
func TestTestChecksTheExpectBlock(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "wrong.yaml")
	if err := os.WriteFile(sc, []byte("provider: [\"hi\"]\nrun: [\"go\"]\nexpect:\n  requests: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	goldens := filepath.Join(dir, "goldens")
	out, _, code := turnstile(t, "test", sc, "--golden", goldens, "--update")
	if code != 1 || !strings.Contains(out, "the reference does not meet the scenario's expect: block") || !strings.Contains(out, "expected 3 requests, the run made 1") {
		t.Errorf("--update: exit %d: %s", code, out)
	}
	if entries, _ := os.ReadDir(goldens); len(entries) > 0 {
		t.Errorf("a golden was recorded: %v", entries)
	}
	if out, _, code = turnstile(t, "test", sc, "--golden", goldens); code != 1 || !strings.Contains(out, "0 passed, 1 failed") {
		t.Errorf("check: exit %d: %s", code, out)
	}
}

// TestDiffRefusesWhatIsNotATrace: a side that is neither a scenario, JSON lines nor a
// timeline is an input error naming its file and line, not a difference; what turnstile run
// prints for one scenario is a timeline.
func TestDiffRefusesWhatIsNotATrace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	golden := "scenarios/truncation/basic.golden"
	for _, c := range []struct{ file, want string }{
		{write("garbage.txt", "garbage{\n"), "garbage.txt:1: not a timeline line"},
		{write("half.jsonl", "{\"seq\":1,\"kind\":\"event\"}\nnope\n"), "half.jsonl:2: not a trace entry"},
		{write("object.json", "{\"a\":1}\n"), "object.json:1: not a trace entry (a JSON object with seq and kind)"},
		{write("two.txt", "=== a  (a.yaml)\n      0ms  ev    agent_start\n\n=== b  (b.yaml)\n"), "more than one scenario"},
		{write("empty.jsonl", "\n"), "empty.jsonl is empty, so neither a trace nor a timeline"},
		{write("two.jsonl", "{\"seq\":1,\"kind\":\"event\"}\n{\"seq\":2,\"kind\":\"event\"}\n{\"seq\":1,\"kind\":\"event\"}\n"),
			"two.jsonl:3: a second trace begins here (seq 1 again)"},
		{write("deep.jsonl", "{\"seq\":1,\"kind\":\"event\",\"data\":"+strings.Repeat("[", 20_000)+strings.Repeat("]", 20_000)+"}\n"),
			"deep.jsonl:1:10031: the JSON nests more than 10,000 levels deep"},
		{write("broken.jsonl", "{\"seq\":1,\"kind\":\"event\"}\n{\"seq\":2,\"kind\":\"event\",}\n"), "broken.jsonl:2:25: invalid JSON: invalid character '}'"},
		{write("nul.jsonl", "{\"seq\":1,\x00"), "nul.jsonl holds a NUL byte (at offset 9): it is not text"},
		{sparse(t, filepath.Join(dir, "huge.jsonl"), 64<<20+1), "huge.jsonl is larger than 64 MiB, the most diff reads"},
	} {
		_, errOut, code := turnstile(t, "diff", golden, c.file)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d: %s", c.file, code, errOut)
		}
	}
	if _, errOut, code := turnstile(t, "diff", "--context", "-2", golden, golden); code != 2 || !strings.Contains(errOut, "--context must be 0 or more") {
		t.Errorf("--context -2: exit %d: %s", code, errOut)
	}
	printed, _, _ := turnstile(t, "run", "truncation/basic")
	out, _, code := turnstile(t, "diff", write("run.txt", printed), golden)
	if code != 0 || !strings.Contains(out, "identical") {
		t.Errorf("turnstile run's output against its golden: exit %d: %s", code, out)
	}
}

// sparse makes a file of size bytes without writing them, and returns its path.
func sparse(t *testing.T, p string, size int64) string {
	t.Helper()
	f, err := os.Create(p)
	if err == nil {
		err = f.Truncate(size)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiffShowsFirstDivergence(t *testing.T) {
	out, _, code := turnstile(t, "diff", "scenarios/truncation/basic.golden", "scenarios/truncation/several-calls.yaml")
	if code != 1 || !strings.Contains(out, "first difference at line") || !strings.Contains(out, "(- expected, + actual)") {
		t.Fatalf("exit %d: %s", code, out)
	}
	out, _, code = turnstile(t, "diff", "scenarios/truncation/basic.golden", "scenarios/truncation/basic.yaml")
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
	for _, verb := range []string{"run", "validate", "schema", "test", "diff", "conform", "adapter", "explore", "show"} {
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
	self := selfAdapter(t)
	a, _, code := turnstile(t, "run", "scenarios/truncation/basic.yaml", "--format", "jsonl", "--impl", strconv.Quote(self))
	b, _, _ := turnstile(t, "run", "scenarios/truncation/basic.yaml", "--format", "jsonl")
	if code != 0 || a != b {
		t.Fatalf("exit %d; the adapter's trace equals the reference's: %v", code, a == b)
	}
}

// TestRunJudgesTheInvariantsAtTheTrackedPi: run's verdict names a broken invariant (as its
// --html page marks it), judged at the pi the run is held to: the reference served over the
// protocol writes pi 1.6.0's durationMs, which pi 1.0.3 did not have.
func TestRunJudgesTheInvariantsAtTheTrackedPi(t *testing.T) {
	self := selfAdapter(t)
	page := filepath.Join(t.TempDir(), "run.html")
	out, _, code := turnstile(t, "run", "tools-sequential/duration-ms", "--impl", strconv.Quote(self), "--tracks", "1.0.3", "--html", page)
	if code != 1 || !strings.Contains(out, "FAIL invariant results: entry 32: tool ran's end has a durationMs, which pi added in 1.3.0") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	html, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(html), "which pi added in 1.3.0") {
		t.Errorf("the page does not mark the broken invariant (%v)", err)
	}
	if out, _, code := turnstile(t, "run", "tools-sequential/duration-ms", "--impl", strconv.Quote(self)); code != 0 {
		t.Errorf("at the pi the adapter tracks, exit %d:\n%s", code, out)
	}
}

// selfAdapter is the command of this test binary serving the reference as `turnstile
// adapter` does (see TestMain), for --impl.
func selfAdapter(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TURNSTILE_TEST_ADAPTER", "1")
	return self
}

// cliEnv, set in its environment, makes this test binary the turnstile binary (see TestMain).
const cliEnv = "TURNSTILE_TEST_CLI"

// TestMain lets this test binary stand in for `turnstile adapter`, or for the turnstile
// binary itself, built from the same sources, when cliEnv is set.
func TestMain(m *testing.M) {
	// The CLI's GC target: the whole-suite verifications of these tests collect as often as
	// conform's do (a tenth less CPU than at Go's default).
	gctarget.Set()
	if os.Getenv(cliEnv) != "" {
		main()
	}
	if os.Getenv("TURNSTILE_TEST_ADAPTER") != "" {
		os.Exit(execute([]string{"adapter"}, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestDiffComparesTracesNotRenderings changes one field of one entry of a trace — each kind
// of field — and requires diff to call the traces different, naming the field.
func TestDiffComparesTracesNotRenderings(t *testing.T) {
	trace, _, code := turnstile(t, "run", "finish-turn/continue-every-turn", "--format", "jsonl")
	if code != 1 && code != 0 || trace == "" {
		t.Fatalf("exit %d", code)
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(a, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, field string }{
		{`{"seq":9,"t":0,`, `{"seq":9,"t":1,`, "field t: 0 vs 1"},
		// Another kind or name is another entry: the reference's lacked, the other in its place.
		{`"kind":"deliver"`, `"kind":"delivew"`, `+       0ms        streamEvent`},
		{`"name":"finishTurn"`, `"name":"finishTurm"`, `+       0ms  call  finishTurm()`},
		{`"target":"3"`, `"target":"4"`, `field target: "3" vs "4"`},
		{`"stopReason":"stop"`, `"stopReason":"stoq"`, `"stop" vs "stoq"`},
		{`"answer":{"stream":"2"}`, `"answer":{"stream":"3"}`, `field answer.stream: "2" vs "3"`},
		{`"error":"request 6 was not scripted"`, `"error":"request 7 was not scripted"`, `field error: "request 6 was not scripted" vs "request 7 was not scripted"`},
		{`"timestamp":0`, `"timestamp":1`, "0 vs 1"},
	} {
		if !strings.Contains(trace, c.from) {
			t.Fatalf("the trace lacks %s", c.from)
		}
		b := filepath.Join(dir, "b.jsonl")
		if err := os.WriteFile(b, []byte(strings.Replace(trace, c.from, c.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := turnstile(t, "diff", a, b)
		if code != 1 || strings.Contains(out, "identical") || !strings.Contains(out, c.field) || !strings.Contains(errOut, "differ at ") {
			t.Errorf("%s -> %s: exit %d:\n%s%s", c.from, c.to, code, out, errOut)
		}
	}
	// A sequence number out of place is no trace entry: an input error at its line.
	b := filepath.Join(dir, "b.jsonl")
	if err := os.WriteFile(b, []byte(strings.Replace(trace, `{"seq":9,`, `{"seq":10,`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := turnstile(t, "diff", a, b); code != 2 || !strings.Contains(errOut, "line 9: not a trace entry in its place: seq 10") {
		t.Errorf("seq 10 on line 9: exit %d: %s", code, errOut)
	}
	out, _, code := turnstile(t, "diff", a, "finish-turn/continue-every-turn")
	if code != 0 || !strings.Contains(out, "the traces are identical") {
		t.Errorf("a trace and its scenario: exit %d: %s", code, out)
	}
}

// TestDiffShowsALongValueWhereItDiffers: two texts that differ near the end of a long value
// are shown from where they differ; cut at their start they read the same (a stranger's
// review got two identical-looking values).
func TestDiffShowsALongValueWhereItDiffers(t *testing.T) {
	trace, _, _ := turnstile(t, "run", "truncation/basic", "--format", "jsonl")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	if !strings.Contains(trace, "with complete arguments.") {
		t.Fatal("the trace lacks the truncation error's text")
	}
	if os.WriteFile(a, []byte(trace), 0o644) != nil || os.WriteFile(b, []byte(strings.Replace(trace, "with complete arguments.", "with full arguments.", 1)), 0o644) != nil {
		t.Fatal("writing the traces")
	}
	out, _, code := turnstile(t, "diff", a, b)
	if code != 1 || !strings.Contains(out, `the tool call with complete arguments." vs …`) || !strings.Contains(out, `the tool call with full arguments."`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestEndlessScenarioEndsWithTheBudgetVerdict: run and conform stop the endless scenario
// with the verdict naming the budget, exit 1.
func TestEndlessScenarioEndsWithTheBudgetVerdict(t *testing.T) {
	endless := "cmd/turnstile/testdata/endless.yaml"
	out, errOut, code := turnstile(t, "run", endless, "--max-requests", "100")
	if code != 1 || !strings.Contains(out, "FAIL  budget: the run made 100 requests; budget 100") ||
		!strings.Contains(out, "FAIL the run exceeded its budget") || !strings.Contains(errOut, "1 of 1 scenarios failed: endless (cmd/turnstile/testdata/endless.yaml)") {
		t.Fatalf("run: exit %d:\n%s\n%s", code, lastLines(out, 3), errOut)
	}
	// The context grows: the trace in full reaches the default bytes budget first.
	out, _, code = turnstile(t, "run", endless)
	if code != 1 || !strings.Contains(out, "FAIL  budget: the trace in full reached ") || !strings.Contains(out, "bytes of JSON lines; budget 16,777,216") {
		t.Fatalf("run with the default budget: exit %d:\n%s", code, lastLines(out, 3))
	}
	out, _, code = turnstile(t, "run", endless, "--max-bytes", "200000")
	if code != 1 || !strings.Contains(out, "bytes of JSON lines; budget 200,000") {
		t.Fatalf("run with a bytes budget: exit %d:\n%s", code, lastLines(out, 3))
	}
	out, _, code = turnstile(t, "conform", "--suite", endless, "--max-entries", "300")
	if code != 1 || !strings.Contains(out, "the trace reached 300 entries; budget 300") {
		t.Fatalf("conform: exit %d:\n%s", code, out)
	}
	// The same verdict for an implementation over the protocol.
	self := selfAdapter(t)
	out, _, code = turnstile(t, "run", endless, "--max-requests", "20", "--impl", strconv.Quote(self))
	if code != 1 || !strings.Contains(out, "FAIL  budget: the run made 20 requests; budget 20") {
		t.Fatalf("run --impl: exit %d:\n%s", code, lastLines(out, 3))
	}
	out, _, code = turnstile(t, "run", endless, "--max-requests", "-1")
	if code != 2 {
		t.Fatalf("a negative budget: exit %d:\n%s", code, out)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func TestVersionNamesTurnstileAndPi(t *testing.T) {
	out, _, code := turnstile(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "turnstile ") || !strings.Contains(out, "reference: pi 1.6.0 (@earendil-works/pi-agent-core@1.6.0)") {
		t.Fatalf("exit %d: %q", code, out)
	}
}

// TestVersionComesFromTheBuildInformation: `go install module@version` stamps the module's
// version, a checkout's build its commit; either is printed with the pi release.
func TestVersionComesFromTheBuildInformation(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, c := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: vcs("vcs.revision", "0123456789abcdef")}, "turnstile v0.3.0\n"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261205120000-0123456789ab"}}, "turnstile v0.0.0-20261205120000-0123456789ab\n"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "0123456789abcdef0123", "vcs.modified", "true")}, "turnstile devel (commit 0123456789ab, modified)\n"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "0123456789abcdef0123", "vcs.modified", "false")}, "turnstile devel (commit 0123456789ab)\n"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "turnstile devel\n"},
		{nil, "turnstile devel\n"},
	} {
		got := versionOf(c.info, c.info != nil)
		if !strings.HasPrefix(got, c.want) || !strings.Contains(got, "\nreference: pi 1.6.0 (@earendil-works/pi-agent-core@1.6.0), protocol ") {
			t.Errorf("%+v: %q, want %q…", c.info, got, c.want)
		}
	}
}

// inDir runs the CLI in-process from dir.
func inDir(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	code = execute(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// asProcess runs the CLI as a process of this test binary (see TestMain) from dir. Unlike
// turnstile and inDir it leaves the test's working directory alone: tests using it can run
// in parallel.
func asProcess(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var ee *exec.ExitError
	if err := cmd.Run(); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

func TestSuiteNamesWorkFromAnyDirectory(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := inDir(t, dir, "run", "truncation/basic")
	if code != 0 || !strings.Contains(out, "=== truncation/basic  (truncation/basic.yaml)") {
		t.Fatalf("run: exit %d:\n%s%s", code, out, errOut)
	}
	out, _, code = inDir(t, dir, "test", "truncation", "queues/poll-a-startup")
	if code != 0 || !strings.HasSuffix(out, " passed, 0 failed\n") {
		t.Fatalf("test: exit %d:\n%s", code, out)
	}
	out, _, code = inDir(t, dir, "show", "truncation/basic")
	data, _ := os.ReadFile(filepath.Join(repoRoot, "scenarios", "truncation", "basic.yaml"))
	if code != 0 || out != string(data) {
		t.Fatalf("show: exit %d:\n%s", code, out)
	}
	out, _, code = inDir(t, dir, "show", "truncation")
	if code != 0 || !strings.Contains(out, "truncation/basic ") || strings.Contains(out, "queues/") {
		t.Fatalf("show a family: exit %d:\n%s", code, out)
	}
	out, _, code = inDir(t, dir, "diff", "truncation/basic", "truncation/basic")
	if code != 0 || !strings.Contains(out, "the traces are identical") {
		t.Fatalf("diff: exit %d:\n%s", code, out)
	}
	for _, args := range [][]string{{"run", "truncation/nope"}, {"show", "nope"}} {
		_, errOut, code := inDir(t, dir, args...)
		if code != 2 || !strings.Contains(errOut, "nope") || strings.Count(errOut, "turnstile: ") != 1 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

func TestRunSelectsScenariosByName(t *testing.T) {
	out, _, code := turnstile(t, "run", "--run", "truncation/(basic|several)")
	if code != 0 || strings.Count(out, "=== ") != 2 || !strings.Contains(out, "=== truncation/basic ") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, args := range [][]string{{"run", "--run", "("}, {"test", "--run", "no-such-scenario"}, {"conform", "--run", "no-such-scenario"}} {
		if _, errOut, code := turnstile(t, args...); code != 2 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

func TestAScriptThatRanOutFailsTheRun(t *testing.T) {
	dir := t.TempDir()
	base := "tools:\n  - {name: read, behaviour: {result: ok}}\nprovider:\n  - content: [{toolCall: {id: r1, name: read, arguments: {}}}]\nrun: [hi]\n"
	short := filepath.Join(dir, "short.yaml")
	expected := filepath.Join(dir, "expected.yaml")
	_ = os.WriteFile(short, []byte(base), 0o644)
	_ = os.WriteFile(expected, []byte(base+"expect: {runFails: true}\n"), 0o644)
	out, errOut, code := turnstile(t, "run", short)
	if code != 1 || !strings.Contains(out, "FAIL the run failed: request 2 was not scripted (add expect: {runFails: true} if the scenario means it)") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	if _, errOut, code := turnstile(t, "run", short, "--format", "jsonl"); code != 1 || !strings.Contains(errOut, "request 2 was not scripted") {
		t.Fatalf("jsonl: exit %d: %s", code, errOut)
	}
	if out, _, code := turnstile(t, "run", expected); code != 0 {
		t.Fatalf("expected: exit %d:\n%s", code, out)
	}
}

func TestBudgetInTheScenarioFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "cmd/turnstile/testdata/endless.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bounded.yaml")
	_ = os.WriteFile(p, append(data, "budget: {requests: 3}\n"...), 0o644)
	out, _, code := turnstile(t, "run", p)
	if code != 1 || !strings.Contains(out, "FAIL  budget: the run made 3 requests; budget 3") {
		t.Fatalf("exit %d:\n%s", code, lastLines(out, 3))
	}
	// The command line wins over the file.
	out, _, code = turnstile(t, "run", p, "--max-requests", "5")
	if code != 1 || !strings.Contains(out, "the run made 5 requests; budget 5") {
		t.Fatalf("exit %d:\n%s", code, lastLines(out, 3))
	}
}

func TestTestKeepsTheGoldensOfAnImplementation(t *testing.T) {
	self := selfAdapter(t)
	impl := strconv.Quote(self)
	dir := t.TempDir()
	if _, errOut, code := turnstile(t, "test", "truncation", "--impl", impl); code != 2 || !strings.Contains(errOut, "--impl needs --golden DIR") {
		t.Fatalf("without --golden: exit %d: %s", code, errOut)
	}
	out, _, code := turnstile(t, "test", "truncation", "--impl", impl, "--golden", dir, "--update")
	if code != 0 || !strings.Contains(out, "5 updated, 0 unchanged") {
		t.Fatalf("record: exit %d:\n%s", code, out)
	}
	if out, _, code = turnstile(t, "test", "truncation", "--impl", impl, "--golden", dir); code != 0 || !strings.HasSuffix(out, "5 passed, 0 failed\n") {
		t.Fatalf("check: exit %d:\n%s", code, out)
	}
	g := filepath.Join(dir, "truncation", "basic.golden")
	data, _ := os.ReadFile(g)
	_ = os.WriteFile(g, bytes.Replace(data, []byte("write"), []byte("wrote"), 1), 0o644)
	out, _, code = turnstile(t, "test", "truncation", "--impl", impl, "--golden", dir)
	if code != 1 || !strings.Contains(out, "FAIL truncation/basic") || !strings.HasSuffix(out, "4 passed, 1 failed\n") {
		t.Fatalf("a changed golden: exit %d:\n%s", code, out)
	}
}

func TestValidateNamesSilentMistakes(t *testing.T) {
	for file, want := range map[string]string{
		"trigger-event-without-call-id.yaml": ":9:9: the trigger can never fire: turn_start events carry no tool call id",
		"at-after-run-ends.yaml":             ":9:9: at: 500ms can never happen: the run is over by 130ms at the latest",
		"steer-with-steering-off.yaml":       ":6:5: this action steers, but hooks: {steering: false} uninstalls the steering poll",
		"result-and-throw.yaml":              ":4:35: tools[0].behaviour has both result: and throw:",
	} {
		_, errOut, code := turnstile(t, "validate", "scenarios/testdata/invalid/"+file)
		if code != 1 || !strings.Contains(errOut, file+want) {
			t.Errorf("%s: exit %d: %s", file, code, errOut)
		}
	}
}

// TestRunWarnsOfActionsThatNeverHappened: what only a run can tell is a warning at the
// action's position, on stderr; the run still passes.
func TestRunWarnsOfActionsThatNeverHappened(t *testing.T) {
	p := filepath.Join(t.TempDir(), "quiet.yaml")
	_ = os.WriteFile(p, []byte(`tools:
  - {name: read, behaviour: {duration: 10, result: ok}}
provider:
  - content: [{toolCall: {id: r1, name: read, arguments: {}}}]
  - done
user:
  - on: {event: tool_execution_update, toolCallId: r1}
    steer: [never sent]
  - at: 5
    steer: [sent]
run: [hi]
`), 0o644)
	_, errOut, code := turnstile(t, "run", p)
	want := p + ":7:5: warning: this user action never happened: its trigger never fired\n"
	if code != 0 || errOut != want {
		t.Fatalf("exit %d: %q, want %q", code, errOut, want)
	}
}

// TestExploreTakesTheBudgetFlags: a budget every generated run exceeds is each run's
// verdict, and the reproducing command repeats it.
func TestExploreTakesTheBudgetFlags(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := turnstile(t, "explore", "--runs", "5", "--max-requests", "1", "--seed", "0123456789abcdef0123456789abcdef01234567", "--out", dir)
	if code != 1 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	// Every file written for the failures, whatever their layout.
	var readme []byte
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			readme = append(readme, data...)
		}
		return nil
	})
	if !strings.Contains(string(readme), "the run made 1 request; budget 1") || !strings.Contains(string(readme), "turnstile explore --max-requests 1 ") {
		t.Fatalf("the report lacks the budget verdict or flag:\n%s", readme)
	}
}

// TestExpectFailListsTheWholeSuite: an --expect-fail list names scenarios of the whole suite,
// so a run of a part of it (--run, --shard) takes the same list; a listed scenario left out is
// neither an error nor an unexpected pass.
func TestExpectFailListsTheWholeSuite(t *testing.T) {
	list := filepath.Join(t.TempDir(), "known.txt")
	if err := os.WriteFile(list, []byte("queues/steering-all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"conform", "--suite", "scenarios/queues", "--run", "queues/steering-one", "--expect-fail", list},
		{"test", "scenarios/queues", "--run", "queues/steering-one", "--expect-fail", list},
	} {
		if _, errOut, code := turnstile(t, args...); code != 0 {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	// Run, the listed scenario passes: that still fails the run, in the one shard that has it.
	if _, _, code := turnstile(t, "conform", "--suite", "scenarios/queues", "--run", "queues/steering-all", "--expect-fail", list); code != 1 {
		t.Errorf("the listed scenario run and passing: exit %d, want 1", code)
	}
	var codes []int
	for _, shard := range []string{"1/2", "2/2"} {
		_, _, code := turnstile(t, "conform", "--suite", "scenarios/queues", "--shard", shard, "--expect-fail", list)
		codes = append(codes, code)
	}
	if slices.Sort(codes); !slices.Equal(codes, []int{0, 1}) {
		t.Errorf("the two shards exit %v, want 0 and 1", codes)
	}
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

// TestTracksRunsTheReferenceAsAnOlderPi: --tracks makes the built-in reference behave as that
// release (no durationMs before pi 1.3.0) and skips the scenarios of a later pi. The
// scenario's inline expect: describes pi 1.6.0 (durations): at 1.0.3 it is left unchecked,
// and said so; at the newest it passes.
func TestTracksRunsTheReferenceAsAnOlderPi(t *testing.T) {
	// The file's expect: block (durationMs, pi 1.6.0's) is not held against pi 1.0.3.
	old, stderr, code := turnstile(t, "run", "scenarios/tools-sequential/duration-ms.yaml", "--format", "jsonl", "--tracks", "1.0.3")
	now, _, codeNow := turnstile(t, "run", "scenarios/tools-sequential/duration-ms.yaml", "--format", "jsonl")
	if code != 0 || codeNow != 0 || strings.Contains(old, "durationMs") || !strings.Contains(now, "durationMs") ||
		!strings.Contains(stderr, "judged at pi 1.0.3: its invariants, and expect: blocks left unchecked") {
		t.Fatalf("exit %d; durationMs at pi 1.0.3: %v, at the newest: %v; stderr %q", code, strings.Contains(old, "durationMs"), strings.Contains(now, "durationMs"), stderr)
	}
	// The goldens of the curated suite are pi 1.6.0's: an older pi needs goldens of its own.
	if _, stderr, code := turnstile(t, "test", "--tracks", "1.0.3"); code != 2 || !strings.Contains(stderr, "--tracks 1.0.3 needs --golden DIR") {
		t.Errorf("test --tracks 1.0.3 without --golden: exit %d, %q", code, stderr)
	}
	out, _, code := turnstile(t, "conform", "--suite", "scenarios/tools-sequential", "--tracks", "1.0.3")
	if code != 0 || !strings.Contains(out, "SKIP  tools-sequential/arguments-error: the scenario pins behaviour of pi 1.3.0; the implementation is held to pi 1.0.3") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// TestHelloTimeoutIsAFlag: an adapter slower to say hello than --hello-timeout is named by
// that timeout, and passes given more (a stranger's `npx tsx` adapter took 8.3 s to start,
// against a fixed 10 s). The flag is repeated in commands printed to reproduce a run.
func TestHelloTimeoutIsAFlag(t *testing.T) {
	slow := "sh -c 'sleep 1; exec " + selfAdapter(t) + "'"
	out, errOut, code := turnstile(t, "conform", "--impl", slow, "--hello-timeout", "300ms", "--run", "truncation/basic$")
	if code != 2 || !strings.Contains(errOut, "did not start: timeout after 300ms: no hello from the implementation (a slow start? turnstile --hello-timeout raises the limit)") {
		t.Fatalf("--hello-timeout 300ms: exit %d:\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = turnstile(t, "conform", "--impl", slow, "--hello-timeout", "20s", "--run", "truncation/basic$")
	if code != 0 {
		t.Fatalf("--hello-timeout 20s: exit %d:\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := turnstile(t, "run", "--impl", slow, "--hello-timeout", "0s", "truncation/basic"); code != 2 || !strings.Contains(errOut, "--hello-timeout must be positive") {
		t.Errorf("--hello-timeout 0s: exit %d: %s", code, errOut)
	}
}

// TestTestImplForCI: test --impl records an implementation's goldens, skipping exactly what
// conform skips (never recording a golden for them), then checks them: exit 0 when nothing
// changed, exit 1 with the change in text and JUnit when a behaviour did.
func TestTestImplForCI(t *testing.T) {
	self := selfAdapter(t)
	dir := t.TempDir()
	out, errOut, code := turnstile(t, "test", "--impl", self, "--golden", dir, "--update", "--run", "^(events|transcript)/")
	if code != 0 || !strings.Contains(out, " updated, ") {
		t.Fatalf("record: exit %d\n%s%s", code, out, errOut)
	}
	junit := filepath.Join(dir, "junit.xml")
	if out, errOut, code = turnstile(t, "test", "--impl", self, "--golden", dir, "--run", "^(events|transcript)/", "--junit", junit); code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, out, errOut)
	}
	golden := filepath.Join(dir, "events", "text-only.golden")
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(golden, bytes.Replace(data, []byte("agent_start"), []byte("agent_begin"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = turnstile(t, "test", "--impl", self, "--golden", dir, "--run", "^(events|transcript)/", "--junit", junit, "--format", "json")
	xml, _ := os.ReadFile(junit)
	if code != 1 || !strings.Contains(out, `"status": "fail"`) || !strings.Contains(string(xml), `failures="1"`) {
		t.Errorf("a changed behaviour: exit %d\n%s\n%s", code, out, xml)
	}
}
