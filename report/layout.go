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
	rv := runView{ID: r.ID, Title: r.Title, Subtitle: r.Subtitle, Failed: r.Failed || len(r.Findings) > 0}
	var sides, written [][]trace.Entry
	var pairs []pair
	actual := entriesOf(r.Actual)
	written = [][]trace.Entry{writtenOf(r.Actual, actual)}
	if r.Expected != nil {
		expected := entriesOf(r.Expected)
		written = [][]trace.Entry{writtenOf(r.Expected, expected), written[0]}
		sides = [][]trace.Entry{expected, actual}
		rv.Sides = []string{or(r.ExpectedLabel, "expected"), or(r.ActualLabel, "actual")}
		pairs = align(expected, actual)
	} else {
		sides = [][]trace.Entry{actual}
		rv.Sides = []string{or(r.ActualLabel, "actual")}
		for j := range actual {
			pairs = append(pairs, pair{-1, j})
		}
	}
	two := len(sides) == 2

	// Lanes: the loop, the hooks and the user first, then the streams' and the tool calls'
	// columns. A stream or a tool call is an actor alive from its first row to its last (on
	// either side); actors of a kind whose lives do not overlap share a column, so the page
	// has as many columns as actors at once, not one per request (a 200-turn run had 403).
	rowLanes := make([][]lane, len(pairs)) // per row, per side: the entry's actor
	toolNames := []map[string]string{{}, {}}
	used := map[string]bool{laneLoop: true}
	type span struct{ from, to int }
	var actors []string // streams and tool calls, in order of first appearance
	life := map[string]span{}
	for ri, p := range pairs {
		rowLanes[ri] = make([]lane, len(sides))
		for s := range sides {
			i := sideIndex(p, s, two)
			if i < 0 {
				continue
			}
			ln := laneOf(sides[s][i], toolNames[s])
			rowLanes[ri][s] = ln
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
	var all []lane
	for _, f := range []lane{{laneLoop, "loop events", laneLoop}, {laneHooks, "hooks", laneHooks}, {laneUser, "user", laneUser}} {
		if used[f.Key] {
			all = append(all, f)
		}
	}
	column := map[string]int{} // lane key (fixed lane or actor) -> column
	for k, ln := range all {
		column[ln.Key] = k
	}
	// Each actor takes the first column of its kind free again (the last actor there ended
	// on an earlier row), else a new one.
	lastRow := map[int]int{}
	for _, key := range actors {
		class, _, _ := strings.Cut(key, ":")
		k := -1
		for c := len(all) - 1; c >= 0 && all[c].Class != laneLoop && all[c].Class != laneHooks && all[c].Class != laneUser; c-- {
			if all[c].Class == class && lastRow[c] < life[key].from {
				k = c
			}
		}
		if k < 0 {
			k = len(all)
			all = append(all, lane{Key: fmt.Sprintf("%s#%d", class, k), Class: class})
		}
		column[key], lastRow[k] = k, life[key].to
	}
	// A column is named by its kind, numbered when the kind has several.
	count := map[string]int{}
	for _, ln := range all {
		count[ln.Class]++
	}
	nth := map[string]int{}
	for k := range all {
		if all[k].Name != "" {
			continue
		}
		nth[all[k].Class]++
		all[k].Name = map[string]string{laneStream: "streams", laneTool: "tool calls"}[all[k].Class]
		if count[all[k].Class] > 1 {
			all[k].Name += " " + strconv.Itoa(nth[all[k].Class])
		}
	}
	rv.Lanes = all

	// Each actor's life on each side: from its first row to its last.
	alive := make([]map[int][]span, len(sides)) // per side: column -> the lives in it
	for s := range sides {
		alive[s] = map[int][]span{}
		first := map[string]span{}
		var order []string
		for ri := range pairs {
			key := rowLanes[ri][s].Key
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
			alive[s][column[key]] = append(alive[s][column[key]], first[key])
		}
	}

	// Findings by the actual entry's seq.
	// Each finding keeps its place in r.Findings (n): the list shows them in that order, the
	// diagnosis's, its cause first.
	type marked struct {
		Finding
		n int
	}
	bySeq := map[int][]marked{}
	byExpSeq := map[int][]marked{}
	seqs, expSeqs := map[int]bool{}, map[int]bool{}
	for _, e := range actual {
		seqs[e.Seq] = true
	}
	if two {
		for _, e := range sides[0] {
			expSeqs[e.Seq] = true
		}
	}
	for n, f := range r.Findings {
		if f.Entry != 0 && seqs[f.Entry] {
			bySeq[f.Entry] = append(bySeq[f.Entry], marked{f, n})
		} else if f.Entry == 0 && f.ExpectedEntry != 0 && expSeqs[f.ExpectedEntry] {
			byExpSeq[f.ExpectedEntry] = append(byExpSeq[f.ExpectedEntry], marked{f, n})
		} else {
			rv.Findings = append(rv.Findings, findingView{Rule: f.Rule, Msg: f.Msg, Detail: f.Detail, Entry: f.Entry, n: n, later: f.Later})
		}
	}

	sideNames := []string{"actual"}
	if two {
		sideNames = []string{"expected", "actual"}
	}
	lastT := make([]int64, len(sides))
	for s := range lastT {
		lastT[s] = -1
	}
	differ := 0
	for ri, p := range pairs {
		row := rowView{ID: "r" + strconv.Itoa(ri+1), Class: "eq", Delta: true}
		if two && (p.e < 0 || p.a < 0 || entryKey(sides[0][p.e]) != entryKey(sides[1][p.a])) {
			row.Class = "diff"
			differ++
			if rv.Diverge == "" {
				rv.Diverge = row.ID
				row.Class = "diff first"
			}
		}
		for s := range sides {
			i := sideIndex(p, s, two)
			c := cellView{Lanes: make([]string, len(all))}
			for k, lives := range alive[s] {
				for _, sp := range lives {
					if ri >= sp.from && ri <= sp.to {
						c.Lanes[k] = "l"
					}
				}
			}
			if i < 0 {
				c.Empty = true
				row.Delta = false
				row.Cells = append(row.Cells, c)
				continue
			}
			e := sides[s][i]
			c.Seq, c.Kind, c.KindRaw, c.Label, c.JSON = e.Seq, kindShort(e.Kind), e.Kind, label(e), entryJSON(written[s][i])
			c.Lane = rowLanes[ri][s]
			c.Lanes[column[c.Lane.Key]] = "d"
			if e.T != lastT[s] {
				c.T = fmt.Sprintf("%dms", e.T)
				lastT[s] = e.T
			}
			if !isDelta(e) {
				row.Delta = false
			}
			marks := bySeq[e.Seq]
			if s != len(sides)-1 {
				marks = byExpSeq[e.Seq]
			}
			{
				for _, f := range marks {
					fv := findingView{Rule: f.Rule, Msg: f.Msg, Detail: f.Detail, Entry: e.Seq, Row: row.ID, Side: sideNames[s], n: f.n, later: f.Later}
					c.Findings = append(c.Findings, fv)
					rv.Findings = append(rv.Findings, fv)
				}
				if len(c.Findings) > 0 && !strings.Contains(row.Class, "find") {
					row.Class += " find"
				}
			}
			row.Cells = append(row.Cells, c)
		}
		rv.Rows = append(rv.Rows, row)
	}
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
	stats := fmt.Sprintf("%d entries", len(actual))
	if two {
		stats = fmt.Sprintf("%d expected and %d actual entries, %d rows differ", len(sides[0]), len(actual), differ)
		if differ > 0 {
			rv.Failed = true
		}
	}
	found := 0 // rows marked with a finding (shaded), which may be rows whose entries agree
	for _, row := range rv.Rows {
		if strings.Contains(row.Class, "find") {
			found++
		}
	}
	rv.Stats = fmt.Sprintf("%s, %d findings", stats, len(r.Findings))
	if found > 0 {
		rv.Stats += fmt.Sprintf(" (marked on %d rows)", found)
	}
	return rv
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
// showing every entry's JSON grows with the trace, not with its square (a 200-turn run's
// contexts in full were 32 MB). full is the trace expanded, used when the two do not pair.
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
