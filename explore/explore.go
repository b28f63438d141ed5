// Package explore searches for behaviour that breaks the rules: it generates scenarios from a
// seed, runs each against an implementation and the reference loop, compares their traces and
// checks every invariant, and shrinks a failing scenario to a small one that still fails,
// written out as a scenario file with both timelines and the command that reproduces it.
//
// Every run's scenario comes from a seed derived from the base seed and the run's index, so a
// failing run can be reproduced alone: RunSeed(seed, 0) == seed, hence
// `turnstile explore --seed <run seed> --runs 1` replays exactly that run.
package explore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/sim"
)

// Options configures an exploration.
type Options struct {
	// Impl makes a fresh implementation under test for each run. Nil explores the reference
	// alone, checking invariants only.
	Impl func() sim.Implementation
	// Seed is the base seed; run i explores the scenario of RunSeed(Seed, i).
	Seed uint64
	// Runs bounds the number of runs (over all shards); Duration bounds the wall time. With
	// neither, 100 runs.
	Runs     int
	Duration time.Duration
	// Out is the directory failures are written to ("" writes nothing).
	Out string
	// Shard makes this process explore only the runs i with i % N == K.
	Shard Shard
	// Progress receives the seed, a progress line (rewritten in place on a terminal), each
	// failure and the summary; nil is silent.
	Progress io.Writer

	// Reference makes the reference loop the implementation is compared with (and explored
	// without Impl); nil means sim.NewReference, the newest pi. The CLI makes it behave as
	// the pi the implementation tracks.
	Reference func() sim.Implementation
	// Agree decides whether the implementation's trace agrees with the reference's; nil means
	// byte-equal JSON lines. The CLI's --profile semantic passes conformance's semantic
	// comparison (validator messages free), for implementations of pi before 1.5.0.
	Agree func(want, got *sim.Trace) bool
	// Invariants are checked on the implementation's trace; nil means invariant.All().
	Invariants []invariant.Invariant
	// NoDiff skips the comparison with the reference, leaving the invariants alone to find
	// failures.
	NoDiff bool
	// MaxFailures stops after that many failures (flaky ones included); 0 means 1.
	MaxFailures int
	// ShrinkTime bounds the shrinking of one failure; 0 means 30s, negative disables it.
	ShrinkTime time.Duration
	// RunTimeout bounds one simulated run; a run that takes longer is a hang. 0 means 10s.
	RunTimeout time.Duration
	// Command is how the reproduce line starts, e.g. "turnstile explore --impl 'node a.mjs'";
	// "" means "turnstile explore".
	Command string
	// Generate makes the scenario of a run seed; nil means the Scenario generator.
	Generate func(seed uint64) *sim.Scenario
}

// Shard is one part of an exploration split over N processes: runs i with i % N == K.
type Shard struct{ K, N int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K+1, s.N) }

// ParseShard reads "K/N", K counted from 1 as in turnstile conform --shard.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want K/N", s)
	}
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return Shard{}, fmt.Errorf("shard %q: want K/N with 1 <= K <= N", s)
	}
	return Shard{ki - 1, ni}, nil
}

func (s Shard) owns(i int) bool { return s.N <= 1 || i%s.N == s.K }

// Result is what an exploration found.
type Result struct {
	Seed uint64
	// Runs counts the runs made by this process; Failures those that failed (flaky ones
	// included).
	Runs     int
	Failures []*Failure
	Elapsed  time.Duration
}

// RunsPerSecond is the exploration's rate.
func (r Result) RunsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Runs) / r.Elapsed.Seconds()
}

// Failed reports whether any run failed reproducibly.
func (r Result) Failed() bool {
	for _, f := range r.Failures {
		if !f.Flaky {
			return true
		}
	}
	return false
}

// Failure is one failing run.
type Failure struct {
	Seed    uint64 // the base seed
	Run     int    // the run's index
	RunSeed uint64 // the seed of the run's scenario: --seed RunSeed --runs 1 reproduces it
	// Problem is what is wrong with the minimal scenario; Original what was wrong with the
	// generated one.
	Problem
	Original Problem
	// Flaky: a re-run gave another trace, so this is not a reproducible bug.
	Flaky bool
	// Scenario is the generated scenario, Minimal the shrunk one that still fails.
	Scenario *sim.Scenario
	Minimal  *sim.Scenario
	Shrink   ShrinkStats
	// ImplTrace and RefTrace are the minimal scenario's traces (RefTrace nil without Impl).
	ImplTrace, RefTrace *sim.Trace
	// Dir is where the failure was written, "" when it was not.
	Dir string
}

// Kinds of problems.
const (
	KindDiff      = "diff"      // the implementation's trace differs from the reference's
	KindInvariant = "invariant" // the implementation's trace breaks an invariant
	KindError     = "error"     // the implementation broke the port's contract
	KindPanic     = "panic"     // the simulation panicked
	KindHang      = "hang"      // a run took longer than RunTimeout
)

