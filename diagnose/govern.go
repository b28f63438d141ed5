package diagnose

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// Which rule a finding is named by: the rule that governs the entry it is about, from the
// table of docs/SEMANTICS.md "Which rule governs an entry" (docs.Governance), never the
// scenario's.

// situation is where an entry stands in its trace: the facts the table's "when" column names.
type situation struct {
	startup, afterTurn, beforeLaterTurn bool // a steering poll's place
	withinTurn                          bool // a poll's place between a request and its turn_end
	lacking                             bool // the entry is the reference's, which the implementation lacks
	loopError                           bool // a tool result (end or message) that is an error result of the loop's making
	invalid                             bool // an entry of a tool call the reference refused at validation
	truncated, hardExit, aborted        bool
	afterTruncated                      bool // after a truncated batch, before the next request
	parallel, sequential                bool // the entry's tool batch, as the trace runs it
	terminating                         bool // after a batch one of whose results terminates
	finishContinue, finishEnd           bool
	turnContinue                        bool   // the last turn's finishTurn answered continue
	afterReset                          bool   // an Agent's reset(), with only state queries since
	pollsFollowUp                       bool   // the implementation polls follow-up somewhere in the run
	afterOverrides                      bool   // a tool call's end or result whose afterToolCall answer overrides its result
	pastPoll                            bool   // an entry moved past a steering poll (set on a move only)
	beforeFinish                        bool   // a turn_end its turn's finishTurn call follows
	disagrees                           bool   // the turn's stopReason disagrees with its content
	origin                              string // a message event's, or a turn's pending messages': prompt, steering, follow-up, prepared, declaration
}

// holds reports whether the situation is the one the table names.
func (s situation) holds(when string) bool {
	switch when {
	case "":
		return true
	case "startup":
		return s.startup
	case "after a turn":
		return s.afterTurn
	case "before a later turn":
		return s.beforeLaterTurn
	case "within a turn":
		return s.withinTurn
	case "lacking":
		return s.lacking && !s.startup
	case "an error result the loop makes":
		return s.loopError
	case "invalid arguments":
		return s.invalid
	case "in a truncated turn":
		return s.truncated
	case "a truncated turn's calls lacking":
		return s.truncated && s.lacking
	case "after a truncated batch":
		return s.afterTruncated
	case "after a hard exit":
		return s.hardExit
	case "after an abort":
		return s.aborted
	case "in a parallel batch":
		return s.parallel
	case "in a sequential batch":
		return s.sequential
	case "after a terminating batch":
		return s.terminating
	case "after finishTurn continue":
		return s.finishContinue
	case "after a reset":
		return s.afterReset
	case "overridden by afterToolCall":
		return s.afterOverrides
	case "moved past a steering poll":
		return s.pastPoll
	case "lacking after its turn's finishTurn continue":
		return s.lacking && s.turnContinue && s.pollsFollowUp
	case "after finishTurn end":
		return s.finishEnd
	case "before finishTurn":
		return s.beforeFinish
	case "stopReason disagrees":
		return s.disagrees
	case "a prompt":
		return s.origin == "prompt"
	case "steering":
		return strings.HasPrefix(s.origin, "steering")
	case "steering (poll A)":
		return s.origin == "steering A"
	case "steering (poll B)":
		return s.origin == "steering B"
	case "follow-up":
		return s.origin == "follow-up"
	case "prepared":
		return s.origin == "prepared"
	case "queued":
		return s.origin == "queued"
	case "a declaration":
		return s.origin == "declaration"
	}
	return false
}

// knownWhen is every "when" the table may use (a test holds the table to it).
var knownWhen = []string{"startup", "after a turn", "before a later turn", "within a turn", "lacking", "an error result the loop makes", "invalid arguments", "in a truncated turn", "a truncated turn's calls lacking", "after a truncated batch", "after a hard exit",
	"after an abort", "in a parallel batch", "in a sequential batch", "after a terminating batch",
	"after finishTurn continue", "lacking after its turn's finishTurn continue", "after a reset", "overridden by afterToolCall", "moved past a steering poll", "after finishTurn end", "before finishTurn", "stopReason disagrees", "a prompt", "steering", "steering (poll A)", "steering (poll B)", "follow-up",
	"prepared", "queued", "a declaration"}

