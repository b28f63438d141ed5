package explore

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/trace"
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
func (p *progress) tick(runs, failing, causes int, elapsed time.Duration) {
	if p.w == nil || !p.terminal || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(runs) / elapsed.Seconds()
	}
	fmt.Fprintf(p.w, "\r\033[Kruns %d  failing %d  causes %d  %.0f runs/s  %s", runs, failing, causes, rate, elapsed.Round(time.Second))
	p.shown = true
}

// clear removes the progress line before other output.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// causeDir is the folder name of a cause: a readable slug of its signature and a short hash
// of it, so that a cause keeps its folder from one exploration to the next.
func causeDir(signature string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(signature) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	sum := sha256.Sum256([]byte(signature))
	return strings.TrimRight(b.String(), "-") + "-" + hex.EncodeToString(sum[:4])
}

// write saves a cause: the minimal scenario, both timelines and how to reproduce it.
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
	if data, err := json.MarshalIndent(f.Findings, "", "  "); err == nil {
		files["findings.json"] = append(data, '\n')
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// replay is the command that runs the minimal scenario of dir against the implementation
// (or the reference) and judges it.
func (x *explorer) replay(dir string) string {
	file := filepath.Join(dir, "minimal.yaml")
	if x.opts.ImplCommand == "" {
		if t := x.opts.Target.Tracks; t != "" {
			return "turnstile run --tracks " + t + " " + file
		}
		return "turnstile run " + file
	}
	cmd := fmt.Sprintf("turnstile conform --impl %s%s --suite %s", strconv.Quote(x.opts.ImplCommand), x.opts.ImplFlags, file)
	if x.opts.Profile != "" && x.opts.Profile != trace.Strict {
		cmd += " --profile " + string(x.opts.Profile)
	}
	return cmd
}

func (x *explorer) readme(dir string, f *Failure) string {
	var b strings.Builder
	status := "a reproducible failure"
	if f.Flaky {
		status = "a flaky failure (a re-run gave another trace): suspect nondeterminism, not a loop bug"
	}
	fmt.Fprintf(&b, "# explore: %s\n\nSignature: `%s`\n\n", f.Cause().Headline, f.Signature())
	runs := "1 failing run shows"
	if f.Count != 1 {
		runs = fmt.Sprintf("%d failing runs show", f.Count)
	}
	fmt.Fprintf(&b, "%s (%s), first seen in run %d of seed %d; %s this cause.\n\n", status, f.Kind, f.Run, f.Seed, runs)
	if r := f.Rule(); r != "" {
		fmt.Fprintf(&b, "Rule: %s\n\n", r)
	}
	fmt.Fprintf(&b, "Reproduce the minimal scenario: `%s`\n\n", x.replay(dir))
	fmt.Fprintf(&b, "Reproduce the generated run: `%s --seed %d --runs 1`\n\n", x.opts.Command, f.RunSeed)
	if note := x.shortcuts.Note(x.replay(dir)); note != "" {
		fmt.Fprintf(&b, "%s%s\n", shortcutsNote, note)
	}
	switch {
	case !f.Flaky && f.Shrink.Tried > 0:
		fmt.Fprintf(&b, "Shrunk (keeping this cause first and bringing in no other): %s.\n\n", f.Shrink)
	case !f.Flaky && f.Kind == kindHang:
		b.WriteString("Not shrunk: a run that hangs takes the whole time limit, and so would each smaller candidate; minimal.yaml is the generated scenario.\n\n")
	}
	if len(f.PassesWithout) > 0 {
		fmt.Fprintf(&b, "Passes without (each taken away alone from the minimal scenario, the implementation shows nothing wrong): %s. The first is the finest lead; other causes that pass without it are likely the same defect.\n\n", strings.Join(f.PassesWithout, "; "))
	}
	b.WriteString("## Findings of the minimal scenario\n\n")
	fmt.Fprintf(&b, "The cause:\n\n```\n%s```\n\n", f.Cause().Text(""))
	var rest []string
	for _, fd := range f.Findings {
		if fd.Signature != f.Cause().Signature {
			rest = append(rest, fd.Text(""))
		}
	}
	if len(rest) > 0 {
		fmt.Fprintf(&b, "Every other finding (a divergence after the first may be its consequence):\n\n```\n%s```\n\n", strings.Join(rest, ""))
	}
	shrunk := "the shrunk scenario"
	if f.Shrink.Tried == 0 {
		shrunk = "the scenario, not shrunk"
	}
	fmt.Fprintf(&b, "Files: `minimal.yaml` (%s), `generated.yaml` (as generated), `findings.json` (every finding of the minimal scenario, values in full), `impl.timeline`", shrunk)
	if f.RefTrace != nil {
		b.WriteString(", `reference.timeline`")
	}
	b.WriteString(" (the minimal scenario's timelines).\n")
	return b.String()
}

// writeCauses writes causes.txt in out: the signature of every cause found, one a line after
// a comment with its count and rule, in the form --ignore reads. The signatures an earlier
// exploration into out listed and this one did not find are kept, at the end: their folders
// are still there, and a rerun of one seed must not drop what --ignore relies on.
func writeCauses(out string, res Result) error {
	path := filepath.Join(out, "causes.txt")
	var earlier map[string]bool
	if f, err := os.Open(path); err == nil {
		earlier, err = ReadSignatures(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# causes found by turnstile explore (seed %d, %s); pass this file to --ignore to look past them\n", res.Seed, plural(res.Runs, "run"))
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "\n# %s", plural(f.Count, "run"))
		if f.Flaky {
			b.WriteString(", flaky")
		}
		if r := f.Rule(); r != "" {
			fmt.Fprintf(&b, "; %s", r)
		}
		fmt.Fprintf(&b, "\n%s\n", f.Signature())
		delete(earlier, f.Signature())
		for _, a := range f.Aliases {
			fmt.Fprintf(&b, "%s\n", a)
			delete(earlier, a)
		}
	}
	if len(earlier) > 0 {
		b.WriteString("\n# found by an earlier exploration into this folder, not by this one\n")
		for _, sig := range slices.Sorted(maps.Keys(earlier)) {
			fmt.Fprintf(&b, "%s\n", sig)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Summary is the end of an exploration's output: the counts, then each cause with the number
// of runs it failed, its rule and where its minimal scenario is.
func Summary(res Result) string {
	var b strings.Builder
	writeCounts(&b, res)
	// What no generated scenario reaches, so that "no failure" is not read as covering it.
	ungenerated := ""
	if len(res.Unexplored) > 0 {
		ungenerated = fmt.Sprintf("not explored (no generated scenario needs them): %s\n", strings.Join(res.Unexplored, ", "))
	}
	if len(res.Failures) == 0 {
		b.WriteString("; no failure found\n")
		b.WriteString(ungenerated)
		return b.String()
	}
	writeFailures(&b, res.Failures)
	if res.HangStop {
		fmt.Fprintf(&b, "stopped after %s that hung, each waiting out the time limit: fix the hang first (its cause is above), or raise --max-hangs\n", plural(res.Hangs, "run"))
	}
	names, groups := commonIngredients(res.Failures)
	for i, name := range names {
		fmt.Fprintf(&b, "%s pass without %s: likely one defect that it brings out: fix that and explore again\n",
			causeList(groups[i]), name)
	}
	b.WriteString(ungenerated)
	if res.Recheck != nil {
		b.WriteString(recheckNote(res))
	} else {
		b.WriteString(res.Shortcuts.Note(res.command))
	}
	return b.String()
}

// writeCounts writes the summary's first words: the seed, the runs and how many failed.
func writeCounts(b *strings.Builder, res Result) {
	fmt.Fprintf(b, "seed %d: %s in %s (%.1f runs/s), %d failing", res.Seed, plural(res.Runs, "run"), res.Elapsed.Round(time.Millisecond), res.RunsPerSecond(), res.Failing)
	if res.Ignored > 0 {
		fmt.Fprintf(b, ", %d more showing only ignored causes", res.Ignored)
		if res.Ignored > res.Failing {
			fmt.Fprintf(b, " (most failing runs hidden by --ignore: %d of %d; what they hide is not explored)", res.Ignored, res.Ignored+res.Failing)
		}
	}
}

// writeFailures writes how many distinct failures were found, then each with its runs, rule,
// aliases, minimal scenario, the ingredients it passes without and its folder.
func writeFailures(b *strings.Builder, failures []*Failure) {
	flaky := 0
	for _, f := range failures {
		if f.Flaky {
			flaky++
		}
	}
	if len(failures) == 1 {
		b.WriteString("; found 1 distinct failure")
	} else {
		fmt.Fprintf(b, "; found %d distinct failures", len(failures))
	}
	if flaky > 0 {
		fmt.Fprintf(b, " (%d flaky)", flaky)
	}
	b.WriteString(":\n")
	for k, f := range failures {
		fmt.Fprintf(b, "%3d. %s  %s\n", k+1, plural(f.Count, "run"), f.Signature())
		if r := f.Rule(); r != "" {
			fmt.Fprintf(b, "       rule: %s\n", r)
		}
		if len(f.Aliases) > 0 {
			fmt.Fprintf(b, "       also seen as: %s\n", strings.Join(f.Aliases, "; "))
		}
		if f.Flaky {
			b.WriteString("       flaky: a re-run gave another trace\n")
		} else if f.Shrink.Tried > 0 {
			fmt.Fprintf(b, "       minimal: %s\n", f.Shrink.After)
		}
		if len(f.PassesWithout) > 0 {
			fmt.Fprintf(b, "       passes without: %s\n", strings.Join(f.PassesWithout, "; "))
		}
		if f.Dir != "" {
			fmt.Fprintf(b, "       %s\n", f.Dir)
		}
	}
}

// recheckNote is the note of the causes' minimal scenarios re-run, named by their causes'
// numbers.
func recheckNote(res Result) string {
	number := map[string]string{}
	for k, f := range res.Failures {
		if f.Minimal != nil {
			number[f.Minimal.Name] = fmt.Sprintf("cause %d", k+1)
		}
	}
	byNumber := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = cmp.Or(number[n], n)
		}
		return out
	}
	rc := *res.Recheck
	rc.Checked, rc.Passed = byNumber(rc.Checked), byNumber(rc.Passed)
	return rc.Note(res.Shortcuts)
}

// plural is n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// shortcutsNote begins the paragraph of a cause's README that says the exchange's shortcuts
// were taken and how to check whether they are the cause.
const shortcutsNote = "The exchange's shortcuts were taken: "

// RecordRecheck tells the README of each cause whose minimal scenario res.Recheck re-ran
// what that showed: whether the minimal scenario passes without the exchange's shortcuts.
// The verdict takes the place of the paragraph that suggested the check, so that a reader
// meets the answer, not the question.
func RecordRecheck(res Result) error {
	if res.Recheck == nil {
		return nil
	}
	for _, f := range res.Failures {
		if f.Dir == "" || f.Minimal == nil || !slices.Contains(res.Recheck.Checked, f.Minimal.Name) {
			continue
		}
		verdict := "it fails too, so the shortcuts are not this cause."
		if slices.Contains(res.Recheck.Passed, f.Minimal.Name) {
			verdict = "it passes, so this cause lies in how the adapter takes the shortcuts, not in the loop."
		}
		name := filepath.Join(f.Dir, "README.md")
		readme, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		said := fmt.Sprintf("Without the shortcuts: the exchange's shortcuts were taken, and the minimal scenario was re-run one at a time (--one-at-a-time): %s\n\n", verdict)
		text := string(readme)
		if at := strings.Index(text, shortcutsNote); at >= 0 {
			end := len(text)
			if n := strings.Index(text[at:], "\n\n"); n >= 0 {
				end = at + n + 2
			}
			text = text[:at] + said + text[end:]
		} else {
			text += "\n" + said
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
