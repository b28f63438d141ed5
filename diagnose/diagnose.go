package diagnose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// Options tune Diagnose.
type Options struct {
	// Normalize turns an entry into the value compared (decoded JSON, without the sequence
	// number); nil compares strictly: every field, numbers by their text. A looser comparison
	// profile supplies its own.
	Normalize func(trace.Entry) any
	// Invariants are checked on the implementation's trace; nil means invariant.All().
	Invariants []invariant.Invariant
	// RunError is the implementation's failure (timeout, crash, protocol error), if any.
	RunError error
}

// Diagnose returns every finding of an implementation's trace (got) against the reference's
// (want) for scenario sc: the implementation's error, then the divergences, region by region
// and field by field, then the broken invariants and the unmet expectations. A nil got (the
// implementation produced no trace) gives only the error; when the implementation failed
// (opts.RunError), invariants and expectations are not judged.
func Diagnose(sc Scenario, want, got *trace.Trace, opts Options) []Finding {
	var out []Finding
	if opts.RunError != nil {
		out = append(out, errorFinding(sc.Name, opts.RunError))
	}
	if want == nil || got == nil {
		return out
	}
	// Findings point into the traces in full: the linear form's links are expanded.
	want, got = want.Expanded(), got.Expanded()
	norm, strict := opts.Normalize, opts.Normalize == nil
	if strict {
		norm = StrictValue
	}
	divs := divergences(sc.RuleName(), want.Entries, got.Entries, norm, strict)
	first := Position{}
	if len(divs) > 0 {
		first = divs[0].At
		for i := range divs[1:] {
			divs[i+1].Consequence = true
		}
		// The entries missing at the end of a run the implementation failed follow from
		// its failure, the root finding.
		if last := &divs[len(divs)-1]; opts.RunError != nil && strings.HasPrefix(last.Signature, "missing ") && last.At.Actual == 0 {
			last.Consequence = true
		}
	}
	divs = runFailure(want.Entries, got.Entries, divs)
	out = append(out, divs...)
	if opts.RunError != nil {
		// A trace cut short by the implementation's failure breaks invariants and
		// expectations for that reason alone.
		return out
	}
	invs := invariantFindings(want, got, opts.Invariants, first, len(divs) > 0)
	if len(divs) > 0 && (strings.HasPrefix(divs[0].Signature, runFails) || strings.HasPrefix(divs[0].Signature, runReturns)) {
		// The runs agree up to where one ended, so whatever invariant the run breaks
		// follows from how it ended (a message left open by a run that returned, say).
		for i := range invs {
			invs[i].Consequence = true
		}
	}
	// A divergence at an entry that breaks an invariant, or in a message that does, breaks
	// the invariant's rule, which says more than the scenario's: an extra steering poll in a
	// scenario about aborts breaks the polling rule, not the abort rule.
	// Not entries the implementation lacks (unless found elsewhere: moved): the entry after
	// the gap is only where it is, and an invariant broken there is another defect's
	// (durationMs on the end of a call whose validation wrongly failed named the validation's
	// missing hooks R-TIME-DURATION).
	for i := range out {
		d := &out[i]
		lost := strings.HasPrefix(d.Signature, "missing ") && d.moved == ""
		if d.Kind == Divergence && d.At.Actual > 0 && !ownRule(d.Signature) && !lost {
			end := sameMessage(got.Entries, d.At.Actual)
			for _, f := range invs { // the earliest such entry's
				if f.At.Actual >= d.At.Actual && f.At.Actual <= end {
					d.Rule, end = f.Rule, f.At.Actual-1
				}
			}
		}
	}
	// The two halves of a moved entry break the same rule: the half found where the invariant
	// broke tells it to the other.
	for i := range out {
		if d := &out[i]; d.moved != "" && d.Rule == sc.RuleName() {
			for _, o := range out {
				if o.moved == d.moved && o.Rule != sc.RuleName() {
					d.Rule = o.Rule
					break
				}
			}
		}
	}
	out = append(out, invs...)
	if sc.Expect != nil {
		for _, p := range sc.Expect.Check(got) {
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
	runFails   = "run fails: "
	runReturns = "run returns where the reference's fails"
)

// StrictValue is an entry as compared by the strict profile: its canonical JSON decoded
// with numbers kept as text, without the sequence number (positions are aligned instead).
func StrictValue(e trace.Entry) any {
	e.Seq = 0
	line, _ := json.Marshal(e)
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return string(line)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "seq")
	}
	return v
}

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
	return f
}