// situations walks a trace once and says where each entry stands.
func situations(es []trace.Entry) []situation {
	out := make([]situation, len(es))
	w := walker{prompts: -1}
	for i := range es {
		out[i] = w.step(&es[i])
	}
	markBatches(es, out)
	markBeforeFinish(es, out)
	return out
}

// markBeforeFinish marks each turn_end that its turn's finishTurn call follows (before the
// next request or turn).
func markBeforeFinish(es []trace.Entry, out []situation) {
	end := -1
	for i, e := range es {
		switch {
		case e.Kind == trace.KindEvent && loop.EventType(e.Name) == loop.TurnEnd:
			end = i
		case e.Kind == trace.KindCall && e.Name == trace.HookFinishTurn && end >= 0:
			out[end].beforeFinish = true
			end = -1
		case e.Kind == trace.KindCall && e.Name == trace.CallStream,
			e.Kind == trace.KindEvent && (loop.EventType(e.Name) == loop.TurnStart || loop.EventType(e.Name) == loop.AgentStart):
			end = -1
		}
	}
}

// walker is what the entries of a trace walked so far say of the entries after them.
type walker struct {
	requested, inTurnEnd, truncated, hardExit, aborted, terminating bool
	ran, afterTruncated                                             bool            // the turn's batch ran; it was a truncated one
	continued                                                       bool            // a finishTurn of the run answered continue
	reset                                                           bool            // an Agent's reset(), with only state queries since
	overridden                                                      map[string]bool // tool calls whose afterToolCall answer overrides the result
	finish                                                          string
	steeringSinceTurnEnd                                            int
	disagrees                                                       bool
	origin                                                          string // of the messages the last poll or hook returned
	prompts                                                         int    // the Agent prompt's messages not yet emitted (-1: not an Agent's)
	message                                                         string // the origin of the message whose events these are
}

// step says where entry e stands, and takes in what it says of the entries after it.
func (w *walker) step(e *trace.Entry) situation {
	s := situation{startup: !w.requested, truncated: w.truncated, hardExit: w.hardExit, aborted: w.aborted, terminating: w.terminating,
		afterTruncated: w.afterTruncated, finishContinue: w.continued, turnContinue: w.finish == "continue", afterReset: w.reset, finishEnd: w.finish == "end", disagrees: w.disagrees}
	if e.Kind == trace.KindCall && (e.Name == trace.CallStream || e.Name == trace.HookPrepareNextTurn) ||
		e.Kind == trace.KindEvent && e.Name == string(loop.TurnStart) {
		s.origin = w.origin // the messages pending for the turn it starts
	}
	switch e.Kind {
	case trace.KindDeliver, trace.KindUser:
		w.delivery(e)
	case trace.KindCall:
		w.call(e, &s)
	case trace.KindEvent:
		w.event(e, &s)
	case trace.KindOutcome:
		if e.Name == trace.OpReset && e.Error != "" {
			w.reset = false // refused: nothing was reset
		}
	}
	return s
}

// delivery takes in an abort, and the prompt an Agent is given.
func (w *walker) delivery(e *trace.Entry) {
	if e.Name == trace.DeliverAbort {
		w.aborted = true
	}
	if e.Kind != trace.KindDeliver || e.Name != trace.DeliverAgent {
		return
	}
	var d struct {
		Op       string
		Messages []json.RawMessage
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return
	}
	if d.Op != trace.OpState {
		w.reset = d.Op == trace.OpReset
	}
	if d.Op == trace.OpPrompt || d.Op == trace.OpContinue {
		w.prompts = 0
		if d.Op == trace.OpPrompt {
			w.prompts = max(1, len(d.Messages)) // a text is one message
		}
	}
}

