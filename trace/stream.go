package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Reading a trace entry by entry.
//
// A trace's JSON lines can be longer than memory allows to hold at once (a trace of a
// gigabyte, /dev/zero): Reader reads them one line at a time, and Expander restores the
// linked entries of the linear form in order, holding only what later links can name.

// DefaultMaxLine is the longest line Reader reads unless told otherwise: a run's trace is at
// most --max-bytes (16 MiB by default) of JSON lines in all.
const DefaultMaxLine = 64 << 20

// ReadError is a line of JSON lines that is not a trace entry in its place.
type ReadError struct {
	// Line is the 1-based line number; Col the 1-based byte of the line where the JSON
	// breaks (0 when the line as a whole is at fault).
	Line, Col int
	// Msg says what is wrong, for people.
	Msg string
	// NotEntry: the line is no JSON object with seq and kind (so the input is not JSON
	// lines of a trace at all). SecondTrace: seq 1 again after the first line (the input
	// holds several traces one after the other).
	NotEntry, SecondTrace bool
}

func (e *ReadError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("line %d:%d: %s", e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Reader reads a trace's JSON lines (Trace.JSONL, in full or in the linear form) one entry
// at a time, holding one line.
type Reader struct {
	br   *bufio.Reader
	max  int
	line int
	buf  []byte
	done bool
}

// NewReader reads entries from r, refusing a line longer than maxLine bytes
// (DefaultMaxLine when 0 or less).
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: maxLine}
}

// Line is the number of the line last read.
func (r *Reader) Line() int { return r.line }

// Next reads the next entry; io.EOF after the last. An entry is a JSON object of Entry's
// members (any kind, so that a trace edited by hand still compares, the edit shown as a
// difference) whose seq is its line's number; any other line is a *ReadError.
func (r *Reader) Next() (Entry, error) {
	if r.done {
		return Entry{}, io.EOF
	}
	line, err := r.readLine()
	if err != nil {
		r.done = true
		return Entry{}, err
	}
	if line == nil {
		r.done = true
		return Entry{}, io.EOF
	}
	r.line++
	e, err := ParseLine(line, r.line)
	if err != nil {
		r.done = true
	}
	return e, err
}

// readLine reads one line without its newline, nil at the end of the input.
func (r *Reader) readLine() ([]byte, error) {
	buf := r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if contentLen(buf) > r.max {
			return nil, &ReadError{Line: r.line + 1, Col: r.max + 1, Msg: fmt.Sprintf("the line is longer than %d bytes, the most a trace's line may be", r.max)}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d: %w", r.line+1, err)
		}
		if errors.Is(err, io.EOF) && len(buf) == 0 {
			return nil, nil
		}
		r.buf = buf
		return bytes.TrimSuffix(buf, []byte("\n")), nil
	}
}

// contentLen is the length of a line read so far without its line end ("\n" or "\r\n"; a
// last "\r" may be the start of one).
func contentLen(b []byte) int {
	n := len(b)
	if n > 0 && b[n-1] == '\n' {
		n--
	}
	if n > 0 && b[n-1] == '\r' {
		n--
	}
	return n
}

// wireEntry is Entry as a line writes it, telling an absent seq or kind from a zero one.
type wireEntry struct {
	Seq    *json.Number    `json:"seq"`
	T      int64           `json:"t"`
	Kind   *string         `json:"kind"`
	Name   string          `json:"name"`
	Target string          `json:"target,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	Link   *Link           `json:"link,omitempty"`
	Answer json.RawMessage `json:"answer,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// ParseLine reads line n of a trace's JSON lines as the entry it writes.
func ParseLine(line []byte, n int) (Entry, error) {
	// One decoding for an entry in its place; any other line is read again, step by step,
	// for the error that says what is wrong first.
	var w wireEntry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if dec.Decode(&w) == nil && onlySpaceAfter(dec, line) && exactMembers(line) && w.Seq != nil && w.Kind != nil && w.Seq.String() == strconv.Itoa(n) {
		return Entry{Seq: n, T: w.T, Kind: *w.Kind, Name: w.Name, Target: w.Target, Data: w.Data, Link: w.Link, Answer: w.Answer, Error: w.Error}, nil
	}
	return parseSlowly(line, n)
}

// onlySpaceAfter reports whether nothing but JSON's white space follows the value dec decoded
// from line (dec.More would take a closing bracket for the end).
func onlySpaceAfter(dec *json.Decoder, line []byte) bool {
	return len(bytes.TrimLeft(line[dec.InputOffset():], " \t\r\n")) == 0
}

// isEntryMember reports whether name is one an entry's line writes; Go's decoder would take
// any case of them.
func isEntryMember(name []byte) bool {
	switch string(name) {
	case "seq", "t", "kind", "name", "target", "data", "link", "answer", "error":
		return true
	}
	return false
}

// exactMembers reports whether every member name of the object on line (valid JSON) is
// spelt as an entry writes it.
func exactMembers(line []byte) bool {
	depth, key := 0, -1 // key: where the string being read at depth 1 began
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '"':
			start := i
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
			}
			if depth == 1 && key < 0 {
				key = start
				if j := bytes.IndexFunc(line[i+1:], func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' && r != '\n' }); j >= 0 && line[i+1+j] == ':' && !isEntryMember(line[start+1:i]) {
					return false
				}
			}
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 1:
			key = -1
		}
	}
	return true
}

// parseSlowly says why line n is not an entry in its place.
func parseSlowly(line []byte, n int) (Entry, error) {
	trimmed := bytes.TrimSpace(line)
	notEntry := &ReadError{Line: n, NotEntry: true, Msg: "not a trace entry (a JSON object with seq and kind)"}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Entry{}, notEntry
	}
	var probe struct {
		Seq  *json.Number `json:"seq"`
		Kind *string      `json:"kind"`
	}
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		return Entry{}, jsonError(line, n, err)
	}
	if probe.Seq == nil || probe.Kind == nil {
		return Entry{}, notEntry
	}
	if n > 1 && probe.Seq.String() == "1" {
		return Entry{}, &ReadError{Line: n, SecondTrace: true, Msg: "a second trace begins here (seq 1 again)"}
	}
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Entry{}, &ReadError{Line: n, Msg: fmt.Sprintf("not a trace entry: %v", err)}
	}
	if !onlySpaceAfter(dec, line) {
		return Entry{}, &ReadError{Line: n, Msg: "not a trace entry: text after its JSON object"}
	}
	if !exactMembers(line) {
		return Entry{}, &ReadError{Line: n, Msg: "not a trace entry: a member's name is spelt in another case than seq, t, kind, name, target, data, link, answer, error"}
	}
	if e.Seq != n {
		return Entry{}, &ReadError{Line: n, Msg: fmt.Sprintf("not a trace entry in its place: seq %d on line %d (entries are numbered from 1, a line each)", e.Seq, n)}
	}
	return e, nil
}

// jsonError says why line n, which begins as a JSON object, is not one, at its column.
func jsonError(line []byte, n int, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return &ReadError{Line: n, Msg: fmt.Sprintf("not a trace entry: %v", err)}
	}
	col := int(se.Offset) + len(line) - len(bytes.TrimLeft(line, " \t\r\n"))
	if strings.Contains(se.Error(), "exceeded max depth") {
		return &ReadError{Line: n, Col: col, Msg: "the JSON nests more than 10,000 levels deep, deeper than Go's JSON decoder reads (a trace entry's payload nests far less)"}
	}
	return &ReadError{Line: n, Col: col, Msg: fmt.Sprintf("invalid JSON: %v (a JSON-lines trace holds one entry, a JSON object, a line)", se)}
}
