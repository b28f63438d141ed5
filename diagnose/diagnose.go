package diagnose

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// Options tune Diagnose.
type Options struct {
	// Invariants are checked on the implementation's trace; nil means invariant.All().
	Invariants []invariant.Invariant
	// RunError is the implementation's failure (timeout, crash, protocol error), if any.
	RunError error
	// Tracks is the pi release the implementation is held to ("" the newest): a rule that
	// exists only from a later pi names no finding.
	Tracks string
	// Got, when set, keeps what is judged of the implementation's trace alone (its broken
	// invariants, its unmet expectations) from one call to the next: for diagnosing one
	// implementation trace against several reference traces, with the same scenario and
	// invariants, as conformance does against pi's releases. A new GotMemo per trace.
	Got *GotMemo
}

// GotMemo holds what Diagnose judged of an implementation's trace alone (Options.Got).
type GotMemo struct {
	invariants       []invariant.Failure
	invariantsJudged bool
	problems         []string
	problemsJudged   bool
}

// gotInvariants are the invariants got breaks, judged once per memo.
func (m *GotMemo) gotInvariants(got *trace.Trace, invs []invariant.Invariant) []invariant.Failure {
	if m == nil {
		return invariant.CheckAll(got, invs...)
	}
	if !m.invariantsJudged {
		m.invariants, m.invariantsJudged = invariant.CheckAll(got, invs...), true
	}
	return m.invariants
}

// expectProblems are the expect: problems of got, judged once per memo.
func (m *GotMemo) expectProblems(sc Scenario, got []trace.Entry) []string {
	if m == nil {
		return sc.Expect.Check(&trace.Trace{Scenario: sc.Name, Entries: got})
	}
	if !m.problemsJudged {
		m.problems, m.problemsJudged = sc.Expect.Check(&trace.Trace{Scenario: sc.Name, Entries: got}), true
	}
	return m.problems
}

// Diagnose returns every finding of one comparison of an implementation's trace with the
// reference's (trace.Compare) for scenario sc: the implementation's error, then the
// divergences, each named by the rule governing its entry, then the broken invariants and the
// unmet expectations. A nil comparison (the implementation produced no trace) gives only the
// error; when the implementation failed (opts.RunError), invariants and expectations are not
// judged. Findings after the first divergence are marked Consequence.
func Diagnose(sc Scenario, c *trace.Comparison, opts Options) []Finding {
	var out []Finding
	if opts.RunError != nil {
		out = append(out, errorFinding(sc.Name, opts.RunError))
	}
	if c == nil {
		return out
	}
	divs := divergences(c, newGovernor(c, opts.Tracks))
	first := Position{}
	if len(divs) > 0 {
		slices.SortStableFunc(divs, byPlace)
		first = divs[0].At
		markConsequences(c, divs)
		// The entries missing at the end of a run the implementation failed follow from
		// its failure, the root finding.
		if last := &divs[len(divs)-1]; opts.RunError != nil && strings.Contains(last.Signature, ": missing ") && last.At.Actual == 0 {
			last.Consequence = true
		}
	}
	divs = runFailure(c.Want, c.Got, divs)
	var over budgetStop
	if len(out) > 0 && len(divs) > 0 && (errors.As(opts.RunError, &over) || errors.Is(opts.RunError, trace.ErrTimeout)) {
		// A budget stops, or the time limit ends, a run that went on past the reference's
		// end or took another course: what it did first where the reference did not is the
		// root.
		out[0].Consequence = true
	}
	out = append(out, divs...)
	if opts.RunError != nil {
		// A trace cut short by the implementation's failure breaks invariants and
		// expectations for that reason alone.
		return out
	}
	from := 0 // an entry moved later: the traces differ from the place it left
	for _, d := range divs {
		if d.from > 0 && (from == 0 || d.from < from) {
			from = d.from
		}
	}
	invs := groupInvariants(invariantFindings(c, opts.Invariants, opts.Got, first, from, len(divs) > 0))
	if len(divs) > 0 && (strings.HasPrefix(divs[0].Signature, runFails) || strings.HasPrefix(divs[0].Signature, runReturns)) {
		// The runs agree up to where one ended, so whatever invariant the run breaks
		// follows from how it ended.
		for i := range invs {
			invs[i].Consequence = true
		}
	}
	out = append(out, foldInvariants(out, invs)...)
	if sc.Expect != nil {
		for _, p := range opts.Got.expectProblems(sc, c.Got) {
			what := expectationKind(p)
			out = append(out, Finding{
				Kind: Expectation, Rule: sc.RuleName(), Says: "the scenario's expectation fails: " + p,
				Consequence: len(divs) > 0,
				// An expectation is the scenario's own: its signature names the scenario, so
				// that unrelated defects missing different expectations are not one cause.
				Signature: "expectation " + what + " of " + sc.Name,
				Headline:  "the expect: " + what + " of " + sc.Name + " is not met",
			})
		}
	}
	return out
}