// Problem is what is wrong with one run.
type Problem struct {
	Kind    string
	Message string
	// Violations are the invariant failures of the implementation's trace.
	Violations []invariant.Failure
	// Hash identifies the implementation's trace (sha256 of its JSONL).
	Hash string
}

// names returns the invariants the problem breaks.
func (p *Problem) names() map[string]bool {
	out := map[string]bool{}
	for _, v := range p.Violations {
		out[v.Invariant] = true
	}
	return out
}

// like reports whether q is the same kind of failure as p, for shrinking: the same kind, and
// for invariant failures a violation of p's first broken invariant (invariants are checked
// in the order of invariant.All, the most basic first).
func (p *Problem) like(q *Problem) bool {
	if q == nil || p.Kind != q.Kind {
		return false
	}
	if p.Kind != KindInvariant || len(p.Violations) == 0 {
		return true
	}
	return q.names()[p.Violations[0].Invariant]
}

// RunSeed derives the seed of run i from the base seed; RunSeed(s, 0) == s.
func RunSeed(seed uint64, i int) uint64 {
	if i == 0 {
		return seed
	}
	return splitmix(seed ^ splitmix(uint64(i)))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// ParseSeed reads a seed: a decimal number, or a 40-digit hexadecimal git commit hash (its low
// 64 bits, as TigerBeetle's VOPR takes one), so CI can explore a different yet reproducible
// seed on every commit.
func ParseSeed(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if len(s) == 40 && isHex(s) {
		return strconv.ParseUint(s[24:], 16, 64)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("seed %q: want a decimal number or a 40-digit git commit hash", s)
	}
	return v, nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// GenerateScenario is the scenario of a run seed.
func GenerateScenario(seed uint64) *sim.Scenario {
	sc := Scenario().Example(int(seed))
	sc.Name = fmt.Sprintf("seed-%d", seed)
	return sc
}

// explorer holds an exploration's settings.
type explorer struct {
	opts Options
	invs []invariant.Invariant
}

// Run explores until the runs or the duration are used up, ctx is done, or MaxFailures runs
// failed.
func Run(ctx context.Context, opts Options) Result {
	if opts.Runs <= 0 && opts.Duration <= 0 {
		opts.Runs = 100
	}
	if opts.MaxFailures <= 0 {
		opts.MaxFailures = 1
	}
	if opts.ShrinkTime == 0 {
		opts.ShrinkTime = 30 * time.Second
	}
	if opts.RunTimeout <= 0 {
		opts.RunTimeout = 10 * time.Second
	}
	if opts.Command == "" {
		opts.Command = "turnstile explore"
	}
	if opts.Generate == nil {
		opts.Generate = GenerateScenario
	}
	x := &explorer{opts: opts, invs: opts.Invariants}
	if x.invs == nil {
		x.invs = invariant.All()
	}
	p := newProgress(opts.Progress)
	p.printf("seed=%d", opts.Seed)
	if opts.Shard.N > 1 {
		p.printf(" shard=%s", opts.Shard)
	}
	p.printf("\n")
	res := Result{Seed: opts.Seed}
	start := time.Now()
	for i := 0; ; i++ {
		if opts.Runs > 0 && i >= opts.Runs {
			break
		}
		if opts.Duration > 0 && time.Since(start) >= opts.Duration || ctx.Err() != nil {
			break
		}
		if !opts.Shard.owns(i) {
			continue
		}
		runSeed := RunSeed(opts.Seed, i)
		sc := opts.Generate(runSeed)
		res.Runs++
		if prob := x.check(sc); prob != nil {
			p.clear()
			f := x.investigate(ctx, sc, prob, opts.Seed, i, runSeed, p)
			res.Failures = append(res.Failures, f)
			if opts.Out != "" {
				dir := opts.Out
				if opts.MaxFailures > 1 {
					dir = fmt.Sprintf("%s/run-%d", opts.Out, i)
				}
				if err := x.write(dir, f); err != nil {
					p.printf("  could not write the failure: %v\n", err)
				} else {
					f.Dir = dir
					p.printf("  written to %s\n", dir)
				}
			}
			if len(res.Failures) >= opts.MaxFailures {
				break
			}
		}
		p.tick(res.Runs, len(res.Failures), time.Since(start))
	}
	res.Elapsed = time.Since(start)
	p.clear()
	flaky := 0
	for _, f := range res.Failures {
		if f.Flaky {
			flaky++
		}
	}
	p.printf("%d runs in %s (%.0f runs/s), %d failures (%d flaky)\n", res.Runs, res.Elapsed.Round(time.Millisecond),
		res.RunsPerSecond(), len(res.Failures), flaky)
	return res
}

// investigate re-runs a failure to tell a bug from flakiness, then shrinks it.
func (x *explorer) investigate(ctx context.Context, sc *sim.Scenario, prob *Problem, seed uint64, i int, runSeed uint64, p *progress) *Failure {
	f := &Failure{Seed: seed, Run: i, RunSeed: runSeed, Problem: *prob, Original: *prob, Scenario: sc, Minimal: sc}
	p.printf("FAIL seed=%d run=%d: %s\n", seed, i, firstLines(prob.Message, 6))
	p.printf("  reproduce: %s --seed %d --runs 1\n", x.opts.Command, runSeed)
	again := x.check(sc)
	if again == nil || again.Hash != prob.Hash {
		f.Flaky = true
		p.printf("  flaky: a re-run gave another trace (%s vs %s); not shrunk\n", shortHash(prob.Hash), shortHash(hashOf(again)))
		f.ImplTrace, f.RefTrace = x.traces(sc)
		return f
	}
	if x.opts.ShrinkTime > 0 {
		min, stats := x.shrink(ctx, sc, prob)
		f.Minimal, f.Shrink = min, stats
		if last := x.check(min); last != nil {
			f.Problem = *last
		}
		p.printf("  shrunk in %s (%d steps): %s\n", stats.Elapsed.Round(time.Millisecond), stats.Accepted, stats)
	}
	f.ImplTrace, f.RefTrace = x.traces(f.Minimal)
	return f
}

func hashOf(p *Problem) string {
	if p == nil {
		return "(passes)"
	}
	return p.Hash
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// outcome is one simulated run.
type outcome struct {
	trace *sim.Trace
	err   error
	panic any
	hang  bool
}

// simulate runs sc against impl with a timeout, turning a panic into an outcome.
func (x *explorer) simulate(sc *sim.Scenario, impl sim.Implementation) outcome {
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{panic: p, trace: &sim.Trace{}}
			}
		}()
		// A copy: sim.Run fills in the scenario's default model in place, and a run that
		// hung may still be going.
		c := *sc
		tr, err := sim.Run(&c, impl)
		done <- outcome{trace: tr, err: err}
	}()
	timer := time.NewTimer(x.opts.RunTimeout)
	defer timer.Stop()
	select {
	case o := <-done:
		return o
	case <-timer.C:
		return outcome{hang: true, trace: &sim.Trace{}}
	}
}

