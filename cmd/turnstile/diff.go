package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

func diffCmd() *cobra.Command {
	var context int
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Show where two traces first differ",
		Long: `Diff compares two traces and prints their first divergence with context, in timeline form.
Each side is a scenario file (it is run against the reference), a JSON-lines trace
(turnstile run --format jsonl), or a timeline (a golden file). Exit 1 when they differ.`,
		Example: `  turnstile diff golden/testdata/queues/basic.golden new.golden
  turnstile run a.yaml --format jsonl > a.jsonl; turnstile diff a.jsonl b.yaml`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			want, err := timelineOf(args[0])
			if err != nil {
				return usage(err)
			}
			got, err := timelineOf(args[1])
			if err != nil {
				return usage(err)
			}
			d, differ := sim.FirstDivergence(want, got, context)
			if !differ {
				fmt.Fprintln(cmd.OutOrStdout(), "the traces are identical")
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "--- %s\n+++ %s\n%s", args[0], args[1], d)
			return failed(fmt.Errorf("%s and %s differ at line %d", args[0], args[1], d.Line))
		},
	}
	cmd.Flags().IntVar(&context, "context", 3, "lines of context around the difference")
	return cmd
}

// timelineOf reads one side of a diff as timeline lines.
func timelineOf(p string) ([]string, error) {
	if scenarios.IsScenarioFile(p) {
		files, err := scenarios.LoadPath(p)
		if err != nil {
			return nil, err
		}
		tr, err := sim.Run(files[0].Scenario, sim.NewReference())
		if err != nil {
			return nil, err
		}
		return sim.Lines(tr.Timeline()), nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		var lines []string
		for i, raw := range sim.Lines(data) {
			var e sim.Entry
			if err := json.Unmarshal([]byte(raw), &e); err != nil {
				return nil, fmt.Errorf("%s:%d: not a trace line: %v", p, i+1, err)
			}
			lines = append(lines, sim.TimelineLine(e))
		}
		return lines, nil
	}
	return sim.Lines(data), nil
}
