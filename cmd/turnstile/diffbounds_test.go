package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// peakRSS runs the CLI with args from the repository root, under the bounds of bounded, and
// returns its peak resident memory in bytes, its output and exit code.
func peakRSS(t *testing.T, args ...string) (int64, string, int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("peak resident memory is read as Linux reports it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*boundTime)
	defer cancel()
	cmd := exec.CommandContext(ctx, builtCLI(t), args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no resource usage")
	}
	return int64(ru.Maxrss) << 10, string(out), code
}

// writeLongTrace writes a trace of about size bytes: a curated run's JSON lines (in the linear
// form) again and again, numbered on, its links with them.
func writeLongTrace(t *testing.T, p string, size int) {
	t.Helper()
	files, err := scenarios.Load([]string{"tools-parallel/after-hook-at-completion"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := sim.Run(files[0].Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	for n, off := 0, 0; n < size; off += len(run.Entries) {
		for _, e := range run.Entries {
			e.Seq += off
			if l := e.Link; l != nil {
				moved := *l
				for _, s := range []*int{&moved.Advances, &moved.AnswerExtends, &moved.Extends, &moved.NewExtends, &moved.Repeats} {
					if *s != 0 {
						*s += off
					}
				}
				e.Link = &moved
			}
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(append(line, '\n'))
			n += len(line) + 1
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// writeChainedTrace writes a trace of about size bytes of one stream of one-character text
// deltas in the linear form: each delivery advances the one before, each message_update
// repeats its delivery, so that every entry in full holds the text so far (a trace that, in
// full, grows with the square of its length). first is the first delta's text.
func writeChainedTrace(t *testing.T, p string, size int, first string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"seq":1,"t":0,"kind":"deliver","name":"streamEvent","target":"1","data":{"partial":{"content":[],"role":"assistant"},"type":"start"}}` + "\n")
	b.WriteString(`{"seq":2,"t":0,"kind":"deliver","name":"streamEvent","target":"1","data":{"contentIndex":0,"type":"text_start"},"link":{"advances":1}}` + "\n")
	for seq, prev, delta := 3, 2, first; b.Len() < size; seq, prev, delta = seq+2, seq, "a" {
		fmt.Fprintf(&b, `{"seq":%d,"t":0,"kind":"deliver","name":"streamEvent","target":"1","data":{"contentIndex":0,"delta":%q,"type":"text_delta"},"link":{"advances":%d}}`+"\n", seq, delta, prev)
		fmt.Fprintf(&b, `{"seq":%d,"t":0,"kind":"event","name":"message_update","data":{"assistantMessageEvent":{"contentIndex":0,"delta":%q,"type":"text_delta"},"type":"message_update"},"link":{"repeats":%d}}`+"\n", seq+1, delta, seq)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiffAndAuditMemoryDoesNotGrowWithTheTrace: diff and audit of a trace ten times longer
// take about the memory of the shorter one (diff read both sides whole before, at about six
// times their size).
func TestDiffAndAuditMemoryDoesNotGrowWithTheTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the CLI on traces of 20 MB")
	}
	dir := t.TempDir()
	small, large := filepath.Join(dir, "small.jsonl"), filepath.Join(dir, "large.jsonl")
	writeLongTrace(t, small, 2<<20)
	writeLongTrace(t, large, 20<<20)
	for _, args := range [][]string{{"diff", "%s", "%s"}, {"audit", "%s"}} {
		var peaks []int64
		for _, p := range []string{small, large} {
			argv := append([]string(nil), args...)
			for i := range argv {
				argv[i] = strings.ReplaceAll(argv[i], "%s", p)
			}
			rss, out, code := peakRSS(t, argv...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %.500s", argv, code, out)
			}
			peaks = append(peaks, rss)
		}
		t.Logf("%s: %d MB for 2 MB, %d MB for 20 MB", args[0], peaks[0]>>20, peaks[1]>>20)
		if peaks[1] > peaks[0]*3/2+16<<20 {
			t.Errorf("%s: %d MB for a 2 MB trace, %d MB for a 20 MB one", args[0], peaks[0]>>20, peaks[1]>>20)
		}
	}
}

// TestDiffOfHostileTracesEndsWithinBounds: a 3 MB trace of chained links (in full, about
// half a gigabyte) and /dev/zero given to diff each end with a verdict, or a clear error,
// within the bounds of TestHostileInputsEndWithinBounds.
func TestDiffOfHostileTracesEndsWithinBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the CLI")
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := t.TempDir()
	chain, other := filepath.Join(dir, "chain.jsonl"), filepath.Join(dir, "other.jsonl")
	writeChainedTrace(t, chain, 3<<20, "a")
	writeChainedTrace(t, other, 3<<20, "b")
	trace := filepath.Join(dir, "run.jsonl")
	writeLongTrace(t, trace, 1)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"diff", chain, chain}, 0, "the traces are identical"},
		{[]string{"diff", chain, other}, 1, "first difference at entry 3:"},
		{[]string{"diff", trace, "/dev/zero"}, 2, "/dev/zero holds a NUL byte (at offset 0)"},
		{[]string{"diff", "/dev/zero", trace}, 2, "/dev/zero holds a NUL byte (at offset 0)"},
		{[]string{"diff", "/dev/zero", "/dev/zero"}, 2, "/dev/zero holds a NUL byte (at offset 0)"},
		{[]string{"diff", "truncation/basic", "/dev/zero"}, 2, "/dev/zero holds a NUL byte (at offset 0)"},
	} {
		name := c.args[0]
		for _, a := range c.args[1:] {
			name += " " + filepath.Base(a)
		}
		t.Run(name, func(t *testing.T) {
			out, code := bounded(t, c.args...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d (want %d): %.500s\nwant %q", code, c.code, out, c.want)
			}
		})
	}
}
