package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAuditExitCodes(t *testing.T) {
	honest := "audit/testdata/pi/events--tool-turn.events.jsonl"
	out, _, code := turnstile(t, "audit", honest, "audit/testdata/pi/truncation--basic.session.jsonl")
	if code != 0 || !strings.Contains(out, honest+": pi events, ") || !strings.Contains(out, "pi session") {
		t.Fatalf("honest recordings: exit %d\n%s", code, out)
	}

	// A planted defect: agent_end reports the system message edited.
	data, err := os.ReadFile(filepath.Join(repoRoot, honest))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i, l := range lines {
		if strings.Contains(l, `"type":"agent_end"`) {
			lines[i] = strings.Replace(l, `"description":"Echo a value"`, `"description":"Echo"`, 1)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := turnstile(t, "audit", bad)
	if code != 1 || !strings.Contains(out, bad+":"+strconv.Itoa(len(lines))+": unchanged: agent_end's message") || !strings.Contains(errOut, "1 finding") {
		t.Errorf("planted defect: exit %d\n%s%s", code, out, errOut)
	}

	broken := filepath.Join(t.TempDir(), "broken.jsonl")
	if err := os.WriteFile(broken, []byte("{\"type\":\"agent_start\"}\n{\"type\": nope}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = turnstile(t, "audit", broken)
	if code != 2 || !strings.Contains(errOut, broken+":2:11: invalid JSON") {
		t.Errorf("unreadable input: exit %d, %s", code, errOut)
	}
	// The files after an unreadable one are still audited; the exit says a file was not read.
	out, errOut, code = turnstile(t, "audit", broken, filepath.Join(t.TempDir(), "missing.jsonl"), bad, honest)
	if code != 2 || !strings.Contains(errOut, broken+":2:11: invalid JSON") || !strings.Contains(errOut, "missing.jsonl: no such file") ||
		!strings.Contains(out, "unchanged: agent_end's message") || !strings.Contains(out, honest+": pi events, ") ||
		!strings.Contains(errOut, "2 of 4 files could not be read (said above); 1 finding in the others") {
		t.Errorf("an unreadable file among others: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := turnstile(t, "audit"); code != 2 {
		t.Errorf("no file: exit %d, want 2", code)
	}
}

func TestRunHTMLWritesAPage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.html")
	_, _, code := turnstile(t, "run", "scenarios/tools-parallel/completion-order.yaml", "--html", file)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>turnstile run: tools-parallel/completion-order</title>", "tool tool-1 (echo)", "stream #2"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if _, _, code := turnstile(t, "run", "scenarios/truncation/basic.yaml", "--html", filepath.Join(t.TempDir(), "no", "dir", "x.html")); code != 2 {
		t.Errorf("unwritable --html: exit %d, want 2", code)
	}
}

func TestConformReportOfAPassingRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	out, _, code := turnstile(t, "conform", "--suite", "scenarios/truncation", "--report", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), "5 passed, 0 failed") || strings.Contains(string(index), "Causes of failure") {
		t.Errorf("index of a passing run:\n%s", index)
	}
}

// TestConformReportPagesUseTheHeldPi: a failing scenario's page sets the implementation's
// trace beside the reference's at the pi conform held it to, where the difference is; the
// newest reference there showed two equal traces (the served reference, pi 1.6.0's, held to
// 1.0.3, whose tool results have no durationMs).
func TestConformReportPagesUseTheHeldPi(t *testing.T) {
	self := selfAdapter(t)
	dir := filepath.Join(t.TempDir(), "report")
	out, _, code := turnstile(t, "conform", "--impl", strconv.Quote(self), "--tracks", "1.0.3", "--run", "tools-sequential/duration-ms$", "--report", dir)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	page, err := os.ReadFile(filepath.Join(dir, "tools-sequential-duration-ms.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `class="diff first`) {
		t.Error("the page shows no differing entry")
	}
}

// TestConformReportRemovesPagesOfAnEarlierReport: a report written where an earlier one was
// removes the pages of scenarios that no longer fail (they would look current), and nothing
// else of the directory.
func TestConformReportRemovesPagesOfAnEarlierReport(t *testing.T) {
	self := selfAdapter(t)
	dir := filepath.Join(t.TempDir(), "report")
	page, own := filepath.Join(dir, "tools-sequential-duration-ms.html"), filepath.Join(dir, "notes.html")
	args := []string{"conform", "--impl", strconv.Quote(self), "--run", "tools-sequential/duration-ms$", "--report", dir}
	if out, _, code := turnstile(t, append(args, "--tracks", "1.0.3")...); code != 1 {
		t.Fatalf("held to 1.0.3: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("the failing scenario's page: %v", err)
	}
	if err := os.WriteFile(own, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code := turnstile(t, args...); code != 0 {
		t.Fatalf("at its own pi: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(page); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the page of the scenario that now passes is still there (%v)", err)
	}
	if _, err := os.Stat(own); err != nil {
		t.Errorf("a file the report did not write was touched: %v", err)
	}
}