// call places a poll or hook call (s) and takes in what it answered; a request starts a turn.
func (w *walker) call(e *trace.Entry, s *situation) {
	switch e.Name {
	case trace.HookSteering:
		s.startup = !w.requested
		s.afterTurn = w.requested && w.inTurnEnd && w.steeringSinceTurnEnd == 0
		s.beforeLaterTurn = w.requested && w.inTurnEnd && w.steeringSinceTurnEnd > 0
		s.withinTurn = w.requested && !w.inTurnEnd
		w.steeringSinceTurnEnd++
		// Which poll took them: the rule of the poll governs its messages.
		poll := "steering C"
		switch {
		case s.startup:
			poll = "steering A"
		case s.beforeLaterTurn:
			poll = "steering B"
		}
		w.origin = cmp.Or(answered(e, poll), w.origin)
	case trace.HookFollowUp:
		s.withinTurn = w.requested && !w.inTurnEnd
		w.origin = cmp.Or(answered(e, "follow-up"), w.origin)
	case trace.HookPrepareNextTurn:
		w.origin = cmp.Or(answered(e, "prepared"), w.origin)
	case trace.HookAfterToolCall:
		var d struct{ ToolCall struct{ ID string } }
		var a map[string]json.RawMessage
		if json.Unmarshal(e.Data, &d) == nil && json.Unmarshal(e.Answer, &a) == nil && len(a) > 0 {
			if w.overridden == nil {
				w.overridden = map[string]bool{}
			}
			w.overridden[d.ToolCall.ID] = true
		}
	case trace.HookFinishTurn:
		var a struct{ Action string }
		_ = json.Unmarshal(e.Answer, &a)
		w.finish = a.Action
		w.continued = w.continued || a.Action == "continue"
	case trace.CallStream:
		w.requested, w.inTurnEnd, w.terminating, w.finish, w.ran, w.afterTruncated = true, false, false, "", false, false
		w.truncated, w.disagrees, w.origin = false, false, ""
	}
}

// event places an event (s) and takes in what it says: a new run, a turn's end, how a
// response stopped, a batch that ran or terminates.
func (w *walker) event(e *trace.Entry, s *situation) {
	switch loop.EventType(e.Name) {
	case loop.AgentStart: // a new run (an Agent trace holds several)
		w.requested, w.inTurnEnd, w.truncated, w.hardExit, w.aborted, w.message = false, false, false, false, false, ""
		w.terminating, w.finish, w.disagrees, w.origin, w.ran, w.continued = false, "", false, "", false, false
	case loop.TurnEnd:
		w.inTurnEnd, w.steeringSinceTurnEnd = true, 0
		w.afterTruncated = w.truncated && w.ran
		w.truncated = false
	case loop.TurnStart:
		w.inTurnEnd = false
	case loop.MessageStart, loop.MessageUpdate, loop.MessageEnd:
		w.messageEvent(e, s)
	case loop.ToolExecutionEnd:
		w.ran = true
		s.loopError = loopError(e.Data, "result")
		var d struct {
			ToolCallID string `json:"toolCallId"`
			Result     struct {
				Terminate bool `json:"terminate"`
			} `json:"result"`
		}
		if json.Unmarshal(e.Data, &d) == nil {
			w.terminating = w.terminating || d.Result.Terminate
			s.afterOverrides = w.overridden[d.ToolCallID]
		}
	}
}

// messageEvent places a message's event: how an assistant message stopped, a tool result's
// error, where an input message came from (its origin, which its three events share).
func (w *walker) messageEvent(e *trace.Entry, s *situation) {
	role, stop, declares, calls := messageFacts(e.Data, e.Canonical)
	switch {
	case role == "assistant" && e.Name == string(loop.MessageEnd):
		w.truncated = stop == "length"
		w.hardExit = w.hardExit || stop == "error" || stop == "aborted"
		w.disagrees = (stop == "toolUse") != (calls > 0) && stop != "length" && stop != "error" && stop != "aborted"
	case role == "system" && declares:
		s.origin = "declaration"
	case role == "toolResult":
		s.loopError = loopError(e.Data, "message")
		var d struct{ Message struct{ ToolCallID string } }
		if w.overridden != nil && json.Unmarshal(e.Data, &d) == nil {
			s.afterOverrides = w.overridden[d.Message.ToolCallID]
		}
	case role == "assistant":
	case e.Name != string(loop.MessageStart):
		s.origin = w.message // the events of one message share its origin
	case w.origin != "":
		s.origin = w.origin
	case !w.requested && (w.prompts < 0 || w.prompts > 0):
		s.origin = "prompt"
		w.prompts--
	case w.prompts >= 0:
		// An Agent took it off its queues (the polls are its own, not in the trace);
		// the turn it starts is the queues' too.
		s.origin, w.origin = "queued", "queued"
	}
	if e.Name == string(loop.MessageStart) {
		w.message = s.origin
	}
}