// markConsequences marks the divergences (in trace order) that follow from an earlier one.
// The world is scripted, so an entry's values do not depend on what the loop did before it,
// but for three things: its virtual time (when the loop waited), the lists that gather
// earlier messages (contexts, new messages, tool results), and the responses after an extra
// or missing request (the script answers requests in order). A field that differs with the
// values an earlier one did is that difference carried on; a rule already broken by an
// earlier root is taken as the same defect. Every other finding is a root: a defect of its
// own, however late in the trace.
func markConsequences(c *trace.Comparison, divs []Finding) {
	messages, requests := false, false // an earlier divergence touched a message, a request
	rules := map[string]bool{}         // the rules of the roots so far
	values := map[string]bool{}        // the fields and values of the field findings so far
	course := false                    // a root changed the run's course (entries lacking, added, moved)
	queues := false                    // a root found an Agent's queues holding other messages
	// The harness's entries (deliveries, user actions) follow what the loop did: never a root
	// where the loop's own entries differ too, even when found first.
	loopDiffers := slices.ContainsFunc(divs, func(d Finding) bool { return !(d.harness && d.Path == "") })
	for i := range divs {
		d := &divs[i]
		value := fieldName(d.Path) + "\x00" + d.Expected + "\x00" + d.Actual
		if d.follows || d.harness && d.Path == "" && loopDiffers {
			d.Consequence = true // the end of a run that went another way there (markStops), or the harness's
		}
		if i > 0 {
			switch {
			case d.Path != "" && course && d.messages:
				// A message's field after the course changed: another message stands there.
				d.Consequence = true
			case d.Path != "" && values[value]:
				// The same field with the same values, carried on (a tool's result into its
				// message, the turn's list, the next context).
				d.Consequence = true
			case d.RuleID == "R-AGENT-QUEUES" && queues:
				// The queues held other messages (a reset that left one): what they answer
				// later differs for that.
				d.Consequence = true
			case d.RuleID != "" && rules[d.RuleID]:
				// One rule broken twice in a scenario is most likely one defect showing twice
				// (a truncated call executed: an extra call and a missing failure).
				d.Consequence = true
			case d.shifted || d.RuleID == "R-TIME-STAMP" && !d.wallClock:
				// A timestamp after an earlier difference follows the virtual time it moved.
				d.Consequence = true
			case d.follows:
				d.Consequence = true
			case d.RuleID == "" && (d.harness || d.Path != "" && fieldName(d.Path) == "t" || d.Path == ""):
				// The harness's deliveries, times, runs of them: they follow what the loop did.
				d.Consequence = true
			case d.Path != "" && messages && gathers(d.Path):
				d.Consequence = true
			case d.Path != "" && requests:
				// After a request more or less, the script's answers come to other requests.
				d.Consequence = true
			case d.Path == "" && d.Kind == Divergence && course:
				// Entries lacking, added or moved after an earlier root that changed the
				// run's course: they follow it (a steering message taken early is then
				// lacking later, the run ends a turn sooner). A defect of its own is a root
				// in the scenarios where nothing changed the course before it.
				d.Consequence = true
			}
		}
		if !d.Consequence {
			rules[d.RuleID] = true
			course = course || d.Path == "" && d.Kind == Divergence
			queues = queues || slices.ContainsFunc(strings.Split(folded(d.Path), "."), func(m string) bool {
				return m == "queued" || m == "queued[]" || m == "hasQueuedMessages"
			})
		}
		if d.Path != "" {
			values[value] = true
		}
		messages = messages || d.messages
		requests = requests || d.request
	}
}

// byPlace orders divergences by where they show; at one place, entries the implementation
// has in addition come before those it lacks, and what only follows what it did there comes
// last.
func byPlace(a, b Finding) int {
	if d := position(a) - position(b); d != 0 {
		return d
	}
	if fa, fb := a.follower(), b.follower(); fa != fb {
		if fa {
			return 1
		}
		return -1
	}
	return len(b.added()) - len(a.added())
}

