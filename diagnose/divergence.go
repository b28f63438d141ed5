package diagnose

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

// divergences says every difference of a comparison as findings, each named by the rule that
// governs its entry: a run of entries the implementation lacks, a run it has in addition, an
// entry it has elsewhere (moved), and each field that differs — one finding per entry key,
// field and shape however many entries show it (Count).
func divergences(c *trace.Comparison, g *governor) []Finding {
	var out []Finding
	moves := pairMoves(c)
	fieldAt := map[string]int{} // a field finding's signature: its index in out
	for k := 0; k < len(c.Steps); {
		s := c.Steps[k]
		if s.Op == trace.Same {
			out = fieldFindings(c, g, s, out, fieldAt)
			k++
			continue
		}
		// A region: its missing entries, then its extra ones, each run (cut where an entry
		// moved) named by the rule of its first entry.
		end := k
		for end < len(c.Steps) && c.Steps[end].Op != trace.Same {
			end++
		}
		nextW, nextG := len(c.Want), len(c.Got)
		if end < len(c.Steps) {
			nextW, nextG = c.Steps[end].Want, c.Steps[end].Got
		}
		var run []int
		flush := func(op trace.Op) {
			if len(run) > 0 {
				f := regionFinding(c, g, op, run, g.runRule(c, op, run), nextW, nextG)
				for _, i := range run {
					e, sit := entryAt(c, g, op, i)
					if id, _ := g.rule(e, sit, ""); id != "" && !slices.Contains(f.rules, id) {
						f.rules = append(f.rules, id)
					}
				}
				out = append(out, f)
			}
			run = nil
		}
		regionStart := len(out)
		for _, op := range []trace.Op{trace.Missing, trace.Extra} {
			for _, t := range c.Steps[k:end] {
				if t.Op != op {
					continue
				}
				i := t.Want
				if op == trace.Extra {
					i = t.Got
				}
				if m, ok := moves[moveKey{op, i}]; ok {
					flush(op)
					if !m.reported {
						out = append(out, movedFinding(c, g, m))
					}
					continue
				}
				run = append(run, i)
			}
			flush(op)
		}
		markStops(c, out[regionStart:])
		k = end
	}
	return out
}

// fieldFindings adds to out the findings of the fields that differ in one matched pair of
// entries: a field found before alike (fieldAt: a finding's key, its index in out) counts one
// more entry.
func fieldFindings(c *trace.Comparison, g *governor, s trace.Step, out []Finding, fieldAt map[string]int) []Finding {
	moved := slices.ContainsFunc(s.Fields, func(f trace.Field) bool { return f.Path == "t" })
	for _, f := range s.Fields {
		fd := fieldFinding(c, g, s, f)
		key := fd.Signature
		if moved && fd.RuleID == "R-TIME-STAMP" && fd.Member == "timestamp" && !fd.wallClock {
			// The entry came at another time, and its stamp says when: it follows the time,
			// apart from the stamps of entries on time.
			fd.shifted = true
			key += "\x00shifted"
		}
		if i, seen := fieldAt[key]; seen {
			out[i].Count++
			out[i].span = append(out[i].span, s.Got+1)
			continue
		}
		// Texts only for a finding shown: a context's list change and a stream call's line
		// read the whole context.
		fd.Says = fieldSays(c.Want[s.Want], f)
		fd.Expected, fd.Actual = trace.ShowJSON(f.Want, f.Shape == trace.Unexpected), trace.ShowJSON(f.Got, f.Shape == trace.Absent)
		fd.ExpectedLine, fd.ActualLine = trace.TimelineLine(c.Want[s.Want]), trace.TimelineLine(c.Got[s.Got])
		if fd.ExpectedLine == fd.ActualLine {
			fd.Says += " (the two timeline lines read alike)"
		}
		fieldAt[key] = len(out)
		out = append(out, fd)
	}
	return out
}