// loopError reports whether the result in data's member (a tool_execution_end's "result", a
// tool-result message) is an error result of the loop's making: isError, with details {}
// (R-TOOL-ERROR-RESULT). A tool's own isError result keeps its details (R-TOOL-EXECUTE).
func loopError(data []byte, member string) bool {
	var d map[string]json.RawMessage
	if json.Unmarshal(data, &d) != nil {
		return false
	}
	var r struct {
		IsError bool            `json:"isError"`
		Details json.RawMessage `json:"details"`
	}
	if json.Unmarshal(d[member], &r) != nil {
		return false
	}
	if member == "result" {
		// The end says isError beside its result.
		_ = json.Unmarshal(d["isError"], &r.IsError)
	}
	return r.IsError && bytes.Equal(bytes.TrimSpace(r.Details), []byte("{}"))
}

// answered is origin when a queue poll or hook call answered messages, else "".
func answered(e *trace.Entry, origin string) string {
	var a struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(e.Answer, &a) == nil && len(a.Messages) > 0 {
		return origin
	}
	return ""
}

// messageFacts reads a message event's message: its role, stopReason, whether it is a
// declaration of the loop's own (tool changes on a message with no content: a pending system
// message that took the changes keeps its pending origin), and its tool calls.
//
// canonical says data is canonical JSON (trace.Entry.Canonical), read on its bytes.
func messageFacts(data []byte, canonical bool) (role, stop string, declares bool, calls int) {
	if canonical {
		if role, stop, declares, calls, ok := messageFactsCompact(data); ok {
			return role, stop, declares, calls
		}
	}
	return messageFactsDecoded(data)
}

// messageFactsDecoded is messageFacts by encoding/json.
func messageFactsDecoded(data []byte) (role, stop string, declares bool, calls int) {
	var d struct {
		Message struct {
			Role         string          `json:"role"`
			StopReason   string          `json:"stopReason"`
			ToolsAdded   json.RawMessage `json:"toolsAdded"`
			ToolsRemoved json.RawMessage `json:"toolsRemoved"`
			Content      json.RawMessage `json:"content"` // a text, or a list of blocks
		} `json:"message"`
	}
	if json.Unmarshal(data, &d) != nil {
		return "", "", false, 0
	}
	m := d.Message
	var blocks []json.RawMessage
	_ = json.Unmarshal(m.Content, &blocks)
	for _, c := range blocks {
		var b struct{ Type string }
		if json.Unmarshal(c, &b) == nil && b.Type == "toolCall" {
			calls++
		}
	}
	declares = (len(m.ToolsAdded) > 0 || len(m.ToolsRemoved) > 0) && slices.Contains([]string{"", `""`, "[]", "null"}, string(m.Content))
	return m.Role, m.StopReason, declares, calls
}

// markBatches says of each tool entry whether its batch runs in parallel (a call starts
// before an earlier one ends) or in sequence (two or more calls, none overlapping); a batch
// of one call is neither.
func markBatches(es []trace.Entry, out []situation) {
	start := -1
	open, calls := 0, 0
	overlap := false
	flush := func(end int) {
		if start < 0 {
			return
		}
		for j := start; j < end; j++ {
			if toolEntry(es[j]) {
				out[j].parallel = overlap
				out[j].sequential = !overlap && calls > 1
			}
		}
		start, open, calls, overlap = -1, 0, 0, false
	}
	for i, e := range es {
		if e.Kind != trace.KindEvent {
			continue
		}
		switch loop.EventType(e.Name) {
		case loop.ToolExecutionStart:
			if start < 0 {
				start = i
			}
			if open > 0 {
				overlap = true
			}
			open++
			calls++
		case loop.ToolExecutionEnd:
			open--
		case loop.TurnEnd:
			flush(i + 1)
		}
	}
	flush(len(es))
}