// added is the implementation's entries a region it has in addition shows on; nil for any
// other divergence.
func (f Finding) added() []int {
	if f.Path != "" {
		return nil
	}
	return f.span
}

// follower reports whether a divergence only follows what the loop did at its place: a run
// of the harness's entries alone (deliveries, user actions, made when the loop is idle), an
// entry's time, a stamp that says that time.
func (f Finding) follower() bool {
	return f.harness && f.Path == "" || f.Path == "t" || f.shifted
}

// gathers reports whether a field's path lies in a list of earlier messages (a context, the
// run's new messages, a turn's tool results).
func gathers(path string) bool {
	for _, m := range strings.Split(folded(path), ".") {
		switch strings.TrimSuffix(m, "[]") {
		case "messages", "newMessages", "toolResults", "context":
			return true
		}
	}
	return false
}

// queuesAnswered reports whether divergence d says only that the Agent's queues answered
// otherwise (R-AGENT-QUEUES), where agent-queues' violation f says which rule made them.
func queuesAnswered(d, f Finding) bool {
	return d.RuleID == "R-AGENT-QUEUES" && f.Invariant == "agent-queues"
}

// foldInvariants leaves out the invariant findings that say what a divergence finding says
// already (one defect, seen twice): broken at an entry the divergence shows on, or breaking
// the divergence's rule. The divergence gets the invariant's words; the others are returned.
func foldInvariants(divs []Finding, invs []Finding) []Finding {
	var out []Finding
	for _, f := range invs {
		i := slices.IndexFunc(divs, func(d Finding) bool { return d.Kind == Divergence && slices.Contains(d.span, f.At.Actual) })
		if i < 0 && flowInvariants[f.Invariant] {
			// The loop's course (polls, termination, finishTurn) broken next to entries one
			// side lacks or adds, or before a request one side lacks or adds: the same change
			// of course.
			i = slices.IndexFunc(divs, func(d Finding) bool {
				return d.Kind == Divergence && d.Path == "" && (d.At.Actual == f.At.Actual || d.At.Actual == f.At.Actual+1 ||
					slices.Contains(d.span, f.At.Actual-1) || slices.Contains(d.span, f.At.Actual+1) ||
					d.request && d.At.Actual >= f.At.Actual)
			})
		}
		if i < 0 {
			ids := []string{f.RuleID}
			if f.RuleID == "" {
				if inv, ok := invariant.ByName(f.Invariant); ok {
					ids = inv.Rules
				}
			}
			i = slices.IndexFunc(divs, func(d Finding) bool {
				return d.Kind == Divergence && d.RuleID != "" && (slices.ContainsFunc(ids, func(id string) bool { return causeRule(id) == causeRule(d.RuleID) }) ||
					queuesAnswered(d, f))
			})
			if i < 0 {
				// Broken at the entry after a region one side lacks, by the rule of an entry
				// of that region: the region's defect, seen from after it.
				i = slices.IndexFunc(divs, func(d Finding) bool {
					return d.Kind == Divergence && len(d.span) == 0 && d.At.Actual == f.At.Actual && slices.ContainsFunc(ids, func(id string) bool {
						return slices.ContainsFunc(d.rules, func(r string) bool { return causeRule(r) == causeRule(id) })
					})
				})
			}
		}
		if i < 0 {
			out = append(out, f)
			continue
		}
		if !strings.Contains(divs[i].Says, "invariant "+f.Invariant) {
			divs[i].Says += "; it breaks invariant " + f.Invariant + ": " + f.Actual
			divs[i].Invariant = f.Invariant
		}
		d := &divs[i]
		if (d.RuleID == "R-NO-TURN-LIMIT" && !d.stops && flowInvariants[f.Invariant] || queuesAnswered(*d, f)) && f.RuleID != "" && f.RuleID != d.RuleID {
			// A request lacking where the loop went on says only that its course changed, and
			// queued messages taken otherwise only that the queues answered otherwise; the
			// invariant, judged at the same place, says why (a follow-up taken early, a poll
			// too many, continue()'s first poll). Where the loop stopped instead, it stopped:
			// R-NO-TURN-LIMIT.
			d.Signature = f.RuleID + strings.TrimPrefix(d.Signature, d.RuleID)
			d.Headline = f.RuleID + strings.TrimPrefix(d.Headline, d.RuleID)
			d.RuleID, d.Rule = f.RuleID, RuleTitles([]string{f.RuleID})
		}
	}
	return out
}

