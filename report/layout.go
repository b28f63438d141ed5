package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"sort"
	"strconv"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

// Lane classes (colours).
const (
	laneLoop   = "loop"
	laneHooks  = "hooks"
	laneUser   = "user"
	laneStream = "stream"
	laneTool   = "tool"
)

// lane is one actor's column.
type lane struct {
	Key, Name, Class string
}

// laneOf says whose entry e is: the loop's events (and the run's end), the hooks, the
// simulated user (and aborts, Agent operations and their outcomes), a provider stream, or a
// tool call.
func laneOf(e trace.Entry, toolNames map[string]string) lane {
	switch e.Kind {
	case trace.KindCall:
		switch e.Name {
		case trace.CallStream:
			return streamLane(e.Target)
		case trace.CallTool:
			var d struct {
				ID   string `json:"toolCallId"`
				Name string `json:"toolName"`
			}
			_ = json.Unmarshal(e.Data, &d)
			if d.Name != "" {
				toolNames[d.ID] = d.Name
			}
			return toolLane(d.ID, toolNames)
		}
		return lane{laneHooks, "hooks", laneHooks}
	case trace.KindDeliver:
		switch e.Name {
		case trace.DeliverStreamEvent, trace.DeliverStreamEnd, trace.DeliverStreamFail:
			return streamLane(e.Target)
		case trace.DeliverToolUpdate, trace.DeliverToolResult:
			return toolLane(e.Target, toolNames)
		}
		return lane{laneUser, "user", laneUser}
	case trace.KindUser, trace.KindOutcome:
		// An Agent operation's outcome answers the user who did it.
		return lane{laneUser, "user", laneUser}
	}
	return lane{laneLoop, "loop events", laneLoop}
}

func streamLane(n string) lane {
	return lane{laneStream + ":" + n, "stream #" + n, laneStream}
}

func toolLane(id string, names map[string]string) lane {
	name := "tool " + id
	if n := names[id]; n != "" {
		name += " (" + n + ")"
	}
	return lane{laneTool + ":" + id, name, laneTool}
}

// isDelta reports whether e is a stream delta (a text, thinking or tool-call delta, as
// delivered or as the loop's message_update): the bulk of most traces, which the page can fold.
func isDelta(e trace.Entry) bool {
	if e.Kind != trace.KindEvent && e.Kind != trace.KindDeliver {
		return false
	}
	var d struct {
		Type string `json:"type"`
		AME  struct {
			Type string `json:"type"`
		} `json:"assistantMessageEvent"`
	}
	_ = json.Unmarshal(e.Data, &d)
	return strings.HasSuffix(d.Type, "_delta") || strings.HasSuffix(d.AME.Type, "_delta")
}

// pair is a row of aligned entries: indexes into the expected and actual traces, -1 where a
// side has no entry.
type pair struct{ e, a int }

// align pairs the entries of two traces row by row: trace.Align's matches on their keys
// (entries of the same kind, name and role: the alignment trace.Compare makes, which the
// findings point into), with the unmatched runs between them paired up in order.
func align(exp, act []trace.Entry) []pair {
	var out []pair
	var dels, ins []int
	flush := func() {
		k := 0
		for ; k < len(dels) && k < len(ins); k++ {
			out = append(out, pair{dels[k], ins[k]})
		}
		for ; k < len(dels); k++ {
			out = append(out, pair{dels[k], -1})
		}
		for ; k < len(ins); k++ {
			out = append(out, pair{-1, ins[k]})
		}
		dels, ins = dels[:0], ins[:0]
	}
	keys := func(es []trace.Entry) []string {
		out := make([]string, len(es))
		for i := range es {
			out[i] = trace.Key(es[i])
		}
		return out
	}
	for _, st := range trace.Align(keys(exp), keys(act)) {
		switch st.Op {
		case trace.Same:
			flush()
			out = append(out, pair{st.Want, st.Got})
		case trace.Missing:
			dels = append(dels, st.Want)
		default:
			ins = append(ins, st.Got)
		}
	}
	flush()
	return out
}

// entryKey is an entry's canonical JSON without its seq: what makes two entries equal.
func entryKey(e trace.Entry) string {
	e.Seq = 0
	line, _ := json.Marshal(e)
	return string(line)
}

// The view models the template renders.

type pageView struct {
	Title, Intro, Back string
	Next, NextTitle    string
	CSS                template.CSS
	JS                 template.JS
	Runs               []runView
	FailedRuns         int
}

