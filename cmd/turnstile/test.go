package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/golden"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

func testCmd() *cobra.Command {
	var update bool
	var dir, impl, tracks, junit, format, expectFail, level string
	var proc processFlags
	var sel selection
	var budget budgetFlags
	cmd := &cobra.Command{
		Use:   "test [PATH|NAME…]",
		Short: "Compare scenario timelines with their golden files",
		Long: `Test runs each scenario against the reference loop and compares its timeline with its golden
file under --golden (a mismatch prints the first difference); --update rewrites the goldens:
read the diff before committing it. With --impl CMD it records and checks that
implementation's own goldens instead, in the --golden directory (required).

Details: docs/CLI.md#test`,
		Example: `  turnstile test
  turnstile test scenarios --update && git diff golden/
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
			lvl, err := levels.Parse(level)
			if err != nil {
				return usage(err)
			}
			var expect map[string]bool
			if expectFail != "" {
				listed, err := readNameList(expectFail)
				if err != nil {
					return usage(err)
				}
				var names []string
				for _, f := range files {
					names = append(names, f.Scenario.Name)
				}
				if expect, err = conformance.CheckNames(listed, names); err != nil {
					return usage(fmt.Errorf("--expect-fail %s: %w", expectFail, err))
				}
			}
			target := newImpl()
			defer closeImpl(target)
			if impl != "" {
				if h, ok := target.(interface {
					Hello() (conformance.Hello, error)
				}); ok {
					if _, err := h.Hello(); err != nil {
						return usage(fmt.Errorf("the implementation did not start: %w", err))
					}
				}
			}
			out := cmd.OutOrStdout()
			text := format == "text"
			if !text {
				out = io.Discard
			}
			st := newStyler(out)
			report := conformance.Report{Implementation: cmp.Or(impl, conformance.ReferenceName), Profile: trace.Strict}
			began := time.Now()
			updated := 0
			record := func(res conformance.Result) {
				if expect[res.Scenario] {
					switch res.Status {
					case conformance.Fail:
						res.Status, res.Reason = conformance.ExpectedFail, "expected failure: "+res.Reason
					case conformance.Pass:
						res.Status, res.Reason = conformance.Fail, "unexpected pass: the scenario is listed as a known failure; remove it from the list"
						fmt.Fprintf(out, "%s %s: %s\n", st.red("FAIL"), res.Scenario, res.Reason)
					}
				}
				switch res.Status {
				case conformance.Pass:
					report.Passed++
				case conformance.Fail:
					report.Failed++
				case conformance.Skip:
					report.Skipped++
				case conformance.ExpectedFail:
					report.ExpectedFailures++
				}
				report.Results = append(report.Results, res)
			}
			for _, f := range files {
				rel := f.Rel
				res := conformance.Result{Scenario: f.Scenario.Name, Family: family(rel)}
				scBegan := time.Now()
				if tracks != "" && f.Scenario.Since != "" && loop.VersionLess(tracks, f.Scenario.Since) {
					res.Status, res.Reason = conformance.Skip, "the scenario pins behaviour of a later pi than "+tracks
					record(res)
					continue
				}
				if impl == "" {
					target = sim.NewReferenceWith(behaviour)
				} else if why := conformance.SkipReason(target, f.Scenario, tracks, lvl); why != "" {
					// What conform skips is never recorded: a golden of a scenario the
					// implementation cannot run would pin the harness's refusal.
					res.Status, res.Reason = conformance.Skip, why
					record(res)
					continue
				}
				tr, err := sim.Run(f.Scenario, target)
				res.Duration = time.Since(scBegan)
				var over *sim.BudgetError
				if err != nil && !errors.As(err, &over) && impl == "" {
					return usage(err)
				}
				if err != nil && !errors.As(err, &over) {
					// The implementation failed this scenario (a crash, a protocol error, a
					// timeout): counted, and the suite goes on.
					res.Status, res.Reason, res.Error = conformance.Fail, err.Error(), err.Error()
					fmt.Fprintf(out, "%s %s: %s\n", st.red("FAIL"), rel, err)
					record(res)
					continue
				}
				if impl == "" {
					// The reference must meet the scenario's own expect: block (written for
					// the newest pi); a golden of a scenario it does not is never recorded.
					if problems := runProblems(f, tr, newest); len(problems) > 0 {
						res.Status = conformance.Fail
						res.Reason = "the reference does not meet the scenario's expect: block (a bug in the scenario): " + strings.Join(problems, "; ")
						fmt.Fprintf(out, "%s %s (%s): the reference does not meet the scenario's expect: block (a bug in the scenario; turnstile run %s shows the run):\n", st.red("FAIL"), rel, f.Path, f.Path)
						for _, p := range problems {
							fmt.Fprintf(out, "     %s\n", p)
						}
						record(res)
						continue
					}
				}
				got := golden.Render(tr)
				name := golden.Name(rel)
				want, rerr := fs.ReadFile(goldens, name)
				if update {
					if rerr == nil && bytes.Equal(want, got) {
						res.Status = conformance.Pass
						record(res)
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
					res.Status, res.Reason = conformance.Fail, "no golden file "+path.Join(dir, name)+" (run with --update to create it)"
					fmt.Fprintf(out, "%s %s: %s\n", st.red("FAIL"), rel, res.Reason)
				case !bytes.Equal(want, got):
					d, _ := trace.FirstDivergence(trace.Lines(want), trace.Lines(got), 3)
					res.Status, res.Reason = conformance.Fail, fmt.Sprintf("the timeline differs from its golden:\n%s", d)
					fmt.Fprintf(out, "%s %s (%s)\n%s", st.red("FAIL"), rel, f.Path, d)
				default:
					res.Status = conformance.Pass
				}
				record(res)
			}
			report.Duration = time.Since(began)
			if junit != "" {
				if err := writeJUnitFile(junit, report); err != nil {
					return usage(err)
				}
			}
			if format == "json" {
				if err := report.WriteJSON(cmd.OutOrStdout()); err != nil {
					return failed(err)
				}
			}
			if update {
				fmt.Fprintf(out, "%d updated, %d unchanged, %d skipped\n", updated, report.Passed, report.Skipped)
				if report.Failed > 0 {
					return failed(fmt.Errorf("%s, no golden recorded for %s", plural(report.Failed, "1 scenario failed", fmt.Sprintf("%d scenarios failed", report.Failed)), plural(report.Failed, "it", "them")))
				}
				return nil
			}
			fmt.Fprintln(out, report.Summary())
			if report.ExpectedFailures > 0 {
				fmt.Fprintln(out, report.ExpectedText())
			}
			if report.Failed > 0 {
				return failed(fmt.Errorf("%s (a golden mismatch, an error, or the scenario's expect: block)", plural(report.Failed, "1 scenario failed", fmt.Sprintf("%d scenarios failed", report.Failed))))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&update, "update", false, "rewrite the golden files")
	cmd.Flags().StringVar(&dir, "golden", "golden/testdata", "directory of the golden files")
	cmd.Flags().StringVar(&impl, "impl", "", "implementation whose own goldens to record and check (needs --golden)")
	proc.register(cmd.Flags(), conformance.DefaultTimeout, "scenario")
	sel.register(cmd.Flags())
	budget.register(cmd.Flags())
	cmd.Flags().StringVar(&tracks, "tracks", "", "pi version the reference behaves as (default: the newest)")
	cmd.Flags().StringVar(&junit, "junit", "", "write a JUnit XML report to this file")
	cmd.Flags().StringVar(&format, "format", "text", "output: text or json")
	cmd.Flags().StringVar(&expectFail, "expect-fail", "", "file listing scenarios known to fail, one name a line")
	cmd.Flags().StringVar(&level, "level", "pi", "with --impl: pi or core (skips scenarios pinning only conventions)")
	return cmd
}

// family is the rule family of a scenario's path ("truncation" of "truncation/basic").
func family(rel string) string {
	fam, _, _ := strings.Cut(rel, "/")
	return fam
}

// writeJUnitFile writes a report as JUnit XML to path.
func writeJUnitFile(path string, report conformance.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := conformance.WriteJUnit(f, report); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