// markStops marks, in one region, the end of a run that stopped where the other went on: the
// entries ending a run (agent_end, the return, the last polls) that one side has where the
// other makes a request instead. They follow from stopping early, or going on.
func markStops(c *trace.Comparison, region []Finding) {
	for _, side := range []struct {
		requests func(Finding) bool // a finding of the side that makes a request
		ending   func(Finding) bool // a finding of the other side, of ending entries only
	}{
		{func(f Finding) bool { return f.request && len(f.span) == 0 }, func(f Finding) bool { return len(f.span) > 0 && endsRun(c.Got, f.span) }},
		{func(f Finding) bool { return f.request && len(f.span) > 0 }, func(f Finding) bool {
			return len(f.span) == 0 && f.At.Expected > 0 && endsRunAt(c.Want, f.At.Expected-1, f.Count)
		}},
	} {
		if !slices.ContainsFunc(region, side.requests) {
			continue
		}
		for i := range region {
			if side.ending(region[i]) {
				region[i].follows = true
			}
		}
	}
}

// endsRun reports whether the entries at span (1-based) all end a run.
func endsRun(es []trace.Entry, span []int) bool {
	for _, at := range span {
		if !endsRunKey(trace.Key(es[at-1])) {
			return false
		}
	}
	return true
}

// endsRunAt reports whether the n entries from index i all end a run.
func endsRunAt(es []trace.Entry, i, n int) bool {
	for k := i; k < i+max(n, 1) && k < len(es); k++ {
		if !endsRunKey(trace.Key(es[k])) {
			return false
		}
	}
	return true
}

func endsRunKey(k string) bool {
	switch k {
	case "event agent_end", "end run", "call getFollowUpMessages", "call getSteeringMessages", "event turn_end":
		return true
	}
	return false
}

// entryAt is the entry at index i of the side op is about (the reference's for Missing) and
// where it stands there.
func entryAt(c *trace.Comparison, g *governor, op trace.Op, i int) (trace.Entry, situation) {
	if op == trace.Missing {
		s := g.want[i]
		s.lacking = true
		return c.Want[i], s
	}
	return c.Got[i], g.got[i]
}

// runRule is the rule of a run of entries one side lacks or has in addition: its first entry's
// that is not the harness's, or its request's when that entry is of the course between turns
// (a turn never asked for is about that request).
func (g *governor) runRule(c *trace.Comparison, op trace.Op, run []int) string {
	head, stream := -1, -1
	for _, i := range run {
		e, _ := entryAt(c, g, op, i)
		if stream < 0 && e.Kind == trace.KindCall && e.Name == trace.CallStream {
			stream = i
		}
		if head < 0 && e.Kind != trace.KindDeliver && e.Kind != trace.KindUser {
			head = i
		}
	}
	if head < 0 {
		return ""
	}
	if stream >= 0 && betweenTurns(entryKey(c, op, head)) {
		head = stream
	}
	e, sit := entryAt(c, g, op, head)
	id, _ := g.rule(e, sit, "")
	return id
}

func entryKey(c *trace.Comparison, op trace.Op, i int) string {
	if op == trace.Missing {
		return trace.Key(c.Want[i])
	}
	return trace.Key(c.Got[i])
}

// betweenTurns reports whether an entry of that key is of the loop's course between turns:
// a poll, prepareNextTurn, the end and start of a turn, a request.
func betweenTurns(key string) bool {
	switch key {
	case "call getSteeringMessages", "call getFollowUpMessages", "call prepareNextTurn", "event turn_start", "event turn_end", "call stream", "call finishTurn":
		return true
	}
	return false
}

// ruleText is a rule id as a finding cites it, with its title; the words for no rule.
func ruleText(id string, e trace.Entry) string {
	if id != "" {
		return RuleTitles([]string{id})
	}
	switch e.Kind {
	case trace.KindDeliver, trace.KindUser:
		return "no rule: a " + e.Kind + " entry is the harness's (made by the scenario's script when the implementation is idle)"
	case trace.KindFail:
		return "no rule: the world recorded a failure (" + e.Name + ")"
	}
	return "no rule of docs/SEMANTICS.md governs " + trace.Key(e)
}

// sigRule is the rule part of a signature.
func sigRule(id string) string {
	if id == "" {
		return "no rule"
	}
	return id
}

