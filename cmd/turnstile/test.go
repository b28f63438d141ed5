package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/golden"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// testFlags are the flags of turnstile test.
type testFlags struct {
	update                                              bool
	dir, impl, tracks, junit, format, expectFail, level string
	proc                                                processFlags
	sel                                                 selection
	budget                                              budgetFlags
}

func testCmd() *cobra.Command {
	var o testFlags
	cmd := &cobra.Command{
		Use:   "test [PATH|NAME…]",
		Short: "Compare scenario timelines with their golden files",
		Long: `Test runs each scenario against the reference and compares its timeline with its golden,
NAME.golden beside the scenario (or under --golden DIR); --update rewrites the goldens that
differ: read the diff before committing it. Details: docs/CLI.md#test`,
		Example: `  turnstile test
  turnstile test scenarios --update && git diff scenarios/
  turnstile test --impl "python3 my_adapter.py" --golden my-goldens --update   # your loop's own`,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := o.start(cmd, args)
			if err != nil {
				return err
			}
			defer closeImpl(t.target)
			for _, f := range t.files {
				if err := t.scenario(f); err != nil {
					return err
				}
			}
			return t.finish(cmd.OutOrStdout())
		},
	}
	o.register(cmd.Flags())
	mainFlags(cmd, "update", "golden", "impl", "run", "tracks", "junit")
	return cmd
}

func (o *testFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&o.update, "update", false, "rewrite the golden files")
	f.StringVar(&o.dir, "golden", "", "directory of goldens of your own (default: beside each scenario, NAME.golden)")
	f.StringVar(&o.impl, "impl", "", "implementation whose own goldens to record and check (needs --golden)")
	o.proc.register(f, protocol.DefaultTimeout, "scenario")
	o.sel.register(f)
	o.budget.register(f)
	f.StringVar(&o.tracks, "tracks", "", "pi version the reference behaves as (default: the newest)")
	f.StringVar(&o.junit, "junit", "", "write a JUnit XML report to this file")
	f.StringVar(&o.format, "format", "text", "output: text or json")
	f.StringVar(&o.expectFail, "expect-fail", "", "file listing scenarios known to fail, one name a line")
	f.StringVar(&o.level, "level", "pi", "with --impl: pi or core (skips scenarios pinning only conventions)")
}

// testRun is one turnstile test: its scenarios, their goldens, and the report so far.
type testRun struct {
	*testFlags
	files     []*scenarios.File
	behaviour loop.Behaviour
	newest    bool // the reference behaves as the newest pi, whose expect: blocks apply
	lvl       levels.Level
	expect    map[string]bool // the scenarios listed as known failures
	target    sim.Implementation
	out       io.Writer // io.Discard unless --format text
	st        styler
	report    conformance.Report
	began     time.Time
	updated   int
}

// start checks the flags, loads the scenarios and starts the implementation.
func (o *testFlags) start(cmd *cobra.Command, args []string) (*testRun, error) {
	goldenGiven := cmd.Flags().Changed("golden")
	if o.impl != "" && !goldenGiven {
		return nil, usage(errors.New("--impl needs --golden DIR: an implementation's goldens live in a directory of your own, not beside the reference's"))
	}
	files, suite, err := load(args, o.sel, o.budget)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if o.update && !goldenGiven && f.Embedded {
			return nil, usage(errors.New("--update needs the PATH of the scenarios whose goldens to rewrite (scenarios/FAMILY), or --golden DIR: the embedded suite cannot be rewritten"))
		}
	}
	t := &testRun{testFlags: o, files: files}
	newImpl, err := implementation(o.impl, o.proc)
	if err != nil {
		return nil, usage(err)
	}
	if err := checkTracks(o.tracks); err != nil {
		return nil, err
	}
	if t.behaviour, err = loop.BehaviourOf(o.tracks); err != nil {
		return nil, usage(fmt.Errorf("--tracks: %w", err))
	}
	t.newest = t.behaviour == (loop.Behaviour{})
	if !t.newest && !goldenGiven {
		return nil, usage(fmt.Errorf("--tracks %s needs --golden DIR: the goldens given are pi %s's; record pi %s's once with --golden DIR --update", o.tracks, loop.NewestVersion, o.tracks))
	}
	if t.lvl, err = levels.Parse(o.level); err != nil {
		return nil, usage(err)
	}
	if t.expect, err = o.knownFailures(suite); err != nil {
		return nil, err
	}
	t.target = newImpl()
	if err := t.hello(); err != nil {
		closeImpl(t.target)
		return nil, err
	}
	t.out = cmd.OutOrStdout()
	if o.format != "text" {
		t.out = io.Discard
	}
	t.st = newStyler(t.out)
	t.report = conformance.Report{Implementation: cmp.Or(o.impl, protocol.ReferenceName), Profile: trace.Strict}
	t.began = time.Now()
	return t, nil
}

