package audit

import (
	"encoding/json"
	"fmt"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// event is the part of an AgentEvent the rules read; messages stay raw until needed.
type event struct {
	Type        string          `json:"type"`
	Message     json.RawMessage `json:"message"`
	Messages    json.RawMessage `json:"messages"`
	ToolResults json.RawMessage `json:"toolResults"`
	ToolCallID  *string         `json:"toolCallId"`
	ToolName    string          `json:"toolName"`
	Result      json.RawMessage `json:"result"`
	IsError     *bool           `json:"isError"`
	DurationMs  json.RawMessage `json:"durationMs"`
}

// eventChecker audits a stream of AgentEvents.
type eventChecker struct {
	report func(Finding)
	runs   int
	run    *runState
	decl   *declarations
	notes  []string
}

func newEventChecker(report func(Finding)) *eventChecker {
	return &eventChecker{report: report, decl: newDeclarations()}
}

type runState struct {
	start int
	turn  *turnState
	msg   *openMessage
	// sent are the messages ended in the run, in order.
	sent []sentMessage
	// failure is the line of the failed-run epilogue's message (the Agent's failure
	// message), 0 when none.
	failure       int
	failureDigest digest
}

type sentMessage struct {
	d    digest
	line int
	role string
}

type openMessage struct {
	line  int
	role  string
	start digest
}

type turnState struct {
	start int
	// response is the line of the turn's assistant message_end (0 before it).
	response   int
	respDigest digest
	stop       string
	calls      []*callState
	byID       map[string]*callState
	// results are the tool-result messages ended in the turn, in order.
	results []sentMessage
	// nextStart is the index of the next call expected to start.
	nextStart, nextResult int
	// stray tool ids already reported, so that one stray call gives one finding.
	stray map[string]bool
}

type callState struct {
	id, name                 string
	start, end, update       int
	executed                 bool
	endIsError               bool
	endContent, endDur       digest
	hasDur                   bool
	results                  int
	undeclared, undeclaredAt string
}

func (c *eventChecker) find(line int, rule, format string, args ...any) {
	c.report(Finding{Line: line, Rule: rule, Msg: fmt.Sprintf(format, args...)})
}

func (c *eventChecker) line(n int, data []byte) error {
	if typ, ok := topLevelType(data); ok && typ == "message_update" && json.Valid(data) {
		c.event(n, &event{Type: typ})
		return nil
	}
	var ev event
	if err := decodeLine(n, data, &ev); err != nil {
		return err
	}
	if ev.Type == "" {
		return &InputError{Line: n, Col: 1, Msg: `not an AgentEvent: no "type"`}
	}
	c.event(n, &ev)
	return nil
}

func (c *eventChecker) event(n int, ev *event) {
	switch ev.Type {
	case "agent_start":
		if c.run != nil {
			c.find(n, RuleGrammar, "agent_start inside the run from line %d, which has no agent_end", c.run.start)
		}
		c.runs++
		c.run = &runState{start: n}
		return
	case "agent_end", "turn_start", "turn_end", "message_start", "message_update", "message_end",
		"tool_execution_start", "tool_execution_update", "tool_execution_end":
	default:
		c.find(n, RuleGrammar, "unknown event type %q", ev.Type)
		return
	}
	if c.run == nil {
		c.find(n, RuleGrammar, "%s outside a run (no agent_start before it)", ev.Type)
		// Go on as if a run had started, so that one missing agent_start gives one finding.
		c.runs++
		c.run = &runState{start: n}
	}
	r := c.run
	switch ev.Type {
	case "agent_end":
		c.agentEnd(n, ev)
	case "turn_start":
		if r.turn != nil {
			c.find(n, RuleGrammar, "turn_start inside the turn from line %d, which has no turn_end", r.turn.start)
		}
		if r.msg != nil {
			c.find(n, RuleGrammar, "turn_start inside the %s message from line %d", r.msg.role, r.msg.line)
			r.msg = nil
		}
		r.turn = &turnState{start: n, byID: map[string]*callState{}}
	case "turn_end":
		c.turnEnd(n, ev)
	case "message_start", "message_update", "message_end":
		c.messageEvent(n, ev)
	default:
		c.toolEvent(n, ev)
	}
}

// isFailureMessage reports whether m is the Agent's failure message: an assistant message
// with stopReason error or aborted and an errorMessage, which the Agent emits (message_start,
// message_end, turn_end, agent_end) when the loop itself throws, wherever the run was.
func isFailureMessage(m *message) bool {
	return m.Role == "assistant" && !runsTools(m.StopReason) && m.ErrorMessage != ""
}

func (c *eventChecker) messageEvent(n int, ev *event) {
	r := c.run
	var m message
	if ev.Type != "message_update" {
		_ = json.Unmarshal(ev.Message, &m)
	}
	if ev.Type == "message_start" && isFailureMessage(&m) && isEpilogue(&m) {
		// The loop threw: the Agent's epilogue (message_start, message_end, turn_end,
		// agent_end of its failure message) abandons whatever message or turn was open.
		r.msg = nil
		r.failure = n
	} else if r.turn == nil && r.failure == 0 {
		c.find(n, RuleGrammar, "%s outside a turn", ev.Type)
	}
	switch ev.Type {
	case "message_start":
		if r.msg != nil {
			c.find(n, RuleGrammar, "message_start inside the %s message from line %d, which has no message_end", r.msg.role, r.msg.line)
		}
		r.msg = &openMessage{line: n, role: m.Role, start: digestOf(ev.Message)}
	case "message_update":
		if r.msg == nil {
			c.find(n, RuleGrammar, "message_update outside a message")
		} else if r.msg.role != "assistant" {
			c.find(n, RuleGrammar, "message_update inside the %s message from line %d (only an assistant message streams)", r.msg.role, r.msg.line)
		}
	case "message_end":
		d := digestOf(ev.Message)
		if r.msg == nil {
			c.find(n, RuleGrammar, "message_end with no message_start")
		} else {
			if r.msg.role != m.Role {
				c.find(n, RuleGrammar, "message_end of a %s message closes the %s message from line %d", m.Role, r.msg.role, r.msg.line)
			} else if m.Role != "assistant" && d != r.msg.start {
				c.find(n, RuleUnchanged, "the %s message ended differs from the one started at line %d", m.Role, r.msg.line)
			}
		}
		r.msg = nil
		r.sent = append(r.sent, sentMessage{d, n, m.Role})
		if r.failure != 0 && isFailureMessage(&m) {
			r.failureDigest = d
			if r.turn != nil {
				r.turn.response, r.turn.respDigest, r.turn.stop = n, d, m.StopReason
			}
			return
		}
		c.messageEnded(n, &m, d)
	}
}

// isEpilogue tells the Agent's failure message (content: one empty text) from a response
// that failed as a stream's would.
func isEpilogue(m *message) bool {
	var items []map[string]any
	if json.Unmarshal(m.Content, &items) != nil || len(items) != 1 {
		return false
	}
	return len(items[0]) == 2 && items[0]["type"] == "text" && items[0]["text"] == ""
}

// messageEnded applies an ended message to the turn and the transcript's declarations.
func (c *eventChecker) messageEnded(n int, m *message, d digest) {
	t := c.run.turn
	switch m.Role {
	case "system":
		c.decl.apply(m, n)
	case "assistant":
		if t == nil {
			return
		}
		if t.response != 0 {
			c.find(n, RuleGrammar, "a second assistant message in the turn from line %d (the first ended at line %d)", t.start, t.response)
		}
		t.response, t.respDigest, t.stop = n, d, m.StopReason
		for _, tc := range m.toolCalls() {
			cs := &callState{id: tc.id, name: tc.name}
			if why := c.decl.undeclared(tc.name); why != "" {
				cs.undeclared = why
			}
			if _, dup := t.byID[tc.id]; dup {
				c.find(n, RuleResults, "the response calls tool-call id %q twice", tc.id)
				continue
			}
			t.calls = append(t.calls, cs)
			t.byID[tc.id] = cs
		}
	case "toolResult":
		if t == nil {
			return
		}
		t.results = append(t.results, sentMessage{d, n, m.Role})
		cs := t.byID[m.ToolCallID]
		if cs == nil || !runsTools(t.stop) {
			c.find(n, RuleResults, "a tool-result message for %q, which the turn's response did not call", m.ToolCallID)
			return
		}
		cs.results++
		if cs.results > 1 {
			c.find(n, RuleResults, "a second tool-result message for call %q (%s)", cs.id, cs.name)
			return
		}
		if cs.end == 0 {
			c.find(n, RuleResults, "the tool-result message for call %q (%s) comes before its tool_execution_end", cs.id, cs.name)
		} else {
			if m.IsError != cs.endIsError || contentDigest(m.Content) != cs.endContent {
				c.find(n, RuleResults, "the tool-result message for call %q (%s) does not carry the result of its tool_execution_end at line %d", cs.id, cs.name, cs.end)
			}
			if (len(m.DurationMs) > 0) != cs.hasDur || (cs.hasDur && digestOf(m.DurationMs) != cs.endDur) {
				c.find(n, RuleResults, "the tool-result message for call %q (%s) has another durationMs than its tool_execution_end at line %d", cs.id, cs.name, cs.end)
			}
		}
		if want := t.calls[min(t.nextResult, len(t.calls)-1)]; want != cs {
			c.find(n, RuleResults, "the tool-result message for call %q comes before the one for %q: results follow the calls' source order", cs.id, want.id)
		}
		for t.nextResult < len(t.calls) && t.calls[t.nextResult].results > 0 {
			t.nextResult++
		}
	}
}

// toolEvent checks a tool_execution_* event against the calls of its turn's response.
func (c *eventChecker) toolEvent(n int, ev *event) {
	t := c.run.turn
	if t == nil {
		c.find(n, RuleGrammar, "%s outside a turn", ev.Type)
		return
	}
	id := ""
	if ev.ToolCallID != nil {
		id = *ev.ToolCallID
	}
	cs := t.byID[id]
	if t.response == 0 || cs == nil || !runsTools(t.stop) {
		c.strayToolEvent(n, ev, t, id)
		return
	}
	switch ev.Type {
	case "tool_execution_start":
		c.toolStart(n, t, cs)
	case "tool_execution_update":
		c.toolUpdate(n, t, cs)
	case "tool_execution_end":
		c.toolEnd(n, ev, t, cs)
	}
}

// strayToolEvent reports, once per call ID, a tool event of a call the turn's response did
// not make or does not run.
func (c *eventChecker) strayToolEvent(n int, ev *event, t *turnState, id string) {
	if t.stray == nil {
		t.stray = map[string]bool{}
	}
	if t.stray[id] {
		return
	}
	t.stray[id] = true
	switch {
	case t.response == 0:
		c.find(n, RuleResults, "%s for %q before the turn's response ended", ev.Type, id)
	case !runsTools(t.stop):
		c.find(n, RuleResults, "%s for %q: the response stopped with %s, so nothing runs", ev.Type, id, t.stop)
	default:
		c.find(n, RuleResults, "%s for %q, which the turn's response did not call", ev.Type, id)
	}
}

// toolStart checks a call's tool_execution_start: once, and in source order.
func (c *eventChecker) toolStart(n int, t *turnState, cs *callState) {
	if cs.start != 0 {
		c.find(n, RuleGrammar, "a second tool_execution_start for call %q (the first at line %d)", cs.id, cs.start)
		return
	}
	cs.start = n
	if want := t.calls[t.nextStart]; want != cs {
		c.find(n, RuleResults, "call %q starts before %q: calls start in source order", cs.id, want.id)
	}
	for t.nextStart < len(t.calls) && t.calls[t.nextStart].start != 0 {
		t.nextStart++
	}
}

// toolUpdate checks a call's tool_execution_update: between its start and its end, and
// never for a call of a length-stopped response.
func (c *eventChecker) toolUpdate(n int, t *turnState, cs *callState) {
	switch {
	case cs.start == 0:
		c.find(n, RuleGrammar, "tool_execution_update for call %q before its tool_execution_start", cs.id)
	case cs.end != 0:
		c.find(n, RuleGrammar, "tool_execution_update for call %q after its tool_execution_end at line %d", cs.id, cs.end)
	}
	if cs.update == 0 {
		cs.update = n
	}
	if t.stop == "length" && cs.update == n {
		c.find(n, RuleTruncation, "call %q (%s) of a length-stopped response reports progress: it was executed", cs.id, cs.name)
	}
}

// toolEnd checks a call's tool_execution_end and records its result: a call of a
// length-stopped response ends with the truncation error, unexecuted.
func (c *eventChecker) toolEnd(n int, ev *event, t *turnState, cs *callState) {
	if cs.start == 0 {
		c.find(n, RuleGrammar, "tool_execution_end for call %q with no tool_execution_start", cs.id)
	}
	if cs.end != 0 {
		c.find(n, RuleGrammar, "a second tool_execution_end for call %q (the first at line %d)", cs.id, cs.end)
		return
	}
	cs.end = n
	var res struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(ev.Result, &res)
	cs.endContent = contentDigest(res.Content)
	cs.endIsError = ev.IsError != nil && *ev.IsError
	cs.hasDur = len(ev.DurationMs) > 0 && string(ev.DurationMs) != "null"
	if cs.hasDur {
		cs.endDur = digestOf(ev.DurationMs)
	}
	cs.executed = cs.hasDur || cs.update != 0
	if t.stop == "length" {
		want := loop.TruncatedToolCallText(cs.name)
		switch {
		case cs.hasDur:
			c.find(n, RuleTruncation, "call %q (%s) of a length-stopped response has a durationMs: it was executed", cs.id, cs.name)
		case !cs.endIsError || firstText(res.Content) != want:
			c.find(n, RuleTruncation, "call %q (%s) of a length-stopped response ends without the truncation error (isError %v, text %q)", cs.id, cs.name, cs.endIsError, firstText(res.Content))
		}
	}
	if cs.undeclared != "" && cs.executed {
		c.find(n, RuleReplay, "tool %q was executed for call %q, but %s", cs.name, cs.id, cs.undeclared)
	}
}

func (c *eventChecker) turnEnd(n int, ev *event) {
	r := c.run
	t := r.turn
	var m message
	_ = json.Unmarshal(ev.Message, &m)
	if t == nil {
		if r.failure == 0 {
			c.find(n, RuleGrammar, "turn_end with no turn_start")
		} else if digestOf(ev.Message) != r.failureDigest {
			c.find(n, RuleUnchanged, "turn_end carries another message than the failure message ended at line %d", r.failure)
		}
		return
	}
	if r.msg != nil {
		c.find(n, RuleGrammar, "turn_end inside the %s message from line %d", r.msg.role, r.msg.line)
		r.msg = nil
	}
	r.turn = nil
	if t.response == 0 {
		c.find(n, RuleGrammar, "turn_end of a turn with no assistant message")
		return
	}
	if digestOf(ev.Message) != t.respDigest {
		c.find(n, RuleUnchanged, "turn_end carries another message than the turn's response, ended at line %d", t.response)
	}
	var results []json.RawMessage
	_ = json.Unmarshal(ev.ToolResults, &results)
	if r.failure != 0 {
		return
	}
	for _, cs := range t.calls {
		if !runsTools(t.stop) {
			break
		}
		switch {
		case cs.start == 0:
			c.find(n, RuleResults, "call %q (%s) of the response at line %d never started", cs.id, cs.name, t.response)
		case cs.end == 0:
			c.find(n, RuleResults, "call %q (%s) started at line %d never ended", cs.id, cs.name, cs.start)
		case cs.results == 0:
			c.find(n, RuleResults, "call %q (%s) ended at line %d has no tool-result message", cs.id, cs.name, cs.end)
		}
	}
	if len(results) != len(t.results) {
		c.find(n, RuleUnchanged, "turn_end carries %d tool results, the turn ended %d tool-result %s", len(results), len(t.results), plural(len(t.results), "message", "messages"))
		return
	}
	for i, raw := range results {
		if digestOf(raw) != t.results[i].d {
			c.find(n, RuleUnchanged, "turn_end's tool result %d differs from the message ended at line %d", i+1, t.results[i].line)
			return
		}
	}
}

func (c *eventChecker) agentEnd(n int, ev *event) {
	r := c.run
	c.run = nil
	if r.msg != nil {
		c.find(n, RuleGrammar, "agent_end inside the %s message from line %d", r.msg.role, r.msg.line)
	}
	if r.turn != nil {
		c.find(n, RuleGrammar, "agent_end inside the turn from line %d, which has no turn_end", r.turn.start)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(ev.Messages, &msgs); err != nil {
		c.find(n, RuleGrammar, "agent_end without its messages")
		return
	}
	want := r.sent
	if r.failure != 0 {
		// The Agent's epilogue reports only its failure message.
		want = []sentMessage{{d: r.failureDigest, line: r.failure, role: "assistant"}}
	}
	if len(msgs) != len(want) {
		c.find(n, RuleUnchanged, "agent_end carries %d messages, the run ended %d", len(msgs), len(want))
		return
	}
	for i, raw := range msgs {
		if digestOf(raw) != want[i].d {
			c.find(n, RuleUnchanged, "agent_end's message %d differs from the %s message ended at line %d", i+1, want[i].role, want[i].line)
			return
		}
	}
}

func (c *eventChecker) end() (int, []string) {
	if c.run != nil {
		c.notes = append(c.notes, fmt.Sprintf("the recording ends inside the run from line %d (a run still going, or a recording cut short): its end is not judged", c.run.start))
	}
	return c.runs, sortedNotes(c.notes)
}

// traceChecker audits the loop events of a turnstile trace, its linear form's links restored
// entry by entry (an event may leave out a message an earlier entry holds).
type traceChecker struct {
	events *eventChecker
	x      *trace.Expander
}

func (c *traceChecker) line(n int, data []byte) error {
	var e trace.Entry
	if err := decodeLine(n, data, &e); err != nil {
		return err
	}
	if c.x == nil {
		c.x = trace.NewExpander()
	}
	e, err := c.x.Next(e)
	if err != nil {
		return &InputError{Line: n, Col: 1, Msg: err.Error()}
	}
	if e.Kind != "event" {
		return nil
	}
	var ev event
	if err := json.Unmarshal(e.Data, &ev); err != nil || ev.Type == "" {
		return &InputError{Line: n, Col: 1, Msg: "an event entry whose data is not an AgentEvent"}
	}
	c.events.event(n, &ev)
	return nil
}

func (c *traceChecker) end() (int, []string) { return c.events.end() }

// contentDigest is the digest of a result's content, a missing or null content counting as
// [] (pi's tool-result message carries [] for a tool that returned content null).
func contentDigest(raw json.RawMessage) digest {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("[]")
	}
	return digestOf(raw)
}

// topLevelType finds the value of the object's top-level "type" member without decoding the
// rest (ok false when the line is not an object with a plain string "type"). Lines are
// mostly message_update events carrying a whole partial message; reading their type alone
// halves the audit's time.
func topLevelType(data []byte) (string, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return "", false
		}
		kStart := i + 1
		kEnd, plain := scanString(data, i)
		if kEnd < 0 {
			return "", false
		}
		i = skipSpace(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return "", false
		}
		i = skipSpace(data, i+1)
		if plain && string(data[kStart:kEnd-1]) == "type" {
			if i >= len(data) || data[i] != '"' {
				return "", false
			}
			vEnd, vPlain := scanString(data, i)
			if vEnd < 0 || !vPlain {
				return "", false
			}
			return string(data[i+1 : vEnd-1]), true
		}
		if i = skipValue(data, i); i < 0 {
			return "", false
		}
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != ',' {
			return "", false
		}
		i++
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// scanString returns the index after the string starting at data[i] (a quote), and whether
// it has no escapes; -1 when it does not end.
func scanString(data []byte, i int) (int, bool) {
	plain := true
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			plain = false
			j++
		case '"':
			return j + 1, plain
		}
	}
	return -1, false
}

// skipValue returns the index after the JSON value starting at data[i], -1 when it does
// not end (it does not validate the value: json.Valid does).
func skipValue(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			end, _ := scanString(data, i)
			if end < 0 {
				return -1
			}
			i = end
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	if depth == 0 {
		return i
	}
	return -1
}
