package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// quiet makes processes that keep their stderr to themselves (its last lines for a crash
// report) instead of copying it to turnstile's.
func quiet(newProcess func() *conformance.Process) func() *conformance.Process {
	return func() *conformance.Process {
		p := newProcess()
		p.Stderr = nil
		return p
	}
}

func exploreCmd() *cobra.Command {
	var (
		impl, seed, out, shard, profile, ignore, tracks, entry, level string
		runs, maxCauses, maxHangs, jobs                               int
		duration, shrinkTime                                          time.Duration
		proc                                                          processFlags
		noDiff                                                        bool
		budget                                                        budgetFlags
	)
	cmd := &cobra.Command{
		Use:   "explore",
		Short: "Run random scenarios, group the failures by cause, shrink each cause to a minimal scenario",
		Long: `Explore generates random scenarios from a seed (printed first), runs each against the
implementation and the reference (without --impl, the reference alone against the invariants)
and checks every invariant. Failing runs are grouped by cause; the first run of a new cause is
shrunk to a minimal scenario, written with its findings and the commands that reproduce it to
--out/<cause>/. Exit code 1 when a reproducible failure was found.

Details: docs/CLI.md#explore`,
		Example: `  turnstile explore --runs 2000
  turnstile explore --impl "node conformance/adapters/pi/adapter.mjs" --duration 60s --out failures
  turnstile explore --impl "python3 my_adapter.py" --runs 500 --ignore failures/causes.txt
  turnstile explore --seed "$(git rev-parse HEAD)" --runs 500 --shard 1/4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := budget.check(); err != nil {
				return usage(err)
			}
			if err := checkTracks(tracks); err != nil {
				return err
			}
			defer budget.asDefault()()
			prof, err := trace.ParseProfile(profile)
			if err != nil {
				return usage(err)
			}
			opts := explore.Options{Runs: runs, Duration: duration, Out: out, NoDiff: noDiff, Profile: prof,
				MaxFailures: maxCauses, MaxHangs: maxHangs, ShrinkTime: shrinkTime, Progress: cmd.ErrOrStderr()}
			if runs < 0 || duration < 0 || maxCauses < 0 || maxHangs < 0 {
				return usage(fmt.Errorf("--runs, --duration, --max-causes and --max-hangs cannot be negative"))
			}
			if runs == 0 && cmd.Flags().Changed("runs") {
				return usage(fmt.Errorf("--runs 0 would explore nothing; give 1 or more, or leave it out (100 runs, or as many as --duration allows)"))
			}
			if shrinkTime <= 0 {
				opts.ShrinkTime = -1
			}
			if seed == "" {
				opts.Seed = uint64(time.Now().UnixNano())
			} else {
				s, err := explore.ParseSeed(seed)
				if err != nil {
					return usage(err)
				}
				opts.Seed = s
			}
			opts.Command = "turnstile explore" + budget.args()
			if opts.Entry, err = explore.ParseEntry(entry); err != nil {
				return usage(fmt.Errorf("--entry: %w", err))
			}
			if opts.Entry != explore.EntryAny {
				opts.Command += " --entry " + opts.Entry
			}
			if opts.Level, err = levels.Parse(level); err != nil {
				return usage(err)
			}
			if opts.Level != levels.Pi {
				opts.Command += " --level " + string(opts.Level)
			}
			if shard != "" {
				s, err := explore.ParseShard(shard)
				if err != nil {
					return usage(err)
				}
				opts.Shard = s
			}
			if ignore != "" {
				f, err := os.Open(ignore)
				if err != nil {
					return usage(fmt.Errorf("--ignore: %w", err))
				}
				opts.Ignore, err = explore.ReadSignatures(f)
				f.Close()
				if err != nil {
					return usage(fmt.Errorf("--ignore %s: %w", ignore, err))
				}
				opts.Command += " --ignore " + strconv.Quote(ignore)
			}
			if tracks != "" {
				opts.Target.Tracks = tracks
				opts.Command += " --tracks " + tracks
			}
			if prof != trace.Strict {
				opts.Command += " --profile " + string(prof)
			}
			if noDiff {
				opts.Command += " --no-diff"
			}
			if impl != "" {
				newProcess, err := process(impl, proc)
				if err != nil {
					return usage(err)
				}
				// Thousands of runs: the adapter's stderr is not copied through (a kit logs every
				// failed run, the expected ones too); its last lines stay in crash reports, and
				// conform on a cause's minimal scenario shows it whole.
				newProcess = quiet(newProcess)
				// A process serves runs one after another, a session each, as in a suite; each
				// job has one.
				procs := &conformance.Pool{New: newProcess}
				defer procs.Close()
				opts.Impl = procs.Impl
				opts.Command += " --impl " + strconv.Quote(impl) + proc.args()
				opts.ImplCommand = impl
				opts.ImplFlags = proc.args()
				if tracks != "" {
					opts.ImplFlags += " --tracks " + tracks // conform holds the scenario to that pi too
				}
				if opts.Level != levels.Pi {
					opts.ImplFlags += " --level " + string(opts.Level)
				}
				opts.RunTimeout = proc.runBound()
				if tracks == "" {
					hello, err := procs.Hello()
					if err != nil {
						return usage(fmt.Errorf("the implementation did not start: %w", err))
					}
					tracks = hello.Tracks
				}
			}
			switch {
			case jobs < 0:
				return usage(fmt.Errorf("--jobs cannot be negative"))
			case jobs > 0:
				opts.Jobs = jobs
			case impl == "":
				opts.Jobs = runtime.GOMAXPROCS(0)
			default:
				opts.Jobs = 1
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
			if impl != "" && res.Failed() && res.Shortcuts != (conformance.Shortcuts{}) && ctx.Err() == nil {
				// Were the exchange's shortcuts the cause? The minimal scenarios re-run without them say.
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
				plain := proc
				plain.oneAtATime = true
				if again, err := process(impl, plain); err == nil {
					again = quiet(again)
					p := again()
					res.Recheck = conformance.RerunWithoutShortcuts(ctx, minimal, p,
						conformance.Options{Profile: prof, Reference: opts.Reference, Invariants: opts.Invariants, Tracks: tracks, Level: opts.Level})
					res.Recheck.Untried = untried
					_ = p.Close()
					if err := explore.RecordRecheck(res); err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "could not add the one-at-a-time verdict to the causes' READMEs: %v\n", err)
					}
				}
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
		},
	}
	f := cmd.Flags()
	f.StringVar(&impl, "impl", "", `command of the implementation under test; "" explores the reference`)
	f.StringVar(&seed, "seed", "", "base seed: a number or a 40-hex git commit hash; default: from the clock")
	f.IntVar(&runs, "runs", 0, "number of runs (default 100 when --duration is not given)")
	f.DurationVar(&duration, "duration", 0, "explore for this long")
	f.StringVar(&out, "out", "turnstile-failures", "directory for the causes found")
	f.StringVar(&shard, "shard", "", "explore only shard K of N (K/N, from 1)")
	f.StringVar(&entry, "entry", "any", "what the runs drive: loop, agent or any")
	f.StringVar(&profile, "profile", "strict", "comparison profile: strict or semantic")
	f.StringVar(&level, "level", "pi", "pi (every rule) or core (pi's conventions not judged)")
	f.StringVar(&ignore, "ignore", "", "file of cause signatures to leave out, one a line")
	f.StringVar(&tracks, "tracks", "", "pi version the implementation tracks; default: from its hello")
	f.IntVar(&jobs, "jobs", 0, "runs checked at once (default: one per CPU, 1 with --impl)")
	f.IntVar(&maxCauses, "max-causes", 0, "stop after this many distinct causes (0: no limit)")
	f.IntVar(&maxHangs, "max-hangs", 3, "stop after this many runs hung (0: no limit)")
	f.DurationVar(&shrinkTime, "shrink-time", 30*time.Second, "time limit for shrinking one cause (0 or less: no shrinking)")
	proc.register(f, 10*time.Second, "run")
	f.BoolVar(&noDiff, "no-diff", false, "check invariants only, without comparing with the reference")
	budget.register(f)
	return cmd
}
