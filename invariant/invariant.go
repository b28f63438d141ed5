// Package invariant holds named properties that every trace of a conforming agent loop has,
// whatever the scenario: the grammar of its events, the replay of its tool declarations, the
// rules of truncation, termination, finishTurn and the queues, the delivery of tool results
// and the snapshots its events carry. Each is checked over a *trace.Trace alone, decoding the
// entries' JSON as needed, so it applies to the reference loop and to any implementation
// reached through the conformance protocol.
//
// Some facts are not in a trace: which hooks are installed and which tools are executable.
// The checkers infer what they can soundly: a hook is taken as installed when the trace shows
// a call of it, and the executable tool set is known where a hook shows it (or changes it) and
// otherwise must merely be consistent with what the loop declared and executed.
package invariant

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// Violation is one place where a trace breaks an invariant: the seq of the entry where it
// shows (0 when it concerns the trace as a whole) and what is wrong.
type Violation struct {
	Entry int
	Msg   string
	// Rule is the rule of docs/SEMANTICS.md the violation breaks, when the check can tell
	// which of its invariant's Rules it is; "" otherwise.
	Rule string `json:",omitempty"`
}

func (v Violation) String() string {
	if v.Entry == 0 {
		return v.Msg
	}
	return fmt.Sprintf("entry %d: %s", v.Entry, v.Msg)
}

// Invariant is a named property of traces.
type Invariant struct {
	Name string
	Doc  string
	// Rules are the rules of docs/SEMANTICS.md the invariant checks, by id.
	Rules []string
	// Check returns the trace's violations of the property; none when it holds.
	Check func(*trace.Trace) []Violation

	check func(*view) []Violation
	// at is the pi behaviour the trace is judged at (AllAt).
	at loop.Behaviour
	// whole: the check judges an Agent trace as a whole; the loop's invariants judge each of
	// its runs (runsOf), if perRun: termination and queue timing cannot, because the Agent's
	// queues answer its polls without a call in the trace (agent-queues judges them).
	whole, perRun bool
}

// Failure is a violation of a named invariant.
type Failure struct {
	Invariant string
	Violation
}

func (f Failure) String() string { return f.Invariant + ": " + f.Violation.String() }

func define(at loop.Behaviour, name, doc string, check func(*view) []Violation) Invariant {
	inv := Invariant{Name: name, Doc: doc, Rules: rulesOf[name], check: check, at: at, whole: strings.HasPrefix(name, "agent-"),
		perRun: name != "termination" && name != "queue-timing"}
	inv.Check = func(tr *trace.Trace) []Violation {
		v := newView(tr)
		return inv.judge(v, runsOf(v))
	}
	return inv
}

// judge checks a trace's view, or, for a loop invariant on an Agent trace, each of its runs.
func (inv Invariant) judge(v *view, runs []*view) []Violation {
	if v.runToolCall {
		return nil // no loop ran: a runToolCall session (protocol §13.7)
	}
	if runs == nil || inv.whole {
		v.at = inv.at
		return inv.check(v)
	}
	var out []Violation
	if !inv.perRun {
		return nil
	}
	for _, r := range runs {
		r.at = inv.at
		out = append(out, inv.check(r)...)
	}
	return out
}

// runsOf splits an Agent trace's view into its runs, each a view of its own as the loop's
// invariants expect: from agent_start to agent_end, without the Agent's operations and
// outcomes, ended by the end entry the loop's run would have made: the agent_end's messages,
// or, when the Agent ended a failed run with its error turn (R-AGENT-ERROR-TURN), the loop's
// failure, the error turn's four events left out. It is nil for other traces. The runs share
// the whole view's decoded entries.
func runsOf(whole *view) []*view {
	es := whole.es
	if !trace.IsAgentTrace(es) {
		return nil
	}
	holds := len(arr(whole.d(0)["barriers"])) > 0
	runs := []*view{}
	var cur []trace.Entry
	var from []int
	for i, e := range es {
		switch {
		case e.Kind == trace.KindEvent && e.Name == string(loop.AgentStart):
			cur, from = []trace.Entry{e}, []int{i}
		case cur == nil, e.Kind == trace.KindOutcome, e.Kind == trace.KindDeliver && e.Name == trace.DeliverAgent:
		case e.Kind == trace.KindEvent && e.Name == string(loop.AgentEnd):
			run, at, end := endRun(cur, from, e, i, whole.d(i))
			r := whole.sub(run, at)
			r.data[len(run)-1], r.decoded[len(run)-1] = end, true
			runs = append(runs, r)
			cur, from = nil, nil
		default:
			cur, from = append(cur, e), append(from, i)
		}
	}
	if cur != nil {
		runs = append(runs, whole.sub(cur, from))
	}
	for _, r := range runs {
		r.holds = holds
	}
	return runs
}