// callKey is one tool call of a trace: the request whose response asked for it (counted
// from 1) and its id.
type callKey struct {
	request int
	id      string
}

// invalidCalls are the calls of es whose result is a validation failure: one of
// R-TOOL-VALIDATE's error texts.
func invalidCalls(es []trace.Entry) map[callKey]bool {
	out := map[callKey]bool{}
	request := 0
	for _, e := range es {
		switch {
		case e.Kind == trace.KindCall && e.Name == trace.CallStream:
			request++
		case e.Kind == trace.KindEvent && e.Name == string(loop.ToolExecutionEnd) && bytes.Contains(e.Data, []byte(`"isError":true`)):
			var d struct {
				ToolCallID string `json:"toolCallId"`
				Result     struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
			}
			if json.Unmarshal(e.Data, &d) == nil && len(d.Result.Content) > 0 && validationText(d.Result.Content[0].Text) {
				out[callKey{request, d.ToolCallID}] = true
			}
		}
	}
	return out
}

// markInvalid marks the entries of es that belong to a call of invalid (the reference's calls
// refused at validation, by request and id): its call, hooks, events and messages.
func markInvalid(es []trace.Entry, out []situation, invalid map[callKey]bool) {
	if len(invalid) == 0 {
		return
	}
	request := 0
	for i, e := range es {
		if e.Kind == trace.KindCall && e.Name == trace.CallStream {
			request++
			continue
		}
		if id := toolCallID(e); id != "" && invalid[callKey{request, id}] {
			out[i].invalid = true
		}
	}
}