type runView struct {
	ID, Title, Subtitle string
	Failed              bool
	Sides               []string
	Lanes               []lane
	Rows                []rowView
	// Findings lists every finding but the later ones, with the row it is marked on ("" for
	// the whole run); Later those after the first divergence (Finding.Later), listed folded.
	Findings, Later []findingView
	// Stats is a one-line count of entries, rows that differ and findings.
	Stats string
	// Diverge is the row ID of the first divergence ("" when the traces agree or there is
	// one side).
	Diverge string
}

type findingView struct {
	Rule, Msg, Detail, Row, Side string
	Entry                        int
	n                            int  // its place in Run.Findings
	later                        bool // Finding.Later
}

type rowView struct {
	ID    string
	Class string
	Delta bool
	Cells []cellView
}

type cellView struct {
	Empty    bool
	Seq      int
	T        string
	Kind     string
	KindRaw  string
	Lane     lane
	Lanes    []string // per lane: "", "l" (alive) or "d" (this entry's actor)
	Label    string
	JSON     string
	Findings []findingView
}

// buildRun lays a run out in rows and lanes.
func buildRun(r Run) runView {
	l := newRunLayout(r)
	actors, life := l.assignLanes()
	l.assignColumns(actors, life)
	l.nameColumns()
	l.markLives()
	l.placeFindings()
	for ri, p := range l.pairs {
		l.rv.Rows = append(l.rv.Rows, l.row(ri, p))
	}
	l.foldLaterFindings()
	l.countStats()
	return l.rv
}

// runLayout is a run being laid out: its sides paired in rows, and the columns of their actors.
type runLayout struct {
	r       Run
	rv      runView
	actual  []trace.Entry
	sides   [][]trace.Entry // in full: the actual entries, after the expected ones when there are
	written [][]trace.Entry // the same as their files have them (writtenOf)
	two     bool            // expected and actual sides
	pairs   []pair
	// rowLanes is, per row and side, the entry's actor.
	rowLanes [][]lane
	// all is the columns; column maps a lane key (fixed lane or actor) to its column.
	all    []lane
	column map[string]int
	// alive is, per side, each column's actors' lives.
	alive []map[int][]span
	// bySeq and byExpSeq are the findings marked on an actual and an expected entry.
	bySeq, byExpSeq map[int][]marked
	// lastT is, per side, the time of the last entry shown with its time.
	lastT  []int64
	differ int // rows that differ
}

// span is an actor's life: from its first row to its last.
type span struct{ from, to int }

// marked is a finding marked on an entry, with its place in Run.Findings (n): the list shows
// them in that order, the diagnosis's, its cause first.
type marked struct {
	Finding
	n int
}

// newRunLayout pairs the entries of the run's sides in rows: the actual trace's alone, or
// aligned with the expected one's.
func newRunLayout(r Run) *runLayout {
	l := &runLayout{r: r, rv: runView{ID: r.ID, Title: r.Title, Subtitle: r.Subtitle, Failed: r.Failed || len(r.Findings) > 0}}
	l.actual = entriesOf(r.Actual)
	l.written = [][]trace.Entry{writtenOf(r.Actual, l.actual)}
	if r.Expected != nil {
		expected := entriesOf(r.Expected)
		l.written = [][]trace.Entry{writtenOf(r.Expected, expected), l.written[0]}
		l.sides = [][]trace.Entry{expected, l.actual}
		l.rv.Sides = []string{or(r.ExpectedLabel, "expected"), or(r.ActualLabel, "actual")}
		l.pairs = align(expected, l.actual)
	} else {
		l.sides = [][]trace.Entry{l.actual}
		l.rv.Sides = []string{or(r.ActualLabel, "actual")}
		for j := range l.actual {
			l.pairs = append(l.pairs, pair{-1, j})
		}
	}
	l.two = len(l.sides) == 2
	return l
}

// assignLanes finds each entry's actor, and the fixed lanes used (the loop's, the hooks',
// the user's) as the first columns. It returns the streams and tool calls in order of first
// appearance, each alive from its first row to its last on either side.
func (l *runLayout) assignLanes() (actors []string, life map[string]span) {
	l.rowLanes = make([][]lane, len(l.pairs))
	toolNames := []map[string]string{{}, {}}
	used := map[string]bool{laneLoop: true}
	life = map[string]span{}
	for ri, p := range l.pairs {
		l.rowLanes[ri] = make([]lane, len(l.sides))
		for s := range l.sides {
			i := sideIndex(p, s, l.two)
			if i < 0 {
				continue
			}
			ln := laneOf(l.sides[s][i], toolNames[s])
			l.rowLanes[ri][s] = ln
			used[ln.Key] = true
			if ln.Class == laneStream || ln.Class == laneTool {
				sp, ok := life[ln.Key]
				if !ok {
					actors = append(actors, ln.Key)
					sp.from = ri
				}
				sp.to = ri
				life[ln.Key] = sp
			}
		}
	}
	for _, f := range []lane{{laneLoop, "loop events", laneLoop}, {laneHooks, "hooks", laneHooks}, {laneUser, "user", laneUser}} {
		if used[f.Key] {
			l.all = append(l.all, f)
		}
	}
	return actors, life
}

