// Package explore searches for behaviour that breaks the rules: it generates scenarios from a
// seed (only with the hooks and the situations the implementation under test supports), runs
// each against the implementation and the reference loop, and diagnoses the traces: every
// finding gets a cause signature. The exploration goes on after a failure; each distinct
// cause is shrunk to a small scenario that still shows it first (and nothing new), written
// out as a folder with the scenario, both timelines and the commands that reproduce it, and
// the summary lists the causes with the number of runs each failed.
//
// Every run's scenario comes from a seed derived from the base seed and the run's index, so a
// failing run can be reproduced alone: RunSeed(seed, 0) == seed, hence
// `turnstile explore --seed <run seed> --runs 1` replays exactly that run.
package explore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/sim/coop"
	"github.com/turnstile-dev/turnstile/trace"
)

// Options configures an exploration.
type Options struct {
	// Impl makes a fresh implementation under test for each run; with Jobs > 1 it is called
	// from several goroutines at once, and the implementations it makes must be able to run
	// at the same time (protocol.Pool lends one process to each). Nil explores the
	// reference alone, checking invariants only. When what it makes introduces itself (a
	// protocol.Process), its hello fills in Target where Target leaves it open.
	Impl func() sim.Implementation
	// Reference makes the implementation runs are compared with; nil means sim.NewReference.
	Reference func() sim.Implementation
	// Seed is the base seed; run i explores the scenario of RunSeed(Seed, i).
	Seed uint64
	// Runs bounds the number of runs (over all shards); Duration bounds the wall time. With
	// neither, 100 runs.
	Runs     int
	Duration time.Duration
	// Jobs is how many runs are checked at once (0 or 1: one after another). The result is
	// the same as with one job: runs are taken in their order, the jobs only check them
	// ahead (at most 2×Jobs runs). A new cause is investigated (re-run, shrunk) in the
	// exploration's order too; only a shrink that runs out of ShrinkTime, a bound in wall
	// time with any number of jobs, can end elsewhere.
	Jobs int
	// Out is the directory failures are written to, a folder per cause ("" writes nothing).
	Out string
	// Shard makes this process explore only the runs i with i % N == K.
	Shard Shard
	// Progress receives the seed, a progress line (rewritten in place on a terminal) and
	// each new cause as it is found; nil is silent. Summary(result) is the closing report.
	Progress io.Writer

	// Target is what the implementation supports: scenarios install no other hook, need no
	// optional feature it lacks and make no situation newer than its version. Hooks nil,
	// Tracks "" and Lacks nil are taken from Impl's hello when it has one, and otherwise mean
	// everything.
	Target Target
	// Profile is how the default diagnosis compares traces: trace.Strict (default) or
	// trace.Semantic.
	Profile trace.Profile
	// Diagnose finds what is wrong with a run and gives each finding its cause signature;
	// nil means newDiagnosis(Profile, Invariants, Level, Target.Follows, Target.Tracks), conform's diagnosis.
	Diagnose Diagnosis
	// Level is levels.Pi (default: pi's conventions judged too) or levels.Core.
	Level levels.Level
	// Ignore holds cause signatures known already: a run that shows one of them among its
	// possible causes counts as ignored, not failed, as a run that shows a known cause counts
	// for that cause. An invariant's signature alone ("invariant results") stands for every
	// rule of it ("invariant results: R-EXEC-PARALLEL").
	Ignore map[string]bool
	// Invariants are checked on the implementation's trace by the default diagnosis; nil
	// means invariant.All().
	Invariants []invariant.Invariant
	// NoDiff skips the comparison with the reference, leaving the invariants alone to find
	// failures.
	NoDiff bool
	// MaxFailures stops the exploration once that many distinct causes were found; 0 means
	// no limit (the runs or the duration end it).
	MaxFailures int
	// MaxHangs stops the exploration once that many runs hung (each costs RunTimeout, or the
	// implementation's own time limit, a minute by default: a port that hangs on a common
	// shape would otherwise take hours); 0 means no limit.
	MaxHangs int
	// ShrinkTime bounds the shrinking of one cause; 0 means 30s, negative disables it.
	ShrinkTime time.Duration
	// RunTimeout bounds one simulated run; a run that takes longer is a hang. 0 means 10s.
	RunTimeout time.Duration
	// Command is how the reproduce line starts, e.g. "turnstile explore --impl 'node a.mjs'";
	// "" means "turnstile explore".
	Command string
	// ImplCommand is the --impl command of the implementation, for the commands that replay
	// a minimal scenario ("" when the implementation is not a command).
	ImplCommand string
	// ImplFlags are the flags that drive the --impl command (e.g. " --timeout 30s
	// --one-at-a-time", " --tracks 1.6.0"), which the commands that replay a minimal scenario
	// repeat.
	ImplFlags string
	// Entry says what the generated runs drive: EntryAny (default: loop runs, and Agent
	// sessions where the target has them), EntryLoop or EntryAgent.
	Entry string
	// Generate makes the scenario of a run seed; nil means generatorOf(Target, Entry).
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
	// Implementation names what was explored (from its hello); Target is what it was
	// explored for.
	Implementation string
	Target         Target
	// Runs counts the runs made by this process; Failing those that failed, Ignored those
	// that showed an ignored cause.
	Runs, Failing, Ignored int
	// Failures holds one failure per distinct cause, in the order found: the first run that
	// showed it, shrunk.
	Failures []*Failure
	Elapsed  time.Duration
	// Shortcuts are the exchange's shortcuts the harness took with the implementation
	// (deliveries ahead, standing answers); a failure may lie in how its adapter takes them.
	Shortcuts protocol.Shortcuts
	// Recheck, when set, is what re-running minimal scenarios without the shortcuts showed
	// (conformance.RerunWithoutShortcuts): whether the shortcuts are the cause.
	Recheck *conformance.Recheck
	// command is Options.Command, which the summary's advice on shortcuts repeats.
	command string
	// Unexplored names the optional features no run needed (sim.Features), each with why:
	// the implementation lacks it, its pi predates it, or Entry left it out.
	Unexplored []string
	// Err is why the exploration could not run at all (the implementation did not start).
	Err error
	// Hangs counts the runs that hung; HangStop says the exploration stopped at MaxHangs.
	Hangs    int
	HangStop bool
	// shown counts the failing runs by the set of their possible causes' signatures.
	shown map[string]int
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

// Failure is one cause: the first failing run that showed it, shrunk, and how many runs did.
type Failure struct {
	Seed    uint64 // the base seed
	Run     int    // the index of the first run that showed the cause
	RunSeed uint64 // the seed of that run's scenario: --seed RunSeed --runs 1 reproduces it
	// Count is the number of failing runs that showed this cause among their possible causes
	// (its signature or an alias), wherever they came in the exploration: a count that does
	// not depend on the order of the runs, so that shards merged count as the whole. Runs are
	// the indexes of the first 20 runs counted for it as they came (after it was found).
	Count int
	Runs  []int
	// Aliases are signatures first taken for new causes that turned out to be this one: the
	// minimal scenario of one of the two showed the other's signature as well.
	Aliases []string
	// Problem is what is wrong with the minimal scenario; Original what was wrong with the
	// generated one. Both show the cause as their first finding.
	Problem
	Original Problem
	// Flaky: a re-run gave another trace, so this is not a reproducible bug.
	Flaky bool
	// Scenario is the generated scenario, Minimal the shrunk one that still shows the cause.
	Scenario *sim.Scenario
	Minimal  *sim.Scenario
	Shrink   ShrinkStats
	// PassesWithout names what the minimal scenario gives the loop (an ingredient: a field of
	// a hook's answers, a tool's or the configuration's setting, a hook, steering or
	// follow-up messages) without which the
	// implementation passes, each taken away alone, the finest first. Causes that share the
	// first are likely one defect (Summary says so).
	PassesWithout []string
	// ImplTrace and RefTrace are the minimal scenario's traces (RefTrace nil without Impl).
	ImplTrace, RefTrace *trace.Trace
	// Dir is where the failure was written, "" when it was not.
	Dir string
}

// count records that run i showed the cause.
func (f *Failure) count(i int) {
	f.Count++
	if len(f.Runs) < 20 {
		f.Runs = append(f.Runs, i)
	}
}

// sameFault reports whether f, a new cause, is the fault of g, a known one: f's minimal
// scenario, shrunk keeping f's signature first, still has g's signature among its possible
// causes (its root findings), so f was not shown without g. The reverse, g's minimal scenario
// showing f's signature too, does not make them one: f was shrunk to a scenario without g (a
// stranger's validator wording was counted under a truncation cause so, and hidden from then
// on).
func (f *Failure) sameFault(g *Failure) bool {
	if f.Flaky || g.Flaky {
		return false
	}
	return f.Problem.signatures()[g.Signature()]
}

// Kinds of problems.
const (
	kindDiff      = "diff"      // the implementation's trace differs from the reference's
	kindInvariant = "invariant" // the implementation's trace breaks an invariant
	kindError     = "error"     // the implementation broke the port's contract
	kindPanic     = "panic"     // the simulation panicked
	kindHang      = "hang"      // a run took longer than RunTimeout, or the implementation's own time limit (trace.ErrTimeout)
)

// Problem is what is wrong with one run.
type Problem struct {
	// Kind is the kind of the cause: "diff", "invariant", "error", "panic" or "hang".
	Kind string
	// Findings lists everything wrong, in the diagnosis's order.
	Findings []diagnose.Finding
	// Causes are the findings that can be the run's cause, the cause first (see Cause).
	Causes []diagnose.Finding
	// Message lists the signatures of the causes.
	Message string
	// Hash identifies the implementation's trace (sha256 of its JSONL).
	Hash string
	// trace is the implementation's trace of the run (as far as it went).
	trace *trace.Trace
}

// Cause is the finding that is the run's cause: the implementation's error, else the broken
// invariant at the earliest entry, else the first divergence.
func (p *Problem) Cause() diagnose.Finding {
	if p == nil || len(p.Causes) == 0 {
		return diagnose.Finding{}
	}
	return p.Causes[0]
}

// Signature is the cause key of the problem's cause (diagnose.Finding.CauseKey): the rule it
// breaks, else its signature.
func (p *Problem) Signature() string { return p.Cause().CauseKey() }

// Rule is the rule the problem's cause breaks.
func (p *Problem) Rule() string { return p.Cause().Rule }

// Rule is the rule the failure's cause breaks; when it names none (a divergence no invariant
// sees, in a generated scenario), the rules its minimal scenario exercises, as a lead.
func (f *Failure) Rule() string {
	r := f.Problem.Rule()
	if r != diagnose.NoRule || f.Minimal == nil {
		return r
	}
	if ids := Exercised(f.Minimal); len(ids) > 0 {
		r += " (no invariant names the rule; the minimal scenario exercises " + diagnose.RuleTitles(ids) + ")"
	}
	return r
}

// signatures returns the set of the signatures of the problem's possible causes.
func (p *Problem) signatures() map[string]bool {
	out := map[string]bool{}
	for _, f := range p.Causes {
		out[f.CauseKey()] = true
	}
	return out
}

// keeps reports whether q, a candidate of shrinking, still has p's cause and no possible
// cause p does not have (a later divergence may change: it may be a consequence): shrinking
// never drifts to another difference, nor brings one in.
func (p *Problem) keeps(q *Problem) bool {
	if q == nil || q.Signature() != p.Signature() {
		return false
	}
	have := p.signatures()
	for sig := range q.signatures() {
		if !have[sig] {
			return false
		}
	}
	return true
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

// GenerateScenario is the scenario of a run seed, for an implementation that supports
// everything.
func GenerateScenario(seed uint64) *sim.Scenario { return generatorFor(Target{})(seed) }

// explorer holds an exploration's settings.
type explorer struct {
	opts      Options
	diagnose  Diagnosis
	shortcuts protocol.Shortcuts // taken with the implementation, from its hello
	runners   *runners
	// rooms are the memory of traces checks dropped, for later runs: at most two a check
	// running at once.
	roomsMu sync.Mutex
	rooms   []*sim.Room
}

// withDefaults fills in what o leaves open, except what the implementation's hello gives.
func (o Options) withDefaults() Options {
	if o.Runs <= 0 && o.Duration <= 0 {
		o.Runs = 100
	}
	if o.ShrinkTime == 0 {
		o.ShrinkTime = 30 * time.Second
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = 10 * time.Second
	}
	if o.Command == "" {
		o.Command = "turnstile explore"
	}
	if o.Profile == "" {
		o.Profile = trace.Strict
	}
	if o.Reference == nil {
		o.Reference = func() sim.Implementation { return sim.NewReference() }
	}
	return o
}

func newExplorer(opts Options) *explorer {
	x := &explorer{opts: opts, diagnose: opts.Diagnose}
	x.runners = newRunners(x)
	if x.diagnose == nil {
		x.diagnose = newDiagnosis(opts.Profile, opts.Invariants, opts.Level, opts.Target.Follows, opts.Target.Tracks)
	}
	return x
}

// helloer is an implementation that introduces itself (protocol.Process).
type helloer interface {
	Hello() (protocol.Hello, error)
}

// shortcutter is an implementation that tells the exchange's shortcuts the harness takes with
// it (protocol.Process).
type shortcutter interface {
	Shortcuts() (protocol.Shortcuts, error)
}

// introduce asks the implementation for its hello, filling in what opts.Target leaves open.
func introduce(opts *Options, res *Result) error {
	res.Implementation = "the reference (in-process)"
	if opts.Impl == nil {
		return nil
	}
	res.Implementation = "the implementation"
	impl := opts.Impl()
	h, ok := impl.(helloer)
	if !ok {
		return nil
	}
	hello, err := h.Hello()
	if err != nil {
		return fmt.Errorf("the implementation did not start: %w", err)
	}
	res.Implementation = hello.Name
	if hello.Version != "" {
		res.Implementation += " " + hello.Version
	}
	if opts.Target.Hooks == nil {
		opts.Target.Hooks = slices.Clone(hello.Hooks)
		if opts.Target.Hooks == nil {
			opts.Target.Hooks = []string{}
		}
	}
	if opts.Target.Tracks == "" {
		opts.Target.Tracks = hello.Tracks
	}
	if opts.Target.Follows == nil {
		opts.Target.Follows = slices.Clone(hello.Follows)
	}
	if opts.Target.Lacks == nil {
		// An adapter speaking protocol 1 lacks every feature of version 2 as well.
		opts.Target.Lacks = slices.Clone(hello.Lacking())
	}
	if s, ok := impl.(shortcutter); ok {
		if res.Shortcuts, err = s.Shortcuts(); err != nil {
			return fmt.Errorf("the implementation did not start: %w", err)
		}
	}
	return nil
}

// Run explores until the runs or the duration are used up, ctx is done, or MaxFailures
// distinct causes were found. A failing run that shows a known cause among its findings is
// counted for it; one that shows none has a new cause, its first finding, which is
// investigated: re-run, shrunk keeping that cause, written out.
func Run(ctx context.Context, opts Options) Result {
	opts = opts.withDefaults()
	res := Result{Seed: opts.Seed, command: opts.Command, shown: map[string]int{}}
	p := newProgress(opts.Progress)
	x, err := setUp(opts, &res)
	if err != nil {
		res.Err = err
		return res
	}
	defer x.runners.close()
	x.announce(p)
	x.explore(ctx, &res, p)
	x.writeOut(&res, p)
	return res
}

// setUp introduces the implementation and makes the explorer of opts.
func setUp(opts Options, res *Result) (*explorer, error) {
	if err := introduce(&opts, res); err != nil {
		return nil, err
	}
	opts.Target.Level = opts.Level
	res.Target = opts.Target
	res.Unexplored = unexplored(opts.Target, opts.Entry)
	if opts.Generate == nil {
		gen, err := generatorOf(opts.Target, opts.Entry)
		if err != nil {
			return nil, err
		}
		opts.Generate = gen
	}
	x := newExplorer(opts)
	x.shortcuts = res.Shortcuts
	return x, nil
}

// announce prints the seed, the shard and what is explored.
func (x *explorer) announce(p *progress) {
	p.printf("seed=%d", x.opts.Seed)
	if x.opts.Shard.N > 1 {
		p.printf(" shard=%s", x.opts.Shard)
	}
	p.printf("\n")
	if d := describeTarget(x.opts.Target); d != "" {
		p.printf("%s\n", d)
	}
}

// explore takes the checked runs in order until they or a limit run out, counting each
// failing run for the known causes it shows or investigating its new one.
func (x *explorer) explore(ctx context.Context, res *Result, p *progress) {
	byCause := map[string]*Failure{}
	start := time.Now()
	next, stop := x.checks(ctx, start)
	defer stop()
	for {
		c, ok := next()
		if !ok {
			break
		}
		res.Runs++
		if c.ignored {
			res.Ignored++
		}
		if c.prob != nil && x.failing(ctx, c, res, byCause, p) {
			break
		}
		p.tick(res.Runs, res.Failing, len(res.Failures), time.Since(start))
	}
	res.Elapsed = time.Since(start)
	stop()
	p.clear()
	for _, f := range res.Failures {
		f.Count = countShown(res.shown, append([]string{f.Signature()}, f.Aliases...))
	}
}

// failing counts a failing run: for every known cause it shows, or, when it shows none, as a
// new cause, investigated and written out. It reports whether exploring stops here.
func (x *explorer) failing(ctx context.Context, c checked, res *Result, byCause map[string]*Failure, p *progress) (stop bool) {
	opts, prob := x.opts, c.prob
	res.Failing++
	res.shown[shownKey(prob.signatures())]++
	if prob.Kind == kindHang {
		res.Hangs++
	}
	hangStop := opts.MaxHangs > 0 && res.Hangs >= opts.MaxHangs
	res.HangStop = res.HangStop || hangStop
	// A run that shows a known cause counts for every known cause it shows; only a run
	// that shows none of them has a new cause, its first finding.
	counted := map[*Failure]bool{}
	for sig := range prob.signatures() {
		if f := byCause[sig]; f != nil && !counted[f] {
			counted[f] = true
			f.count(c.i)
		}
	}
	if len(counted) > 0 {
		return hangStop
	}
	p.clear()
	f := x.investigate(ctx, c.sc, prob, opts.Seed, c.i, c.runSeed, p)
	// Only minimal scenarios tell two causes apart: unshrunk, one scenario may show two
	// faults.
	if k := slices.IndexFunc(res.Failures, f.sameFault); k >= 0 && opts.ShrinkTime > 0 {
		same := res.Failures[k]
		p.printf("  the same fault as cause %d (%s): its minimal scenario shows that cause too; counted there\n", k+1, same.Signature())
		same.count(c.i)
		same.Aliases = append(same.Aliases, f.Signature())
		byCause[f.Signature()] = same
		return false
	}
	byCause[prob.Signature()] = f
	res.Failures = append(res.Failures, f)
	if opts.Out != "" {
		dir := filepath.Join(opts.Out, causeDir(prob.Signature()))
		if err := x.write(dir, f); err != nil {
			p.printf("  could not write the failure: %v\n", err)
		} else {
			f.Dir = dir
			p.printf("  cause %d, written to %s\n  the minimal scenario: %s\n", len(res.Failures), dir, x.replay(dir))
		}
	}
	return opts.MaxFailures > 0 && len(res.Failures) >= opts.MaxFailures || hangStop
}

// writeOut writes each failure's README and cause, the list of causes and the record of what
// was explored, under opts.Out.
func (x *explorer) writeOut(res *Result, p *progress) {
	for _, f := range res.Failures {
		if f.Dir != "" {
			// The counts are final now.
			err := os.WriteFile(filepath.Join(f.Dir, "README.md"), []byte(x.readme(f.Dir, f)), 0o644)
			if err == nil {
				err = writeJSON(filepath.Join(f.Dir, causeFile), causeRecord(f))
			}
			if err != nil {
				p.printf("could not write the failure: %v\n", err)
			}
		}
	}
	if x.opts.Out == "" {
		return
	}
	if len(res.Failures) > 0 {
		if err := writeCauses(x.opts.Out, *res); err != nil {
			p.printf("could not write the list of causes: %v\n", err)
		}
	}
	// What was explored, found or not, for turnstile merge.
	err := os.MkdirAll(x.opts.Out, 0o755)
	if err == nil {
		err = writeJSON(filepath.Join(x.opts.Out, recordFile), record(*res, x.opts.Shard))
	}
	if err != nil {
		p.printf("could not write %s: %v\n", recordFile, err)
	}
}

// unexplored names the optional features no generated run of entry needs for target, each
// with why.
func unexplored(t Target, entry string) []string {
	var out []string
	for _, f := range sim.Features {
		switch {
		case slices.Contains(t.Lacks, f):
			out = append(out, f+" (lacked)")
		case f == sim.FeatureAgent && entry == EntryLoop:
			out = append(out, f+" (--entry loop)")
		case f == sim.FeatureAgent && !t.Has(sitAgent):
			out = append(out, fmt.Sprintf("%s (pi %s predates it)", f, t.Tracks))
		case f == sim.FeatureToolResolvesNothing && !t.Has(sitResolvesNothing):
			out = append(out, fmt.Sprintf("%s (pi %s predates it)", f, t.Tracks))
		}
	}
	return out
}

// describeTarget says what the exploration is restricted to, "" when to nothing.
func describeTarget(t Target) string {
	var parts []string
	if t.Hooks != nil {
		var missing []string
		for _, h := range protocol.AllHooks {
			if !t.Supports(h) {
				missing = append(missing, h)
			}
		}
		if len(missing) > 0 {
			parts = append(parts, "hooks not declared, never installed: "+strings.Join(missing, ", "))
		}
	}
	if len(t.Lacks) > 0 {
		parts = append(parts, "optional features it lacks, never needed: "+strings.Join(t.Lacks, ", "))
	}
	if t.Tracks != "" {
		var newer []string
		for _, s := range versionedSituations {
			if !t.Has(s.Name) {
				newer = append(newer, fmt.Sprintf("%s (pi %s)", s.Name, s.Since))
			}
		}
		if len(newer) > 0 {
			parts = append(parts, fmt.Sprintf("tracks pi %s, so never generated: %s", t.Tracks, strings.Join(newer, ", ")))
		}
	}
	return strings.Join(parts, "\n")
}

// investigate re-runs a failure with a new cause to tell a bug from flakiness, then shrinks
// it, keeping its cause.
func (x *explorer) investigate(ctx context.Context, sc *sim.Scenario, prob *Problem, seed uint64, i int, runSeed uint64, p *progress) *Failure {
	f := &Failure{Seed: seed, Run: i, RunSeed: runSeed, Count: 1, Runs: []int{i}, Problem: *prob, Original: *prob, Scenario: sc, Minimal: sc}
	p.printf("FAIL run %d, a new cause: %s\n", i, prob.Signature())
	p.printf("%s", prob.Cause().Text("  "))
	p.printf("  reproduce: %s --seed %d --runs 1\n", x.opts.Command, runSeed)
	again, _ := x.checkAttempt(sc, 2)
	if again == nil || again.Hash != prob.Hash {
		f.Flaky = true
		p.printf("  flaky: a re-run gave another trace (%s vs %s); not shrunk\n", shortHash(prob.Hash), shortHash(hashOf(again)))
		f.ImplTrace, f.RefTrace = x.traces(sc)
		return f
	}
	if prob.Kind == kindHang {
		// Every run of it takes the whole time limit: neither shrunk nor run again for its trace.
		p.printf("  not shrunk: a run that hangs takes the whole time limit, and so would each smaller candidate\n")
		f.ImplTrace = again.trace
		if x.opts.Impl != nil {
			f.RefTrace = x.simulate(sc, x.opts.Reference()).trace
		}
		return f
	}
	if x.opts.ShrinkTime > 0 {
		min, stats := x.shrink(ctx, sc, prob)
		f.Minimal, f.Shrink = min, stats
		if last, _ := x.check(min); last != nil {
			f.Problem = *last
		}
		p.printf("  shrunk in %s (%d steps): %s\n", stats.Elapsed.Round(time.Millisecond), stats.Accepted, stats)
		if f.PassesWithout = x.passesWithout(min); len(f.PassesWithout) > 0 {
			p.printf("  passes without: %s\n", strings.Join(f.PassesWithout, "; "))
		}
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
	trace *trace.Trace
	err   error
	panic any
	hang  bool
}

// simulate runs sc against impl with a timeout, turning a panic into an outcome.
func (x *explorer) simulate(sc *sim.Scenario, impl sim.Implementation) outcome {
	return x.simulateIn(nil, sc, impl)
}

// ended reports whether the run is over: neither hung (it may still be going) nor ended by a
// panic, and so done with its room.
func (o outcome) ended() bool { return !o.hang && o.panic == nil }

// room is a room for a run's trace: one a dropped trace left (giveBack), or a new one.
func (x *explorer) room() *sim.Room {
	x.roomsMu.Lock()
	defer x.roomsMu.Unlock()
	if n := len(x.rooms); n > 0 {
		r := x.rooms[n-1]
		x.rooms = x.rooms[:n-1]
		return r
	}
	return &sim.Room{}
}

// giveBack keeps rooms for later runs (room).
func (x *explorer) giveBack(rooms ...*sim.Room) {
	x.roomsMu.Lock()
	defer x.roomsMu.Unlock()
	x.rooms = append(x.rooms, rooms...)
}

// simulateIn is simulate writing the trace in room (sim.RunIn), or in memory of its own when
// room is nil.
func (x *explorer) simulateIn(room *sim.Room, sc *sim.Scenario, impl sim.Implementation) outcome {
	done := make(chan outcome, 1)
	x.runners.run(func(ws *coop.Workers) (bool, func()) {
		returned := false
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{panic: p, trace: &trace.Trace{}}
			} else if !returned { // runtime.Goexit, in a task or a hook
				done <- outcome{panic: "runtime.Goexit during the run", trace: &trace.Trace{}}
			}
		}()
		// A copy: sim.Run fills in the scenario's default model in place, and a run that
		// hung may still be going.
		c := *sc
		if r, ok := impl.(*sim.Reference); ok {
			r.UseWorkers(ws)
		}
		tr, err := sim.RunIn(room, &c, impl)
		returned = true
		return true, func() { done <- outcome{trace: tr, err: err} }
	})
	timer := time.NewTimer(x.opts.RunTimeout)
	defer timer.Stop()
	select {
	case o := <-done:
		return o
	case <-timer.C:
		return outcome{hang: true, trace: &trace.Trace{}}
	}
}

func (x *explorer) impl() sim.Implementation {
	if x.opts.Impl == nil {
		return x.opts.Reference()
	}
	return x.opts.Impl()
}

// ignores reports whether --ignore names a finding: its signature, its cause key, or its
// invariant ("invariant results").
func (x *explorer) ignores(f diagnose.Finding) bool {
	return slices.ContainsFunc(f.Names(), func(k string) bool { return x.opts.Ignore[k] })
}

// check runs one scenario and returns what is wrong, or nil; ignored says that it showed an
// ignored cause (and then prob is nil).
func (x *explorer) check(sc *sim.Scenario) (prob *Problem, ignored bool) {
	return x.checkAttempt(sc, 1)
}

// checkAttempt is check of the attempt-th run of sc: a run again tells the implementation
// so (sim.Setup.Attempt), as conform does.
func (x *explorer) checkAttempt(sc *sim.Scenario, attempt int) (prob *Problem, ignored bool) {
	impl := x.impl()
	if x.opts.Impl != nil {
		impl = conformance.Attempt(impl, attempt)
	}
	// A problem found keeps both traces (and findings that share their memory); otherwise
	// their rooms serve later checks, unless a run never ended.
	gotRoom, wantRoom := x.room(), x.room()
	var got, want outcome
	defer func() {
		if prob == nil && got.ended() && want.ended() {
			x.giveBack(gotRoom, wantRoom)
		}
	}()
	got = x.simulateIn(gotRoom, sc, impl)
	prob = &Problem{trace: got.trace}
	var findings []diagnose.Finding
	failed := func(kind string, err error) {
		prob.Kind = kind
		findings = diagnose.Diagnose(diagnose.Scenario{Name: sc.Name}, nil, diagnose.Options{RunError: err})
	}
	switch {
	case got.hang:
		failed(kindHang, fmt.Errorf("the run did not finish within %s", x.opts.RunTimeout))
	case got.panic != nil:
		failed(kindPanic, fmt.Errorf("the simulation panicked: %v", got.panic))
	case errors.Is(got.err, trace.ErrTimeout):
		failed(kindHang, got.err)
	case got.err != nil && !errors.As(got.err, new(*protocol.ShapeError)):
		failed(kindError, got.err)
	default:
		var ref *trace.Trace
		if x.opts.Impl != nil && !x.opts.NoDiff {
			if want = x.simulateIn(wantRoom, sc, x.opts.Reference()); want.err == nil && want.ended() {
				ref = want.trace
			}
			if ref != nil && slices.ContainsFunc(sim.ObservedFeatures(ref), func(f string) bool { return slices.Contains(x.opts.Target.Lacks, f) }) {
				// The reference's run needs what the implementation lacks (a stream that
				// throws, …): conform skips such a scenario, and so is it not judged here.
				return nil, false
			}
		}
		findings = x.diagnose(ref, got.trace)
		if len(findings) == 0 && got.err != nil { // pi's shape broken where the traces agree
			failed(kindError, got.err)
		}
	}
	prob.Findings = findings
	prob.Causes = causes(findings)
	if len(prob.Causes) == 0 {
		return nil, false
	}
	// Ignored findings are left out, not the run: a run is hidden only when every possible
	// cause of it is ignored, so a new defect in a run an ignored one also shows is found.
	kept := slices.DeleteFunc(slices.Clone(prob.Causes), x.ignores)
	if len(kept) == 0 {
		return nil, true
	}
	prob.Causes = kept
	if prob.Kind == "" {
		switch prob.Cause().Kind {
		case diagnose.Invariant:
			prob.Kind = kindInvariant
		case diagnose.Error:
			prob.Kind = kindError
		default:
			prob.Kind = kindDiff
		}
	}
	var lines []string
	for k, f := range prob.Causes {
		if k == 5 {
			lines = append(lines, fmt.Sprintf("… and %d more", len(prob.Causes)-k))
			break
		}
		lines = append(lines, f.Signature)
	}
	prob.Message = strings.Join(lines, "\n")
	sum := sha256.Sum256(got.trace.JSONL())
	prob.Hash = hex.EncodeToString(sum[:])
	return prob, ignored
}

// traces returns the implementation's and the reference's traces of sc.
func (x *explorer) traces(sc *sim.Scenario) (impl, ref *trace.Trace) {
	impl = x.simulate(sc, x.impl()).trace
	if x.opts.Impl != nil {
		ref = x.simulate(sc, x.opts.Reference()).trace
	}
	return impl, ref
}