// divergences aligns the traces and reports each region of missing or extra entries and
// each field that differs in a pair of matched entries.
func divergences(rule string, want, got []trace.Entry, norm func(trace.Entry) any, strict bool) []Finding {
	var out []Finding
	var regions []regionAt
	steps := Align(want, got)
	for k := 0; k < len(steps); {
		s := steps[k]
		if s.Op == Same {
			if strict && writtenAlike(&want[s.Want], &got[s.Got]) {
				// Entries written alike but for their seq are equal under StrictValue.
				k++
				continue
			}
			out = append(out, changed(rule, want[s.Want], got[s.Got], s.Want+1, s.Got+1, norm)...)
			k++
			continue
		}
		var miss, extra []int
		for k < len(steps) && steps[k].Op != Same {
			if steps[k].Op == Missing {
				miss = append(miss, steps[k].Want)
			} else {
				extra = append(extra, steps[k].Got)
			}
			k++
		}
		// Where the region sits in the other trace: the entry after it.
		nextW, nextG := len(want), len(got)
		if k < len(steps) {
			nextW, nextG = steps[k].Want, steps[k].Got
		}
		regions = append(regions, regionAt{finding: len(out), miss: miss, extra: extra, nextW: nextW, nextG: nextG})
		out = append(out, region(rule, want, got, miss, extra, nextW, nextG))
	}
	markMoved(out, regions, want, got)
	return out
}

// regionAt is a region of unmatched entries: its finding's index, the reference's entries it
// lacks, the implementation's it adds, and the entries after it in both traces.
type regionAt struct {
	finding      int
	miss, extra  []int
	nextW, nextG int
}

// markMoved says of a region of missing entries whose first entry is among another region's
// extra entries (the same timeline line but for its time), and of a region of extra entries
// whose first is among another's missing ones, that the entry moved: it is neither lost nor
// added, and the finding says where the other trace has it. Signatures stay those of missing
// and extra.
func markMoved(out []Finding, regions []regionAt, want, got []trace.Entry) {
	// An entry as a timeline line without its time column (an entry moved in time keeps
	// it), each unmatched entry keyed once: the lookups stay linear in the traces.
	key := func(e *trace.Entry) string {
		line := strings.TrimLeft(strings.TrimLeft(trace.TimelineLine(*e), " "), "0123456789ms")
		return e.Kind + "\x00" + e.Name + "\x00" + e.Target + "\x00" + line
	}
	missAt, extraAt := map[string]int{}, map[string]int{} // an unmatched entry's first index
	for _, reg := range regions {
		for _, i := range reg.miss {
			k := key(&want[i])
			if _, seen := missAt[k]; !seen {
				missAt[k] = i
			}
		}
		for _, i := range reg.extra {
			k := key(&got[i])
			if _, seen := extraAt[k]; !seen {
				extraAt[k] = i
			}
		}
	}
	for _, reg := range regions {
		f := &out[reg.finding]
		switch {
		case len(reg.extra) == 0:
			k := Key(want[reg.miss[0]])
			if at, ok := extraAt[key(&want[reg.miss[0]])]; ok {
				f.Says += fmt.Sprintf("; the implementation has it at entry %d instead (moved, not lost)", at+1)
				// It belongs before got[nextG]; it is at got[at].
				passed := passing(got, at+1, reg.nextG, "before")
				if at >= reg.nextG {
					passed = passing(got, reg.nextG, at, "after")
				}
				f.Headline = article(k) + " " + k + " comes " + laterOrEarlier(at, reg.nextG) + " than the reference's" + passed + " (moved)"
				f.moved = key(&want[reg.miss[0]])
			}
		case len(reg.miss) == 0:
			k := Key(got[reg.extra[0]])
			if at, ok := missAt[key(&got[reg.extra[0]])]; ok {
				f.Says += fmt.Sprintf("; the reference has it at its entry %d (moved, not added)", at+1)
				// The reference has it at want[at]; here it comes where want[nextW] is.
				passed := passing(want, reg.nextW, at, "before")
				if reg.nextW > at {
					passed = passing(want, at+1, reg.nextW, "after")
				}
				f.Headline = article(k) + " " + k + " comes " + laterOrEarlier(reg.nextW, at) + " than the reference's" + passed + " (moved)"
				f.moved = key(&got[reg.extra[0]])
			}
		}
	}
}