// assignColumns gives each actor a column after the fixed lanes': actors of a kind whose
// lives do not overlap share one, so the page has as many columns as actors at once, not
// one per request.
func (l *runLayout) assignColumns(actors []string, life map[string]span) {
	l.column = map[string]int{}
	for k, ln := range l.all {
		l.column[ln.Key] = k
	}
	// Each actor takes the first column of its kind free again (the last actor there ended
	// on an earlier row), else a new one.
	lastRow := map[int]int{}
	for _, key := range actors {
		class, _, _ := strings.Cut(key, ":")
		k := -1
		for c := len(l.all) - 1; c >= 0 && l.all[c].Class != laneLoop && l.all[c].Class != laneHooks && l.all[c].Class != laneUser; c-- {
			if l.all[c].Class == class && lastRow[c] < life[key].from {
				k = c
			}
		}
		if k < 0 {
			k = len(l.all)
			l.all = append(l.all, lane{Key: fmt.Sprintf("%s#%d", class, k), Class: class})
		}
		l.column[key], lastRow[k] = k, life[key].to
	}
}

// nameColumns names the actors' columns by their kind, numbered when the kind has several.
func (l *runLayout) nameColumns() {
	count := map[string]int{}
	for _, ln := range l.all {
		count[ln.Class]++
	}
	nth := map[string]int{}
	for k := range l.all {
		if l.all[k].Name != "" {
			continue
		}
		nth[l.all[k].Class]++
		l.all[k].Name = map[string]string{laneStream: "streams", laneTool: "tool calls"}[l.all[k].Class]
		if count[l.all[k].Class] > 1 {
			l.all[k].Name += " " + strconv.Itoa(nth[l.all[k].Class])
		}
	}
	l.rv.Lanes = l.all
}

// markLives finds each actor's life on each side: from its first row to its last.
func (l *runLayout) markLives() {
	l.alive = make([]map[int][]span, len(l.sides))
	for s := range l.sides {
		l.alive[s] = map[int][]span{}
		first := map[string]span{}
		var order []string
		for ri := range l.pairs {
			key := l.rowLanes[ri][s].Key
			if key == "" {
				continue
			}
			sp, ok := first[key]
			if !ok {
				order = append(order, key)
				sp.from = ri
			}
			sp.to = ri
			first[key] = sp
		}
		for _, key := range order {
			l.alive[s][l.column[key]] = append(l.alive[s][l.column[key]], first[key])
		}
	}
}

// placeFindings files each finding under the entry it marks (an actual entry's seq, else an
// expected one's), or in the run's list when it marks none.
func (l *runLayout) placeFindings() {
	l.bySeq, l.byExpSeq = map[int][]marked{}, map[int][]marked{}
	seqs, expSeqs := map[int]bool{}, map[int]bool{}
	for _, e := range l.actual {
		seqs[e.Seq] = true
	}
	if l.two {
		for _, e := range l.sides[0] {
			expSeqs[e.Seq] = true
		}
	}
	for n, f := range l.r.Findings {
		if f.Entry != 0 && seqs[f.Entry] {
			l.bySeq[f.Entry] = append(l.bySeq[f.Entry], marked{f, n})
		} else if f.Entry == 0 && f.ExpectedEntry != 0 && expSeqs[f.ExpectedEntry] {
			l.byExpSeq[f.ExpectedEntry] = append(l.byExpSeq[f.ExpectedEntry], marked{f, n})
		} else {
			l.rv.Findings = append(l.rv.Findings, findingView{Rule: f.Rule, Msg: f.Msg, Detail: f.Detail, Entry: f.Entry, n: n, later: f.Later})
		}
	}
	l.lastT = make([]int64, len(l.sides))
	for s := range l.lastT {
		l.lastT[s] = -1
	}
}

// row lays out row ri: a cell per side, classed by whether the sides differ and carry findings.
func (l *runLayout) row(ri int, p pair) rowView {
	row := rowView{ID: "r" + strconv.Itoa(ri+1), Class: "eq", Delta: true}
	if l.two && (p.e < 0 || p.a < 0 || entryKey(l.sides[0][p.e]) != entryKey(l.sides[1][p.a])) {
		row.Class = "diff"
		l.differ++
		if l.rv.Diverge == "" {
			l.rv.Diverge = row.ID
			row.Class = "diff first"
		}
	}
	for s := range l.sides {
		c := l.cell(ri, s, sideIndex(p, s, l.two), &row)
		if len(c.Findings) > 0 && !strings.Contains(row.Class, "find") {
			row.Class += " find"
		}
		row.Cells = append(row.Cells, c)
	}
	return row
}

