// Package protocol is the wire between the harness and a loop in any language: JSON lines
// over the implementation's stdin and stdout (Message, the schema, conformance/PROTOCOL.md),
// Process (an implementation reached through them, restarted when it dies), Pool (processes
// lent to parallel runs), Shortcuts (what the exchange may skip), and Serve (the reference
// loop served over them). Package conformance verifies what runs over it.
package protocol

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// ProtocolVersion is the newest version of the wire protocol this package speaks; it speaks
// every version from 1 (Protocols).
const ProtocolVersion = 2

// Protocols are the versions this package speaks, offered in the harness's hello. The hello's
// protocol field stays 1, which adapters written for version 1 check (PROTOCOL.md §13.1).
var Protocols = []int{1, 2}

// DefaultMaxLine is the longest line, in bytes, either side accepts unless told otherwise.
const DefaultMaxLine = 16 << 20

// Tracks is the pi version whose behaviour the reference loop reproduces.
const Tracks = "1.6.0"

// Message types, harness to implementation.
const (
	TypeHello    = "hello"
	TypeStart    = "start"
	TypeAnswer   = "answer"
	TypeDeliver  = "deliver"
	TypeStop     = "stop"
	TypeShutdown = "shutdown"
)

// Message types, implementation to harness (hello too).
const (
	TypeCall    = "call"
	TypeNotify  = "notify"
	TypeIdle    = "idle"
	TypeStopped = "stopped"
	TypeError   = "error"
)

// AllHooks lists every hook the port knows, by pi's names.
var AllHooks = []string{
	trace.HookConvertToLLM, trace.HookTransformContext, trace.HookGetAPIKey, trace.HookPrepareRequest,
	trace.HookPrepareNextTurn, trace.HookFinishTurn, trace.HookSteering, trace.HookFollowUp,
	trace.HookBeforeToolCall, trace.HookAfterToolCall,
}

// Message is one line of the protocol, in either direction. Type says which other fields
// are set; the others are left out of its JSON.
type Message struct {
	Type string `json:"type"`

	// hello
	Protocol int `json:"protocol,omitempty"`
	// Protocols is every version the harness speaks (its hello only, from version 2).
	Protocols    []int         `json:"protocols,omitempty"`
	Name         string        `json:"name,omitempty"`
	Version      string        `json:"version,omitempty"`
	Tracks       string        `json:"tracks,omitempty"`
	Capabilities *Capabilities `json:"capabilities,omitempty"`

	// call, answer
	ID int64 `json:"id,omitempty"`
	// Session numbers the scenario a message belongs to (start, deliver, stop, call, notify,
	// idle, stopped; optional on error).
	Session int `json:"session,omitempty"`

	Setup *sim.Setup `json:"setup,omitempty"`
	// StandingAnswers, on a start, are the answers the world promises to every call of some
	// hooks for the whole session, by hook name (PROTOCOL.md §15); only to an implementation
	// whose hello says standingAnswers.
	StandingAnswers map[string]json.RawMessage `json:"standingAnswers,omitempty"`
	Call            *sim.Call                  `json:"call,omitempty"`
	// Standing, on a call, says the implementation took the hook's standing answer and waits
	// for none (§15).
	Standing     bool              `json:"standing,omitempty"`
	Notification *sim.Notification `json:"notification,omitempty"`
	Delivery     *sim.Delivery     `json:"delivery,omitempty"`

	// answer: Data, or Error when the call fails.
	Data  json.RawMessage `json:"data,omitempty"`
	Error string          `json:"error,omitempty"`
	// Abort, on an answer, aborts the run before the hook returns (protocol 2, §13.5).
	Abort bool `json:"abort,omitempty"`
	// Wait, on an answer, names the hookReturn delivery at which the hook returns it;
	// UntilAbort makes it return once the signal the loop gave the hook fires (protocol 2,
	// §13.6).
	Wait       string `json:"wait,omitempty"`
	UntilAbort bool   `json:"untilAbort,omitempty"`

	// error
	Message string `json:"message,omitempty"`

	// streamModel is what encoding/json reads of a stream call's data.model, when the line's
	// decoding could tell it for certain (streamModelOf); nil otherwise.
	streamModel *sim.ModelSetup
}

