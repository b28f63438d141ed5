package conformance

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// Options configure Verify. The zero value compares strictly against sim.NewReference.
type Options struct {
	// Profile is Strict (default) or Semantic.
	Profile trace.Profile
	// Reference makes the implementation the traces are compared against, a new one per
	// scenario; nil means the reference loop behaving as the pi version Tracks names.
	Reference func() sim.Implementation
	// Tracks is the pi version the implementation is held to: the reference behaves as that
	// release (loop.BehaviourOf) and scenarios of a later pi (since) are skipped. "" means
	// the version of the implementation's hello (tracks), or the newest pi without one.
	Tracks string
	// Level is how much of the contract the implementation is held to: levels.Pi (the
	// default) or levels.Core, where pi's conventions are judged nowhere (those its hello
	// says it follows excepted).
	Level levels.Level
	// OnResult, when set, is called after each scenario, in order (for progress output).
	OnResult func(Result)
	// ExpectFail names scenarios known to fail: such a failure is reported as expected
	// (status ExpectedFail, counted apart), and such a scenario passing is a failure
	// ("unexpected pass"), so the list shrinks as the implementation improves.
	ExpectFail map[string]bool
	// ExpectFindings narrows ExpectFail: for a scenario it lists, the cause keys or
	// signatures of the findings known (diagnose.Finding.CauseKey): a failure with a root
	// finding of another is not the one expected, and fails.
	ExpectFindings map[string][]string
	// Ignore lists findings to leave out (cause keys, signatures, or "invariant NAME"): a
	// scenario whose findings are all ignored passes.
	Ignore map[string]bool
	// Scenarios describes the suite's scenarios by name (family, rule, expect: block) for
	// the diagnosis of failures (diagnose.FromFiles); a scenario it lacks is diagnosed
	// without them, its family taken from its name ("family/name").
	Scenarios map[string]diagnose.Scenario
	// Invariants are checked on a failing implementation's trace; nil means all
	// (invariant.All).
	Invariants []invariant.Invariant
}

// Status is a scenario's verdict.
type Status string

// The verdicts.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
	// ExpectedFail is a failure the Options.ExpectFail list announced: not counted as a
	// failure, nor as a skip.
	ExpectedFail Status = "expected-fail"
)

// Result is the verdict on one scenario.
type Result struct {
	Scenario string
	Status   Status
	// Reason says why the scenario failed or was skipped: the implementation's error (a
	// timeout, a crash, a protocol error) or where the traces first differ.
	Reason string
	// Error is the implementation's failure (timeout, crash, protocol error) when there was
	// one, as opposed to a mere difference of traces.
	Error string
	// Family is the scenario's rule family (its suite folder); "" when it has none.
	Family string
	// Findings are everything wrong with a failing run (package diagnose): every region and
	// field where the traces differ, each broken invariant, each unmet expectation of the
	// scenario, the implementation's error. After Verify, each carries its Cause.
	Findings []diagnose.Finding
	// Checked says whether the invariants were judged at all (a scenario skipped, or cut
	// short by an error, is not).
	Checked bool
	// Conventions are the rules of pi's conventions the implementation's trace does not
	// follow in this scenario (at core level, where they are not judged).
	Conventions []string
	// Flaky says a failing scenario, run again, gave another trace: the implementation does
	// not behave the same on the same input (its own goroutines, a clock, a map's order).
	// Its findings are not grouped into causes.
	Flaky bool
	// Duration is the time the scenario took, both runs.
	Duration time.Duration
}

