package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

func runCmd() *cobra.Command {
	var format, impl, htmlOut, tracks, level string
	var proc processFlags
	var sel selection
	var budget budgetFlags
	cmd := &cobra.Command{
		Use:   "run [PATH|NAME…]",
		Short: "Run scenarios and print their timelines",
		Long: `Run simulates each scenario (a file, every file under a directory, or a name of the embedded
suite; without a path, the embedded suite) against the reference loop, or with --impl against
an implementation, prints its timeline and checks the scenario's expectations. A run fails
(exit 1) on a missed expectation, a broken invariant, or a failure of the world the scenario
does not expect (its script ran out, the run got stuck or exceeded its budget).

Details: docs/CLI.md#run`,
		Example: `  turnstile run scenarios/truncation
  turnstile run truncation/basic --format jsonl       # a scenario of the embedded suite, its canonical trace
  turnstile run --run 'queues/.*steer'                # the embedded scenarios whose name matches
  turnstile run scenarios/tools-parallel --html run.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "timeline" && format != "jsonl" {
				return usage(fmt.Errorf("--format must be timeline or jsonl, not %q", format))
			}
			if err := checkTracks(tracks); err != nil {
				return err
			}
			lvl, err := levels.Parse(level)
			if err != nil {
				return usage(err)
			}
			files, err := load(args, sel, budget)
			if err != nil {
				return err
			}
			newImpl, err := implementationAt(impl, proc, tracks)
			if err != nil {
				return usage(err)
			}
			target := newImpl()
			defer closeImpl(target)
			// The pi the run is judged at: --tracks, else an implementation's hello's.
			held, follows := tracks, map[string]bool{}
			if h, ok := target.(interface {
				Hello() (conformance.Hello, error)
			}); ok {
				hello, err := h.Hello()
				if err != nil {
					return usage(err)
				}
				if held == "" {
					held = hello.Tracks
				}
				for _, id := range hello.Follows {
					follows[id] = true
				}
			}
			behaviour, err := loop.BehaviourOf(held)
			if err != nil {
				return usage(fmt.Errorf("the implementation tracks pi %q: %w (--tracks X holds it to pi X)", held, err))
			}
			newest := behaviour == (loop.Behaviour{})
			invs := invariant.AllAt(behaviour)
			if lvl == levels.Core {
				// pi's conventions are judged nowhere: not by expect: blocks, not by invariants.
				newest = false
				invs = levels.Invariants(invs)
				fmt.Fprintln(cmd.ErrOrStderr(), "judged at core level: in the core view, pi's conventions and expect: blocks left unchecked")
			}
			out := cmd.OutOrStdout()
			st := newStyler(out)
			if !newest && lvl != levels.Core {
				fmt.Fprintf(cmd.ErrOrStderr(), "judged at pi %s: its invariants, and expect: blocks left unchecked (they describe pi %s)\n", held, loop.NewestVersion)
			}
			var bad []string
			skipped := 0
			page := htmlRuns{impl: impl, behaviour: behaviour}
			for _, f := range files {
				if impl == "" {
					target = newImpl()
				}
				// What conform would skip (a hook not installed, a feature lacked, a later pi, a
				// scenario of pi's conventions only at core level) is not run.
				if why := conformance.SkipReason(target, f.Scenario, tracks, lvl); why != "" {
					skipOut := out
					if format == "jsonl" {
						skipOut = cmd.ErrOrStderr() // stdout holds trace lines only
					}
					fmt.Fprintf(skipOut, "skip %s: %s\n", f.Scenario.Name, why)
					skipped++
					continue
				}
				tr, err := sim.Run(f.Scenario, target)
				var over *sim.BudgetError
				if err != nil && !errors.As(err, &over) {
					return usage(err)
				}
				problems := runProblems(f, tr, newest)
				var broken []invariant.Failure
				if lvl == levels.Core {
					// Judged in the core view, against the reference's run of the scenario.
					want, _ := sim.Run(f.Scenario, sim.NewReferenceWith(behaviour))
					broken = levels.Broken(tr, want, follows, invs)
				} else {
					broken = invariant.CheckAll(tr, invs...)
				}
				for _, v := range broken {
					problems = append(problems, "invariant "+v.String())
				}
				for _, w := range f.Warnings(tr) {
					fmt.Fprintln(cmd.ErrOrStderr(), w)
				}
				if htmlOut != "" {
					if err := page.add(f, tr, newest, broken); err != nil {
						return usage(err)
					}
				}
				if format == "jsonl" {
					_, _ = out.Write(tr.JSONL())
					if len(problems) > 0 {
						bad = append(bad, nameOf(f)+" ("+problems[0]+")")
					}
					continue
				}
				fmt.Fprintln(out, st.bold("=== "+f.Scenario.Name+"  ("+f.Path+")"))
				_, _ = out.Write(tr.Timeline())
				if len(problems) > 0 {
					for _, p := range problems {
						fmt.Fprintln(out, st.red("FAIL "+p))
					}
					bad = append(bad, nameOf(f))
				} else if !f.Expect.Empty() && newest {
					fmt.Fprintln(out, st.green("ok   expectations met"))
				} else if !f.Expect.Empty() {
					fmt.Fprintln(out, st.green("ok   (its expect: block left unchecked)"))
				}
				fmt.Fprintln(out)
			}
			if htmlOut != "" {
				if err := page.write(htmlOut); err != nil {
					return usage(err)
				}
			}
			if len(bad) > 0 {
				also := ""
				if skipped > 0 {
					also = fmt.Sprintf(" (%d skipped)", skipped)
				}
				return failed(fmt.Errorf("%d of %d scenarios failed%s: %s", len(bad), len(files)-skipped, also, strings.Join(bad, ", ")))
			}
			if skipped > 0 && format != "jsonl" {
				fmt.Fprintf(out, "%d scenarios run, %d skipped\n", len(files)-skipped, skipped)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "timeline", "output format: timeline or jsonl")
	cmd.Flags().StringVar(&impl, "impl", "", `command of an implementation to run instead of the built-in reference`)
	cmd.Flags().StringVar(&htmlOut, "html", "", "also write the runs as a self-contained HTML page to this file")
	proc.register(cmd.Flags(), conformance.DefaultTimeout, "scenario")
	sel.register(cmd.Flags())
	budget.register(cmd.Flags())
	cmd.Flags().StringVar(&tracks, "tracks", "", "pi version the reference behaves as (default: the newest)")
	cmd.Flags().StringVar(&level, "level", "pi", "pi (every rule) or core (pi's conventions not judged)")
	return cmd
}

// runProblems is what is wrong with a run: its unmet expectations (when checkExpect: they
// describe the newest pi), and a failure the world recorded (a script that ran out, a stuck run, a budget) unless the scenario expects the
// run to fail.
func runProblems(f *scenarios.File, tr *trace.Trace, checkExpect bool) []string {
	var problems []string
	if checkExpect {
		problems = f.Expect.Check(tr)
	}
	if f.Expect.RunFails != nil && *f.Expect.RunFails {
		return problems
	}
	e := tr.Failure()
	if e == nil {
		return problems
	}
	p := "the run failed: " + e.Error
	switch {
	case e.Name == "budget":
		p = fmt.Sprintf("the run exceeded its budget: %s (raise it with budget: {%s: N} or --max-%s)", e.Error, e.Target, e.Target)
	case f.Expect.RunFails == nil:
		p += " (add expect: {runFails: true} if the scenario means it)"
	}
	return append(problems, p)
}

// nameOf names a scenario file in a verdict: by its scenario's name, and by its path too when
// the file is one's own (an embedded one's path leads nowhere).
func nameOf(f *scenarios.File) string {
	if f.Path == f.Rel+".yaml" || f.Path == f.Rel+".yml" {
		return f.Scenario.Name
	}
	return f.Scenario.Name + " (" + f.Path + ")"
}