// Capabilities is what an implementation says it supports in its hello.
type Capabilities struct {
	// Hooks lists the hooks it can install, by pi's names.
	Hooks []string `json:"hooks"`
	// Lacks lists the optional features (sim.Features) it does not support; optional.
	Lacks []string `json:"lacks,omitempty"`
	// Follows lists pi's conventions (levels.Conventions, by rule id) it follows: at core
	// level those are judged too; optional.
	Follows []string `json:"follows,omitempty"`
	// DeliveriesAhead says it takes deliveries before it is idle, queueing each until it is
	// (PROTOCOL.md §14); optional.
	DeliveriesAhead bool `json:"deliveriesAhead,omitempty"`
	// StandingAnswers says it takes the answers a start promises to every call of a hook,
	// making those calls without waiting for their answers (PROTOCOL.md §15); optional.
	StandingAnswers bool `json:"standingAnswers,omitempty"`
}

// Hello is an implementation's introduction.
type Hello struct {
	Name    string
	Version string
	// Tracks is the pi version whose behaviour it claims.
	Tracks string
	Hooks  []string
	// Lacks lists the optional features (sim.Features, docs/SEMANTICS.md) it does not
	// support: the scenarios needing one are skipped.
	Lacks []string
	// Follows lists the conventions of pi it follows (rule ids, levels.Conventions): judged at
	// core level too.
	Follows []string
	// Protocol is the protocol version it speaks; below 2 (0 included: a Go port written
	// before version 2) it lacks sim.ProtocolTwoFeatures too.
	Protocol int
	// DeliveriesAhead says it takes deliveries before it is idle (PROTOCOL.md §14): the
	// harness then sends those certain to come next without waiting for each idle.
	DeliveriesAhead bool
	// StandingAnswers says it takes standing answers (PROTOCOL.md §15): the harness then
	// tells it, at each start, the answers the world promises to every call of a hook, and
	// answers none of the calls it marks standing.
	StandingAnswers bool
}

// Lacking is every optional feature the implementation lacks: Lacks, and the features of
// protocol version 2 when it speaks an earlier one.
func (h Hello) Lacking() []string {
	if h.Protocol >= 2 {
		return h.Lacks
	}
	out := slices.Clone(h.Lacks)
	for _, f := range sim.ProtocolTwoFeatures {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// encode renders m as one protocol line, newline included.
func encode(m Message) ([]byte, error) {
	if line, ok := callOrNotifyLine(&m); ok {
		return line, nil
	}
	line, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s message: %w", m.Type, err)
	}
	return append(line, '\n'), nil
}

// answerLine renders an answer; a successful answer always carries data (null when the world
// gave none) so that an adapter can tell it from a failure by the presence of "error". The
// world writes its data as canonical JSON, which goes on the line as it is.
func answerLine(id int64, a sim.Answer) ([]byte, error) {
	if a.Error != "" {
		return encode(Message{Type: TypeAnswer, ID: id, Error: a.Error, Abort: a.Abort, Wait: a.Wait, UntilAbort: a.UntilAbort})
	}
	data := a.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	line := make([]byte, 0, len(data)+64)
	line = append(line, `{"type":"answer","id":`...)
	line = strconv.AppendInt(line, id, 10)
	line = append(line, `,"data":`...)
	line = append(line, data...)
	if a.Abort {
		line = append(line, `,"abort":true`...)
	}
	if a.Wait != "" {
		line = append(line, `,"wait":`...)
		line = strconv.AppendQuote(line, a.Wait) // the world's own h1, h2, …: plain ASCII
	}
	if a.UntilAbort {
		line = append(line, `,"untilAbort":true`...)
	}
	return append(line, "}\n"...), nil
}

// deliverLine renders a delivery of a session; its data, canonical JSON from the world, goes
// on the line as it is.
func deliverLine(session int, d *sim.Delivery) ([]byte, error) {
	if len(d.Data) == 0 {
		return encode(Message{Type: TypeDeliver, Session: session, Delivery: d})
	}
	line := make([]byte, 0, len(d.Data)+len(d.Kind)+len(d.Target)+96)
	line = append(line, `{"type":"deliver","session":`...)
	line = strconv.AppendInt(line, int64(session), 10)
	line = append(line, `,"delivery":{"kind":`...)
	line = jsonvalue.AppendString(line, d.Kind)
	line = append(line, `,"now":`...)
	line = strconv.AppendInt(line, d.Now, 10)
	if d.Target != "" {
		line = append(line, `,"target":`...)
		line = jsonvalue.AppendString(line, d.Target)
	}
	line = append(line, `,"data":`...)
	line = append(line, d.Data...)
	return append(line, "}}\n"...), nil
}

//go:embed protocol.schema.json
var schemaJSON []byte

// SchemaJSON returns the JSON Schema of the implementation-to-harness messages.
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

func compiledSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
		if err != nil {
			schemaErr = fmt.Errorf("protocol schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		const url = "protocol.schema.json"
		if err := c.AddResource(url, doc); err != nil {
			schemaErr = fmt.Errorf("protocol schema: %w", err)
			return
		}
		schema, schemaErr = c.Compile(url)
	})
	return schema, schemaErr
}

