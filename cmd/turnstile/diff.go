package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

func diffCmd() *cobra.Command {
	var context int
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Show where two traces first differ",
		Long: `Diff compares two traces and prints their first difference with context. Each side is a
scenario file or a name of the embedded suite (run against the reference), a JSON-lines trace
(turnstile run --format jsonl), or a timeline (a golden file, or what turnstile run prints).
Exit 0 when they are identical, 1 when they differ, 2 when a side is not one trace.

Details: docs/CLI.md#diff`,
		Example: `  turnstile run a.yaml --format jsonl > a.jsonl; turnstile diff a.jsonl b.yaml
  turnstile diff truncation/basic my-truncation.yaml
  turnstile diff scenarios/queues/steering-one-at-a-time.golden new.golden`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if context < 0 {
				return usage(fmt.Errorf("--context must be 0 or more, not %d", context))
			}
			out := cmd.OutOrStdout()
			a, b := openSide(args[0]), openSide(args[1])
			defer a.close()
			defer b.close()
			if a.streams() && b.streams() {
				return diffStreams(out, a, b, context)
			}
			want, err := sideOf(a)
			if err != nil {
				return usage(err)
			}
			got, err := sideOf(b)
			if err != nil {
				return usage(err)
			}
			want.name, got.name = args[0], args[1]
			if want.trace != nil && got.trace != nil {
				c := trace.Compare(want.trace, got.trace, trace.Strict)
				k := c.First()
				if k < 0 {
					fmt.Fprintln(out, "the traces are identical (every entry agrees, field by field)")
					return nil
				}
				fmt.Fprintf(out, "--- %s\n+++ %s\n%s", args[0], args[1], c.Text(context))
				at := c.Steps[k].Got + 1
				if c.Steps[k].Op == trace.Missing {
					return failed(fmt.Errorf("%s and %s differ at reference entry %d", args[0], args[1], c.Steps[k].Want+1))
				}
				return failed(fmt.Errorf("%s and %s differ at entry %d", args[0], args[1], at))
			}
			for _, s := range []*side{&want, &got} {
				if s.timeline == nil && s.trace != nil {
					s.timeline = trace.Lines(s.trace.Timeline())
				}
			}
			d, differ := trace.FirstDivergence(want.timeline, got.timeline, context)
			if !differ {
				fmt.Fprintln(out, "the timelines are identical (a golden file holds only a timeline, so only timelines were compared)")
				return nil
			}
			fmt.Fprintf(out, "--- %s\n+++ %s\n%s", args[0], args[1], d)
			return failed(fmt.Errorf("%s and %s differ at line %d", args[0], args[1], d.Line))
		},
	}
	cmd.Flags().IntVar(&context, "context", 3, "lines of context before the difference")
	return cmd
}

// side is one side of a diff: its JSON lines when it is a trace, and its timeline.
type side struct {
	name     string
	trace    *trace.Trace // in full; nil for a timeline
	timeline []string
}

// opened is one side of a diff as named, its kind told from its first bytes: a scenario
// (run against the reference), or a file whose first block has been read.
type opened struct {
	path     string
	scenario bool
	f        *os.File
	head     []byte // up to headSize bytes from the file's start
	err      error  // the file cannot be read (said when it is)
}

// headSize is how much of a file is read to tell its kind.
const headSize = 4096

// openSide opens one side of a diff and reads its first block.
func openSide(p string) *opened {
	o := &opened{path: p}
	info, statErr := os.Stat(p)
	if statErr == nil && info.IsDir() {
		o.err = fmt.Errorf("%s is a directory; diff compares one trace with one", p)
		return o
	}
	if scenarios.IsScenarioFile(p) || errors.Is(statErr, os.ErrNotExist) {
		o.scenario = true
		return o
	}
	if o.f, o.err = os.Open(p); o.err != nil {
		return o
	}
	head := make([]byte, headSize)
	n, err := io.ReadFull(o.f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		o.err = fmt.Errorf("%s: %w", p, err)
	}
	o.head = head[:n]
	return o
}

func (o *opened) close() {
	if o.f != nil {
		o.f.Close()
	}
}

// streams reports whether the side is read entry by entry: a scenario, or a file of JSON
// lines (its first byte other than a blank is "{").
func (o *opened) streams() bool {
	if o.scenario {
		return true
	}
	t := bytes.TrimLeft(o.head, " \t\r\n")
	return o.err == nil && len(t) > 0 && t[0] == '{'
}

// sideOf reads one side of a diff whole: a scenario (run against the reference), JSON
// lines, or a timeline.
func sideOf(o *opened) (side, error) {
	p := o.path
	if o.err != nil {
		return side{}, o.err
	}
	if o.scenario {
		return scenarioSide(p)
	}
	data, err := o.readCapped(maxDiffInput)
	if err != nil {
		return side{}, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return side{}, fmt.Errorf("%s is empty, so neither a trace nor a timeline (a failed turnstile run … > %s leaves it so)", p, p)
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return traceSide(p, data)
	}
	return timelineSide(p, data)
}