func (x *explorer) impl() sim.Implementation {
	if x.opts.Impl == nil {
		return x.reference()
	}
	return x.opts.Impl()
}

func (x *explorer) reference() sim.Implementation {
	if x.opts.Reference == nil {
		return sim.NewReference()
	}
	return x.opts.Reference()
}

// check runs one scenario and returns what is wrong, or nil.
func (x *explorer) check(sc *sim.Scenario) *Problem {
	got := x.simulate(sc, x.impl())
	prob := &Problem{}
	switch {
	case got.hang:
		prob.Kind, prob.Message = KindHang, fmt.Sprintf("the run did not finish within %s", x.opts.RunTimeout)
		return prob
	case got.panic != nil:
		prob.Kind, prob.Message = KindPanic, fmt.Sprintf("the simulation panicked: %v", got.panic)
		return prob
	}
	var gotJSONL []byte
	if got.err != nil {
		prob.Kind, prob.Message = KindError, got.err.Error()
	} else if x.opts.Impl != nil && !x.opts.NoDiff {
		want := x.simulate(sc, x.reference())
		if want.err == nil && !want.hang && want.panic == nil {
			gotJSONL = got.trace.JSONL()
			agree := bytes.Equal(gotJSONL, want.trace.JSONL())
			if !agree && x.opts.Agree != nil {
				agree = x.opts.Agree(want.trace, got.trace)
			}
			if !agree {
				prob.Kind = KindDiff
				prob.Message = "the trace differs from the reference's in its JSON lines (the timelines agree)"
				if d, differ := sim.FirstDivergence(sim.Lines(want.trace.Timeline()), sim.Lines(got.trace.Timeline()), 3); differ {
					prob.Message = "the trace differs from the reference's: " + d.String()
				}
			}
		}
	}
	if prob.Kind != KindError {
		prob.Violations = invariant.CheckAll(got.trace, x.invs...)
	}
	if len(prob.Violations) > 0 && prob.Kind == "" {
		prob.Kind = KindInvariant
		var lines []string
		for k, v := range prob.Violations {
			if k == 5 {
				lines = append(lines, fmt.Sprintf("… and %d more", len(prob.Violations)-k))
				break
			}
			lines = append(lines, v.String())
		}
		prob.Message = strings.Join(lines, "\n")
	}
	if prob.Kind == "" {
		return nil
	}
	if gotJSONL == nil {
		gotJSONL = got.trace.JSONL()
	}
	sum := sha256.Sum256(gotJSONL)
	prob.Hash = hex.EncodeToString(sum[:])
	return prob
}

// traces returns the implementation's and the reference's traces of sc.
func (x *explorer) traces(sc *sim.Scenario) (impl, ref *sim.Trace) {
	impl = x.simulate(sc, x.impl()).trace
	if x.opts.Impl != nil {
		ref = x.simulate(sc, x.reference()).trace
	}
	return impl, ref
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n  ")
}