// knownFailures reads --expect-fail: the scenarios listed, each one of the suite.
func (o *testFlags) knownFailures(suite []string) (map[string]bool, error) {
	if o.expectFail == "" {
		return nil, nil
	}
	listed, err := readNameList(o.expectFail)
	if err != nil {
		return nil, usage(err)
	}
	expect, err := conformance.CheckNames(listed, suite)
	if err != nil {
		return nil, usage(fmt.Errorf("--expect-fail %s: %w", o.expectFail, err))
	}
	return expect, nil
}

// hello starts an --impl command, so that one that cannot start is a usage error.
func (t *testRun) hello() error {
	if t.impl == "" {
		return nil
	}
	if h, ok := t.target.(interface {
		Hello() (protocol.Hello, error)
	}); ok {
		if _, err := h.Hello(); err != nil {
			return usage(fmt.Errorf("the implementation did not start: %w", err))
		}
	}
	return nil
}

// scenario runs one scenario and records its verdict, or rewrites its golden with --update.
func (t *testRun) scenario(f *scenarios.File) error {
	res := conformance.Result{Scenario: f.Scenario.Name, Family: family(f.Rel)}
	began := time.Now()
	if why := t.skipReason(f); why != "" {
		res.Status, res.Reason = conformance.Skip, why
		t.record(res)
		return nil
	}
	target := t.target
	if t.impl == "" {
		target = sim.NewReferenceWith(t.behaviour)
	}
	tr, err := sim.Run(f.Scenario, target)
	res.Duration = time.Since(began)
	var over *sim.BudgetError
	if err != nil && !errors.As(err, &over) && t.impl == "" {
		return usage(err)
	}
	if err != nil && !errors.As(err, &over) {
		// The implementation failed this scenario: counted, and the suite goes on.
		res.Status, res.Reason, res.Error = conformance.Fail, err.Error(), err.Error()
		fmt.Fprintf(t.out, "%s %s: %s\n", t.st.red("FAIL"), f.Rel, err)
		t.record(res)
		return nil
	}
	if problems := t.referenceProblems(f, tr); len(problems) > 0 {
		res.Status = conformance.Fail
		res.Reason = "the reference does not meet the scenario's expect: block (a bug in the scenario): " + strings.Join(problems, "; ")
		t.record(res)
		return nil
	}
	got := golden.Render(tr)
	file, embedded := t.goldenFile(f)
	if t.update {
		wrote, err := golden.Update(file, got)
		if err != nil {
			return usage(err)
		}
		if wrote {
			fmt.Fprintf(t.out, "updated %s\n", file)
			t.updated++
			return nil
		}
		res.Status = conformance.Pass
		t.record(res)
		return nil
	}
	var want []byte
	if embedded {
		want, err = fs.ReadFile(scenarios.SuiteFS(), file)
	} else {
		want, err = os.ReadFile(file)
	}
	d := golden.Compare(want, got)
	switch {
	case err != nil:
		res.Status, res.Reason = conformance.Fail, "no golden file "+file+" (run with --update to create it)"
		fmt.Fprintf(t.out, "%s %s: %s\n", t.st.red("FAIL"), f.Rel, res.Reason)
	case d != "":
		res.Status, res.Reason = conformance.Fail, "the timeline differs from its golden:\n"+d
		fmt.Fprintf(t.out, "%s %s (%s)\n%s", t.st.red("FAIL"), f.Rel, f.Path, d)
	default:
		res.Status = conformance.Pass
	}
	t.record(res)
	return nil
}

