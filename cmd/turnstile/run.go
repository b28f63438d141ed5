package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// runFlags are the flags of turnstile run.
type runFlags struct {
	format, impl, htmlOut, tracks, level string
	proc                                 processFlags
	sel                                  selection
	budget                               budgetFlags
}

func runCmd() *cobra.Command {
	var o runFlags
	cmd := &cobra.Command{
		Use:   "run [PATH|NAME…]",
		Short: "Run scenarios and print their timelines",
		Long: `Run simulates each scenario (a file, a directory, a name of the embedded suite; without a
path, the whole suite) against the reference loop, or with --impl against your loop, prints
its timeline and checks its expectations; exit 1 when one fails. Details: docs/CLI.md#run`,
		Example: `  turnstile run scenarios/truncation
  turnstile run truncation/basic --format jsonl         # its canonical trace
  turnstile run --run 'queues/.*steer' --html run.html  # the suite's scenarios that match`,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := o.start(cmd, args)
			if err != nil {
				return err
			}
			defer closeImpl(r.target)
			for _, f := range r.files {
				if err := r.scenario(f); err != nil {
					return err
				}
			}
			return r.finish()
		},
	}
	o.register(cmd.Flags())
	mainFlags(cmd, "impl", "format", "html", "run", "tracks", "level")
	return cmd
}

func (o *runFlags) register(f *pflag.FlagSet) {
	f.StringVar(&o.format, "format", "timeline", "output format: timeline or jsonl")
	f.StringVar(&o.impl, "impl", "", `command of an implementation to run instead of the built-in reference`)
	f.StringVar(&o.htmlOut, "html", "", "also write the runs as a self-contained HTML page to this file")
	o.proc.register(f, protocol.DefaultTimeout, "scenario")
	o.sel.register(f)
	o.budget.register(f)
	f.StringVar(&o.tracks, "tracks", "", "pi version the reference behaves as (default: the newest)")
	f.StringVar(&o.level, "level", "pi", "pi (every rule) or core (pi's conventions not judged)")
}

// runSession is one turnstile run: its scenarios, how they are judged, and the verdicts so far.
type runSession struct {
	*runFlags
	files     []*scenarios.File
	newImpl   func() sim.Implementation
	target    sim.Implementation
	lvl       levels.Level
	held      string          // the pi the runs are judged at: --tracks, else the hello's
	behaviour loop.Behaviour  // how the reference behaves as that pi
	follows   map[string]bool // the conventions the implementation's hello says it follows
	newest    bool            // expect: blocks are judged (they describe the newest pi)
	invs      []invariant.Invariant
	out, errs io.Writer
	st        styler
	page      htmlRuns
	bad       []string // the scenarios failed, named for the verdict
	skipped   int
}

// start checks the flags, loads the scenarios, starts the implementation and settles the
// pi the runs are judged at.
func (o *runFlags) start(cmd *cobra.Command, args []string) (*runSession, error) {
	if o.format != "timeline" && o.format != "jsonl" {
		return nil, usage(fmt.Errorf("--format must be timeline or jsonl, not %q", o.format))
	}
	if err := checkTracks(o.tracks); err != nil {
		return nil, err
	}
	lvl, err := levels.Parse(o.level)
	if err != nil {
		return nil, usage(err)
	}
	files, _, err := load(args, o.sel, o.budget)
	if err != nil {
		return nil, err
	}
	newImpl, err := implementationAt(o.impl, o.proc, o.tracks)
	if err != nil {
		return nil, usage(err)
	}
	r := &runSession{runFlags: o, files: files, newImpl: newImpl, target: newImpl(), lvl: lvl,
		out: cmd.OutOrStdout(), errs: cmd.ErrOrStderr()}
	if err := r.judgedAt(); err != nil {
		closeImpl(r.target)
		return nil, err
	}
	r.st = newStyler(r.out)
	if !r.newest && lvl != levels.Core {
		fmt.Fprintf(r.errs, "judged at pi %s: its invariants, and expect: blocks left unchecked (they describe pi %s)\n", r.held, loop.NewestVersion)
	}
	r.page = htmlRuns{impl: o.impl, behaviour: r.behaviour}
	return r, nil
}