// regionFinding is the finding of a run of entries one side lacks (op Missing: the
// implementation lacks idx of the reference's; Extra: it has idx in addition), governed by
// rule; nextW and nextG are the entries after the region.
func regionFinding(c *trace.Comparison, g *governor, op trace.Op, idx []int, rule string, nextW, nextG int) Finding {
	es := c.Want
	if op == trace.Extra {
		es = c.Got
	}
	head := es[idx[0]]
	k := trace.Key(head)
	var lines, full []string
	for k, i := range idx {
		if k == maxRegionEntries {
			lines = append(lines, fmt.Sprintf("… and %d more entries", len(idx)-k))
		}
		if k < maxRegionEntries {
			lines = append(lines, trace.TimelineLine(es[i]))
		}
		if k == maxRegionEntries {
			full = append(full, fmt.Sprintf("(and %d more entries, as the trace has them)", len(idx)-k))
			continue
		}
		if k < maxRegionEntries {
			b, _ := json.Marshal(es[i])
			full = append(full, string(b))
		}
	}
	f := Finding{Kind: Divergence, RuleID: rule, Rule: ruleText(rule, head), Count: len(idx), harness: true}
	for _, i := range idx {
		switch k := trace.Key(es[i]); {
		case k == "call stream":
			f.request = true
		case strings.HasPrefix(k, "event message_"):
			f.messages = true
		}
		// Deliveries and user actions alone are the harness's: they follow what the loop did.
		f.harness = f.harness && (es[i].Kind == trace.KindDeliver || es[i].Kind == trace.KindUser)
	}
	n := entries(len(idx))
	if op == trace.Missing {
		f.stops = !requestBeforeEnd(c.Got, nextG)
		f.At = Position{Expected: idx[0] + 1}
		if nextG < len(c.Got) {
			f.At.Actual = nextG + 1
		}
		where := fmt.Sprintf("before entry %d", nextG+1)
		if nextG >= len(c.Got) {
			where = "at the end of its trace"
		}
		f.ExpectedLine, f.Expected = strings.Join(lines, "\n"), strings.Join(full, "\n")
		f.Says = fmt.Sprintf("the implementation lacks %s the reference has %s, starting with %q", n, where, k)
		if head.Kind == trace.KindDeliver {
			f.Says += " (a delivery is the harness's, made when the implementation is idle: one missing means " +
				"the implementation's run took another course before it — it ended, or was not idle there)"
		}
		f.Signature = sigRule(rule) + ": missing " + k
		f.Headline = article(k) + " " + k + " the reference has is missing"
	} else {
		f.At = Position{Actual: idx[0] + 1}
		if nextW < len(c.Want) {
			f.At.Expected = nextW + 1
		}
		f.ActualLine, f.Actual = strings.Join(lines, "\n"), strings.Join(full, "\n")
		for _, i := range idx {
			f.span = append(f.span, i+1)
		}
		f.Says = fmt.Sprintf("the implementation has %s the reference does not have, starting with %q", n, k)
		if head.Kind == trace.KindFail && head.Name == "budget" {
			f.Says = "the implementation's run was stopped by its budget, where the reference's ended: " + head.Error
			f.Signature = "budget: the run goes on past the reference's end"
			f.Headline = "the run goes on where the reference's ends, until its budget stops it"
			f.Rule = "the run's budgets (README, Budgets): the reference's run ended within them"
			return f
		}
		f.Signature = sigRule(rule) + ": extra " + k
		f.Headline = "an extra " + k + " the reference does not have"
	}
	f.Headline = headline(rule, f.Headline)
	return f
}

// requestBeforeEnd reports whether es has a request from index i on, before its run ends.
func requestBeforeEnd(es []trace.Entry, i int) bool {
	for ; i < len(es); i++ {
		switch trace.Key(es[i]) {
		case "call stream":
			return true
		case "event agent_end":
			return false
		}
	}
	return false
}

// maxRegionEntries bounds the entries a region's finding carries, as timeline lines and in
// full: a run that goes on for a thousand requests is one finding of bounded size.
const maxRegionEntries = 50

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// headline is a cause's title: the rule and what went wrong, one line.
func headline(rule, what string) string {
	s := what
	if rule != "" {
		s = rule + ": " + what
	}
	return oneLine(s)
}