// Report is the outcome of a suite.
type Report struct {
	// Implementation names what was verified ("name version (tracks pi X)").
	Implementation string
	Profile        trace.Profile
	Results        []Result
	Passed         int
	Failed         int
	Skipped        int
	// ExpectedFailures counts the failures Options.ExpectFail announced, apart from the
	// failed and the skipped.
	ExpectedFailures int
	Duration         time.Duration
	// DeliveriesAhead is set when the harness sent deliveries ahead (PROTOCOL.md §14): the
	// implementation's hello says it takes them, and the Process is not OneAtATime.
	DeliveriesAhead bool
	// StandingAnswers is set when the harness may have promised standing answers (PROTOCOL.md
	// §15): the implementation's hello says it takes them, and the Process is not OneAtATime.
	StandingAnswers bool
	// Recheck, when set, is what re-running failed scenarios without the shortcuts showed
	// (RecheckWithoutShortcuts).
	Recheck *Recheck
	// HeldTo is the pi release the reference behaved as (the implementation's tracks, or
	// Options.Tracks); "" when Options.Reference gave the reference.
	HeldTo string
	// StartError is set when the implementation could not start (its command is missing, it
	// crashed or spoke wrongly before its hello): then no scenario was run, every result is
	// skipped, and the report is an input error rather than a verdict.
	StartError string
	// Causes are the defects behind the failures (package diagnose), the one touching the
	// most scenarios first.
	Causes []diagnose.Cause
	// Symptoms are the kinds of findings seen only after the first divergence that no cause
	// names (diagnose.Symptoms): consequences, or defects hidden behind a cause.
	Symptoms []diagnose.Symptom
	// KnownCauses are the causes of the expected failures (Options.ExpectFail), grouped
	// apart: they are known, and counted in neither Causes nor Symptoms.
	KnownCauses []diagnose.Cause
	// Families is the outcome per rule family (suite folder), Invariants per invariant.
	Families   []Tally
	Invariants []Tally
}

