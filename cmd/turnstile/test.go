package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/golden"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

func testCmd() *cobra.Command {
	var update bool
	var dir, impl, tracks string
	var proc processFlags
	var sel selection
	var budget budgetFlags
	cmd := &cobra.Command{
		Use:   "test [PATH|NAME…]",
		Short: "Compare scenario timelines with their golden files",
		Long: `Test runs each scenario against the reference loop and compares its timeline with its golden
file, DIR/<path under the nearest scenarios/ folder>.golden (DIR is --golden, default
golden/testdata). A mismatch prints the first difference with context. --update rewrites the
golden files: read the diff (git diff) before committing it. The reference must also meet each
scenario's own expect: block (as turnstile run checks it): a scenario it does not meet fails,
and --update records no golden for it.

Without a path it checks the embedded suite against the embedded goldens; names of the
embedded suite ("truncation", "truncation/basic") are checked against the embedded goldens
too, unless --golden is given.

With --impl CMD it records and checks the goldens of that implementation instead (a command
speaking the conformance protocol), in the directory --golden names (required): a team
whose loop deliberately differs from pi keeps its own regression suite — record once with
--update, then every later run compares against its own past.

The goldens are pi 1.6.0's; --tracks X runs the reference as pi release X instead (with
goldens of your own, --golden DIR, which an older X needs), skipping the scenarios of a later
pi (since) and leaving the expect: blocks unchecked: they describe pi 1.6.0.`,
		Example: `  turnstile test
  turnstile test scenarios/queues
  turnstile test scenarios --update && git diff golden/
  turnstile test --run 'truncation/.*'
  turnstile test --impl "python3 my_adapter.py" --golden my-goldens --update   # record
  turnstile test --impl "python3 my_adapter.py" --golden my-goldens            # check`,
		RunE: func(cmd *cobra.Command, args []string) error {
			goldenGiven := cmd.Flags().Changed("golden")
			if impl != "" && !goldenGiven {
				return usage(errors.New("--impl needs --golden DIR: an implementation's goldens live in a directory of your own, not beside the reference's"))
			}
			if update && len(args) == 0 && !goldenGiven {
				return usage(errors.New("--update needs the PATH of the scenarios whose goldens to rewrite, or --golden DIR"))
			}
			files, err := load(args, sel, budget)
			if err != nil {
				return err
			}
			var goldens fs.FS = os.DirFS(dir)
			embedded := !goldenGiven
			for _, f := range files {
				embedded = embedded && f.Embedded
			}
			if embedded {
				goldens = golden.Embedded()
			}
			newImpl, err := implementation(impl, proc)
			if err != nil {
				return usage(err)
			}
			if err := checkTracks(tracks); err != nil {
				return err
			}
			behaviour, err := loop.BehaviourOf(tracks)
			if err != nil {
				return usage(fmt.Errorf("--tracks: %w", err))
			}
			newest := behaviour == (loop.Behaviour{})
			if !newest && !goldenGiven {
				return usage(fmt.Errorf("--tracks %s needs --golden DIR: the goldens given are pi %s's; record pi %s's once with --golden DIR --update", tracks, loop.NewestVersion, tracks))
			}
			target := newImpl()
			defer closeImpl(target)
			out := cmd.OutOrStdout()
			st := newStyler(out)
			passed, failures, updated, skipped := 0, 0, 0, 0
			for _, f := range files {
				rel := f.Rel
				if tracks != "" && f.Scenario.Since != "" && loop.VersionLess(tracks, f.Scenario.Since) {
					skipped++
					continue
				}
				if impl == "" {
					target = sim.NewReferenceWith(behaviour)
				}
				tr, err := sim.Run(f.Scenario, target)
				var over *sim.BudgetError
				if err != nil && !errors.As(err, &over) {
					return usage(err)
				}
				if impl == "" {
					// The reference must meet the scenario's own expect: block (written for
					// the newest pi); a golden of a scenario it does not is never recorded.
					if problems := runProblems(f, tr, newest); len(problems) > 0 {
						failures++
						fmt.Fprintf(out, "%s %s (%s): the reference does not meet the scenario's expect: block (a bug in the scenario; turnstile run %s shows the run):\n", st.red("FAIL"), rel, f.Path, f.Path)
						for _, p := range problems {
							fmt.Fprintf(out, "     %s\n", p)
						}
						continue
					}
				}
				got := golden.Render(tr)
				name := golden.Name(rel)
				want, rerr := fs.ReadFile(goldens, name)
				if update {
					if rerr == nil && bytes.Equal(want, got) {
						passed++
						continue
					}
					target := filepath.Join(dir, filepath.FromSlash(name))
					if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
						return usage(err)
					}
					if err := os.WriteFile(target, got, 0o644); err != nil {
						return usage(err)
					}
					fmt.Fprintf(out, "updated %s\n", target)
					updated++
					continue
				}
				switch {
				case rerr != nil:
					failures++
					fmt.Fprintf(out, "%s %s: no golden file %s (run with --update to create it)\n", st.red("FAIL"), rel, path.Join(dir, name))
				case !bytes.Equal(want, got):
					failures++
					d, _ := trace.FirstDivergence(trace.Lines(want), trace.Lines(got), 3)
					fmt.Fprintf(out, "%s %s (%s)\n%s", st.red("FAIL"), rel, f.Path, d)
				default:
					passed++
				}
			}
			if update {
				fmt.Fprintf(out, "%d updated, %d unchanged\n", updated, passed)
				if failures > 0 {
					return failed(fmt.Errorf("%s the expect: block, no golden recorded for it", plural(failures, "1 scenario fails", fmt.Sprintf("%d scenarios fail", failures))))
				}
				return nil
			}
			if skipped > 0 {
				fmt.Fprintf(out, "%d passed, %d failed, %d skipped (scenarios of a later pi than %s)\n", passed, failures, skipped, tracks)
			} else {
				fmt.Fprintf(out, "%d passed, %d failed\n", passed, failures)
			}
			if failures > 0 {
				return failed(fmt.Errorf("%s (a golden mismatch, or the scenario's expect: block)", plural(failures, "1 scenario failed", fmt.Sprintf("%d scenarios failed", failures))))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&update, "update", false, "rewrite the golden files")
	cmd.Flags().StringVar(&dir, "golden", "golden/testdata", "directory of the golden files")
	cmd.Flags().StringVar(&impl, "impl", "", "command of an implementation whose own goldens to record and check (needs --golden)")
	proc.register(cmd.Flags(), conformance.DefaultTimeout, "scenario")
	sel.register(cmd.Flags())
	budget.register(cmd.Flags())
	cmd.Flags().StringVar(&tracks, "tracks", "", "pi version the reference behaves as (default: the newest)")
	return cmd
}
