package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// Options configure Verify. The zero value compares strictly against sim.NewReference.
type Options struct {
	// Profile is Strict (default) or Semantic.
	Profile Profile
	// Reference makes the implementation the traces are compared against, a new one per
	// scenario; nil means the reference loop behaving as the pi version Tracks names.
	Reference func() sim.Implementation
	// Tracks is the pi version the implementation is held to: the reference behaves as that
	// release (loop.BehaviourOf) and scenarios of a later pi (since) are skipped. "" means
	// the version of the implementation's hello (tracks), or the newest pi without one.
	Tracks string
	// Context is how many lines before the first divergence a result shows; 0 means 3.
	Context int
	// OnResult, when set, is called after each scenario, in order (for progress output).
	OnResult func(Result)
	// ExpectFail names scenarios known to fail: such a failure is reported as expected
	// (counted with the skipped), and such a scenario passing is a failure ("unexpected
	// pass"), so the list shrinks as the implementation improves.
	ExpectFail map[string]bool
}

// Status is a scenario's verdict.
type Status string

// The verdicts.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Result is the verdict on one scenario.
type Result struct {
	Scenario string
	Status   Status
	// Reason says why the scenario failed or was skipped: the implementation's error (a
	// timeout, a crash, a protocol error) or "traces differ at entry N".
	Reason string
	// Error is the implementation's failure (timeout, crash, protocol error) when there was
	// one, as opposed to a mere difference of traces.
	Error string
	// Divergence is the first difference between the traces, when there is one.
	Divergence *Divergence
	// Violations are the invariants (package invariant) the implementation's trace breaks,
	// when it differs from the reference's: they often say in words what the divergence
	// shows.
	Violations []string
	Duration   time.Duration
}

// Divergence is where two traces part.
type Divergence struct {
	// Entry is the 1-based position of the first entry that differs.
	Entry int
	// Expected and Actual are that entry in the text timeline (sim.TimelineLine), the
	// reference's and the implementation's; "(end of trace)" when a trace has no such entry.
	Expected, Actual string
	// Before holds up to Options.Context timeline lines both traces share before it.
	Before []string
	// Detail pinpoints the difference inside the entry (a JSON path and both values), which
	// matters when the two timeline lines read alike.
	Detail string
}

// Report is the outcome of a suite.
type Report struct {
	// Implementation names what was verified ("name version (tracks pi X)").
	Implementation string
	Profile        Profile
	Results        []Result
	Passed         int
	Failed         int
	Skipped        int
	Duration       time.Duration
}

// OK reports whether no scenario failed.
func (r *Report) OK() bool { return r.Failed == 0 }

// Summary is the one-line outcome: "N passed, M failed" (and ", K skipped" when some were).
func (r *Report) Summary() string {
	s := fmt.Sprintf("%d passed, %d failed", r.Passed, r.Failed)
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", r.Skipped)
	}
	return s
}

