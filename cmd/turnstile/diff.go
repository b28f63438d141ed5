package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
scenario file or a name of the embedded suite (it is run against the reference), a
JSON-lines trace (turnstile run --format jsonl), or a timeline (a golden file, or what
turnstile run prints for one scenario).

Two traces (scenarios or JSON lines) are compared byte for byte, entry by entry: the first
differing entry is shown as timeline lines, with the field that differs (its JSON path and
both values), so a difference the timeline does not show — a timestamp, a sequence number,
a payload abbreviated by its digest — is never called identical. A golden file holds only
a timeline; against one, timelines are compared, and the output says so.

A long value is shown around where the two first differ ("from its character 144 on").

Exit 0 when they are identical, 1 when they differ, 2 when a side is none of the three
(the error names its file and first line that is not a trace's or a timeline's), is empty,
or holds the traces of several scenarios.`,
		Example: `  turnstile run a.yaml --format jsonl > a.jsonl; turnstile diff a.jsonl b.yaml
  turnstile diff truncation/basic my-truncation.yaml
  turnstile diff golden/testdata/queues/steering-one-at-a-time.golden new.golden`,
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
	data, err := os.ReadFile(p)
	if err != nil {
		return side{}, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return side{}, fmt.Errorf("%s is empty, so neither a trace nor a timeline (a failed turnstile run … > %s leaves it so)", p, p)
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			// An entry: a JSON object with its sequence number and kind (any kind, so that a
			// trace edited by hand still compares, the edit shown as a difference).
			var e struct {
				Seq  *json.Number `json:"seq"`
				Kind *string      `json:"kind"`
			}
			if line = bytes.TrimSpace(line); len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Seq == nil || e.Kind == nil {
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

// timelineLine is the start of every line of a timeline (trace.TimelineLine): the entry's
// virtual time and its kind.
var timelineLine = regexp.MustCompile(`^ *[0-9]+ms  [A-Za-z]+ `)
