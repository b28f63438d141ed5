package main

import (
	"errors"
	"fmt"
	"io"
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
			a := auditRun{out: cmd.OutOrStdout(), errs: cmd.ErrOrStderr(), opts: audit.Options{MaxLine: maxLine}}
			a.st = newStyler(a.out)
			for _, path := range args {
				a.file(path)
			}
			if len(a.unreadable) > 0 {
				return usage(fmt.Errorf("%d of %d %s could not be read (said above); %d %s in the others", len(a.unreadable), len(args),
					plural(len(args), "file", "files"), a.findings, plural(a.findings, "finding", "findings")))
			}
			if a.findings > 0 {
				return failed(fmt.Errorf("%d %s", a.findings, plural(a.findings, "finding", "findings")))
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

// auditRun is one turnstile audit: the findings so far and the files that could not be read.
type auditRun struct {
	out, errs  io.Writer
	st         styler
	opts       audit.Options
	findings   int
	unreadable []string
}

// file audits one recording ("-": stdin) and prints its findings and verdict.
func (a *auditRun) file(path string) {
	f := os.Stdin
	if path != "-" {
		var err error
		if f, err = os.Open(path); err != nil {
			a.skip(err)
			return
		}
	}
	n := 0
	sum, err := audit.Check(f, a.opts, func(x audit.Finding) {
		n++
		fmt.Fprintf(a.out, "%s:%d: %s %s\n", path, x.Line, a.st.red(x.Rule+":"), x.Msg)
	})
	if path != "-" {
		f.Close()
	}
	a.findings += n
	var ie *audit.InputError
	if errors.As(err, &ie) {
		a.skip(fmt.Errorf("%s:%d:%d: %s", path, ie.Line, ie.Col, ie.Msg))
		return
	}
	if err != nil {
		a.skip(fmt.Errorf("%s: %w", path, err))
		return
	}
	for _, note := range sum.Notes {
		fmt.Fprintf(a.out, "%s: note: %s\n", path, note)
	}
	what := fmt.Sprintf("%d %s", sum.Runs, plural(sum.Runs, "run", "runs"))
	if sum.Format == audit.Session {
		what = fmt.Sprintf("%d %s", sum.Runs, plural(sum.Runs, "message", "messages"))
	}
	verdict := a.st.green("ok")
	if n > 0 {
		verdict = a.st.red(fmt.Sprintf("%d %s", n, plural(n, "finding", "findings")))
	}
	fmt.Fprintf(a.out, "%s: %s, %d lines, %s: %s\n", path, sum.Format, sum.Lines, what, verdict)
}

// skip says why a file cannot be read; the files after it are still audited, and the exit is 2.
func (a *auditRun) skip(err error) {
	fmt.Fprintln(a.errs, err)
	a.unreadable = append(a.unreadable, err.Error())
}