// passing names the entries es[lo:hi] a moved entry passes, when they are one or two:
// ", after call getSteeringMessages" when it comes later, ", before …" when earlier. A swap
// of two entries then reads as one.
func passing(es []trace.Entry, lo, hi int, where string) string {
	if hi-lo < 1 || hi-lo > 2 || lo < 0 || hi > len(es) {
		return ""
	}
	names := make([]string, 0, 2)
	for _, e := range es[lo:hi] {
		names = append(names, Key(e))
	}
	return ", " + where + " " + strings.Join(names, " and ")
}

// laterOrEarlier says where an entry at index at of a trace is, against index there.
func laterOrEarlier(at, there int) string {
	if at >= there {
		return "later"
	}
	return "earlier"
}

// writtenAlike reports whether two entries are the same but for their sequence numbers:
// their JSON, and so their StrictValue, is then the same.
func writtenAlike(w, g *trace.Entry) bool {
	return w.T == g.T && w.Kind == g.Kind && w.Name == g.Name && w.Target == g.Target && w.Error == g.Error &&
		bytes.Equal(w.Data, g.Data) && bytes.Equal(w.Answer, g.Answer) &&
		(w.Link == g.Link || w.Link != nil && g.Link != nil && *w.Link == *g.Link)
}

// region is the finding of a run of unmatched entries.
func region(rule string, want, got []trace.Entry, miss, extra []int, nextW, nextG int) Finding {
	lines := func(es []trace.Entry, idx []int) (timeline, full string) {
		var t, f []string
		for _, i := range idx {
			t = append(t, trace.TimelineLine(es[i]))
			line, _ := json.Marshal(es[i])
			f = append(f, string(line))
		}
		return strings.Join(t, "\n"), strings.Join(f, "\n")
	}
	f := Finding{Kind: Divergence, Rule: rule}
	f.ExpectedLine, f.Expected = lines(want, miss)
	f.ActualLine, f.Actual = lines(got, extra)
	entries := func(n int) string {
		if n == 1 {
			return "1 entry"
		}
		return fmt.Sprintf("%d entries", n)
	}
	switch {
	case len(extra) == 0:
		k := Key(want[miss[0]])
		f.At = Position{Expected: miss[0] + 1}
		if nextG < len(got) {
			f.At.Actual = nextG + 1
		}
		where := "before entry " + fmt.Sprint(nextG+1)
		if nextG >= len(got) {
			where = "at the end of its trace"
		}
		f.Says = fmt.Sprintf("the implementation lacks %s the reference has %s, starting with %q", entries(len(miss)), where, k)
		if want[miss[0]].Kind == trace.KindDeliver {
			// A delivery is the harness's, not the implementation's: say why it was not made.
			f.Says += " (a delivery is the harness's, made by the scenario's script when the implementation is idle: " +
				"one missing means the implementation's run took another course before it — it ended, or was not idle there)"
		}
		f.Signature = "missing " + k
		f.Headline = article(k) + " " + k + " the reference has is missing"
	case len(miss) == 0:
		k := Key(got[extra[0]])
		f.At = Position{Actual: extra[0] + 1}
		if nextW < len(want) {
			f.At.Expected = nextW + 1
		}
		f.Says = fmt.Sprintf("the implementation has %s the reference does not have, starting with %q", entries(len(extra)), k)
		f.Signature = "extra " + k
		f.Headline = "an extra " + k + " the reference does not have"
	default:
		wk, gk := Key(want[miss[0]]), Key(got[extra[0]])
		f.At = Position{Expected: miss[0] + 1, Actual: extra[0] + 1}
		differ := "kind"
		if want[miss[0]].Kind == got[extra[0]].Kind {
			differ = "type"
		}
		f.Says = fmt.Sprintf("where the reference has %s starting with %q, the implementation has %s starting with %q: they differ in %s",
			entries(len(miss)), wk, entries(len(extra)), gk, differ)
		f.Signature = gk + " instead of " + wk
		f.Headline = article(gk) + " " + gk + " where the reference has " + article(wk) + " " + wk
	}
	return f
}