// Tally is how many scenarios of a family, or judged by an invariant, passed, failed and
// were skipped (an expected failure counts as failed here: the profile shows what holds).
type Tally struct {
	Name    string `json:"name"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
}

// OK reports whether no scenario failed (and the implementation started).
func (r *Report) OK() bool { return r.Failed == 0 && r.StartError == "" }

// Summary is the one-line outcome: "N passed, M failed" (and ", K skipped" when some were).
// Expected failures are not in it: ExpectedText says them.
func (r *Report) Summary() string {
	s := fmt.Sprintf("%d passed, %d failed", r.Passed, r.Failed)
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", r.Skipped)
	}
	return s
}

// ExpectedText is the line counting the expected failures ("" when there are none).
func (r *Report) ExpectedText() string {
	switch r.ExpectedFailures {
	case 0:
		return ""
	case 1:
		return "1 expected failure (listed as known), not counted below"
	}
	return fmt.Sprintf("%d expected failures (listed as known), not counted below", r.ExpectedFailures)
}

// helloer is an implementation that can introduce itself (Process): Verify takes its name
// and capabilities from it.
type helloer interface {
	Hello() (protocol.Hello, error)
}

// killer is an implementation Verify can stop at once when its context is cancelled.
type killer interface {
	Kill()
}

// Verify runs every scenario of the suite against the reference and against impl, and
// compares the two traces under opts.Profile. A scenario that installs a hook impl does not
// list in its hello capabilities is skipped. impl serves every scenario in turn. Cancelling
// ctx kills impl (when it can be killed) and skips the scenarios not yet run.
func Verify(ctx context.Context, suite []*sim.Scenario, impl sim.Implementation, opts Options) Report {
	report := verify(ctx, suite, impl, opts)
	report.Finish(opts)
	return report
}

// verify is Verify without the suite-wide analysis (causes, profile).
func verify(ctx context.Context, suite []*sim.Scenario, impl sim.Implementation, opts Options) Report {
	began := time.Now()
	s := startVerify(impl, opts)
	if k, ok := impl.(killer); ok {
		defer context.AfterFunc(ctx, k.Kill)()
	}
	for _, sc := range suite {
		res := s.scenario(ctx, sc, impl, opts)
		res.Family = describe(sc, opts).Family
		if len(opts.Ignore) > 0 {
			ignore(&res, opts.Ignore)
		}
		if opts.ExpectFail[sc.Name] {
			expectFailure(&res, opts.ExpectFindings[sc.Name])
		}
		s.report.Count(res)
		s.report.Results = append(s.report.Results, res)
		if opts.OnResult != nil && s.report.StartError == "" {
			opts.OnResult(res)
		}
	}
	s.report.Duration = time.Since(began)
	return s.report
}

// verification is what verify knows of the implementation before running the suite.
type verification struct {
	report  Report
	profile trace.Profile
	newRef  func() sim.Implementation
	tracks  string          // the pi the implementation tracks or is held to
	heldBy  string          // how it came to that pi, for skip reasons
	hooks   map[string]bool // the hooks the implementation supports
}

// startVerify reads the implementation's hello and makes the reference behave as the pi it
// tracks (or opts.Tracks).
func startVerify(impl sim.Implementation, opts Options) *verification {
	s := &verification{profile: cmp.Or(opts.Profile, trace.Strict), newRef: opts.Reference, hooks: map[string]bool{}}
	if s.newRef == nil {
		s.newRef = func() sim.Implementation { return sim.NewReference() }
	}
	s.report = Report{Implementation: "implementation", Profile: s.profile}
	for _, h := range protocol.AllHooks {
		s.hooks[h] = true
	}
	if r, ok := impl.(*sim.Reference); ok {
		s.report.Implementation = protocol.ReferenceName + " (in-process)"
		if r.Behaviour() != (loop.Behaviour{}) {
			s.report.Implementation = protocol.ReferenceName + " (in-process, as pi " + releaseOf(r.Behaviour()) + ")"
		}
	}
	if h, ok := impl.(helloer); ok {
		s.readHello(impl, h, opts)
	}
	s.heldBy = "the implementation tracks"
	if opts.Tracks != "" {
		s.tracks, s.heldBy = opts.Tracks, "the implementation is held to"
	}
	if opts.Reference == nil && s.report.StartError == "" {
		s.holdReference(opts)
	}
	return s
}

// readHello takes the implementation's name, shortcuts, tracked pi and hooks from its hello.
func (s *verification) readHello(impl sim.Implementation, h helloer, opts Options) {
	hello, err := h.Hello()
	if err != nil {
		s.report.StartError = err.Error()
		return
	}
	s.report.Implementation = DescribeHello(hello, opts.Tracks)
	if p, isProcess := impl.(*protocol.Process); isProcess {
		took, _ := p.Shortcuts() // the hello just read, kept
		s.report.DeliveriesAhead, s.report.StandingAnswers = took.DeliveriesAhead, took.StandingAnswers
	}
	s.tracks = hello.Tracks
	s.hooks = map[string]bool{}
	for _, name := range hello.Hooks {
		s.hooks[name] = true
	}
}

// holdReference makes the reference behave as the pi the implementation is held to.
func (s *verification) holdReference(opts Options) {
	b, err := loop.BehaviourOf(s.tracks)
	if err != nil {
		s.report.StartError = fmt.Sprintf("its hello tracks pi %q, which the reference cannot behave as: %v (--tracks X holds it to pi X instead)", s.tracks, err)
		if opts.Tracks != "" {
			s.report.StartError = fmt.Sprintf("the reference cannot behave as the pi to hold it to, %q: %v", s.tracks, err)
		}
		return
	}
	s.newRef = func() sim.Implementation { return sim.NewReferenceWith(b) }
	s.report.HeldTo = cmp.Or(s.tracks, loop.NewestVersion)
}

// scenario runs and judges one scenario, or says why it is skipped.
func (s *verification) scenario(ctx context.Context, sc *sim.Scenario, impl sim.Implementation, opts Options) Result {
	switch {
	case s.report.StartError != "":
		return Result{Scenario: sc.Name, Status: Skip, Reason: "not run: the implementation did not start"}
	case ctx.Err() != nil:
		return Result{Scenario: sc.Name, Status: Skip, Reason: "not run: " + context.Cause(ctx).Error()}
	case sc.Since != "" && s.tracks != "" && VersionLess(s.tracks, sc.Since):
		return Result{Scenario: sc.Name, Status: Skip,
			Reason: fmt.Sprintf("the scenario pins behaviour of pi %s; %s pi %s", sc.Since, s.heldBy, s.tracks)}
	case LacksReason(helloOf(impl), sc) != "":
		return Result{Scenario: sc.Name, Status: Skip, Reason: LacksReason(helloOf(impl), sc)}
	case opts.Level == levels.Core && levels.ConventionsOnly(sc.Rules):
		return Result{Scenario: sc.Name, Status: Skip, Reason: "the scenario pins only pi's conventions (" + strings.Join(sc.Rules, ", ") + "), not judged at core level"}
	}
	guarded := &guard{impl: impl, hooks: s.hooks}
	attempts := 0
	run := func() (*trace.Trace, error) {
		attempts++
		return sim.Run(sc, Attempt(guarded, attempts))
	}
	return VerifyOne(sc, s.newRef(), run, helloOf(impl), s.profile, opts.Level, describe(sc, opts), opts.Invariants)
}

// expectFailure applies the --expect-fail list to a listed scenario's result: a failure it
// names is expected, another one is said, a pass fails the run.
func expectFailure(res *Result, expected []string) {
	switch unexpected := unexpectedFindings(*res, expected); {
	case res.Status == Fail && len(unexpected) > 0:
		res.Reason = "fails otherwise than expected (a finding the --expect-fail list does not name: " + strings.Join(unexpected, "; ") + "): " + res.Reason
	case res.Status == Fail:
		res.Status, res.Reason = ExpectedFail, "expected failure: "+res.Reason
	case res.Status == Pass:
		res.Status, res.Reason = Fail, UnexpectedPassReason
	}
}

// ignore leaves out of a failed result the findings the list names; a result left with none
// (and no error) passes.
func ignore(res *Result, list map[string]bool) {
	if res.Status != Fail || res.Error != "" {
		return
	}
	res.Findings = slices.DeleteFunc(res.Findings, func(f diagnose.Finding) bool {
		return slices.ContainsFunc(f.Names(), func(k string) bool { return list[k] })
	})
	if !slices.ContainsFunc(res.Findings, func(f diagnose.Finding) bool { return !f.Consequence }) {
		res.Status, res.Reason, res.Findings = Pass, "", nil
	}
}

// unexpectedFindings is the keys of a failed result's root findings that expected (cause keys
// or signatures) does not name; none when expected is empty (any failure is the one expected).
func unexpectedFindings(res Result, expected []string) []string {
	if len(expected) == 0 {
		return nil
	}
	var out []string
	for _, f := range res.Findings {
		named := slices.ContainsFunc(f.Names(), func(k string) bool { return slices.Contains(expected, k) })
		if !f.Consequence && !named && !slices.Contains(out, f.CauseKey()) {
			out = append(out, f.CauseKey())
		}
	}
	return out
}

// Count adds a result to the totals.
func (r *Report) Count(res Result) {
	switch res.Status {
	case Pass:
		r.Passed++
	case Fail:
		r.Failed++
	case Skip:
		r.Skipped++
	case ExpectedFail:
		r.ExpectedFailures++
	}
}

// describe is what the diagnosis knows of a scenario: opts.Scenarios's entry, or its name
// with the family read from it.
func describe(sc *sim.Scenario, opts Options) diagnose.Scenario {
	if d, ok := opts.Scenarios[sc.Name]; ok {
		return d
	}
	d := diagnose.Scenario{Name: sc.Name, Rules: sc.Rules}
	if fam, _, ok := strings.Cut(sc.Name, "/"); ok {
		d.Family = fam
	}
	return d
}

// diagnose groups the failures' findings into causes: the counted failures' causes and
// symptoms, and apart the expected failures' (KnownCauses). A flaky result is not grouped;
// desc describes the scenarios by name (else a result's own name and family).
func (r *Report) diagnose(desc map[string]diagnose.Scenario) {
	var counted, known []diagnose.Diagnosis
	for _, res := range r.Results {
		if len(res.Findings) == 0 || res.Flaky || res.Status != Fail && res.Status != ExpectedFail {
			continue
		}
		d, ok := desc[res.Scenario]
		if !ok {
			d = diagnose.Scenario{Name: res.Scenario, Family: res.Family}
		}
		if res.Status == ExpectedFail {
			known = append(known, diagnose.Diagnosis{Scenario: d, Findings: res.Findings})
		} else {
			counted = append(counted, diagnose.Diagnosis{Scenario: d, Findings: res.Findings})
		}
	}
	r.Causes = diagnose.Group(counted)
	r.Symptoms = diagnose.Symptoms(counted, r.Causes)
	r.KnownCauses = diagnose.Group(known)
}

// Finish groups the failures into causes and tallies the profile by family and invariant.
func (r *Report) Finish(opts Options) {
	fams := map[string]*Tally{}
	var famOrder []string
	invs := opts.Invariants
	if invs == nil {
		invs = invariant.All()
	}
	invTally := make([]Tally, len(invs))
	for i, inv := range invs {
		invTally[i].Name = inv.Name
	}
	for _, res := range r.Results {
		failed := res.Status == Fail || res.Status == ExpectedFail
		name := res.Family
		if name == "" {
			name = "(no family)"
		}
		t := fams[name]
		if t == nil {
			t = &Tally{Name: name}
			fams[name] = t
			famOrder = append(famOrder, name)
		}
		switch {
		case res.Status == Pass:
			t.Passed++
		case failed:
			t.Failed++
		default:
			t.Skipped++
		}
		for i := range invTally {
			switch {
			case res.Status == Pass:
				invTally[i].Passed++
			case !res.Checked:
				invTally[i].Skipped++
			case slices.ContainsFunc(res.Findings, func(f diagnose.Finding) bool { return f.Invariant == invTally[i].Name }):
				invTally[i].Failed++
			default:
				invTally[i].Passed++
			}
		}
	}
	r.diagnose(opts.Scenarios)
	slices.Sort(famOrder)
	r.Families = nil
	for _, name := range famOrder {
		r.Families = append(r.Families, *fams[name])
	}
	r.Invariants = invTally
}

// UnexpectedPassReason is the reason of a scenario listed as a known failure that passed.
const UnexpectedPassReason = "unexpected pass: the scenario is listed as a known failure; remove it from the list"

// UnexpectedPass reports whether the result is that of a scenario listed as a known failure
// (Options.ExpectFail) that passed: it fails the run, yet the implementation did nothing wrong.
func (r Result) UnexpectedPass() bool { return r.Status == Fail && r.Reason == UnexpectedPassReason }

// VersionLess reports whether pi version a comes before b; it is loop.VersionLess, kept here
// for callers of the conformance API.
func VersionLess(a, b string) bool { return loop.VersionLess(a, b) }

// DescribeHello names an implementation by its hello: its name, version and the pi it
// tracks, and the pi it is held to when that is another (heldTo, Options.Tracks) or when it
// claims a pi newer than the reference knows.
func DescribeHello(h protocol.Hello, heldTo string) string {
	s := h.Name
	if h.Version != "" {
		s += " " + h.Version
	}
	switch {
	case heldTo != "" && heldTo != h.Tracks && h.Tracks != "":
		s += " (tracks pi " + h.Tracks + "; held to pi " + heldTo + ")"
	case heldTo != "" && h.Tracks == "":
		s += " (held to pi " + heldTo + ")"
	case h.Tracks == "":
	case loop.VersionLess(loop.NewestVersion, h.Tracks):
		s += " (tracks pi " + h.Tracks + ", held to " + loop.NewestVersion + ", the newest pi the reference knows)"
	default:
		s += " (tracks pi " + h.Tracks + ")"
	}
	return s
}

// VerifyOne runs one scenario both ways and judges it; a failure gets its findings, and is
// run again to tell a flaky implementation (another trace each time) from a defect.
func VerifyOne(sc *sim.Scenario, ref sim.Implementation, run func() (*trace.Trace, error), hello protocol.Hello, profile trace.Profile, level levels.Level, desc diagnose.Scenario, invs []invariant.Invariant) Result {
	began := time.Now()
	want, err := sim.Run(sc, ref)
	if err != nil {
		return referenceFailed(sc.Name, err, began)
	}
	if desc.Expect != nil && behavesAsNewest(ref) {
		// The scenario's expectations (written for the newest pi) must hold for the reference,
		// or an implementation agreeing with the reference would pass a wrong scenario.
		if problems := desc.Expect.Check(want); len(problems) > 0 {
			return expectationsFailed(sc.Name, problems, began)
		}
	}
	res := Result{Scenario: sc.Name}
	if why := lacksObserved(hello, want); why != "" {
		res.Status, res.Reason = Skip, why
		return res
	}
	got, runErr := run()
	res.Duration = time.Since(began)
	var skip *skipError
	if errors.As(runErr, &skip) {
		res.Status, res.Reason = Skip, skip.Error()
		return res
	}
	r := scenarioRun{run: run, profile: profile, level: level, follows: map[string]bool{}, want: want, got: got, raw: got, runErr: runErr}
	for _, id := range hello.Follows {
		r.follows[id] = true
	}
	if level == levels.Core {
		// Judged in the core view; the conventions it does not follow are noted apart.
		res.Conventions = conventionsNotFollowed(desc, want, got, profile, hello)
		desc.Expect = nil // the expect: block is written in pi's terms
	}
	r.compare()
	if r.runErr == nil && r.cmp.Equal() {
		res.Status, res.Checked = Pass, true
		return res
	}
	res.Status = Fail
	if r.runErr != nil {
		res.Reason, res.Error = r.runErr.Error(), r.runErr.Error()
	} else {
		res.Reason = "the traces differ: " + firstDifference(r.cmp)
	}
	res.Findings = r.findings(sc, ref, desc, invs)
	if level == levels.Core && len(res.Findings) == 0 && r.runErr == nil {
		res.Status, res.Reason, res.Checked = Pass, "", true
		return res
	}
	res.Checked = r.runErr == nil
	var over *sim.BudgetError
	if errors.As(r.runErr, &over) {
		// A run its budget stopped went on past the reference's end: a second run would
		// make nothing plainer.
		res.Duration = time.Since(began)
		return res
	}
	if r.flaky() {
		res.Flaky = true
		res.Reason = "flaky: a second run gave another trace; " + res.Reason
	}
	res.Duration = time.Since(began)
	return res
}

// referenceFailed is the result of a scenario the reference cannot run.
func referenceFailed(name string, err error, began time.Time) Result {
	res := Result{Scenario: name, Status: Fail, Reason: "the reference failed (a bug in the scenario or the harness): " + err.Error()}
	res.Error = res.Reason
	res.Duration = time.Since(began)
	res.Findings = []diagnose.Finding{{Kind: diagnose.Error, Rule: "the scenario runs on the reference", Says: res.Reason,
		Actual: err.Error(), Signature: "error: the reference fails", Headline: "the reference fails (a bug in a scenario or the harness)"}}
	return res
}

// expectationsFailed is the result of a scenario whose expect: block the reference fails: one
// sentence (saying a single problem), then the problems a line each.
func expectationsFailed(name string, problems []string, began time.Time) Result {
	res := Result{Scenario: name, Status: Fail}
	says := "the reference fails the scenario's expect: block (a bug in the scenario; turnstile run FILE shows it)"
	if len(problems) == 1 {
		says += ": " + problems[0]
	}
	res.Reason = says
	if len(problems) > 1 {
		res.Reason += ":\n" + strings.Join(problems, "\n")
	}
	res.Error = res.Reason
	res.Duration = time.Since(began)
	res.Findings = []diagnose.Finding{{Kind: diagnose.Error, Rule: "the scenario's expectations hold for the reference", Says: says,
		Actual: strings.Join(problems, "\n"), Signature: "error: the reference fails the scenario's expectations", Headline: "the reference fails a scenario's expect: block (a bug in the scenario)"}}
	return res
}

// scenarioRun is an implementation's run of a scenario judged against the reference's.
type scenarioRun struct {
	run       func() (*trace.Trace, error)
	profile   trace.Profile
	level     levels.Level
	follows   map[string]bool // the conventions a core loop says it follows
	want, got *trace.Trace
	raw       *trace.Trace // the implementation's trace as it ran, for telling a flaky one
	runErr    error
	ranErr    error // runErr as the run ended, for telling a flaky one
	cmp       *trace.Comparison
}

// compare compares the traces (in the core view at core level). Where a batch has several
// tool calls a second run must give the same trace: a port whose calls start in the order
// its goroutines happen to run fails it, as flaky.
func (r *scenarioRun) compare() {
	if r.level == levels.Core {
		r.want, r.got = levels.View(r.want, r.follows), levels.View(r.got, r.follows)
	}
	r.cmp = trace.Compare(r.want, r.got, r.profile)
	if r.runErr == nil && r.cmp.Equal() && severalCalls(r.want) {
		if again, againErr := r.run(); againErr != nil || !sameRun(r.raw, again, r.profile) {
			r.raw, r.got, r.runErr = again, again, againErr
			if r.level == levels.Core {
				r.got = levels.View(r.got, r.follows)
			}
			r.cmp = trace.Compare(r.want, r.got, r.profile)
		}
	}
	r.ranErr = r.runErr
	var shape *protocol.ShapeError
	if errors.As(r.runErr, &shape) && !r.cmp.Equal() {
		// The trace shows what broke pi's shape, each finding named by its entry's rule.
		r.runErr = nil
	}
}

// findings diagnoses a failed run: by the reference's pi version where it can, else by the
// comparison; at core level, in the core view.
func (r *scenarioRun) findings(sc *sim.Scenario, ref sim.Implementation, desc diagnose.Scenario, invs []invariant.Invariant) []diagnose.Finding {
	if invs == nil {
		invs = invariantsOf(ref) // judged at the pi version the reference behaves as
	}
	// One implementation trace, diagnosed against one reference trace or more (pi's releases).
	dopts := diagnose.Options{RunError: r.runErr, Invariants: invs, Got: &diagnose.GotMemo{}}
	if !behavesAsNewest(ref) {
		// The expect: block describes the newest pi; an implementation held to an older one
		// is judged by that pi's reference trace and invariants alone.
		desc.Expect = nil
	}
	var findings []diagnose.Finding
	if held, ok := ref.(*sim.Reference); ok {
		dopts.Tracks = releaseOf(held.Behaviour())
		if r.runErr == nil && r.level != levels.Core {
			findings = diagnoseByVersion(sc, held.Behaviour(), r.got, r.profile, desc, dopts)
		}
	}
	if findings == nil {
		findings = diagnose.Diagnose(desc, r.cmp, dopts)
	}
	if r.level == levels.Core {
		findings = levels.Findings(findings, r.follows)
	}
	return findings
}

// flaky runs the scenario again and reports whether it gave another trace or outcome.
func (r *scenarioRun) flaky() bool {
	again, againErr := r.run()
	return (againErr == nil) != (r.ranErr == nil) || againErr == nil && !sameRun(r.raw, again, r.profile)
}

// severalCalls reports whether a batch of the trace has two tool calls or more.
func severalCalls(tr *trace.Trace) bool {
	calls := 0
	for _, e := range tr.Entries {
		switch {
		case e.Kind == trace.KindCall && e.Name == trace.CallStream:
			calls = 0
		case e.Kind == trace.KindCall && e.Name == trace.CallTool:
			if calls++; calls > 1 {
				return true
			}
		}
	}
	return false
}

// sameRun reports whether two runs of an implementation gave the same trace under profile:
// the same JSON lines (the linear form, read in linear time), else the same comparison.
func sameRun(a, b *trace.Trace, profile trace.Profile) bool {
	if bytes.Equal(a.JSONL(), b.JSONL()) {
		return true
	}
	return profile != trace.Strict && trace.Compare(a, b, profile).Equal()
}

// firstDifference says where a comparison's first difference is, in a few words.
func firstDifference(c *trace.Comparison) string {
	k := c.First()
	if k < 0 {
		return "nowhere"
	}
	switch s := c.Steps[k]; s.Op {
	case trace.Missing:
		return fmt.Sprintf("the implementation lacks the reference's entry %d (%s)", s.Want+1, trace.Key(c.Want[s.Want]))
	case trace.Extra:
		return fmt.Sprintf("entry %d (%s) is extra", s.Got+1, trace.Key(c.Got[s.Got]))
	default:
		return fmt.Sprintf("entry %d (%s) differs at %s", s.Got+1, trace.Key(c.Got[s.Got]), s.Fields[0].Path)
	}
}

// skipError is the reason a scenario cannot be run against an implementation.
type skipError struct{ hook string }

func (e *skipError) Error() string {
	return fmt.Sprintf("the scenario installs hook %s, which the implementation does not support", e.hook)
}

// guard keeps from an implementation the scenarios that need hooks it lacks.
type guard struct {
	impl    sim.Implementation
	hooks   map[string]bool
	skipped bool
}

func (g *guard) Start(setup sim.Setup, port sim.Port) error {
	for _, h := range setup.Hooks {
		if !g.hooks[h] {
			g.skipped = true
			return &skipError{hook: h}
		}
	}
	return g.impl.Start(setup, port)
}

func (g *guard) Deliver(d sim.Delivery) error { return g.impl.Deliver(d) }

func (g *guard) Stop() error {
	if g.skipped {
		return nil
	}
	return g.impl.Stop()
}

// Attempt is impl running its sessions as the nth run of their scenario (sim.Setup.Attempt):
// the harness runs a scenario again to tell a flaky implementation, and says so in the
// setup, so that an implementation served by a pool of processes varies what it may vary
// (the Go kit's order among goroutines) as it does in-process. The first run is impl as it is.
func Attempt(impl sim.Implementation, n int) sim.Implementation {
	if n <= 1 {
		return impl
	}
	return &attempt{impl: impl, n: n}
}

// attempt is an implementation whose sessions are the nth run of their scenario.
type attempt struct {
	impl sim.Implementation
	n    int
}

func (a *attempt) Start(setup sim.Setup, port sim.Port) error {
	setup.Attempt = a.n
	return a.impl.Start(setup, port)
}

func (a *attempt) Deliver(d sim.Delivery) error { return a.impl.Deliver(d) }

func (a *attempt) Stop() error { return a.impl.Stop() }

// WriteText renders the report for people: a line per scenario with its findings not shown
// before (Progress), then the causes, the profile and the closing line (WriteSummary).
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "conformance of %s, profile %s\n", r.Implementation, r.Profile)
	p := &Progress{}
	for _, res := range r.Results {
		b.WriteString(p.Text(res))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return r.WriteSummary(w)
}

func indentRest(s, indent string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines, "\n"+indent)
}

// VerifyParallel is Verify spread over jobs implementations at once, each made by newImpl
// and closed afterwards (when it has a Close method). Results keep the suite's order.
func VerifyParallel(ctx context.Context, suite []*sim.Scenario, newImpl func() sim.Implementation, jobs int, opts Options) Report {
	if jobs <= 1 || len(suite) <= 1 {
		impl := newImpl()
		defer closeImpl(impl)
		return Verify(ctx, suite, impl, opts)
	}
	jobs = min(jobs, len(suite))
	began := time.Now()
	parts := make([]Report, jobs)
	var wg sync.WaitGroup
	for j := range jobs {
		var share []*sim.Scenario
		for i := j; i < len(suite); i += jobs {
			share = append(share, suite[i])
		}
		part := opts
		part.OnResult = nil
		wg.Go(func() {
			impl := newImpl()
			defer closeImpl(impl)
			parts[j] = verify(ctx, share, impl, part)
		})
	}
	wg.Wait()
	report := Report{Implementation: parts[0].Implementation, Profile: parts[0].Profile, DeliveriesAhead: parts[0].DeliveriesAhead,
		StandingAnswers: parts[0].StandingAnswers}
	for _, p := range parts {
		if p.StartError != "" && report.StartError == "" {
			report.StartError = p.StartError
		}
	}
	for i := range suite {
		res := parts[i%jobs].Results[i/jobs]
		report.Results = append(report.Results, res)
		report.Count(res)
		if opts.OnResult != nil && report.StartError == "" {
			opts.OnResult(res)
		}
	}
	report.Duration = time.Since(began)
	report.Finish(opts)
	return report
}

func closeImpl(impl sim.Implementation) {
	if c, ok := impl.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}