// cell lays out side s's entry i of row ri (none when i < 0), with its actors alive and its
// findings, which it also adds to the run's list.
func (l *runLayout) cell(ri, s, i int, row *rowView) cellView {
	c := cellView{Lanes: make([]string, len(l.all))}
	for k, lives := range l.alive[s] {
		for _, sp := range lives {
			if ri >= sp.from && ri <= sp.to {
				c.Lanes[k] = "l"
			}
		}
	}
	if i < 0 {
		c.Empty = true
		row.Delta = false
		return c
	}
	e := l.sides[s][i]
	c.Seq, c.Kind, c.KindRaw, c.Label, c.JSON = e.Seq, kindShort(e.Kind), e.Kind, label(e), entryJSON(l.written[s][i])
	c.Lane = l.rowLanes[ri][s]
	c.Lanes[l.column[c.Lane.Key]] = "d"
	if e.T != l.lastT[s] {
		c.T = fmt.Sprintf("%dms", e.T)
		l.lastT[s] = e.T
	}
	if !isDelta(e) {
		row.Delta = false
	}
	sideName, marks := "actual", l.bySeq[e.Seq]
	if s != len(l.sides)-1 {
		sideName, marks = "expected", l.byExpSeq[e.Seq]
	}
	for _, f := range marks {
		fv := findingView{Rule: f.Rule, Msg: f.Msg, Detail: f.Detail, Entry: e.Seq, Row: row.ID, Side: sideName, n: f.n, later: f.Later}
		c.Findings = append(c.Findings, fv)
		l.rv.Findings = append(l.rv.Findings, fv)
	}
	return c
}

// foldLaterFindings orders the findings as Run.Findings does and sets those after the first
// divergence apart.
func (l *runLayout) foldLaterFindings() {
	rv := &l.rv
	sort.SliceStable(rv.Findings, func(i, j int) bool { return rv.Findings[i].n < rv.Findings[j].n })
	var first []findingView
	for _, f := range rv.Findings {
		if f.later {
			rv.Later = append(rv.Later, f)
		} else {
			first = append(first, f)
		}
	}
	rv.Findings = first
}

// countStats counts the entries, the rows that differ and the findings in a line; a run
// whose sides differ failed.
func (l *runLayout) countStats() {
	stats := fmt.Sprintf("%d entries", len(l.actual))
	if l.two {
		stats = fmt.Sprintf("%d expected and %d actual entries, %d rows differ", len(l.sides[0]), len(l.actual), l.differ)
		if l.differ > 0 {
			l.rv.Failed = true
		}
	}
	found := 0 // rows marked with a finding (shaded), which may be rows whose entries agree
	for _, row := range l.rv.Rows {
		if strings.Contains(row.Class, "find") {
			found++
		}
	}
	l.rv.Stats = fmt.Sprintf("%s, %d findings", stats, len(l.r.Findings))
	if found > 0 {
		l.rv.Stats += fmt.Sprintf(" (marked on %d rows)", found)
	}
}

// prefixRows makes row IDs unique on the page by prefixing the run's ID.
func (rv *runView) prefixRows() {
	p := rv.ID + "-"
	for i := range rv.Rows {
		rv.Rows[i].ID = p + rv.Rows[i].ID
		for j := range rv.Rows[i].Cells {
			for k := range rv.Rows[i].Cells[j].Findings {
				rv.Rows[i].Cells[j].Findings[k].Row = p + rv.Rows[i].Cells[j].Findings[k].Row
			}
		}
	}
	for _, list := range [][]findingView{rv.Findings, rv.Later} {
		for i := range list {
			if list[i].Row != "" {
				list[i].Row = p + list[i].Row
			}
		}
	}
	if rv.Diverge != "" {
		rv.Diverge = p + rv.Diverge
	}
}

func sideIndex(p pair, side int, two bool) int {
	if two && side == 0 {
		return p.e
	}
	return p.a
}

// entriesOf is the trace's entries in full (its links expanded).
func entriesOf(t *trace.Trace) []trace.Entry {
	if t == nil {
		return nil
	}
	return t.Expanded().Entries
}

// writtenOf is the trace's entries as its file has them: in linear form, a request's context
// as the earlier request's it extends plus what was appended (trace.Link), so that a page
// showing every entry's JSON grows with the trace, not with its square. full is the trace expanded, used when the two do not pair.
func writtenOf(t *trace.Trace, full []trace.Entry) []trace.Entry {
	if t == nil || len(t.Entries) != len(full) {
		return full
	}
	return t.Entries
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