// maxPaths bounds the differing fields reported for one pair of entries.
const maxPaths = 20

// changed compares a matched pair of entries field by field: one finding per differing
// field (array indexes folded, so a field differing in every message of a list is one
// finding).
func changed(rule string, w, g trace.Entry, wi, gi int, norm func(trace.Entry) any) []Finding {
	wv, gv := norm(w), norm(g)
	if reflect.DeepEqual(wv, gv) {
		return nil
	}
	var diffs []diff
	walk(wv, gv, "", &diffs)
	key := Key(w)
	wl, gl := trace.TimelineLine(w), trace.TimelineLine(g)
	var out []Finding
	seen := map[string]bool{}
	for _, d := range diffs {
		shape := folded(d.path) + " " + d.shape
		if seen[shape] {
			continue
		}
		seen[shape] = true
		if len(out) == maxPaths {
			break
		}
		says := fmt.Sprintf("in %q, %s", key, d.sentence())
		if wl == gl {
			says += " (the two timeline lines read alike)"
		}
		f := Finding{
			Kind: Divergence, Rule: rule, Says: says,
			At:           Position{Expected: wi, Actual: gi},
			ExpectedLine: wl, ActualLine: gl,
			Path:     d.path,
			Expected: d.show(d.want, d.wantAbsent), Actual: d.show(d.got, d.gotAbsent),
			Signature: key + ": " + shape,
			Headline:  fieldName(d.path) + " " + d.shape + " on " + key,
		}
		if id, field := fieldRule(d.path); id != "" {
			// A field with a rule of its own is one defect wherever it differs.
			f.Rule = RuleTitles([]string{id})
			f.Signature = id + ": " + field + " " + d.shape
			f.Headline += " (" + id + ")"
		}
		out = append(out, f)
	}
	return out
}

// fieldRules are the fields that one rule of docs/SEMANTICS.md governs wherever they are: a
// difference in one breaks that rule, whatever the entry or the scenario (a loop stamping
// messages with the real clock differs in every message's timestamp, one defect).
var fieldRules = map[string]string{
	"timestamp":    "R-TIME-STAMP",
	"durationMs":   "R-TIME-DURATION",
	"toolsAdded":   "R-DECL-DIFF",
	"toolsRemoved": "R-DECL-DIFF",
}

// fieldRule is the rule of the innermost member of path that fieldRules holds, and that
// member ("data.message.toolsAdded[0].name": R-DECL-DIFF, toolsAdded); "" when none.
func fieldRule(path string) (id, field string) {
	members := strings.Split(folded(path), ".")
	for i := len(members) - 1; i >= 0; i-- {
		m := strings.TrimSuffix(members[i], "[]")
		if id, ok := fieldRules[m]; ok {
			return id, m
		}
	}
	return "", ""
}

// diff is one differing place between two decoded entries.
type diff struct {
	path                  string
	shape                 string
	want, got             any
	wantAbsent, gotAbsent bool
}

