// Package audit checks a recording of a real agent run — pi's AgentEvents as an app logs them
// (agent.subscribe, one JSON event a line), a pi session file (JSONL, pi-coding-agent's
// format), or a turnstile trace — against every rule that needs no knowledge of the world
// the run happened in. It reads the recording as a stream: memory grows with the messages of
// one run (32 bytes each) and the longest line, never with the recording's length.
//
// README.md in this folder lists the rules, which of turnstile's invariants can and cannot be
// judged from a recording, and why.
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Rule names.
const (
	// RuleGrammar: the shape of the event stream (runs, turns, messages, tool events).
	RuleGrammar = "grammar"
	// RuleResults: every tool call of a response gets exactly one start, one end and one
	// tool-result message, in order, carrying the end's result; no other tool events.
	RuleResults = "results"
	// RuleTruncation: no call of a length-stopped response is executed; each gets the
	// truncation error.
	RuleTruncation = "truncation"
	// RuleReplay: no tool the transcript had removed (or, when the transcript declares the
	// whole tool set, never declared) is executed.
	RuleReplay = "replay"
	// RuleUnchanged: nothing sent is ever edited: every later copy of a message equals the
	// message as it was ended (turn_end, agent_end, a session entry's id).
	RuleUnchanged = "unchanged"
	// RuleSession: the session file's own structure (header, ids, parents).
	RuleSession = "session"
)

// Rule is a rule a recording is checked against.
type Rule struct {
	Name, Doc string
}

// Rules lists the rules, in a fixed order.
func Rules() []Rule {
	return []Rule{
		{RuleGrammar, "Events: every run starts with agent_start and ends with one agent_end; nothing outside a run; turn_start and turn_end alternate; message and tool events only inside a turn; messages open and close one at a time with the same role; message_update only inside an assistant message; per tool-call id one tool_execution_start and one tool_execution_end, updates between them."},
		{RuleResults, "Every tool call of a response that did not stop with error or aborted starts (in source order), ends, and gets exactly one tool-result message (in source order, after its end) with the end's content, isError and durationMs, before turn_end; a response that stopped with error or aborted runs nothing; no tool event or result for a call the response did not make. Session files: every call gets one result before the next assistant message."},
		{RuleTruncation, "A response with stopReason length never runs its tool calls: each ends with isError, no durationMs, no update, and exactly pi's truncation text."},
		{RuleReplay, "Tool declarations replay from the transcript's system messages (toolsAdded, toolsRemoved): a tool the transcript removed and did not add again is never executed (its call gets an error without durationMs); when the transcript declared the tool set from its start (a session whose first message is a system message with toolsAdded), neither is a tool it never declared."},
		{RuleUnchanged, "Nothing sent is ever edited: a message's message_end equals its message_start (but for an assistant's, which streams), turn_end carries the turn's assistant message and tool results as they were ended, agent_end carries every message the run ended, in order; a session entry id is never written twice."},
		{RuleSession, "Session files: a header line first ({type: session, id}); every entry has a type, a unique id and a parentId that is null or an entry before it."},
	}
}

// Finding is a place where a recording breaks a rule.
type Finding struct {
	// Line is the 1-based line of the recording the finding points at.
	Line int
	Rule string
	Msg  string
}

func (f Finding) String() string { return fmt.Sprintf("line %d: %s: %s", f.Line, f.Rule, f.Msg) }

// Format is the kind of recording.
type Format string

// Recording formats.
const (
	// Events is JSON lines of pi AgentEvents.
	Events Format = "pi events"
	// Session is a pi-coding-agent session file.
	Session Format = "pi session"
	// Trace is a turnstile trace (canonical JSON lines); its loop events are audited.
	Trace Format = "turnstile trace"
)

// Summary is what an audit saw besides its findings.
type Summary struct {
	Format Format
	Lines  int
	// Runs counts the runs (events, traces) or message entries (sessions) audited.
	Runs int
	// Notes say what could not be judged (a recording that ends inside a run, a branch).
	Notes []string
}

// InputError is a recording that cannot be read: the line and column (1-based, in bytes)
// of what could not be read.
type InputError struct {
	Line, Col int
	Msg       string
}

