package explore

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/turnstile-dev/turnstile/scenarios"
)

// progress writes the exploration's output: a progress line kept up to date in place on a
// terminal, plain lines elsewhere.
type progress struct {
	w        io.Writer
	terminal bool
	shown    bool // a progress line is on screen
	last     time.Time
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

func (p *progress) printf(format string, args ...any) {
	if p.w != nil {
		fmt.Fprintf(p.w, format, args...)
	}
}

// tick shows the progress line, at most five times a second (on a terminal only).
func (p *progress) tick(runs, failures int, elapsed time.Duration) {
	if p.w == nil || !p.terminal || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(runs) / elapsed.Seconds()
	}
	fmt.Fprintf(p.w, "\r\033[Kruns %d  failures %d  %.0f runs/s  %s", runs, failures, rate, elapsed.Round(time.Second))
	p.shown = true
}

// clear removes the progress line before other output.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// write saves a failure: the minimal scenario, both timelines and how to reproduce it.
func (x *explorer) write(dir string, f *Failure) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{}
	if data, err := scenarios.Write(f.Minimal); err == nil {
		files["minimal.yaml"] = data
	} else {
		files["minimal.yaml"] = []byte(fmt.Sprintf("# the minimal scenario cannot be written as a file: %v\n", err))
	}
	if data, err := scenarios.Write(f.Scenario); err == nil {
		files["generated.yaml"] = data
	}
	if f.ImplTrace != nil {
		files["impl.timeline"] = f.ImplTrace.Timeline()
	}
	if f.RefTrace != nil {
		files["reference.timeline"] = f.RefTrace.Timeline()
	}
	files["README.md"] = []byte(x.readme(dir, f))
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (x *explorer) readme(dir string, f *Failure) string {
	var b strings.Builder
	status := "a reproducible failure"
	if f.Flaky {
		status = "a flaky failure (a re-run gave another trace): suspect nondeterminism, not a loop bug"
	}
	fmt.Fprintf(&b, "# explore: seed=%d run=%d — %s (%s)\n\n", f.Seed, f.Run, status, f.Kind)
	fmt.Fprintf(&b, "Reproduce: `%s --seed %d --runs 1`\n\n", x.opts.Command, f.RunSeed)
	if x.opts.Impl == nil {
		fmt.Fprintf(&b, "Or run the minimal scenario: `turnstile run %s`\n\n", filepath.Join(dir, "minimal.yaml"))
	} else {
		fmt.Fprintf(&b, "The minimal scenario against the reference: `turnstile run %s`\n\n", filepath.Join(dir, "minimal.yaml"))
	}
	if !f.Flaky {
		fmt.Fprintf(&b, "Shrunk: %s.\n\n", f.Shrink)
	}
	fmt.Fprintf(&b, "```\n%s\n```\n\n", strings.TrimRight(f.Message, "\n"))
	b.WriteString("Files: `minimal.yaml` (the shrunk scenario), `generated.yaml` (as generated), `impl.timeline`")
	if f.RefTrace != nil {
		b.WriteString(", `reference.timeline`")
	}
	b.WriteString(" (the minimal scenario's timelines).\n")
	return b.String()
}
