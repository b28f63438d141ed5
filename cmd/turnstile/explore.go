package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// quiet makes processes that keep their stderr to themselves (its last lines for a crash
// report) instead of copying it to turnstile's.
func quiet(newProcess func() *protocol.Process) func() *protocol.Process {
	return func() *protocol.Process {
		p := newProcess()
		p.Stderr = nil
		return p
	}
}

// exploreFlags are the flags of turnstile explore.
type exploreFlags struct {
	impl, seed, out, shard, profile, ignore, tracks, entry, level string
	runs, maxCauses, maxHangs, jobs                               int
	duration, shrinkTime                                          time.Duration
	proc                                                          processFlags
	noDiff                                                        bool
	budget                                                        budgetFlags
}

func exploreCmd() *cobra.Command {
	var o exploreFlags
	cmd := &cobra.Command{
		Use:   "explore",
		Short: "Run random scenarios, group the failures by cause, shrink each cause to a minimal scenario",
		Long: `Explore runs random scenarios from a seed against your loop (--impl) and the reference, groups
the failures by cause and shrinks each new cause to a minimal scenario, written to --out with
the commands that reproduce it; exit 1 when one was found. Details: docs/CLI.md#explore`,
		Example: `  turnstile explore --impl "node conformance/adapters/pi/adapter.mjs" --duration 60s
  turnstile explore --impl "python3 my_adapter.py" --runs 500 --ignore failures/causes.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.register(cmd.Flags())
	mainFlags(cmd, "impl", "runs", "duration", "seed", "out", "ignore", "jobs")
	return cmd
}

func (o *exploreFlags) register(f *pflag.FlagSet) {
	f.StringVar(&o.impl, "impl", "", `command of the implementation under test; "" explores the reference`)
	f.StringVar(&o.seed, "seed", "", "base seed: a number or a 40-hex git commit hash; default: from the clock")
	f.IntVar(&o.runs, "runs", 0, "number of runs (default 100 when --duration is not given)")
	f.DurationVar(&o.duration, "duration", 0, "explore for this long")
	f.StringVar(&o.out, "out", "turnstile-failures", "directory for the causes found")
	f.StringVar(&o.shard, "shard", "", "explore only shard K of N (K/N, from 1)")
	f.StringVar(&o.entry, "entry", "any", "what the runs drive: loop, agent or any")
	f.StringVar(&o.profile, "profile", "strict", "comparison profile: strict or semantic")
	f.StringVar(&o.level, "level", "pi", "pi (every rule) or core (pi's conventions not judged)")
	f.StringVar(&o.ignore, "ignore", "", "file of cause signatures to leave out, one a line")
	f.StringVar(&o.tracks, "tracks", "", "pi version the implementation tracks; default: from its hello")
	f.IntVar(&o.jobs, "jobs", 0, "runs checked at once (default: one per CPU, 1 with --impl)")
	f.IntVar(&o.maxCauses, "max-causes", 0, "stop after this many distinct causes (0: no limit)")
	f.IntVar(&o.maxHangs, "max-hangs", 3, "stop after this many runs hung (0: no limit)")
	f.DurationVar(&o.shrinkTime, "shrink-time", 30*time.Second, "time limit for shrinking one cause (0 or less: no shrinking)")
	o.proc.register(f, 10*time.Second, "run")
	f.BoolVar(&o.noDiff, "no-diff", false, "check invariants only, without comparing with the reference")
	o.budget.register(f)
}

// run explores, rechecks the causes found without the exchange's shortcuts, and prints the
// summary.
func (o *exploreFlags) run(cmd *cobra.Command) error {
	if err := o.budget.check(); err != nil {
		return usage(err)
	}
	if err := checkTracks(o.tracks); err != nil {
		return err
	}
	defer o.budget.asDefault()()
	opts, err := o.options(cmd.Flags().Changed("runs"), cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	tracks := o.tracks
	if o.impl != "" {
		procs, err := o.implOptions(&opts)
		if err != nil {
			return err
		}
		defer procs.Close()
		if tracks == "" {
			hello, err := procs.Hello()
			if err != nil {
				return usage(fmt.Errorf("the implementation did not start: %w", err))
			}
			tracks = hello.Tracks
		}
	}
	if opts.Jobs, err = o.jobCount(); err != nil {
		return err
	}
	b, err := loop.BehaviourOf(tracks)
	if err != nil {
		return usage(fmt.Errorf("the reference cannot behave as the pi version to hold the implementation to (--tracks or its hello): %w", err))
	}
	if b != (loop.Behaviour{}) {
		opts.Reference = func() sim.Implementation { return sim.NewReferenceWith(b) }
		opts.Invariants = invariant.AllAt(b)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res := explore.Run(ctx, opts)
	if res.Err != nil {
		return usage(res.Err)
	}
	if o.impl != "" && res.Failed() && res.Shortcuts != (protocol.Shortcuts{}) && ctx.Err() == nil {
		o.recheck(ctx, &res, opts, tracks, cmd.ErrOrStderr())
	}
	fmt.Fprint(cmd.OutOrStdout(), explore.Summary(res))
	if res.Failed() {
		causes := fmt.Sprintf("%d distinct failures", len(res.Failures))
		if len(res.Failures) == 1 {
			causes = "1 distinct failure"
		}
		return failed(fmt.Errorf("explore found %s in %d failing runs", causes, res.Failing))
	}
	return nil
}

// options checks the flags and makes explore's options of them, with the command that
// repeats them (runsGiven: --runs was given).
func (o *exploreFlags) options(runsGiven bool, progress io.Writer) (explore.Options, error) {
	prof, err := trace.ParseProfile(o.profile)
	if err != nil {
		return explore.Options{}, usage(err)
	}
	opts := explore.Options{Runs: o.runs, Duration: o.duration, Out: o.out, NoDiff: o.noDiff, Profile: prof,
		MaxFailures: o.maxCauses, MaxHangs: o.maxHangs, ShrinkTime: o.shrinkTime, Progress: progress}
	if o.runs < 0 || o.duration < 0 || o.maxCauses < 0 || o.maxHangs < 0 {
		return opts, usage(fmt.Errorf("--runs, --duration, --max-causes and --max-hangs cannot be negative"))
	}
	if o.runs == 0 && runsGiven {
		return opts, usage(fmt.Errorf("--runs 0 would explore nothing; give 1 or more, or leave it out (100 runs, or as many as --duration allows)"))
	}
	if o.shrinkTime <= 0 {
		opts.ShrinkTime = -1
	}
	if o.seed == "" {
		opts.Seed = uint64(time.Now().UnixNano())
	} else if opts.Seed, err = explore.ParseSeed(o.seed); err != nil {
		return opts, usage(err)
	}
	opts.Command = "turnstile explore" + o.budget.args()
	if err := o.selection(&opts); err != nil {
		return opts, err
	}
	if o.tracks != "" {
		opts.Target.Tracks = o.tracks
		opts.Command += " --tracks " + o.tracks
	}
	if prof != trace.Strict {
		opts.Command += " --profile " + string(prof)
	}
	if o.noDiff {
		opts.Command += " --no-diff"
	}
	return opts, nil
}

// selection sets what the runs drive and are judged by (--entry, --level, --shard,
// --ignore), each repeated in the command.
func (o *exploreFlags) selection(opts *explore.Options) error {
	var err error
	if opts.Entry, err = explore.ParseEntry(o.entry); err != nil {
		return usage(fmt.Errorf("--entry: %w", err))
	}
	if opts.Entry != explore.EntryAny {
		opts.Command += " --entry " + opts.Entry
	}
	if opts.Level, err = levels.Parse(o.level); err != nil {
		return usage(err)
	}
	if opts.Level != levels.Pi {
		opts.Command += " --level " + string(opts.Level)
	}
	if o.shard != "" {
		if opts.Shard, err = explore.ParseShard(o.shard); err != nil {
			return usage(err)
		}
	}
	if o.ignore != "" {
		f, err := os.Open(o.ignore)
		if err != nil {
			return usage(fmt.Errorf("--ignore: %w", err))
		}
		opts.Ignore, err = explore.ReadSignatures(f)
		f.Close()
		if err != nil {
			return usage(fmt.Errorf("--ignore %s: %w", o.ignore, err))
		}
		opts.Command += " --ignore " + strconv.Quote(o.ignore)
	}
	return nil
}

// implOptions sets the --impl command's options: a pool of its processes, a session per
// run, one process a job, and the flags that replay a cause.
func (o *exploreFlags) implOptions(opts *explore.Options) (*protocol.Pool, error) {
	newProcess, err := process(o.impl, o.proc)
	if err != nil {
		return nil, usage(err)
	}
	// Thousands of runs: the adapter's stderr (a kit logs every failed run) is not copied
	// through; its last lines stay in crash reports.
	procs := &protocol.Pool{New: quiet(newProcess)}
	opts.Impl = procs.Impl
	opts.Command += " --impl " + strconv.Quote(o.impl) + o.proc.args()
	opts.ImplCommand = o.impl
	opts.ImplFlags = o.proc.args()
	if o.tracks != "" {
		opts.ImplFlags += " --tracks " + o.tracks // conform holds the scenario to that pi too
	}
	if opts.Level != levels.Pi {
		opts.ImplFlags += " --level " + string(opts.Level)
	}
	opts.RunTimeout = o.proc.runBound()
	return procs, nil
}

// jobCount is --jobs, by default one per CPU for the reference and 1 with --impl.
func (o *exploreFlags) jobCount() (int, error) {
	switch {
	case o.jobs < 0:
		return 0, usage(fmt.Errorf("--jobs cannot be negative"))
	case o.jobs > 0:
		return o.jobs, nil
	case o.impl == "":
		return runtime.GOMAXPROCS(0), nil
	default:
		return 1, nil
	}
}

// recheck re-runs the first minimal scenarios without the exchange's shortcuts, to tell
// whether they are the cause, and adds the verdict to the causes' READMEs.
func (o *exploreFlags) recheck(ctx context.Context, res *explore.Result, opts explore.Options, tracks string, errs io.Writer) {
	var minimal []*sim.Scenario
	untried := 0
	for _, f := range res.Failures {
		switch {
		case f.Flaky || f.Minimal == nil:
		case len(minimal) < recheckScenarios:
			minimal = append(minimal, f.Minimal)
		default:
			untried++
		}
	}
	plain := o.proc
	plain.oneAtATime = true
	again, err := process(o.impl, plain)
	if err != nil {
		return
	}
	p := quiet(again)()
	res.Recheck = conformance.RerunWithoutShortcuts(ctx, minimal, p,
		conformance.Options{Profile: opts.Profile, Reference: opts.Reference, Invariants: opts.Invariants, Tracks: tracks, Level: opts.Level})
	res.Recheck.Untried = untried
	_ = p.Close()
	if err := explore.RecordRecheck(*res); err != nil {
		fmt.Fprintf(errs, "could not add the one-at-a-time verdict to the causes' READMEs: %v\n", err)
	}
}