func (e *InputError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// DefaultMaxLine is the longest line Check reads (an agent_end carrying a long run's messages
// can be large).
const DefaultMaxLine = 64 << 20

// Options tune Check.
type Options struct {
	// MaxLine is the longest line accepted, in bytes (DefaultMaxLine when 0); a longer one is
	// an input error.
	MaxLine int
}

// Check reads a recording, detects its format from its first line, and reports each finding
// to report as it finds it. It returns an *InputError when the recording cannot be read.
func Check(r io.Reader, opts Options, report func(Finding)) (Summary, error) {
	maxLine := opts.MaxLine
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	br := bufio.NewReaderSize(r, 1<<20)
	var sum Summary
	var ck checker
	var buf []byte
	for {
		line, err := readLine(br, buf[:0], maxLine)
		buf = line
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errLong) {
				return sum, &InputError{Line: sum.Lines + 1, Col: maxLine + 1, Msg: fmt.Sprintf("line longer than %d bytes (--max-line)", maxLine)}
			}
			var no *notObjectError
			if errors.As(err, &no) {
				return sum, &InputError{Line: sum.Lines + 1, Col: no.col, Msg: fmt.Sprintf("not a JSON object: the line starts with %q (a recording holds one JSON object a line)", no.b)}
			}
			return sum, fmt.Errorf("reading line %d: %w", sum.Lines+1, err)
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		sum.Lines++
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 {
			if ck == nil {
				ck = detect(trimmed, report)
				switch ck.(type) {
				case *sessionChecker:
					sum.Format = Session
				case *traceChecker:
					sum.Format = Trace
				default:
					sum.Format = Events
				}
			}
			if ierr := ck.line(sum.Lines, line); ierr != nil {
				return sum, ierr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if ck == nil {
		return sum, &InputError{Line: 1, Col: 1, Msg: "empty recording"}
	}
	sum.Runs, sum.Notes = ck.end()
	return sum, nil
}

var errLong = errors.New("line too long")

// notObjectError is a line whose first byte other than a blank cannot begin a JSON object:
// the line is refused without reading the rest of it (/dev/zero has no end).
type notObjectError struct {
	col int
	b   string
}

func (e *notObjectError) Error() string { return fmt.Sprintf("not a JSON object at column %d", e.col) }

// readLine reads one line (without its newline) into buf, up to max bytes.
func readLine(br *bufio.Reader, buf []byte, max int) ([]byte, error) {
	begun := false // a byte other than a blank was read
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max+1 {
			// Skip the rest of the line so that the error is the only outcome.
			return buf, errLong
		}
		if !begun {
			if j := bytes.IndexFunc(chunk, notBlank); j >= 0 {
				if chunk[j] != '{' {
					r, _ := utf8.DecodeRune(chunk[j:])
					return buf, &notObjectError{col: len(buf) + j + 1, b: string(r)}
				}
				begun = true
			}
		}
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if n := len(buf); n > 0 && buf[n-1] == '\n' {
			buf = buf[:n-1]
			if n := len(buf); n > 0 && buf[n-1] == '\r' {
				buf = buf[:n-1]
			}
		}
		return buf, err
	}
}

// notBlank reports whether r is anything but JSON's white space.
func notBlank(r rune) bool { return r != ' ' && r != '\t' && r != '\r' && r != '\n' }

// checker audits one format, line by line.
type checker interface {
	// line checks one non-blank line; an *InputError when it cannot be read.
	line(n int, data []byte) error
	// end finishes the audit: runs (or entries) seen and notes.
	end() (int, []string)
}

func detect(first []byte, report func(Finding)) checker {
	var probe struct {
		Type string `json:"type"`
		Kind string `json:"kind"`
		Seq  *int   `json:"seq"`
	}
	_ = json.Unmarshal(first, &probe)
	switch {
	case probe.Type == "session":
		return &sessionChecker{report: report, ids: map[string]idInfo{}}
	case probe.Kind != "" && probe.Seq != nil:
		return &traceChecker{events: newEventChecker(report)}
	}
	return newEventChecker(report)
}

// decodeLine decodes one line into v, turning a syntax error into an *InputError with its
// column.
func decodeLine(n int, data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		col := column(data, int(se.Offset))
		if strings.HasPrefix(se.Error(), "unexpected end") {
			col = len(data) + 1
		}
		return &InputError{Line: n, Col: col, Msg: "invalid JSON: " + se.Error() + " (a recording holds one JSON object a line)"}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		col := column(data, int(te.Offset))
		what := "a JSON object"
		if te.Field != "" {
			what = "field " + te.Field + " of type " + te.Type.String()
		}
		return &InputError{Line: n, Col: col, Msg: fmt.Sprintf("expected %s, found a JSON %s", what, te.Value)}
	}
	return &InputError{Line: n, Col: 1, Msg: err.Error()}
}

// column is the 1-based column of byte offset off (the offset after the offending byte, as
// encoding/json reports it), at least 1.
func column(data []byte, off int) int {
	if off < 1 {
		return 1
	}
	if off > len(data) {
		return len(data) + 1
	}
	return off
}

// digest is a message's identity: the SHA-256 of its JSON text without insignificant
// space. Every copy of a message that a logger writes has the same key order (JSON.stringify
// keeps the object's own order), so equal messages have equal digests; a recording whose
// copies of a message order their keys differently reads as an edit.
type digest [32]byte

var compactBuf = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func digestOf(raw json.RawMessage) digest {
	buf := compactBuf.Get().(*bytes.Buffer)
	defer compactBuf.Put(buf)
	buf.Reset()
	if json.Compact(buf, raw) != nil {
		return sha256.Sum256(raw)
	}
	return sha256.Sum256(buf.Bytes())
}

// message is the part of an AgentMessage the rules read.
type message struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	StopReason   string          `json:"stopReason"`
	ErrorMessage string          `json:"errorMessage"`
	ToolCallID   string          `json:"toolCallId"`
	ToolName     string          `json:"toolName"`
	IsError      bool            `json:"isError"`
	DurationMs   json.RawMessage `json:"durationMs"`
	ToolsAdded   []struct {
		Name string `json:"name"`
	} `json:"toolsAdded"`
	ToolsRemoved []struct {
		Name string `json:"name"`
	} `json:"toolsRemoved"`
}