// judgedAt settles the pi the runs are judged at (--tracks, else an implementation's
// hello's), the conventions the implementation follows, and the invariants that apply.
func (r *runSession) judgedAt() error {
	r.held, r.follows = r.tracks, map[string]bool{}
	if h, ok := r.target.(interface {
		Hello() (protocol.Hello, error)
	}); ok {
		hello, err := h.Hello()
		if err != nil {
			return usage(err)
		}
		if r.held == "" {
			r.held = hello.Tracks
		}
		for _, id := range hello.Follows {
			r.follows[id] = true
		}
	}
	var err error
	if r.behaviour, err = loop.BehaviourOf(r.held); err != nil {
		return usage(fmt.Errorf("the implementation tracks pi %q: %w (--tracks X holds it to pi X)", r.held, err))
	}
	r.newest = r.behaviour == (loop.Behaviour{})
	r.invs = invariant.AllAt(r.behaviour)
	if r.lvl == levels.Core {
		// pi's conventions are judged nowhere: not by expect: blocks, not by invariants.
		r.newest = false
		r.invs = levels.Invariants(r.invs)
		fmt.Fprintln(r.errs, "judged at core level: in the core view, pi's conventions and expect: blocks left unchecked")
	}
	return nil
}

// scenario runs one scenario, prints its timeline or trace and its verdict, and adds it to
// the --html page. What conform would skip is not run.
func (r *runSession) scenario(f *scenarios.File) error {
	target := r.target
	if r.impl == "" {
		target = r.newImpl()
	}
	if why := conformance.SkipReason(target, f.Scenario, r.tracks, r.lvl); why != "" {
		skipOut := r.out
		if r.format == "jsonl" {
			skipOut = r.errs // stdout holds trace lines only
		}
		fmt.Fprintf(skipOut, "skip %s: %s\n", f.Scenario.Name, why)
		r.skipped++
		return nil
	}
	tr, err := sim.Run(f.Scenario, target)
	var over *sim.BudgetError
	if err != nil && !errors.As(err, &over) {
		return usage(err)
	}
	problems, broken := r.judge(f, tr)
	for _, w := range f.Warnings(tr) {
		fmt.Fprintln(r.errs, w)
	}
	if r.htmlOut != "" {
		if err := r.page.add(f, tr, r.newest, broken); err != nil {
			return usage(err)
		}
	}
	if r.format == "jsonl" {
		_, _ = r.out.Write(tr.JSONL())
		if len(problems) > 0 {
			r.bad = append(r.bad, nameOf(f)+" ("+problems[0]+")")
		}
		return nil
	}
	r.printTimeline(f, tr, problems)
	return nil
}

// judge is what is wrong with a run: its problems, the broken invariants among them.
func (r *runSession) judge(f *scenarios.File, tr *trace.Trace) (problems []string, broken []invariant.Failure) {
	problems = runProblems(f, tr, r.newest)
	if r.lvl == levels.Core {
		// Judged in the core view, against the reference's run of the scenario.
		want, _ := sim.Run(f.Scenario, sim.NewReferenceWith(r.behaviour))
		broken = levels.Broken(tr, want, r.follows, r.invs)
	} else {
		broken = invariant.CheckAll(tr, r.invs...)
	}
	for _, v := range broken {
		problems = append(problems, "invariant "+v.String())
	}
	return problems, broken
}

// printTimeline prints a run's timeline and its verdict.
func (r *runSession) printTimeline(f *scenarios.File, tr *trace.Trace, problems []string) {
	fmt.Fprintln(r.out, r.st.bold("=== "+f.Scenario.Name+"  ("+f.Path+")"))
	_, _ = r.out.Write(tr.Timeline())
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(r.out, r.st.red("FAIL "+p))
		}
		r.bad = append(r.bad, nameOf(f))
	} else if !f.Expect.Empty() && r.newest {
		fmt.Fprintln(r.out, r.st.green("ok   expectations met"))
	} else if !f.Expect.Empty() {
		fmt.Fprintln(r.out, r.st.green("ok   (its expect: block left unchecked)"))
	}
	fmt.Fprintln(r.out)
}

// finish writes the --html page and says whether any run failed.
func (r *runSession) finish() error {
	if r.htmlOut != "" {
		if err := r.page.write(r.htmlOut); err != nil {
			return usage(err)
		}
	}
	ran := len(r.files) - r.skipped
	if len(r.bad) > 0 {
		also := ""
		if r.skipped > 0 {
			also = fmt.Sprintf(" (%d skipped)", r.skipped)
		}
		return failed(fmt.Errorf("%d of %d scenarios failed%s: %s", len(r.bad), ran, also, strings.Join(r.bad, ", ")))
	}
	if r.skipped > 0 && r.format != "jsonl" {
		fmt.Fprintf(r.out, "%d scenarios run, %d skipped\n", ran, r.skipped)
	}
	return nil
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