// goldenFile is where a scenario's golden is: under --golden DIR, else beside the scenario
// file, in the embedded suite (read-only) for a scenario of it.
func (t *testRun) goldenFile(f *scenarios.File) (file string, embedded bool) {
	switch {
	case t.dir != "":
		return filepath.Join(t.dir, filepath.FromSlash(golden.Name(f.Rel))), false
	case f.Embedded:
		return golden.Name(f.Rel), true
	default:
		return filepath.FromSlash(golden.Beside(f.Path)), false
	}
}

// skipReason is why a scenario is not run: it pins a later pi than --tracks, or conform
// would skip it. What conform skips is never recorded: its golden would pin the refusal.
func (t *testRun) skipReason(f *scenarios.File) string {
	if t.tracks != "" && f.Scenario.Since != "" && loop.VersionLess(t.tracks, f.Scenario.Since) {
		return "the scenario pins behaviour of a later pi than " + t.tracks
	}
	if t.impl == "" {
		return ""
	}
	return conformance.SkipReason(t.target, f.Scenario, t.tracks, t.lvl)
}

// referenceProblems is how the reference's run misses the scenario's own expect: block
// (written for the newest pi), printed; a golden of such a run is never recorded.
func (t *testRun) referenceProblems(f *scenarios.File, tr *trace.Trace) []string {
	if t.impl != "" {
		return nil
	}
	problems := runProblems(f, tr, t.newest)
	if len(problems) == 0 {
		return nil
	}
	fmt.Fprintf(t.out, "%s %s (%s): the reference does not meet the scenario's expect: block (a bug in the scenario; turnstile run %s shows the run):\n", t.st.red("FAIL"), f.Rel, f.Path, f.Path)
	for _, p := range problems {
		fmt.Fprintf(t.out, "     %s\n", p)
	}
	return problems
}

// record counts a verdict in the report, turned by --expect-fail for a known failure.
func (t *testRun) record(res conformance.Result) {
	if t.expect[res.Scenario] {
		switch res.Status {
		case conformance.Fail:
			res.Status, res.Reason = conformance.ExpectedFail, "expected failure: "+res.Reason
		case conformance.Pass:
			res.Status, res.Reason = conformance.Fail, "unexpected pass: the scenario is listed as a known failure; remove it from the list"
			fmt.Fprintf(t.out, "%s %s: %s\n", t.st.red("FAIL"), res.Scenario, res.Reason)
		}
	}
	switch res.Status {
	case conformance.Pass:
		t.report.Passed++
	case conformance.Fail:
		t.report.Failed++
	case conformance.Skip:
		t.report.Skipped++
	case conformance.ExpectedFail:
		t.report.ExpectedFailures++
	}
	t.report.Results = append(t.report.Results, res)
}

// finish writes the reports asked for and the summary, and says whether the run failed.
func (t *testRun) finish(stdout io.Writer) error {
	t.report.Duration = time.Since(t.began)
	if t.junit != "" {
		if err := writeJUnitFile(t.junit, t.report); err != nil {
			return usage(err)
		}
	}
	if t.format == "json" {
		if err := t.report.WriteJSON(stdout); err != nil {
			return failed(err)
		}
	}
	failures := plural(t.report.Failed, "1 scenario failed", fmt.Sprintf("%d scenarios failed", t.report.Failed))
	if t.update {
		fmt.Fprintf(t.out, "%d updated, %d unchanged, %d skipped\n", t.updated, t.report.Passed, t.report.Skipped)
		if t.report.Failed > 0 {
			return failed(fmt.Errorf("%s, no golden recorded for %s", failures, plural(t.report.Failed, "it", "them")))
		}
		return nil
	}
	fmt.Fprintln(t.out, t.report.Summary())
	if t.report.ExpectedFailures > 0 {
		fmt.Fprintln(t.out, t.report.ExpectedText())
	}
	if t.report.Failed > 0 {
		return failed(fmt.Errorf("%s (a golden mismatch, an error, or the scenario's expect: block)", failures))
	}
	return nil
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