func (d diff) show(v any, absent bool) string {
	if absent {
		return "(absent)"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func (d diff) sentence() string {
	switch d.shape {
	case "absent":
		return fmt.Sprintf("the field %s is absent; the reference has it", d.path)
	case "unexpected":
		return fmt.Sprintf("the field %s is present; the reference does not have it", d.path)
	case "type":
		return fmt.Sprintf("the field %s is %s; the reference's is %s", d.path, jsonType(d.got), jsonType(d.want))
	case "order":
		return fmt.Sprintf("the list %s has the reference's items in another order: %s", d.path, orderChange(d.want.([]any), d.got.([]any)))
	case "length":
		s := fmt.Sprintf("the list %s has %d items; the reference's has %d", d.path, len(d.got.([]any)), len(d.want.([]any)))
		if change := listChange(d.want.([]any), d.got.([]any)); change != "" {
			s += ": it " + change
		}
		return s
	}
	return fmt.Sprintf("the field %s differs", d.path)
}

// reordered reports whether got holds exactly want's items, two or more of them elsewhere
// (items compared by their canonical JSON).
func reordered(want, got []any) bool {
	if len(want) < 2 {
		return false
	}
	w, g := itemKeys(want), itemKeys(got)
	moved := 0
	for i := range w {
		if w[i] != g[i] {
			moved++
		}
	}
	if moved < 2 {
		return false
	}
	slices.Sort(w)
	slices.Sort(g)
	return slices.Equal(w, g)
}

// itemKeys is each item's canonical JSON.
func itemKeys(items []any) []string {
	out := make([]string, len(items))
	for i, v := range items {
		b, _ := json.Marshal(v)
		out[i] = string(b)
	}
	return out
}

// orderChange says where the reference's items went: "item 5 is the reference's 7, …" for
// the first four out of place (counted from 0, as the path's indexes are). got holds want's
// items (reordered): each out of place is the first equal item of want not yet placed.
func orderChange(want, got []any) string {
	w, g := itemKeys(want), itemKeys(got)
	placed := make([]bool, len(w))
	for i := range g {
		placed[i] = g[i] == w[i]
	}
	var parts []string
	for i := range g {
		if g[i] == w[i] {
			continue
		}
		j := 0
		for j < len(w) && (placed[j] || w[j] != g[i]) {
			j++
		}
		if j < len(w) {
			placed[j] = true
		}
		parts = append(parts, fmt.Sprintf("item %d is the reference's %d", i, j))
	}
	if len(parts) > 4 {
		return strings.Join(parts[:4], ", ") + fmt.Sprintf(" and %d more", len(parts)-4)
	}
	return strings.Join(parts, ", ")
}

// walk collects every differing place of two decoded JSON values.
func walk(w, g any, path string, out *[]diff) {
	if len(*out) > 4*maxPaths || reflect.DeepEqual(w, g) {
		return
	}
	sub := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	wm, wok := w.(map[string]any)
	gm, gok := g.(map[string]any)
	if wok && gok {
		ks := make([]string, 0, len(wm)+len(gm))
		for k := range wm {
			ks = append(ks, k)
		}
		for k := range gm {
			if _, ok := wm[k]; !ok {
				ks = append(ks, k)
			}
		}
		slices.SortFunc(ks, trace.CompareMembers)
		for _, k := range ks {
			wv, win := wm[k]
			gv, gin := gm[k]
			switch {
			case win && !gin:
				*out = append(*out, diff{path: sub(k), shape: "absent", want: wv, gotAbsent: true})
			case !win && gin:
				*out = append(*out, diff{path: sub(k), shape: "unexpected", got: gv, wantAbsent: true})
			default:
				walk(wv, gv, sub(k), out)
			}
		}
		return
	}
	wa, wok := w.([]any)
	ga, gok := g.([]any)
	if wok && gok {
		if len(wa) != len(ga) {
			*out = append(*out, diff{path: path, shape: "length", want: w, got: g})
			return
		}
		if reordered(wa, ga) {
			// The reference's items in another order: one finding that says so, not one
			// per field of every item out of place.
			*out = append(*out, diff{path: path, shape: "order", want: w, got: g})
			return
		}
		for i := range wa {
			walk(wa[i], ga[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
		return
	}
	shape := "differs"
	if jsonType(w) != jsonType(g) {
		shape = "type"
	}
	*out = append(*out, diff{path: path, shape: shape, want: w, got: g})
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// folded is a path without its array indexes: "data.messages[].usage".
func folded(path string) string { return indexRE.ReplaceAllString(path, "[]") }

// fieldName is the last member of a path ("thinkingLevel"), or the path when it has one.
func fieldName(path string) string {
	p := folded(path)
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// invariantFindings checks the implementation's trace against the invariants; a violation
// the reference's own trace shows too (the same invariant, the same message) is left out.
func invariantFindings(want, got *trace.Trace, invs []invariant.Invariant, first Position, diverged bool) []Finding {
	known := map[string]bool{}
	for _, f := range invariant.CheckAll(want, invs...) {
		known[f.Invariant+"\x00"+f.Msg] = true
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
	for _, f := range invariant.CheckAll(got, invs...) {
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
			fd.Signature += ": " + f.Rule
			fd.Headline += " (" + f.Rule + ")"
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
		fd.Consequence = diverged && (f.Entry == 0 || first.Actual == 0 || f.Entry > firstEnd)
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
	return idRE.ReplaceAllString(s, "N")
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