// groupInvariants keeps one finding per invariant signature, counting the others (a grammar
// broken at every event of a run is one finding); the first is a root if any of them is.
func groupInvariants(invs []Finding) []Finding {
	var out []Finding
	at := map[string]int{}
	for _, f := range invs {
		if i, ok := at[f.Signature]; ok {
			out[i].Count++
			out[i].Consequence = out[i].Consequence && f.Consequence
			continue
		}
		at[f.Signature] = len(out)
		f.Count = 1
		out = append(out, f)
	}
	return out
}

// flowInvariants judge the loop's course: when it polls, goes on and stops.
var flowInvariants = map[string]bool{"termination": true, "queue-timing": true, "finish-turn": true}

// position orders findings by where they show: an error (no entry) first, then by the
// implementation's entry, else the reference's.
func position(f Finding) int {
	switch {
	case f.At.Actual > 0:
		return f.At.Actual
	case f.At.Expected > 0:
		return f.At.Expected
	}
	return 0
}

// runFailure makes the end of a run the root finding when the two runs agree up to where
// one of them ends and they end differently: the implementation's failed where the
// reference's did not (a KeyError in the loop), or failed otherwise, or returned where the
// reference's failed (a swallowed stream error). What follows from that (entries the failed
// run lacks, or the returned run's extra ones) are its consequences. A run that fails after
// an earlier divergence (a request beyond the script, after an extra turn) keeps that
// divergence as its root. divs are the divergences found; the result is divs, or the end
// first and divs, the end's own fields left out, as consequences.
func runFailure(want, got []trace.Entry, divs []Finding) []Finding {
	if len(want) == 0 || len(got) == 0 || len(divs) == 0 {
		return divs
	}
	w, g := want[len(want)-1], got[len(got)-1]
	if g.Kind != trace.KindEnd || w.Kind != trace.KindEnd || w.Error == g.Error {
		return divs
	}
	// The two ends differ as the profile compares them (a semantic profile may leave a
	// failure's text free), and nothing before the end of the run that stopped first does.
	if !slices.ContainsFunc(divs, func(d Finding) bool { return d.At.Actual == len(got) && d.At.Expected == len(want) }) {
		return divs
	}
	var root Finding
	switch first := divs[0].At; {
	case g.Error != "" && first.Actual == len(got):
		theirs := "returned"
		if w.Error != "" {
			theirs = fmt.Sprintf("failed with %q", w.Error)
		}
		general := digitsRE.ReplaceAllString(firstLine(g.Error), "N")
		root = Finding{
			Says: fmt.Sprintf("the implementation's run failed with %q where the reference's %s (R-FAIL-THROW says what fails a run; "+
				"the implementation's stderr may say where): what it lacks before its end follows from that", g.Error, theirs),
			Path: "data.error", Expected: "(absent)", Actual: strconv.Quote(g.Error),
			Signature: runFails + general,
			Headline:  "the run fails with " + strconv.Quote(general) + " where the reference's does not",
		}
		if w.Error != "" {
			root.Expected = strconv.Quote(w.Error)
			root.Headline = "the run fails with " + strconv.Quote(general) + " where the reference's fails otherwise"
		}
	case g.Error == "" && first.Expected == len(want):
		general := digitsRE.ReplaceAllString(firstLine(w.Error), "N")
		root = Finding{
			Says: fmt.Sprintf("the implementation's run went on and returned where the reference's failed with %q (R-FAIL-THROW says what "+
				"fails a run: was the error caught?): what it has after that point follows from that", w.Error),
			Path: "data.error", Expected: strconv.Quote(w.Error), Actual: "(absent)",
			// One signature whatever the error: the scenarios script different ones.
			Signature: runReturns,
			Headline:  "the run returns where the reference's fails (with " + strconv.Quote(general) + ", for example)",
		}
	default:
		return divs
	}
	root.Kind, root.Rule = Divergence, RuleTitles([]string{"R-FAIL-THROW"})
	if id := errorTextRule(w.Error); id != "" {
		// The reference's failure is one of the contract's texts: its rule says when to fail so.
		root.RuleID, root.Rule = id, RuleTitles([]string{id})
		root.Signature, root.Headline = id+": "+root.Signature, id+": "+root.Headline
	}
	root.At = Position{Expected: len(want), Actual: len(got)}
	root.ExpectedLine, root.ActualLine = trace.TimelineLine(w), trace.TimelineLine(g)
	out := []Finding{root}
	for _, d := range divs {
		if d.At.Actual == len(got) && d.At.Expected == len(want) {
			continue // the end's own fields: the root says them
		}
		d.Consequence = true
		out = append(out, d)
	}
	return out
}

