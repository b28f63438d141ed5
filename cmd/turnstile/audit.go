package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/audit"
)

func auditCmd() *cobra.Command {
	var maxLine int
	cmd := &cobra.Command{
		Use:   "audit FILE…",
		Short: "Check recordings of real runs (pi events, pi session files) against the loop's rules",
		Long: `Audit reads recordings of real agent runs (pi AgentEvents as JSON lines, pi session files,
turnstile traces; the format is told from the first line; "-" reads stdin) and checks them
against every rule that needs no knowledge of the simulated world; each finding names the
file, the line and the rule. Rules: ` + ruleNames() + `.
Exit codes: 0 no finding, 1 findings, 2 a file that cannot be read.

Details: docs/CLI.md#audit`,
		Example: `  turnstile audit app-events.jsonl
  turnstile audit ~/.pi/agent/sessions/*/*.jsonl
  turnstile run scenarios/truncation --format jsonl | turnstile audit -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			st := newStyler(out)
			findings := 0
			// A file that cannot be read is said and skipped: the files after it are still
			// audited (a glob of sessions is not stopped by one bad file), and the exit is 2.
			var unreadable []string
			skip := func(err error) {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				unreadable = append(unreadable, err.Error())
			}
			for _, path := range args {
				f := os.Stdin
				if path != "-" {
					var err error
					if f, err = os.Open(path); err != nil {
						skip(err)
						continue
					}
				}
				n := 0
				sum, err := audit.Check(f, audit.Options{MaxLine: maxLine}, func(x audit.Finding) {
					n++
					fmt.Fprintf(out, "%s:%d: %s %s\n", path, x.Line, st.red(x.Rule+":"), x.Msg)
				})
				if path != "-" {
					f.Close()
				}
				var ie *audit.InputError
				if errors.As(err, &ie) {
					skip(fmt.Errorf("%s:%d:%d: %s", path, ie.Line, ie.Col, ie.Msg))
					findings += n
					continue
				}
				if err != nil {
					skip(fmt.Errorf("%s: %w", path, err))
					findings += n
					continue
				}
				for _, note := range sum.Notes {
					fmt.Fprintf(out, "%s: note: %s\n", path, note)
				}
				what := fmt.Sprintf("%d %s", sum.Runs, plural(sum.Runs, "run", "runs"))
				if sum.Format == audit.Session {
					what = fmt.Sprintf("%d %s", sum.Runs, plural(sum.Runs, "message", "messages"))
				}
				verdict := st.green("ok")
				if n > 0 {
					verdict = st.red(fmt.Sprintf("%d %s", n, plural(n, "finding", "findings")))
				}
				fmt.Fprintf(out, "%s: %s, %d lines, %s: %s\n", path, sum.Format, sum.Lines, what, verdict)
				findings += n
			}
			if len(unreadable) > 0 {
				return usage(fmt.Errorf("%d of %d %s could not be read (said above); %d %s in the others", len(unreadable), len(args),
					plural(len(args), "file", "files"), findings, plural(findings, "finding", "findings")))
			}
			if findings > 0 {
				return failed(fmt.Errorf("%d %s", findings, plural(findings, "finding", "findings")))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&maxLine, "max-line", audit.DefaultMaxLine, "longest line to read, in bytes")
	return cmd
}

// ruleNames names the audit's rules, in their order.
func ruleNames() string {
	var names []string
	for _, r := range audit.Rules() {
		names = append(names, r.Name)
	}
	return strings.Join(names, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