// toolCallID is the id of the tool call an entry is about: a call of the tool or of its
// hooks, its events, its tool-result message's; "" for any other entry.
func toolCallID(e trace.Entry) string {
	key := trace.Key(e)
	if !toolEntry(e) || key == "event turn_end" {
		return ""
	}
	var d struct {
		ToolCallID string `json:"toolCallId"`
		ToolCall   struct {
			ID string `json:"id"`
		} `json:"toolCall"`
		Message struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"message"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return cmp.Or(d.ToolCallID, d.ToolCall.ID, d.Message.ToolCallID)
}

// validationText reports whether an error result's text is one of R-TOOL-VALIDATE's
// (E-VALIDATION, E-INVALID-ARGUMENTS): it starts as one does, up to its tool's name.
func validationText(text string) bool {
	return slices.ContainsFunc(validationPrefixes(), func(p string) bool { return strings.HasPrefix(text, p) })
}

var validationPrefixes = sync.OnceValue(func() []string {
	var out []string
	for _, e := range docs.ErrorTexts() {
		if prefix, _, ok := strings.Cut(e.Text, "NAME"); ok && e.Rule == "R-TOOL-VALIDATE" && prefix != "" {
			out = append(out, prefix)
		}
	}
	return out
})

// toolEntry reports whether e is an entry of a tool batch (a call, its events and hooks, the
// tool-result messages, the turn's end that lists them).
func toolEntry(e trace.Entry) bool {
	switch e.Kind {
	case trace.KindCall:
		return e.Name == trace.CallTool || e.Name == trace.HookBeforeToolCall || e.Name == trace.HookAfterToolCall
	case trace.KindEvent:
		return strings.HasPrefix(e.Name, "tool_execution_") || e.Name == string(loop.TurnEnd) || strings.HasSuffix(trace.Key(e), " toolResult")
	}
	return false
}

// governor names the rule of each finding of one comparison.
type governor struct {
	want, got []situation
	tracks    string           // the pi the implementation is held to; "" the newest
	rowsOf    map[string][]int // the governance rows whose entries match a key, by key
}

func newGovernor(c *trace.Comparison, tracks string) *governor {
	g := &governor{want: situations(c.Want), got: situations(c.Got), tracks: tracks}
	// A call the reference refused at validation is so on both sides: the implementation's
	// extra execution of it is about that refusal.
	invalid := invalidCalls(c.Want)
	markInvalid(c.Want, g.want, invalid)
	markInvalid(c.Got, g.got, invalid)
	// A loop that never polls follow-up lacks every poll for that, continue or not.
	if slices.ContainsFunc(c.Got, func(e trace.Entry) bool { return e.Kind == trace.KindCall && e.Name == trace.HookFollowUp }) {
		for i := range g.want {
			g.want[i].pollsFollowUp = true
		}
	}
	return g
}

// rule is the id of the rule that governs a finding about entry e standing at s, about the
// field at path ("" for the entry itself); "" when no rule does. field is the member the rule
// governs on any entry ("timestamp"), "" when the rule is the entry's.
func (g *governor) rule(e trace.Entry, s situation, path string) (id, field string) {
	rows := governance()
	for _, i := range g.rowsMatching(trace.Key(e)) {
		row := rows[i]
		if !fieldMatches(row.Fields, path) || !s.holds(row.When) {
			continue
		}
		if r, ok := docs.Lookup(row.Rule); ok && r.Since != "" && g.tracks != "" && loop.VersionLess(g.tracks, r.Since) {
			continue // the rule does not exist at the pi the implementation is held to
		}
		if len(row.Entries) == 1 && row.Entries[0] == "*" {
			field = governedMember(row.Fields, path)
		}
		return row.Rule, field
	}
	return "", ""
}

// rowsMatching is the indices of the governance rows whose entries match key, in order.
func (g *governor) rowsMatching(key string) []int {
	if rows, ok := g.rowsOf[key]; ok {
		return rows
	}
	var rows []int
	for i, row := range governance() {
		if matchesAny(row.Entries, key) {
			rows = append(rows, i)
		}
	}
	if g.rowsOf == nil {
		g.rowsOf = map[string][]int{}
	}
	g.rowsOf[key] = rows
	return rows
}

// governedMember is the member of path that one of fields names (the last of a run).
func governedMember(fields []string, path string) string {
	plain := "." + strings.ReplaceAll(folded(path), "[]", "") + "."
	for _, f := range fields {
		if strings.Contains(plain, "."+f+".") {
			return f[strings.LastIndexByte(f, '.')+1:]
		}
	}
	return ""
}

// governance is docs.Governance, read once.
var governance = sync.OnceValue(docs.Governance)

// governsEntries reports whether a row of the table gives rule id to entries of some kind,
// not only to a member on any entry.
func governsEntries(id string) bool {
	return entryRules()[id]
}

var entryRules = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, row := range governance() {
		if !slices.Equal(row.Entries, []string{"*"}) {
			out[row.Rule] = true
		}
	}
	return out
})

// matchesAny reports whether key matches one of the patterns ("event message_* toolResult":
// a "*" matches the rest of a word).
func matchesAny(patterns []string, key string) bool {
	for _, p := range patterns {
		if keyMatches(p, key) {
			return true
		}
	}
	return false
}

// keyMatches reports whether key matches pattern, word by word as strings.Fields splits
// them, without allocating (it runs for every divergence and row).
func keyMatches(pattern, key string) bool {
	if pattern == "*" {
		return true
	}
	for {
		var w, k string
		if w, pattern = nextField(pattern); w == "" {
			// A pattern without a role matches a key with one ("event message_*" matches
			// "event message_end user"); one ending with "*" as its own word matches any rest.
			return true
		}
		if k, key = nextField(key); k == "" {
			return false
		}
		prefix, star := strings.CutSuffix(w, "*")
		if star && !strings.HasPrefix(k, prefix) || !star && k != w {
			return false
		}
	}
}