// errorTextRule is the rule of the contract's error text that is text exactly, or "".
func errorTextRule(text string) string {
	for _, e := range errorTexts() {
		if e.Text == text && text != "" {
			return e.Rule
		}
	}
	return ""
}

var errorTexts = sync.OnceValue(docs.ErrorTexts)

var (
	digitsRE = regexp.MustCompile(`\d+`)
	// phaseRE is the step of the run an error names first ("start: ", "delivery streamEvent
	// at 67ms: "); deliveryRE a delivery it names inside ("during delivery toolResult at 5ms").
	phaseRE    = regexp.MustCompile(`^(start|delivery \w+ at \d+ms): `)
	deliveryRE = regexp.MustCompile(`during delivery \w+ at \d+ms`)
)

// runFails starts the signature of a run that fails where the reference's does not;
// runReturns of one that returns where the reference's fails.
const (
	runFails   = "R-FAIL-THROW: run fails: "
	runReturns = "R-FAIL-THROW: run returns where the reference's fails"
)

func errorFinding(scenario string, err error) Finding {
	msg := err.Error()
	// The harness prefixes "scenario NAME: "; the signature must not carry the name.
	general := strings.TrimPrefix(firstLine(msg), "scenario "+scenario+": ")
	if scenario != "" {
		general = strings.ReplaceAll(general, scenario, "…")
	}
	// Where in the run it happened (at the start, during which delivery) is the scenario's,
	// not the defect's: one crash or protocol error is one signature.
	shape := valueFree(phaseRE.ReplaceAllString(deliveryRE.ReplaceAllString(general, "during a delivery"), ""))
	f := Finding{
		Kind: Error, Rule: "the conformance protocol (conformance/PROTOCOL.md)",
		Says:      "the implementation failed to run the scenario: " + general,
		Actual:    msg,
		Signature: "error: " + shape,
		Headline:  "the implementation fails: " + shape,
	}
	if errors.Is(err, trace.ErrTimeout) {
		f.Rule += ": after each delivery the implementation reports idle, within --timeout; it hung (the loop, or its adapter, waits for something that never comes) or is slower than the limit"
		f.Headline = "the implementation hangs or is too slow: " + shape
	}
	var over budgetStop
	if errors.As(err, &over) {
		f.Rule = "the run's budget (README, Budgets): the implementation made more requests, or a longer trace, than the budget allows, where the reference stays within it; it runs away (a loop that never ends, or events repeated without end)"
		f.Headline = "the implementation runs past the budget: " + shape
	}
	return f
}

// budgetStop is an error saying that a budget stopped the run (sim.BudgetError).
type budgetStop interface {
	error
	Exceeded() string
}

// invariantFindings are the invariants the implementation's trace breaks where the
// reference's keeps them; those after the first divergence (first, or from: the place an entry
// moved later left) may be its consequences.
func invariantFindings(c *trace.Comparison, invs []invariant.Invariant, memo *GotMemo, first Position, from int, diverged bool) []Finding {
	want := &trace.Trace{Entries: c.Want}
	got := &trace.Trace{Entries: c.Got}
	known := map[string]bool{}
	if len(want.Entries) > 0 { // without a reference trace (invariants alone), nothing is known
		for _, f := range invariant.CheckAll(want, invs...) {
			known[f.Invariant+"\x00"+f.Msg] = true
		}
	}
	byName := map[string]invariant.Invariant{}
	for _, inv := range invariant.All() {
		byName[inv.Name] = inv
	}
	for _, inv := range invs {
		byName[inv.Name] = inv
	}
	firstEnd := sameMessage(got.Entries, first.Actual)
	var out []Finding
	lines := map[int]string{} // an entry breaks several invariants, or one several times
	for _, f := range memo.gotInvariants(got, invs) {
		if known[f.Invariant+"\x00"+f.Msg] {
			continue
		}
		fd := Finding{
			Kind: Invariant, Rule: f.Invariant, Invariant: f.Invariant,
			Says:   "breaks invariant " + f.Invariant + ": " + f.Msg,
			At:     Position{Actual: f.Entry},
			Actual: f.Msg,
			// The invariant and the rule its violation names are the signature: its
			// violations of one rule, whatever their values, are one (the message, with the
			// scenario's values, is in Says), and two rules of one invariant are two
			// defects. A violation that names no rule is the invariant's.
			Signature: "invariant " + f.Invariant,
			Headline:  "breaks invariant " + f.Invariant,
		}
		if f.Rule != "" {
			// Said as its rule, as a divergence is: "R-TRUNC-FAIL: invariant truncation".
			fd.RuleID = f.Rule
			fd.Signature = f.Rule + ": invariant " + f.Invariant
			fd.Headline = headline(f.Rule, "breaks invariant "+f.Invariant)
		}
		if inv, ok := byName[f.Invariant]; ok {
			fd.Rule = invariantRule(inv, f.Rule, false)
		}
		if f.Entry > 0 && f.Entry <= len(got.Entries) {
			line, ok := lines[f.Entry]
			if !ok {
				line = trace.TimelineLine(got.Entries[f.Entry-1])
				lines[f.Entry] = line
			}
			fd.ActualLine = line
		}
		fd.Consequence = diverged && (f.Entry == 0 || first.Actual == 0 || f.Entry > firstEnd || from > 0 && f.Entry >= from)
		out = append(out, fd)
	}
	return out
}