// toolCalls returns an assistant message's tool calls, in source order.
func (m *message) toolCalls() []toolCallRef {
	var items []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	_ = json.Unmarshal(m.Content, &items)
	var out []toolCallRef
	for _, it := range items {
		if it.Type == "toolCall" {
			out = append(out, toolCallRef{it.ID, it.Name})
		}
	}
	return out
}

// runsTools reports whether the loop runs the calls of a response with this stop reason.
func runsTools(stopReason string) bool { return stopReason != "error" && stopReason != "aborted" }

type toolCallRef struct{ id, name string }

// firstText is the text of the first text item of a content list ("" when none).
func firstText(content json.RawMessage) string {
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &items) != nil {
		var s string
		if json.Unmarshal(content, &s) == nil {
			return s
		}
		return ""
	}
	for _, it := range items {
		if it.Type == "text" {
			return it.Text
		}
	}
	return ""
}

// declarations tracks the tool set the transcript declares (system messages' toolsAdded and
// toolsRemoved).
type declarations struct {
	// complete: the transcript declared the tool set from its start, so declared is the
	// whole set.
	complete bool
	declared map[string]bool
	// removed maps a tool the transcript removed (and did not add again) to the line.
	removed map[string]int
}

func newDeclarations() *declarations {
	return &declarations{declared: map[string]bool{}, removed: map[string]int{}}
}

func (d *declarations) apply(m *message, line int) {
	for _, t := range m.ToolsRemoved {
		delete(d.declared, t.Name)
		d.removed[t.Name] = line
	}
	for _, t := range m.ToolsAdded {
		d.declared[t.Name] = true
		delete(d.removed, t.Name)
	}
}

// undeclared says why a tool may not run ("" when it may, as far as the recording tells).
func (d *declarations) undeclared(name string) string {
	if at, ok := d.removed[name]; ok {
		return fmt.Sprintf("the transcript removed it at line %d", at)
	}
	if d.complete && !d.declared[name] {
		return "the transcript never declared it"
	}
	return ""
}

// sortedNotes returns notes sorted for stable output.
func sortedNotes(notes []string) []string {
	sort.Strings(notes)
	return notes
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func quoteList(names []string) string { return strings.Join(names, ", ") }
