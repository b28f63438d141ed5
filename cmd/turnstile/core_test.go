package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plantedCoreDefects are one-line defects of examples/six-duties (a loop written from the
// duties of an agent loop, not a port of pi), each with the rule its one cause must name at
// core level, whether run --level core, which judges by invariants alone (no reference
// trace beside it), sees it (no invariant follows a taken message into the transcript), and
// whether explore --level core finds it as that one cause.
var plantedCoreDefects = []struct {
	name, old, new, rule string
	runSees, exploreOne  bool
}{
	{"runs a truncated batch", `act(calls, reply.stopReason === "length", o, append)`, `act(calls, false, o, append)`, "R-TRUNC", true, true},
	{"trusts stopReason", `const calls = ((reply.content`, `const calls = reply.stopReason !== "toolUse" ? [] : ((reply.content`, "R-CONTENT-DECIDES", true, true},
	// explore finds this one under several causes, each minimal scenario another face of it.
	{"loses a steering message", `if (!toolsAsk && waiting.length === 0) waiting = await poll(o.followUps);`, `if (!toolsAsk) waiting = await poll(o.followUps);`, "R-NO-TURN-LIMIT", false, false},
}

// TestCoreLevelNamesEachPlantedDefect: the six-duties example passes at core level, and a
// copy of it with one planted defect fails with one cause. It needs the example's node
// modules (make test installs them).
func TestCoreLevelNamesEachPlantedDefect(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite through a node adapter four times")
	}
	t.Parallel()
	example := filepath.Join(repoRoot, "examples", "six-duties")
	if _, err := os.Stat(filepath.Join(example, "node_modules", "tsx")); err != nil {
		t.Skip("examples/six-duties/node_modules is not installed (make test installs it)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	source, err := os.ReadFile(filepath.Join(example, "loop.ts"))
	if err != nil {
		t.Fatal(err)
	}
	// conform runs the loop at core level with conform, and with run --impl for its exit code,
	// in a directory of its own (returned), each a process: the subtests run in parallel. tsx
	// can take more than the default 10 s to start on two loaded cores: --hello-timeout 60s.
	conform := func(t *testing.T, loop []byte) (causes []string, summary string, runCode int, dir string) {
		dir = t.TempDir()
		for _, name := range []string{"adapter.ts", "package.json"} {
			data, err := os.ReadFile(filepath.Join(example, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "loop.ts"), loop, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(example, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		out, errOut, _ := asProcess(t, dir, "conform", "--level", "core", "--format", "json", "--impl", node+" --import tsx adapter.ts", "--hello-timeout", "60s")
		var report struct {
			Summary string
			Causes  []struct{ Rule, Title string }
		}
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			t.Fatalf("%v\n%s%s", err, out, errOut)
		}
		for _, c := range report.Causes {
			causes = append(causes, c.Rule+" — "+c.Title)
		}
		_, _, runCode = asProcess(t, dir, "run", "--level", "core", "--impl", node+" --import tsx adapter.ts", "--hello-timeout", "60s")
		return causes, report.Summary, runCode, dir
	}
	// explored is the causes explore --level core finds in 500 runs of seed 1 (causes.txt),
	// run in dir.
	explored := func(t *testing.T, dir string) []string {
		out, errOut, _ := asProcess(t, dir, "explore", "--level", "core", "--runs", "500", "--seed", "1", "--out", "x", "--impl", node+" --import tsx adapter.ts", "--hello-timeout", "60s")
		data, err := os.ReadFile(filepath.Join(dir, "x", "causes.txt"))
		if errors.Is(err, fs.ErrNotExist) && strings.Contains(out, "no failure found") {
			return nil
		}
		if err != nil {
			t.Fatalf("%v\n%s%s", err, out, errOut)
		}
		var sigs []string
		for line := range strings.Lines(string(data)) {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				sigs = append(sigs, line)
			}
		}
		return sigs
	}
	t.Run("as it is", func(t *testing.T) {
		t.Parallel()
		causes, summary, code, dir := conform(t, source)
		if len(causes) != 0 || !strings.Contains(summary, " 0 failed") || code != 0 {
			t.Errorf("%s; causes %q; run --level core exits %d", summary, causes, code)
		}
		if sigs := explored(t, dir); len(sigs) != 0 {
			t.Errorf("explore --level core finds %q", sigs)
		}
	})
	for _, d := range plantedCoreDefects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			if strings.Count(string(source), d.old) != 1 {
				t.Fatalf("the planted line no longer applies: %s", d.old)
			}
			causes, summary, code, dir := conform(t, []byte(strings.Replace(string(source), d.old, d.new, 1)))
			if len(causes) != 1 || !strings.HasPrefix(causes[0], d.rule) {
				t.Errorf("%s; causes %q, want one of %s", summary, causes, d.rule)
			}
			if want := map[bool]int{true: 1, false: 0}[d.runSees]; code != want {
				t.Errorf("run --level core exits %d, want %d", code, want)
			}
			if d.exploreOne {
				if sigs := explored(t, dir); len(sigs) != 1 || !strings.HasPrefix(sigs[0], d.rule) {
					t.Errorf("explore --level core finds %q, want one cause %s", sigs, d.rule)
				}
			}
			t.Logf("%s: %q", summary, causes)
		})
	}
}