// sameMessage is the last entry (1-based) of the message whose events include entry n: the
// message_end that closes a message_start or message_update at n, else n itself. An
// invariant broken there is broken by the same message as entry n, not after it.
func sameMessage(es []trace.Entry, n int) int {
	if n < 1 || n > len(es) || es[n-1].Kind != trace.KindEvent ||
		es[n-1].Name != string(loop.MessageStart) && es[n-1].Name != string(loop.MessageUpdate) {
		return n
	}
	for i := n; i < len(es); i++ {
		if e := es[i]; e.Kind == trace.KindEvent {
			switch e.Name {
			case string(loop.MessageEnd):
				return i + 1
			case string(loop.MessageUpdate):
			default:
				return n
			}
		}
	}
	return n
}

// invariantRule names the rule an invariant's violation breaks: the rule of
// docs/SEMANTICS.md the violation names (rule), else the invariant and its rule ids, and
// with full its doc too, on one line. A finding gives it short; its cause gives the doc.
func invariantRule(inv invariant.Invariant, rule string, full bool) string {
	if rule != "" {
		return RuleTitles([]string{rule}) + " (invariant " + inv.Name + ")"
	}
	s := "invariant " + inv.Name
	if len(inv.Rules) > 0 {
		s += " (" + strings.Join(inv.Rules, ", ") + ")"
	}
	if full {
		s += ": " + strings.Join(strings.Fields(inv.Doc), " ")
	}
	return s
}

func expectationKind(problem string) string {
	switch {
	case strings.HasPrefix(problem, "expected no timeline line"):
		return "absent"
	case strings.HasPrefix(problem, "expected a timeline line"):
		return "timeline"
	case strings.HasPrefix(problem, "expected the run to"):
		return "runFails"
	case strings.Contains(problem, "requests"):
		return "requests"
	}
	return "other"
}

var (
	quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'[^']*'`)
	// A list of bare words (hook names, roles) is a shape; one holding anything else is a
	// value.
	listRE = regexp.MustCompile(`\[[^\[\]]*[^\[\]\sA-Za-z,_-][^\[\]]*\]|\{[^{}]*\}`)
	idRE   = regexp.MustCompile(`\b[A-Za-z_]*\d[\w.-]*`)
)

// valueFree strips a message of the scenario's values — quoted texts, objects, lists of
// anything but bare words, numbers and the ids that hold digits ("w1") — so that it can
// serve as a signature.
func valueFree(s string) string {
	s = quotedRE.ReplaceAllString(s, "…")
	for {
		t := listRE.ReplaceAllString(s, "…")
		if t == s {
			break
		}
		s = t
	}
	s = idRE.ReplaceAllString(s, "N")
	// A word repeated is said once ("N, N, N" and "… … …", as many times as a run met it,
	// are one shape), and a signature is one line of bounded length.
	var words []string
	for _, w := range strings.Fields(s) {
		if n := len(words); n > 0 && strings.TrimRight(words[n-1], ",;") == strings.TrimRight(w, ",;") {
			words[n-1] = w
			continue
		}
		words = append(words, w)
	}
	return oneLine(strings.Join(words, " "))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// article is "an" before a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