// expectedShapes sums up, per message type, what the schema wants: the first part of an
// explanation for a message that does not match it.
var expectedShapes = map[string]string{
	TypeHello: `{"type":"hello","protocol":1,"name":"…","version":"…","tracks":"1.6.0","capabilities":{"hooks":["…"]}}`,
	TypeCall: `{"type":"call","id":<integer ≥ 1>,"session":<integer>,"call":{"kind":"stream"|"tool"|"hook","name":<hook name, for hooks>,"data":{…}}}` +
		` with data {model,messages,thinkingLevel,apiKey} for stream, {toolCallId,toolName,args} for tool, the hook's argument for hook; "standing":true or nothing (PROTOCOL.md §15)`,
	TypeNotify:  `{"type":"notify","session":<integer>,"notification":{"kind":"event"|"end","data":<a pi event, or {messages} / {error}>}}`,
	TypeIdle:    `{"type":"idle","session":<integer>}`,
	TypeStopped: `{"type":"stopped","session":<integer>}`,
	TypeError:   `{"type":"error","message":"…"}`,
}

// ParseMessage decodes one line from an implementation and checks it against the protocol
// schema. A line that is not a well-formed message gets an error saying what was expected
// and what came.
func ParseMessage(line []byte) (Message, error) { return parseMessage(line, nil, false) }

// parseMessage is ParseMessage reading the messages of a line through memo (nil: none); with
// ownLine the message may keep the line (decodeWire).
func parseMessage(line []byte, memo *wireMemo, ownLine bool) (Message, error) {
	// The lines of a run decode in one pass; any other line as before.
	var m Message
	inst, decoded, fast := decodeWire(line, memo, ownLine)
	var err error
	if !fast {
		inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(line))
	}
	if err != nil {
		hint := ""
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '{' {
			hint = " (stdout carries protocol messages only; was this line meant for stderr?)"
		}
		return m, fmt.Errorf("not JSON%s: %s", hint, excerpt(line))
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return m, fmt.Errorf("expected a JSON object with a \"type\", got: %s", excerpt(line))
	}
	typ, _ := obj["type"].(string)
	// The schema validator costs about as much as the rest of the harness: a line the plain
	// check accepts is one the schema accepts, and only the others are put to the schema,
	// which gives the verdict and the explanation.
	if !conforms(inst) {
		sch, err := compiledSchema()
		if err != nil {
			return m, err
		}
		if err := sch.Validate(inst); err != nil {
			want, known := expectedShapes[typ]
			if !known {
				return m, fmt.Errorf("expected a message whose \"type\" is one of hello, call, notify, idle, stopped, error; got: %s", excerpt(line))
			}
			return m, &schemaError{text: fmt.Sprintf("a %q message does not match the protocol schema: %s\n  expected: %s\n  got: %s", typ, explain(err), want, excerpt(line)),
				data: dataOnly(err), explanation: explain(err)}
		}
	}
	if fast {
		return decoded, nil
	}
	if err := json.Unmarshal(line, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") && (te.Type.Kind() == reflect.Int || te.Type.Kind() == reflect.Int64) {
			// The schema takes any integer (1e30, 1e3); the harness reads int64 digits.
			return m, fmt.Errorf("a %q message: %q is %s, which is not a plain whole number from 1 to %d (write ids and sessions as digits): %s",
				typ, te.Field, strings.TrimSpace(strings.TrimPrefix(te.Value, "number")), math.MaxInt64, excerpt(line))
		}
		return m, fmt.Errorf("a %q message: %v: %s", typ, err, excerpt(line))
	}
	// encoding/json folds case: only "standing" itself marks a call standing (§15).
	m.Standing = obj["standing"] == true
	return m, nil
}

// schemaError is a line that does not match the protocol schema. data says every
// violation lies inside a notification's or call's data (pi's shapes, not the protocol's
// envelope): such a line can still be read, and is (Process.decode).
type schemaError struct {
	text        string
	data        bool
	explanation string
}

func (e *schemaError) Error() string { return e.text }

// dataOnly reports whether every leaf of a schema error lies in /notification/data or
// /call/data.
func dataOnly(err error) bool {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	ok := true
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			ok = ok && len(loc) >= 2 && (loc[0] == "notification" || loc[0] == "call") && loc[1] == "data"
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return ok
}