// scenarioSide runs the one scenario of a file, or of the embedded suite, against the reference.
func scenarioSide(p string) (side, error) {
	tr, err := scenarioRun(p)
	if err != nil {
		return side{}, err
	}
	return side{trace: tr.Expanded(), timeline: trace.Lines(tr.Timeline())}, nil
}

// scenarioRun is the trace of the one scenario of a file, or of the embedded suite, run
// against the reference (a run that exceeded its budget included).
func scenarioRun(p string) (*trace.Trace, error) {
	files, err := scenarios.Load([]string{p})
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("%s holds %d scenarios; diff compares one with one", p, len(files))
	}
	tr, err := sim.Run(files[0].Scenario, sim.NewReference())
	var over *sim.BudgetError
	if err != nil && !errors.As(err, &over) {
		return nil, err
	}
	return tr, nil
}

// traceSide reads one JSON-lines trace whole (to compare its timeline with another).
func traceSide(p string, data []byte) (side, error) {
	tr := &trace.Trace{}
	r := trace.NewReader(bytes.NewReader(data), len(data)+1)
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return side{}, readError(p, err)
		}
		tr.Entries = append(tr.Entries, e)
	}
	full, err := tr.Expand()
	if err != nil {
		return side{}, fmt.Errorf("%s: %w", p, err)
	}
	return side{trace: full}, nil
}

// readError says why a JSON-lines trace cannot be read, at its file's line.
func readError(p string, err error) error {
	var re *trace.ReadError
	switch {
	case !errors.As(err, &re):
		return fmt.Errorf("%s: %w", p, err)
	case re.NotEntry:
		return fmt.Errorf("%s:%d: not a trace entry (a JSON object with seq and kind), so %s is not a JSON-lines trace (diff takes a scenario, a trace from turnstile run --format jsonl, or a timeline)", p, re.Line, p)
	case re.SecondTrace:
		// turnstile run --format jsonl of several scenarios writes their traces one after the
		// other, each numbered from 1.
		return fmt.Errorf("%s:%d: a second trace begins here (seq 1 again): %s holds the traces of several scenarios; diff compares one with one (turnstile run NAME --format jsonl writes one)", p, re.Line, p)
	case re.Col > 0:
		return fmt.Errorf("%s:%d:%d: %s", p, re.Line, re.Col, re.Msg)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// timelineSide reads one timeline: a golden file, or what turnstile run prints of one scenario.
func timelineSide(p string, data []byte) (side, error) {
	lines := trace.Lines(data)
	first := 0
	if len(lines) > 0 && strings.HasPrefix(lines[0], "=== ") {
		// The output of turnstile run: a header, the timeline, then the run's verdict.
		first = 1
		end := first
		for end < len(lines) && timelineLine.MatchString(lines[end]) {
			end++
		}
		for _, rest := range lines[end:] {
			if strings.HasPrefix(rest, "=== ") {
				return side{}, fmt.Errorf("%s holds the timelines of more than one scenario; diff compares one with one", p)
			}
		}
		lines = lines[:end]
	}
	for i, line := range lines[first:] {
		if !timelineLine.MatchString(line) {
			return side{}, fmt.Errorf("%s:%d: not a timeline line (one begins with its time and kind, as \"   0ms  ev    agent_start\"), so %s is not a timeline (diff takes a scenario, a trace from turnstile run --format jsonl, or a timeline)", p, first+i+1, p)
		}
	}
	return side{timeline: lines[first:]}, nil
}

// maxDiffInput is the largest file diff reads whole (a timeline, or JSON lines compared
// with one): a run's trace is at most --max-bytes (16 MiB by default) of JSON lines, and
// /dev/zero has no end. Two traces of JSON lines are read entry by entry, of any size.
const maxDiffInput = 64 << 20

// readCapped reads the rest of the file after its head, at most max bytes in all; a larger
// one is an error saying so, read no further than one byte past the limit.
func (o *opened) readCapped(max int64) ([]byte, error) {
	p := o.path
	tooLarge := fmt.Errorf("%s is larger than %d MiB, the most diff reads (a run's trace is at most --max-bytes of JSON lines, 16 MiB by default)", p, max>>20)
	if info, err := o.f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > max {
		return nil, tooLarge
	}
	if err := o.textHead(); err != nil {
		return nil, err
	}
	rest, err := io.ReadAll(io.LimitReader(o.f, max+1-int64(len(o.head))))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	data := append(o.head[:len(o.head):len(o.head)], rest...)
	if int64(len(data)) > max {
		return nil, tooLarge
	}
	return data, nil
}

// textHead refuses a file whose first block holds a NUL byte: a text file holds none, and
// a binary one (/dev/zero) is refused at once.
func (o *opened) textHead() error {
	if i := bytes.IndexByte(o.head, 0); i >= 0 {
		return fmt.Errorf("%s holds a NUL byte (at offset %d): it is not text, so neither a trace nor a timeline", o.path, i)
	}
	return nil
}

// timelineLine is the start of every line of a timeline (trace.TimelineLine): the entry's
// virtual time and its kind.
var timelineLine = regexp.MustCompile(`^ *[0-9]+ms  [A-Za-z]+ `)