// maxHeadline bounds a headline, and so a cause's title.
const maxHeadline = 200

// oneLine is s on one line, at most maxHeadline bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxHeadline {
		cut := maxHeadline
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// moveKey is one unmatched entry: Missing with its reference index, or Extra with its
// implementation index.
type moveKey struct {
	op trace.Op
	i  int
}

// move is an entry the implementation has elsewhere than the reference (trace.Move), and
// whether its finding was made.
type move struct {
	trace.Move
	reported bool
}

// pairMoves indexes the comparison's moves by both their entries.
func pairMoves(c *trace.Comparison) map[moveKey]*move {
	out := map[moveKey]*move{}
	for _, mv := range c.Moves() {
		m := &move{Move: mv}
		out[moveKey{trace.Missing, m.Want}] = m
		out[moveKey{trace.Extra, m.Got}] = m
	}
	return out
}

// movedFinding is the finding of one entry the implementation has elsewhere: at the
// implementation's position, named by the rule governing it where the reference has it.
func movedFinding(c *trace.Comparison, g *governor, m *move) Finding {
	m.reported = true
	w, e := c.Want[m.Want], c.Got[m.Got]
	// Named where the implementation put it: that is where the rule breaks (a follow-up poll
	// made while tool calls ask for more, a steering poll inside a turn).
	when, there := "later", m.There
	lo, hi, where := there, m.Got, "after"
	if !m.Later {
		when, lo, hi, where = "earlier", m.Got+1, there, "before"
	}
	s := g.got[m.Got]
	s.pastPoll = 0 <= lo && lo <= hi && hi <= len(c.Got) && slices.ContainsFunc(c.Got[lo:hi], func(p trace.Entry) bool {
		return p.Kind == trace.KindCall && p.Name == trace.HookSteering
	})
	rule, _ := g.rule(e, s, orderPath)
	if rule == "" {
		rule, _ = g.rule(w, g.want[m.Want], orderPath)
	}
	k := trace.Key(e)
	passed := passing(c.Got, lo, hi, where)
	from := 0
	if m.Later {
		from = there + 1
	}
	return Finding{
		Kind: Divergence, RuleID: rule, Rule: ruleText(rule, w),
		messages: strings.HasPrefix(k, "event message_"), request: k == "call stream", from: from,
		harness:      e.Kind == trace.KindDeliver || e.Kind == trace.KindUser,
		At:           Position{Expected: m.Want + 1, Actual: m.Got + 1},
		ExpectedLine: trace.TimelineLine(w), ActualLine: trace.TimelineLine(e),
		Says: fmt.Sprintf("the implementation has %q at entry %d, %s than the reference (its entry %d)%s: moved, not lost or added",
			k, m.Got+1, when, m.Want+1, passed),
		Signature: sigRule(rule) + ": moved " + k + " " + when,
		Headline:  headline(rule, article(k)+" "+k+" comes "+when+" than the reference's"+passed),
	}
}

// orderPath stands, in a lookup of the governing rule, for the place of an entry moved, and
// entryPath, in the table's fields, for the entry itself one side lacks (path "").
const (
	orderPath = "(order)"
	entryPath = "(entry)"
)

// passing names the entries es[lo:hi] a moved entry passes, when they are one or two.
func passing(es []trace.Entry, lo, hi int, where string) string {
	if hi-lo < 1 || hi-lo > 2 || lo < 0 || hi > len(es) {
		return ""
	}
	names := make([]string, 0, 2)
	for _, e := range es[lo:hi] {
		names = append(names, trace.Key(e))
	}
	return ", " + where + " " + strings.Join(names, " and ")
}