// endRun ends a run's entries (from gives each one's index in the whole trace) at its
// agent_end, entry i whose data is agentEnd, with the end entry of the loop's run, and gives
// the entries, their indices (-1 for the end entry) and that entry's data. The error turn's
// three events are left out of a failed run; what came between them (a hook's return the
// turn's listener held) stays.
func endRun(run []trace.Entry, from []int, e trace.Entry, i int, agentEnd map[string]any) ([]trace.Entry, []int, map[string]any) {
	messages, _ := agentEnd["messages"].([]any)
	if turn := errorTurn(run); len(messages) == 1 && turn != nil {
		m := obj(messages[0])
		role, stop, errorMessage := str(m["role"]), str(m["stopReason"]), str(m["errorMessage"])
		if role == "assistant" && (stop == string(loop.StopError) || stop == string(loop.StopAborted)) && failedJustBefore(run[:turn[0]]) {
			last := run[len(run)-1]
			data := jsonvalue.AppendString([]byte(`{"error":`), errorMessage)
			kept, at := make([]trace.Entry, 0, len(run)-2), make([]int, 0, len(run)-2)
			for j := range run {
				if !slices.Contains(turn, j) {
					kept, at = append(kept, run[j]), append(at, from[j])
				}
			}
			return append(kept, trace.Entry{Seq: last.Seq, T: last.T, Kind: trace.KindEnd, Name: "run", Data: append(data, '}'), Error: errorMessage}),
				append(at, -1), map[string]any{"error": errorMessage}
		}
	}
	// Its data as the world would write it: agent_end's messages as they are.
	list := []byte("null")
	if start, end, ok := jsonvalue.MemberValue(e.Data, "messages"); ok && e.Canonical && e.Link == nil && messages != nil {
		list = e.Data[start:end]
	} else if messages != nil {
		// show's json.Marshal, written by hand: the values are decoded canonical JSON, which
		// jsonvalue.AppendValue writes as json.Marshal does (FuzzAppendValueOfDecoded).
		list = jsonvalue.AppendValue(nil, messages)
	}
	data := append(append([]byte(`{"messages":`), list...), '}')
	return append(run, e, trace.Entry{Seq: e.Seq, T: e.T, Kind: trace.KindEnd, Name: "run", Data: data}),
		append(from, i, -1), map[string]any{"messages": messages}
}

// errorTurn gives the positions of a run's last three events when they are an error turn's
// message_start, message_end and turn_end, nil otherwise.
func errorTurn(run []trace.Entry) []int {
	var ev []int
	for j := len(run) - 1; j >= 0 && len(ev) < 3; j-- {
		if run[j].Kind == trace.KindEvent {
			ev = append(ev, j)
		}
	}
	if len(ev) < 3 || run[ev[2]].Name != string(loop.MessageStart) || run[ev[1]].Name != string(loop.MessageEnd) || run[ev[0]].Name != string(loop.TurnEnd) {
		return nil
	}
	return []int{ev[2], ev[1], ev[0]}
}

// failedJustBefore reports whether the run's entries end with what fails a run: a call that
// threw (a hook, the stream function) or a stream that threw. Left aside: the world's notes of
// it, an abort fired in the hook, the Agent's operations and outcomes, the return of a hook that
// waited before it threw, and the updates of the failed stream's message that a listener held
// at its message_start delayed.
func failedJustBefore(run []trace.Entry) bool {
	for i := len(run) - 1; i >= 0; i-- {
		e := run[i]
		switch {
		case e.Kind == trace.KindFail, e.Kind == trace.KindUser, e.Kind == trace.KindOutcome,
			e.Kind == trace.KindDeliver && (e.Name == trace.DeliverAgent || e.Name == trace.DeliverHookReturn),
			e.Kind == trace.KindEvent && e.Name == string(loop.MessageUpdate):
			continue
		case e.Kind == trace.KindCall && e.Error != "":
			return true
		case e.Kind == trace.KindDeliver && e.Name == trace.DeliverStreamFail:
			return true
		}
		return false
	}
	return false
}

