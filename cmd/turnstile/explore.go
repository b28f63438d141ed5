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
		Long: `Explore generates random scenarios from a seed, runs each against the implementation and the
reference (differential: the traces must agree under --profile) and checks every invariant on
the implementation's trace. Each finding gets a cause signature (what differs, where, in which
shape — not the scenario's values).

Exploration goes on after a failure until --runs or --duration is used up, and groups the
failing runs by cause. A run's cause is the implementation's error, else the invariant it
breaks at the earliest entry (an invariant names its rule), else its first divergence. A run
that shows a known cause among these counts for it; one that shows none has a new cause. The
first run of a new cause is run once more (a different trace calls the implementation flaky
instead of blaming a bug), then shrunk to a minimal scenario that still has that cause and
shows nothing the run did not (it never drifts to another, cheaper difference), and written
to --out/<cause>/: minimal.yaml, generated.yaml, both timelines, findings.json and a README
with the findings, the rule and the commands that reproduce it. A new cause whose minimal
scenario still shows a known cause is counted with it; one shrunk to a scenario without the
known cause stays its own. Each minimal scenario is then run without each thing it
gives the loop (a field of a hook's answers, a tool's or the configuration's setting such as
executionMode or toolExecution, a hook, steering or follow-up messages): what it passes
without is listed, the finest first, and causes that pass without the same first thing are
said to be likely one defect (one bug seen in several places downstream). The summary at the
end lists the causes with the number of runs that showed each; --out/causes.txt lists their
signatures.

Generated runs drive the loop (run and continue) and, one run in three, the Agent (protocol
§13.2): a session of operations at virtual times or on triggers — prompts and continue(),
steering and follow-up in both modes and modes switched during a run, aborts (idle, streaming,
in a hook, with messages queued), reset, clearQueues, tools set during a run, state reads,
listeners held at barriers and released — judged against the reference Agent and by the Agent
invariants. --entry loop or --entry agent explores one kind only. Where declared, scenarios
also need the other features of protocol 2: stream options, an abort fired inside a hook, a
tool resolving nothing. A cause's minimal Agent session drops operations first. The summary
names the optional features no run needed, and why (the implementation lacks them, its pi
predates them, --entry).

Scenarios respect the implementation: a hook it does not declare in its hello is never
installed (without getSteeringMessages or getFollowUpMessages there is no steering or
follow-up), no scenario needs an optional feature it lacks (capabilities.lacks), and no
situation newer than the pi version it tracks (or --tracks) is generated. --ignore FILE
names known causes (one signature a line, # comments; causes.txt has that form): a run that
shows one counts as ignored, so the next exploration looks past them. An invariant's cause is
signed by the invariant and the rule its violation names ("invariant results: R-EXEC-PARALLEL");
a line naming the invariant alone ("invariant results") ignores all of its rules.

--jobs N checks N runs at once: in-process one per CPU by default; with --impl one by
default, and each job starts its own adapter process. The runs are still taken in their
order, so the causes, their counts and their minimal scenarios are those of one job.
The adapter's stderr is not copied through (a kit notes every failed run, expected or
not): a crash report keeps its last lines, and conform on a cause's minimal scenario (the
command its README gives) shows it whole, tracebacks included. When the adapter took the
exchange's shortcuts (PROTOCOL.md §14-15), the minimal scenarios of up to three causes are
re-run one at a time, and the summary says whether the shortcuts are the cause.

--duration bounds the exploring; each new cause adds its investigation: one more run, up
to --shrink-time of shrinking, and (with --impl) the re-run one at a time. A run that
hangs (a simulated run past 10s, or the adapter past --timeout) takes the whole limit each
time: a hang is run once more and not shrunk, and after --max-hangs runs hung (3) the
exploring stops, saying so: fix the hang, then explore again.

The seed is printed first; a 40-hex git commit hash is accepted as a seed, so CI can
explore a different, reproducible part of the space for every commit. Without --impl the
reference alone is explored, against the invariants. Exit code 1 when a reproducible
failure was found.`,
		Example: `  turnstile explore --runs 2000
  turnstile explore --impl "node conformance/adapters/pi/adapter.mjs" --duration 60s --out failures
  turnstile explore --impl "python3 my_adapter.py" --runs 500 --profile semantic --ignore failures/causes.txt
  turnstile explore --seed "$(git rev-parse HEAD)" --runs 500 --shard 1/4
  turnstile explore --impl "node conformance/adapters/pi/adapter.mjs" --entry agent --runs 5000`,
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
	f.StringVar(&impl, "impl", "", `command of the implementation under test; "" explores the reference against the invariants`)
	f.StringVar(&seed, "seed", "", "base seed: a number or a 40-hex git commit hash; default: from the clock (printed)")
	f.IntVar(&runs, "runs", 0, "number of runs (default 100 when --duration is not given)")
	f.DurationVar(&duration, "duration", 0, "explore for this long")
	f.StringVar(&out, "out", "turnstile-failures", "directory for the causes found: a folder each, and causes.txt")
	f.StringVar(&shard, "shard", "", "explore only shard K of N (K/N, from 1)")
	f.StringVar(&entry, "entry", "any", "what the runs drive: loop (run and continue), agent (Agent sessions) or any (both, one run in three an Agent session, where the implementation has the agent feature)")
	f.StringVar(&profile, "profile", "strict", "comparison profile: strict or semantic")
	f.StringVar(&level, "level", "pi", "pi: every rule; core: the core of any agent loop, pi's conventions not judged (docs/SEMANTICS.md, Levels)")
	f.StringVar(&ignore, "ignore", "", "file of cause signatures to leave out, one a line (e.g. a previous causes.txt)")
	f.StringVar(&tracks, "tracks", "", "pi version the implementation tracks; default: from its hello")
	f.IntVar(&jobs, "jobs", 0, "runs checked at once, each job with its own adapter process (default: one per CPU in-process, 1 with --impl); the result is the same as with one")
	f.IntVar(&maxCauses, "max-causes", 0, "stop after this many distinct causes (0: no limit)")
	f.IntVar(&maxHangs, "max-hangs", 3, "stop after this many runs hung, each waiting out the time limit (0: no limit)")
	f.DurationVar(&shrinkTime, "shrink-time", 30*time.Second, "time limit for shrinking one cause (0 or less: no shrinking)")
	proc.register(f, 10*time.Second, "run")
	f.BoolVar(&noDiff, "no-diff", false, "check invariants only, without comparing with the reference")
	budget.register(f)
	return cmd
}