// helloer is an implementation that can introduce itself (Process): Verify takes its name
// and capabilities from it.
type helloer interface {
	Hello() (Hello, error)
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
	began := time.Now()
	profile := opts.Profile
	if profile == "" {
		profile = Strict
	}
	newRef := opts.Reference
	if newRef == nil {
		newRef = func() sim.Implementation { return sim.NewReference() }
	}
	report := Report{Implementation: "implementation", Profile: profile}
	tracks := ""
	hooks := map[string]bool{}
	for _, h := range AllHooks {
		hooks[h] = true
	}
	var startErr error
	if _, ok := impl.(*sim.Reference); ok {
		report.Implementation = ReferenceName + " (in-process)"
	}
	if h, ok := impl.(helloer); ok {
		hello, err := h.Hello()
		if err != nil {
			startErr = err
		} else {
			report.Implementation = describeHello(hello)
			tracks = hello.Tracks
			hooks = map[string]bool{}
			for _, name := range hello.Hooks {
				hooks[name] = true
			}
		}
	}
	if opts.Tracks != "" {
		tracks = opts.Tracks
	}
	if opts.Reference == nil && startErr == nil {
		if b, err := loop.BehaviourOf(tracks); err != nil {
			startErr = fmt.Errorf("the reference cannot behave as the pi version it tracks: %w", err)
		} else {
			newRef = func() sim.Implementation { return sim.NewReferenceWith(b) }
		}
	}
	if k, ok := impl.(killer); ok {
		defer context.AfterFunc(ctx, k.Kill)()
	}
	for _, sc := range suite {
		var res Result
		switch {
		case ctx.Err() != nil:
			res = Result{Scenario: sc.Name, Status: Skip, Reason: "not run: " + context.Cause(ctx).Error()}
		case startErr != nil:
			res = Result{Scenario: sc.Name, Status: Fail, Reason: "the implementation did not start: " + startErr.Error()}
		case sc.Since != "" && tracks != "" && VersionLess(tracks, sc.Since):
			res = Result{Scenario: sc.Name, Status: Skip,
				Reason: fmt.Sprintf("the scenario pins behaviour of pi %s; the implementation tracks pi %s", sc.Since, tracks)}
		case lacksReason(lacksOf(impl), sc) != "":
			res = Result{Scenario: sc.Name, Status: Skip, Reason: lacksReason(lacksOf(impl), sc)}
		default:
			res = verifyOne(sc, newRef(), &guard{impl: impl, hooks: hooks}, profile, orInt(opts.Context, 3))
		}
		if opts.ExpectFail[sc.Name] {
			switch res.Status {
			case Fail:
				res.Status, res.Reason = Skip, "expected failure: "+res.Reason
			case Pass:
				res.Status, res.Reason = Fail, "unexpected pass: the scenario is listed as a known failure; remove it from the list"
			}
		}
		switch res.Status {
		case Pass:
			report.Passed++
		case Fail:
			report.Failed++
		case Skip:
			report.Skipped++
		}
		report.Results = append(report.Results, res)
		if opts.OnResult != nil {
			opts.OnResult(res)
		}
	}
	report.Duration = time.Since(began)
	return report
}

// VersionLess reports whether version a comes before b, comparing dot-separated numbers
// ("0.99.1" < "1.6.0"); a part that is not a number compares as text.
func VersionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		x, y := "0", "0"
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		nx, errX := strconv.Atoi(x)
		ny, errY := strconv.Atoi(y)
		switch {
		case errX == nil && errY == nil && nx != ny:
			return nx < ny
		case (errX != nil || errY != nil) && x != y:
			return x < y
		}
	}
	return false
}

func describeHello(h Hello) string {
	s := h.Name
	if h.Version != "" {
		s += " " + h.Version
	}
	if h.Tracks != "" {
		s += " (tracks pi " + h.Tracks + ")"
	}
	return s
}