// rulesOf lists, per invariant, the rules of docs/SEMANTICS.md it checks.
var rulesOf = map[string][]string{
	"grammar":      {"R-EV-GRAMMAR", "R-EV-FIRST-TURN", "R-EV-ONE-END", "R-TURN-REQUEST"},
	"replay":       {"R-DECL-REPLAY", "R-DECL-WHEN", "R-DECL-SENT", "R-PROVIDER-REQUEST", "R-PROVIDER-CONVERT"},
	"truncation":   {"R-TRUNC-FAIL", "R-TRUNC-NO-TERMINATE"},
	"termination":  {"R-TERM-UNANIMOUS", "R-TERM-STILL-POLLS", "R-TRUNC-NO-TERMINATE", "R-CONTENT-DECIDES", "R-NO-TURN-LIMIT"},
	"finish-turn":  {"R-FINISH-END", "R-FINISH-CONTINUE", "R-FINISH-IGNORED"},
	"queue-timing": {"R-POLL-A", "R-POLL-B", "R-POLL-C", "R-POLL-FOLLOW-UP", "R-POLL-NEVER-ELSE", "R-PREPARE-NEXT-TURN", "R-NO-TURN-LIMIT"},
	"hook-timing":  {"R-PREPARE-REQUEST", "R-FINISH-WHEN", "R-TOOL-BEFORE", "R-TOOL-AFTER"},
	"results":      {"R-CONTENT-DECIDES", "R-TOOL-RESULT-MESSAGE", "R-EXEC-SEQUENTIAL", "R-EXEC-PARALLEL", "R-TOOL-UPDATES", "R-TIME-DURATION"},
	"snapshots":    {"R-STREAM-START", "R-STREAM-UPDATE", "R-STREAM-END", "R-STREAM-THINKING-LEVEL", "R-EV-SNAPSHOT"},
	"reports":      {"R-NEW-MESSAGES", "R-FINISH-WHEN", "R-PREPARE-NEXT-TURN"},
	"agent-queues": {"R-AGENT-QUEUES", "R-AGENT-CONTINUE"},
	"agent-runs":   {"R-AGENT-BUSY", "R-AGENT-LISTENERS"},
}

// All returns every invariant, in a fixed order, judging traces of the newest pi.
func All() []Invariant { return AllAt(loop.Behaviour{}) }

// AllAt returns every invariant judging traces of a loop that behaves as b (a pi release,
// loop.BehaviourOf): none demands a behaviour b lacks, such as durationMs before pi 1.3.0.
func AllAt(b loop.Behaviour) []Invariant {
	define := func(name, doc string, check func(*view) []Violation) Invariant { return define(b, name, doc, check) }
	return []Invariant{
		define("grammar", grammarDoc, checkGrammar),
		define("replay", replayDoc, checkReplay),
		define("truncation", truncationDoc, checkTruncation),
		define("termination", terminationDoc, checkTermination),
		define("finish-turn", finishTurnDoc, checkFinishTurn),
		define("queue-timing", queueTimingDoc, checkQueueTiming),
		define("hook-timing", hookTimingDoc, checkHookTiming),
		define("results", resultsDoc, checkResults),
		define("snapshots", snapshotsDoc, checkSnapshots),
		define("reports", reportsDoc, checkReports),
		define("agent-queues", agentQueuesDoc, checkAgentQueues),
		define("agent-runs", agentRunsDoc, checkAgentRuns),
	}
}

// ByName returns the invariant of that name.
func ByName(name string) (Invariant, bool) {
	for _, inv := range All() {
		if inv.Name == name {
			return inv, true
		}
	}
	return Invariant{}, false
}

// CheckAll checks the trace against invs (All when none are given), decoding it once, and
// returns every failure, invariant by invariant.
func CheckAll(tr *trace.Trace, invs ...Invariant) []Failure {
	if len(invs) == 0 {
		invs = All()
	}
	v := newView(tr)
	runs := runsOf(v)
	var out []Failure
	for _, inv := range invs {
		var vs []Violation
		if inv.check != nil {
			vs = inv.judge(v, runs)
		} else if inv.Check != nil {
			vs = inv.Check(tr)
		}
		for _, x := range vs {
			out = append(out, Failure{Invariant: inv.Name, Violation: x})
		}
	}
	return out
}

