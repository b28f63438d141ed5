package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestGoldensBesideScenarios: without --golden, a scenario's golden is the file beside
// it (NAME.golden): --update writes it there, a changed one fails, and the embedded suite,
// which cannot be rewritten, refuses --update.
func TestTestGoldensBesideScenarios(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "hello.yaml")
	if err := os.WriteFile(sc, []byte("provider: [\"hi\"]\nrun: [\"go\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(dir, "hello.golden")
	if out, _, code := turnstile(t, "test", sc); code != 1 || !strings.Contains(out, "no golden file "+beside) {
		t.Fatalf("before --update: exit %d: %s", code, out)
	}
	if out, _, code := turnstile(t, "test", sc, "--update"); code != 0 || !strings.Contains(out, "updated "+beside) {
		t.Fatalf("--update: exit %d: %s", code, out)
	}
	if out, _, code := turnstile(t, "test", sc); code != 0 {
		t.Fatalf("after --update: exit %d: %s", code, out)
	}
	if err := os.WriteFile(beside, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code := turnstile(t, "test", sc); code != 1 || !strings.Contains(out, "first difference at line 1") {
		t.Fatalf("a changed golden: exit %d: %s", code, out)
	}
	if _, errOut, code := turnstile(t, "test", "truncation/basic", "--update"); code != 2 || !strings.Contains(errOut, "the embedded suite cannot be rewritten") {
		t.Fatalf("--update of the embedded suite: exit %d: %s", code, errOut)
	}
}