// fieldFinding is the finding of one field that differs in a matched pair of entries, but for
// what it says and the two values shown (fieldFindings adds them to the findings it keeps).
func fieldFinding(c *trace.Comparison, g *governor, s trace.Step, f trace.Field) Finding {
	w := c.Want[s.Want]
	rule, member := g.rule(w, g.want[s.Want], f.Path)
	key := trace.Key(w)
	shape := string(f.Shape)
	what := fieldName(f.Path) + " " + shape + " on " + key
	if fieldName(f.Path) == "toolCallId" && f.Shape == trace.Value {
		// Another call's entry where the reference has this one's: the batch's order.
		what = key + " of another tool call than the reference's: the batch's entries in another order"
	}
	clock := wallClock(f)
	if clock != "" {
		// A clock other than the world's is R-TIME-STAMP's, wherever it shows.
		rule, member = "R-TIME-STAMP", "timestamp"
		shape += " (wall clock)"
		what = fieldName(f.Path) + " from the wall clock on " + key
	}
	sig := sigRule(rule) + ": " + key + " " + folded(f.Path) + " " + shape
	if member == "" || rule == "" {
		member = ""
	} else {
		// A member one rule governs wherever it is: one defect on every kind of entry.
		sig = rule + ": " + member + " " + shape
	}
	return Finding{
		Kind: Divergence, RuleID: rule, Rule: ruleText(rule, w),
		// A tool's end carries the result its message is made of.
		messages:  strings.HasPrefix(key, "event message_") || key == "event tool_execution_end" || gathers(f.Path),
		harness:   w.Kind == trace.KindDeliver || w.Kind == trace.KindUser,
		wallClock: clock != "",
		At:        Position{Expected: s.Want + 1, Actual: s.Got + 1},
		span:      []int{s.Got + 1},
		Path:      f.Path, Member: member,
		Count:     1,
		Signature: sig,
		Headline:  headline(rule, what),
	}
}

// fieldSays is what a field finding on reference entry w says: which field differs and how
// (Says), apart from fieldFinding, for the findings kept only.
func fieldSays(w trace.Entry, f trace.Field) string {
	says := fmt.Sprintf("in %q, %s", trace.Key(w), sentence(f))
	if clock := wallClock(f); clock != "" {
		says += "; " + clock
	}
	return says
}

// The epochs of clocks a port may read instead of the world's: testing/synctest's fake clock
// starts at 2000-01-01 UTC; a real clock reads after 2020.
const (
	synctestEpoch = 946684800000
	realClockFrom = 1577836800000
)

// wallClock says, of a timestamp the implementation wrote from a clock other than the world's,
// which clock it reads; "" otherwise.
func wallClock(f trace.Field) string {
	if fieldName(f.Path) != "timestamp" || f.Shape != trace.Value {
		return ""
	}
	n, ok := number(f.Got)
	switch {
	case !ok:
		return ""
	case n >= synctestEpoch && n < synctestEpoch+86_400_000:
		return "the implementation reads the wall clock (this is testing/synctest's epoch, 2000-01-01): stamp messages with env.Now() or the port's clock seam"
	case n >= realClockFrom:
		return "the implementation reads the real wall clock: stamp messages with the harness's virtual clock (env.Now(), or the kit's clock)"
	}
	return ""
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	}
	return 0, false
}

// sentence says a field difference in words.
func sentence(f trace.Field) string {
	switch f.Shape {
	case trace.Absent:
		return fmt.Sprintf("the field %s is absent; the reference has it", f.Path)
	case trace.Unexpected:
		return fmt.Sprintf("the field %s is present; the reference does not have it", f.Path)
	case trace.OtherType:
		return fmt.Sprintf("the field %s is %s; the reference's is %s", f.Path, trace.JSONType(f.Got), trace.JSONType(f.Want))
	case trace.Order:
		return fmt.Sprintf("the list %s has the reference's items in another order: %s", f.Path, orderChange(f.Want.([]any), f.Got.([]any)))
	case trace.Length:
		want, got := f.Want.([]any), f.Got.([]any)
		s := fmt.Sprintf("the list %s has %d items; the reference's has %d", f.Path, len(got), len(want))
		if change := listChange(want, got); change != "" {
			s += ": it " + change
		}
		return s
	}
	return fmt.Sprintf("the field %s differs", f.Path)
}

// orderChange says where the reference's items went: "item 5 is the reference's 7, …" for
// the first four out of place (counted from 0, as the path's indexes are).
func orderChange(want, got []any) string {
	w, g := trace.ItemKeys(want), trace.ItemKeys(got)
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