// view is a trace decoded for checking: entries with their JSON decoded on demand, and the
// run's structure (turns, outcome) parsed once.
type view struct {
	// at is the pi behaviour the trace is judged at.
	at loop.Behaviour
	es []trace.Entry
	// linked: es is a trace's linear form, whose links decode restores.
	linked bool
	// bySeq finds an entry by its seq where its index does not (made when first needed).
	bySeq map[int]int
	// parent, for a run of an Agent's trace, is the whole trace's view, and from the index
	// there of each of the run's entries (-1: an entry made for the run).
	parent  *view
	from    []int
	data    []any
	answer  []any
	decoded []bool
	// memo shares the decoded values of the messages the entries repeat.
	memo jsonvalue.Memo[any]

	// endIdx is the index of the end-of-run entry, -1 when there is none.
	endIdx int
	// failed: the run ended with an error (a failed run has no agent_end).
	failed bool
	// agentEnd is the index of the (first) agent_end event, -1 when there is none.
	agentEnd int

	// Hooks seen called somewhere in the trace.
	seen map[string]bool
	// runToolCall: the trace is a runToolCall session's (trace.IsRunToolCallTrace).
	runToolCall bool
	// holds: the run is an Agent's whose listener may hold it at a barrier, while the
	// provider's deliveries go on (pi reads the stream only as the listeners return).
	holds bool

	turns []*turn
}

// newView is the view of a trace, linear or in full. The linear form's links are restored
// on the decoded values as entries are decoded (trace.ExpandValues), when every linked entry
// is one the world recorded (canonical: its links resolve); other traces are expanded first.
func newView(tr *trace.Trace) *view {
	linked := false
	for i := range tr.Entries {
		if e := &tr.Entries[i]; e.Link != nil {
			linked = true
			if !e.Canonical {
				tr, linked = tr.Expanded(), false
				break
			}
		}
	}
	v := &view{es: tr.Entries, linked: linked, endIdx: -1, agentEnd: -1, seen: map[string]bool{}}
	v.memo = traceMemo()
	v.data = make([]any, len(v.es))
	v.answer = make([]any, len(v.es))
	v.decoded = make([]bool, len(v.es))
	v.index()
	return v
}

// sub is the view of a run of v's entries: es, each the entry of v at from (-1: one made for
// the run), whose values are v's.
func (v *view) sub(es []trace.Entry, from []int) *view {
	r := &view{es: es, parent: v, from: from, endIdx: -1, agentEnd: -1, seen: map[string]bool{}}
	r.memo = traceMemo()
	r.data = make([]any, len(es))
	r.answer = make([]any, len(es))
	r.decoded = make([]bool, len(es))
	r.index()
	return r
}

// index finds the view's end, agent_end and hooks called, and its turns.
func (v *view) index() {
	for i, e := range v.es {
		switch {
		case e.Kind == trace.KindEnd && v.endIdx < 0:
			v.endIdx = i
			v.failed = e.Error != ""
		case e.Kind == trace.KindEvent && e.Name == "agent_end" && v.agentEnd < 0:
			v.agentEnd = i
		case e.Kind == trace.KindCall && e.Name != trace.CallStream && e.Name != trace.CallTool:
			v.seen[e.Name] = true
		}
	}
	v.runToolCall = trace.IsRunToolCallTrace(v.es)
	v.parseTurns()
}

// decode decodes entry i's data and answer, in full.
func (v *view) decode(i int) {
	if v.decoded[i] {
		return
	}
	v.decoded[i] = true
	if v.parent != nil && v.from[i] >= 0 {
		j := v.from[i]
		v.parent.decode(j)
		v.data[i], v.answer[i] = v.parent.data[j], v.parent.answer[j]
		return
	}
	e := &v.es[i]
	if len(e.Data) > 0 {
		v.data[i] = decodeJSONWith(e.Data, &v.memo)
	}
	if len(e.Answer) > 0 {
		v.answer[i] = decodeJSONWith(e.Answer, &v.memo)
	}
	if v.linked && e.Link != nil {
		// Links between recorded entries resolve; were one not to, the entry stays as
		// written, as Trace.Expanded leaves it.
		if d, a, err := trace.ExpandValues(e, v.data[i], v.answer[i], v.earlier); err == nil {
			v.data[i], v.answer[i] = d, a
		}
	}
}

// earlier is the data and answer in full of the entry seq, for trace.ExpandValues.
func (v *view) earlier(seq int) (data, answer any, ok bool) {
	j := seq - 1
	if j < 0 || j >= len(v.es) || v.es[j].Seq != seq {
		if v.bySeq == nil {
			v.bySeq = make(map[int]int, len(v.es))
			for k := range v.es {
				v.bySeq[v.es[k].Seq] = k
			}
		}
		if j, ok = v.bySeq[seq]; !ok {
			return nil, nil, false
		}
	}
	v.decode(j)
	return v.data[j], v.answer[j], true
}

// d is entry i's data as an object (nil when it is not one).
func (v *view) d(i int) map[string]any {
	v.decode(i)
	m, _ := v.data[i].(map[string]any)
	return m
}

// a is entry i's answer as an object.
func (v *view) a(i int) map[string]any {
	v.decode(i)
	m, _ := v.answer[i].(map[string]any)
	return m
}