// verifyOne runs one scenario both ways and judges it.
func verifyOne(sc *sim.Scenario, ref, impl sim.Implementation, profile Profile, context int) Result {
	began := time.Now()
	res := Result{Scenario: sc.Name}
	want, err := sim.Run(sc, ref)
	if err != nil {
		res.Status, res.Reason = Fail, "the reference failed (a bug in the scenario or the harness): "+err.Error()
		res.Error = res.Reason
		res.Duration = time.Since(began)
		return res
	}
	got, runErr := sim.Run(sc, impl)
	res.Duration = time.Since(began)
	var skip *skipError
	if errors.As(runErr, &skip) {
		res.Status, res.Reason = Skip, skip.Error()
		return res
	}
	res.Divergence = Compare(want, got, profile, context)
	switch {
	case runErr != nil:
		res.Status, res.Reason, res.Error = Fail, runErr.Error(), runErr.Error()
	case res.Divergence != nil:
		res.Status, res.Reason = Fail, fmt.Sprintf("traces differ at entry %d", res.Divergence.Entry)
		for _, f := range invariant.CheckAll(got, invariantsOf(ref)...) {
			res.Violations = append(res.Violations, f.String())
		}
	default:
		res.Status = Pass
	}
	return res
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

// Compare returns the first divergence between the expected and the actual trace under the
// profile, with up to context shared lines before it; nil when they agree.
func Compare(want, got *sim.Trace, profile Profile, context int) *Divergence {
	n := max(len(want.Entries), len(got.Entries))
	for i := range n {
		var w, g *sim.Entry
		if i < len(want.Entries) {
			w = &want.Entries[i]
		}
		if i < len(got.Entries) {
			g = &got.Entries[i]
		}
		same, detail := entriesAgree(w, g, profile)
		if same {
			continue
		}
		d := &Divergence{Entry: i + 1, Expected: "(end of trace)", Actual: "(end of trace)", Detail: detail}
		if w != nil {
			d.Expected = sim.TimelineLine(*w)
		}
		if g != nil {
			d.Actual = sim.TimelineLine(*g)
		}
		for j := max(0, i-context); j < i; j++ {
			d.Before = append(d.Before, sim.TimelineLine(want.Entries[j]))
		}
		return d
	}
	return nil
}

// WriteText renders the report for people: a line per scenario, the divergence under each
// failure, and the summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "conformance of %s, profile %s\n", r.Implementation, r.Profile)
	for _, res := range r.Results {
		switch res.Status {
		case Pass:
			fmt.Fprintf(&b, "PASS  %s\n", res.Scenario)
		case Skip:
			fmt.Fprintf(&b, "SKIP  %s: %s\n", res.Scenario, res.Reason)
		case Fail:
			fmt.Fprintf(&b, "FAIL  %s: %s\n", res.Scenario, indentRest(res.Reason, "      "))
			if d := res.Divergence; d != nil {
				b.WriteString(d.Text("      "))
			}
			b.WriteString(violationsText(res.Violations, "      "))
		}
	}
	b.WriteString(r.Summary())
	b.WriteByte('\n')
	_, err := w.Write([]byte(b.String()))
	return err
}

// Text renders the divergence, each line prefixed with indent.
func (d *Divergence) Text(indent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%sfirst divergence at entry %d:\n", indent, d.Entry)
	for _, l := range d.Before {
		fmt.Fprintf(&b, "%s    %s\n", indent, l)
	}
	fmt.Fprintf(&b, "%s  - %s   (expected)\n", indent, d.Expected)
	fmt.Fprintf(&b, "%s  + %s   (actual)\n", indent, d.Actual)
	if d.Detail != "" {
		fmt.Fprintf(&b, "%s  %s\n", indent, d.Detail)
	}
	return b.String()
}

// violationsText lists the first broken invariants of a failed result.
func violationsText(vs []string, indent string) string {
	var b strings.Builder
	for i, v := range vs {
		if i == 5 {
			fmt.Fprintf(&b, "%s  … and %d more broken invariants\n", indent, len(vs)-i)
			break
		}
		fmt.Fprintf(&b, "%sbreaks %s\n", indent, v)
	}
	return b.String()
}

// ViolationsText renders a result's broken invariants, each line prefixed with indent.
func (r Result) ViolationsText(indent string) string { return violationsText(r.Violations, indent) }

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
			parts[j] = Verify(ctx, share, impl, part)
		})
	}
	wg.Wait()
	report := Report{Implementation: parts[0].Implementation, Profile: parts[0].Profile}
	for i := range suite {
		res := parts[i%jobs].Results[i/jobs]
		report.Results = append(report.Results, res)
		switch res.Status {
		case Pass:
			report.Passed++
		case Fail:
			report.Failed++
		case Skip:
			report.Skipped++
		}
		if opts.OnResult != nil {
			opts.OnResult(res)
		}
	}
	report.Duration = time.Since(began)
	return report
}

func closeImpl(impl sim.Implementation) {
	if c, ok := impl.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}