// nextField is the first of strings.Fields(s), "" if none, and what follows it.
func nextField(s string) (field, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// fieldMatches reports whether the field at path is one the row names (none: any field, and
// the entry itself; path "" is the entry itself, one side lacks).
func fieldMatches(fields []string, path string) bool {
	if len(fields) == 0 {
		return true
	}
	if path == "" {
		return slices.Contains(fields, entryPath)
	}
	if path == orderPath {
		return slices.Contains(fields, orderPath)
	}
	plain := "." + strings.ReplaceAll(folded(path), "[]", "") + "."
	for _, f := range fields {
		if strings.Contains(plain, "."+f+".") {
			return true
		}
	}
	return false
}

// messageFactsCompact is messageFacts read on the bytes of canonical JSON; ok is false where encoding/json might read it otherwise (escaped or
// differently cased keys, escaped texts, JSON that is not compact), which it leaves to
// messageFactsDecoded. A value of the wrong type fails encoding/json's decoding, which
// reads nothing then.
func messageFactsCompact(data []byte) (role, stop string, declares bool, calls int, ok bool) {
	var message []byte
	if !pickMembers(data, eventFields, &message) {
		return "", "", false, 0, false
	}
	if message == nil || message[0] != '{' {
		return "", "", false, 0, true // absent or null: nothing read; another value fails the decoding
	}
	var roleRaw, stopRaw, added, removed, content []byte
	if !pickMembers(message, messageFields, &roleRaw, &stopRaw, &added, &removed, &content) {
		return "", "", false, 0, false
	}
	var typed bool
	if role, typed, ok = plainText(roleRaw); !ok || !typed {
		return "", "", false, 0, ok
	}
	if stop, typed, ok = plainText(stopRaw); !ok || !typed {
		return "", "", false, 0, ok
	}
	if len(content) > 0 && content[0] == '[' {
		blocks, isArray := jsonvalue.Elements(content)
		if !isArray {
			return "", "", false, 0, false
		}
		for _, b := range blocks {
			if b[0] != '{' {
				continue // not an object: decoding it fails
			}
			var kind []byte
			if !pickMembers(b, blockFields, &kind) {
				return "", "", false, 0, false
			}
			text, typed, ok := plainText(kind)
			if !ok {
				return "", "", false, 0, false
			}
			if typed && text == "toolCall" {
				calls++
			}
		}
	}
	declares = (len(added) > 0 || len(removed) > 0) && slices.Contains([]string{"", `""`, "[]", "null"}, string(content))
	return role, stop, declares, calls, true
}

// The members messageFactsCompact reads of an event, a message and a content block.
var (
	eventFields   = []string{"message"}
	messageFields = []string{"role", "stopReason", "toolsAdded", "toolsRemoved", "content"}
	blockFields   = []string{"type"}
)

// pickMembers sets *into[i] to the value of obj's member names[i], left nil when absent; false
// when obj is not a compact object, a key is escaped, or a key is one of names but for its
// case (encoding/json would read that one too).
func pickMembers(obj []byte, names []string, into ...*[]byte) bool {
	return compactMembers(obj, func(key string, value []byte) bool {
		for i, name := range names {
			switch {
			case key == name:
				*into[i] = value
			case strings.EqualFold(key, name):
				return false
			}
		}
		return true
	})
}

// compactMembers calls member with each member of the compact JSON object obj, its key
// unquoted, until it returns false; false when obj is not a compact object, a key is
// escaped, or member returned false.
func compactMembers(obj []byte, member func(key string, value []byte) bool) bool {
	all := true
	return jsonvalue.EachMember(obj, func(key, value []byte) {
		if !all {
			return
		}
		if bytes.IndexByte(key, '\\') >= 0 || !member(string(key[1:len(key)-1]), value) {
			all = false
		}
	}) && all
}

// plainText reads a member decoded into a string: absent or null leave it "" (typed), an
// ASCII string without escapes is its text, any other value fails the decoding (typed
// false); ok is false for another string, left to encoding/json.
func plainText(raw []byte) (text string, typed, ok bool) {
	switch {
	case raw == nil || string(raw) == "null":
		return "", true, true
	case raw[0] != '"':
		return "", false, true
	}
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			return "", false, false // decoding unescapes, and replaces bytes that are not UTF-8
		}
	}
	return string(raw[1 : len(raw)-1]), true, true
}
