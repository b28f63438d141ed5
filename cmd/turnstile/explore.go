package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

func exploreCmd() *cobra.Command {
	var (
		impl, seed, out, shard, tracks, profile string
		runs                                    int
		duration, timeout                       time.Duration
		noDiff                                  bool
	)
	cmd := &cobra.Command{
		Use:   "explore",
		Short: "Run random scenarios, check invariants, shrink failures to a minimal scenario file",
		Long: `Explore generates random scenarios from a seed, runs each against the implementation and the
reference (differential: the traces must be identical) and checks every invariant on the
implementation's trace. A failure is run once more — a different trace calls the
implementation flaky instead of blaming a bug — then shrunk to a minimal scenario, written
to --out as minimal.yaml with both timelines, and printed with the exact command that
reproduces it.

The seed is printed first; a 40-hex git commit hash is accepted as a seed, so CI can
explore a different, reproducible part of the space for every commit. Without --impl the
reference alone is explored, against the invariants.`,
		Example: `  turnstile explore --runs 2000
  turnstile explore --impl "node conformance/adapters/pi/adapter.mjs" --duration 60s --out failures
  turnstile explore --seed "$(git rev-parse HEAD)" --runs 500 --shard 1/4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := explore.Options{Runs: runs, Duration: duration, Out: out, NoDiff: noDiff, Progress: cmd.ErrOrStderr()}
			if seed == "" {
				opts.Seed = uint64(time.Now().UnixNano())
			} else {
				s, err := explore.ParseSeed(seed)
				if err != nil {
					return usage(err)
				}
				opts.Seed = s
			}
			if shard != "" {
				s, err := explore.ParseShard(shard)
				if err != nil {
					return usage(err)
				}
				opts.Shard = s
			}
			opts.Command = "turnstile explore"
			if impl != "" {
				newImpl, err := implementation(impl, timeout)
				if err != nil {
					return usage(err)
				}
				// One process serves every run, a session each, as in a suite.
				shared := newImpl()
				defer closeImpl(shared)
				opts.Impl = func() sim.Implementation { return shared }
				opts.Command += " --impl " + strconv.Quote(impl)
				if h, ok := shared.(interface {
					Hello() (conformance.Hello, error)
				}); ok && tracks == "" {
					hello, err := h.Hello()
					if err != nil {
						return failed(fmt.Errorf("the implementation did not start: %w", err))
					}
					tracks = hello.Tracks
				}
			}
			b, err := loop.BehaviourOf(tracks)
			if err != nil {
				return usage(fmt.Errorf("the reference cannot behave as the pi version to hold the implementation to (--tracks or its hello): %w", err))
			}
			prof, err := conformance.ParseProfile(profile)
			if err != nil {
				return usage(err)
			}
			if prof == conformance.Semantic {
				opts.Agree = func(want, got *sim.Trace) bool { return conformance.Compare(want, got, prof, 0) == nil }
				opts.Command += " --profile semantic"
			}
			if b != (loop.Behaviour{}) {
				opts.Reference = func() sim.Implementation { return sim.NewReferenceWith(b) }
				opts.Invariants = invariant.AllAt(b)
				opts.Command += " --tracks " + tracks
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			res := explore.Run(ctx, opts)
			fmt.Fprintf(cmd.OutOrStdout(), "seed %d: %d runs in %s (%.0f runs/s), %d failures\n",
				res.Seed, res.Runs, res.Elapsed.Round(time.Millisecond), res.RunsPerSecond(), len(res.Failures))
			if res.Failed() {
				return failed(fmt.Errorf("explore found %d failing scenarios", len(res.Failures)))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&impl, "impl", "", `command of the implementation under test; "" explores the reference against the invariants`)
	f.StringVar(&seed, "seed", "", "base seed: a number or a 40-hex git commit hash; default: from the clock (printed)")
	f.IntVar(&runs, "runs", 0, "number of runs (default 100 when --duration is not given)")
	f.DurationVar(&duration, "duration", 0, "explore for this long")
	f.StringVar(&out, "out", "turnstile-failures", "directory for minimal failing scenarios and their traces")
	f.StringVar(&shard, "shard", "", "explore only shard K of N (K/N, from 1)")
	f.DurationVar(&timeout, "timeout", 10*time.Second, "time limit per run for an --impl command")
	f.BoolVar(&noDiff, "no-diff", false, "check invariants only, without comparing with the reference")
	f.StringVar(&profile, "profile", "strict", "how traces must agree with the reference's: strict (byte-equal) or semantic (validator messages free, as for pi before 1.5.0)")
	f.StringVar(&tracks, "tracks", "", `pi version the reference behaves as (default: the implementation's hello "tracks", else the newest)`)
	return cmd
}
