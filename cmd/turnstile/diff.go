package main

import (
	"bytes"
	"encoding/json"
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
			want, err := sideOf(args[0])
			if err != nil {
				return usage(err)
			}
			got, err := sideOf(args[1])
			if err != nil {
				return usage(err)
			}
			want.name, got.name = args[0], args[1]
			out := cmd.OutOrStdout()
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

// sideOf reads one side of a diff: a scenario (run against the reference), JSON lines, or a
// timeline.
func sideOf(p string) (side, error) {
	info, statErr := os.Stat(p)
	if statErr == nil && info.IsDir() {
		return side{}, fmt.Errorf("%s is a directory; diff compares one trace with one", p)
	}
	if scenarios.IsScenarioFile(p) || errors.Is(statErr, os.ErrNotExist) {
		return scenarioSide(p)
	}
	data, err := readCapped(p, maxDiffInput)
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
	files, err := scenarios.Load([]string{p})
	if err != nil {
		return side{}, err
	}
	if len(files) != 1 {
		return side{}, fmt.Errorf("%s holds %d scenarios; diff compares one with one", p, len(files))
	}
	tr, err := sim.Run(files[0].Scenario, sim.NewReference())
	var over *sim.BudgetError
	if err != nil && !errors.As(err, &over) {
		return side{}, err
	}
	return side{trace: tr.Expanded(), timeline: trace.Lines(tr.Timeline())}, nil
}

// traceSide reads one JSON-lines trace.
func traceSide(p string, data []byte) (side, error) {
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		// An entry: a JSON object with its sequence number and kind (any kind, so that a
		// trace edited by hand still compares, the edit shown as a difference).
		var e struct {
			Seq  *json.Number `json:"seq"`
			Kind *string      `json:"kind"`
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] == '{' {
			if err := json.Unmarshal(line, &e); err != nil {
				return side{}, jsonLineError(p, i+1, line, err)
			}
		}
		if len(line) == 0 || line[0] != '{' || e.Seq == nil || e.Kind == nil {
			return side{}, fmt.Errorf("%s:%d: not a trace entry (a JSON object with seq and kind), so %s is not a JSON-lines trace (diff takes a scenario, a trace from turnstile run --format jsonl, or a timeline)", p, i+1, p)
		}
		if i > 0 && e.Seq.String() == "1" {
			// turnstile run --format jsonl of several scenarios writes their traces one
			// after the other, each numbered from 1.
			return side{}, fmt.Errorf("%s:%d: a second trace begins here (seq 1 again): %s holds the traces of several scenarios; diff compares one with one (turnstile run NAME --format jsonl writes one)", p, i+1, p)
		}
	}
	tr, err := trace.ReadJSONL(data)
	if err != nil {
		return side{}, fmt.Errorf("%s: %w", p, err)
	}
	full, err := tr.Expand()
	if err != nil {
		return side{}, fmt.Errorf("%s: %w", p, err)
	}
	return side{trace: full}, nil
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

// maxDiffInput is the largest file diff reads: a run's trace is at most --max-bytes (16 MiB
// by default) of JSON lines, and /dev/zero has no end.
const maxDiffInput = 64 << 20

// readCapped reads a file of at most max bytes; a larger one is an error saying so, read no
// further than one byte past the limit.
func readCapped(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := fmt.Errorf("%s is larger than %d MiB, the most diff reads (a run's trace is at most --max-bytes of JSON lines, 16 MiB by default)", p, max>>20)
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > max {
		return nil, tooLarge
	}
	// A text file holds no NUL byte: a binary one (/dev/zero) is refused at its first block.
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if i := bytes.IndexByte(head[:n], 0); i >= 0 {
		return nil, fmt.Errorf("%s holds a NUL byte (at offset %d): it is not text, so neither a trace nor a timeline", p, i)
	}
	rest, err := io.ReadAll(io.LimitReader(f, max+1-int64(n)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	data := append(head[:n:n], rest...)
	if int64(len(data)) > max {
		return nil, tooLarge
	}
	return data, nil
}

// jsonLineError says why a line that begins as a JSON object is not one, at its column.
func jsonLineError(p string, n int, line []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("%s:%d: not a trace entry: %v", p, n, err)
	}
	col := int(se.Offset)
	if strings.Contains(se.Error(), "exceeded max depth") {
		return fmt.Errorf("%s:%d:%d: the JSON nests more than 10,000 levels deep, deeper than Go's JSON decoder reads (a trace entry's payload nests far less)", p, n, col)
	}
	return fmt.Errorf("%s:%d:%d: invalid JSON: %v (a JSON-lines trace holds one entry, a JSON object, a line)", p, n, col, se)
}

// timelineLine is the start of every line of a timeline (trace.TimelineLine): the entry's
// virtual time and its kind.
var timelineLine = regexp.MustCompile(`^ *[0-9]+ms  [A-Za-z]+ `)