func (v *view) seq(i int) int {
	if i < 0 || i >= len(v.es) {
		if len(v.es) == 0 {
			return 0
		}
		return v.es[len(v.es)-1].Seq
	}
	return v.es[i].Seq
}

func (v *view) isEvent(i int, names ...string) bool {
	e := v.es[i]
	if e.Kind != trace.KindEvent {
		return false
	}
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if e.Name == n {
			return true
		}
	}
	return false
}

func (v *view) isCall(i int, name string) bool {
	return v.es[i].Kind == trace.KindCall && v.es[i].Name == name
}

// message is the message of a message_* event at i.
func (v *view) message(i int) map[string]any { return obj(v.d(i)["message"]) }

// role is the role of the message of a message_* event at i.
func (v *view) role(i int) string { return str(v.message(i)["role"]) }

// violations collects violations.
type violations []Violation

func (vs *violations) add(v *view, i int, format string, args ...any) {
	*vs = append(*vs, Violation{Entry: v.seq(i), Msg: fmt.Sprintf(format, args...)})
}

// addRule adds a violation of rule, one of its invariant's Rules.
func (vs *violations) addRule(v *view, i int, rule, format string, args ...any) {
	*vs = append(*vs, Violation{Entry: v.seq(i), Msg: fmt.Sprintf(format, args...), Rule: rule})
}

// JSON helpers over decoded values.

func obj(x any) map[string]any { m, _ := x.(map[string]any); return m }
func arr(x any) []any          { a, _ := x.([]any); return a }
func str(x any) string         { s, _ := x.(string); return s }

// same reports whether two decoded JSON values are equal.
func same(a, b any) bool { return equalValues(a, b, false) }

// equalValues is same, and with zeroSign also tells -0 from 0 (as their JSON texts do).
func equalValues(a, b any, zeroSign bool) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		if reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() {
			return true // one object: the decoding memo shares the objects a trace repeats
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalValues(xv, yv, zeroSign) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		if len(x) > 0 && &x[0] == &y[0] {
			return true
		}
		for i := range x {
			if !equalValues(x[i], y[i], zeroSign) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && (x == y && !zeroSign || math.Float64bits(x) == math.Float64bits(y))
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

// show renders a JSON value for messages, whole: a finding shows the full values (the
// timeline is where entries are abbreviated).
func show(x any) string {
	data, _ := json.Marshal(x)
	return string(data)
}

// showField is member key of m as JSON (a string "true" shows its quotes, unlike the boolean
// true), or "(absent)".
func showField(m map[string]any, key string) string {
	x, ok := m[key]
	if !ok {
		return "(absent)"
	}
	return show(x)
}

// messagesOf returns the list of messages at key in m.
func messagesOf(m map[string]any, key string) []any { return arr(m[key]) }

// names is a set of names.
type names map[string]bool

func namesOf(list []any) names {
	out := names{}
	for _, x := range list {
		if s, ok := x.(string); ok {
			out[s] = true
		}
	}
	return out
}

func (n names) equal(o names) bool {
	if len(n) != len(o) {
		return false
	}
	for k := range n {
		if !o[k] {
			return false
		}
	}
	return true
}

func (n names) String() string {
	list := make([]string, 0, len(n))
	for k := range n {
		list = append(list, k)
	}
	sortStrings(list)
	return "[" + strings.Join(list, ",") + "]"
}

func sortStrings(s []string) { slices.Sort(s) }

// listDiff compares two lists of messages (or any JSON values) and describes the first
// difference; "" when they are equal. nil and empty lists are equal.
func listDiff(got, want []any) string {
	for k := 0; k < min(len(got), len(want)); k++ {
		if !same(got[k], want[k]) {
			return fmt.Sprintf("item %d differs %s (got %s, expected %s)", k, valueDiff(got[k], want[k]), showMessages(got), showMessages(want))
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d items, expected %d (got %s, expected %s)", len(got), len(want), showMessages(got), showMessages(want))
	}
	return ""
}

// valueDiff describes where two decoded JSON values first differ ("" when equal): the path
// of the first differing member and both values there.
func valueDiff(got, want any) string {
	fields := trace.Fields(want, got, same)
	if len(fields) == 0 {
		return ""
	}
	d := fields[0]
	path := "." + d.Path
	g, w := d.Got, d.Want
	if d.Shape == trace.Absent {
		g = "(missing)"
	}
	if d.Shape == trace.Unexpected {
		w = "(missing)"
	}
	return fmt.Sprintf("at %s: %s, expected %s", path, show(g), show(w))
}
