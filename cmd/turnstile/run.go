package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/conformance"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

func runCmd() *cobra.Command {
	var format, impl, htmlOut string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "run [PATH…]",
		Short: "Run scenarios and print their timelines",
		Long: `Run simulates each scenario (a file, or every file under a directory, sorted) against the
reference loop and prints its timeline, then checks the scenario's inline expectations.
Without a path it runs the embedded curated suite. With --impl the scenarios run against
that implementation (a command speaking the conformance protocol) instead, so you can read
its timeline; turnstile conform compares it with the reference.

--format jsonl prints the canonical trace lines only: the same bytes on every run.
--html FILE also writes the runs as one self-contained HTML page: a lane per actor, findings
marked, and with --impl the reference's trace beside the implementation's.`,
		Example: `  turnstile run scenarios/truncation
  turnstile run scenarios/queues/follow-up-batch-fine-print.yaml --format jsonl
  turnstile run scenarios/abort-error --impl "node conformance/adapters/pi/adapter.mjs"
  turnstile run scenarios/tools-parallel --html run.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "timeline" && format != "jsonl" {
				return usage(fmt.Errorf("--format must be timeline or jsonl, not %q", format))
			}
			files, err := scenarios.Load(args)
			if err != nil {
				return usage(err)
			}
			newImpl, err := implementation(impl, timeout)
			if err != nil {
				return usage(err)
			}
			target := newImpl()
			defer closeImpl(target)
			out := cmd.OutOrStdout()
			st := newStyler(out)
			var bad []string
			page := htmlRuns{impl: impl}
			for _, f := range files {
				if impl == "" {
					target = sim.NewReference()
				}
				tr, err := sim.Run(f.Scenario, target)
				if err != nil {
					return usage(err)
				}
				if htmlOut != "" {
					if err := page.add(f, tr); err != nil {
						return usage(err)
					}
				}
				if format == "jsonl" {
					_, _ = out.Write(tr.JSONL())
					continue
				}
				fmt.Fprintln(out, st.bold("=== "+f.Scenario.Name+"  ("+f.Path+")"))
				_, _ = out.Write(tr.Timeline())
				if problems := f.Expect.Check(tr); len(problems) > 0 {
					for _, p := range problems {
						fmt.Fprintln(out, st.red("FAIL "+p))
					}
					bad = append(bad, f.Path)
				} else if !f.Expect.Empty() {
					fmt.Fprintln(out, st.green("ok   expectations met"))
				}
				fmt.Fprintln(out)
			}
			if htmlOut != "" {
				if err := page.write(htmlOut); err != nil {
					return usage(err)
				}
			}
			if len(bad) > 0 {
				return failed(fmt.Errorf("%d of %d scenarios did not meet their expectations: %s", len(bad), len(files), strings.Join(bad, ", ")))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "timeline", "output format: timeline or jsonl")
	cmd.Flags().StringVar(&impl, "impl", "", `command of an implementation to run instead of the built-in reference`)
	cmd.Flags().StringVar(&htmlOut, "html", "", "also write the runs as a self-contained HTML page to this file")
	cmd.Flags().DurationVar(&timeout, "timeout", conformance.DefaultTimeout, "time limit per scenario for an --impl command")
	return cmd
}