// shapeProblem says what of a notification's or call's data does not match pi's shape, the
// same words served (the harness reading the line) and in-process (Test checking what the
// port emits); "" when it matches.
func shapeProblem(line []byte) string {
	_, err := parseMessage(line, nil, false)
	var se *schemaError
	if !errors.As(err, &se) || !se.data {
		return ""
	}
	var head struct {
		Type         string `json:"type"`
		Notification *struct {
			Kind string `json:"kind"`
			Data struct {
				Type string `json:"type"`
			} `json:"data"`
		} `json:"notification"`
		Call *struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"call"`
	}
	_ = json.Unmarshal(line, &head)
	what := "a message"
	switch {
	case head.Notification != nil && head.Notification.Kind == sim.NotifyEvent:
		what = "event " + head.Notification.Data.Type
	case head.Notification != nil:
		what = "notification " + head.Notification.Kind
	case head.Call != nil:
		what = strings.TrimSpace("call " + head.Call.Kind + " " + head.Call.Name)
	}
	text := strings.NewReplacer("at /notification/data/", "at /", "at /notification/data:", "at /:", "at /call/data/", "at /", "at /call/data:", "at /:").Replace(se.explanation)
	return what + " does not match pi's shape (the protocol schema): " + text
}

// ShapeProblems are the distinct shape problems of a session, in the order first seen.
type ShapeProblems struct {
	order []string
	seen  map[string]bool
}

// Add notes problem, once.
func (s *ShapeProblems) Add(problem string) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if !s.seen[problem] {
		s.seen[problem] = true
		s.order = append(s.order, problem)
	}
}

// String lists the distinct problems (each once: a count would tell one defect apart by how
// long the run was).
func (s *ShapeProblems) String() string { return strings.Join(s.order, "; ") }

// ShapeProblem says what of m's data breaks pi's shape, as the harness reading m's line
// would; "" when nothing does.
func (m Message) ShapeProblem() string {
	line, err := encode(m)
	if err != nil {
		return ""
	}
	return shapeProblem(bytes.TrimSpace(line))
}

// ShapeError is a session's end that reports lines whose data broke pi's shape, read and
// recorded all the same: where the trace differs from the reference's, the findings there
// name it by the rule of its entry, and this error only repeats it.
type ShapeError struct{ Problems string }

func (e *ShapeError) Error() string { return e.Problems }

// printer renders schema errors in English.
var printer = message.NewPrinter(language.English)

// explain lists the leaves of a schema validation error, one "at PATH: what" each.
func explain(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			path := "/" + strings.Join(e.InstanceLocation, "/")
			leaves = append(leaves, fmt.Sprintf("at %s: %s", path, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(leaves)
	leaves = slices.Compact(leaves)
	if len(leaves) > 4 {
		leaves = append(leaves[:4], fmt.Sprintf("and %d more", len(leaves)-4))
	}
	return strings.Join(leaves, "; ")
}

// excerpt is the start of a line, for error messages: as it is when it is plain text,
// quoted when it holds control characters or invalid UTF-8.
func excerpt(line []byte) string {
	const n = 240
	s, more := string(line), ""
	if len(s) > n {
		s, more = strings.ToValidUTF8(s[:n], ""), fmt.Sprintf("… (%d bytes)", len(line))
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		s = strconv.Quote(s)
	}
	return s + more
}

// ErrLineTooLong is what reading a line longer than the limit gives (errors.Is).
var ErrLineTooLong = errors.New("line too long")

// lineTooLongError is a line over the limit.
type lineTooLongError struct{ limit int }

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("the line is longer than the limit of %d bytes", e.limit)
}

func (e *lineTooLongError) Is(target error) bool { return target == ErrLineTooLong }

// lineReader reads newline-terminated lines of at most max bytes, counting them.
type lineReader struct {
	r   *bufio.Reader
	max int
	n   int
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending ("\n" or "\r\n"), at most max bytes. A
// last line without a newline is returned before io.EOF. A line over the limit gives an
// error wrapping ErrLineTooLong; the reader is unusable after it.
func (l *lineReader) next() ([]byte, error) {
	var line []byte
	tooLong := func() ([]byte, error) {
		l.n++
		return nil, &lineTooLongError{limit: l.max}
	}
	for {
		chunk, err := l.r.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			// The line goes on: max bytes and the "\r" of a "\r\n" may come before its end.
			if len(line) > l.max+1 || len(line) == l.max+1 && line[l.max] != '\r' {
				return tooLong()
			}
			continue
		case err == io.EOF && len(line) > 0:
			if len(line) > l.max {
				return tooLong()
			}
			l.n++
			return line, nil
		case err != nil:
			return nil, err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
		if len(line) > l.max {
			return tooLong()
		}
		l.n++
		return line, nil
	}
}
