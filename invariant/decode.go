package invariant

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/turnstile-dev/turnstile/jsonscan"
)

// decodeJSON decodes JSON into the values encoding/json gives an any (map[string]any, []any,
// string, float64, bool, nil), several times faster: traces are large and decoding them is
// most of the checking time. Input that it does not accept goes to encoding/json.
func decodeJSON(data []byte) any { return decodeJSONWith(data, nil) }

// decodeJSONWith is decodeJSON sharing, through memo, the values of the objects one or two
// levels down (messages: a trace repeats each in several entries, written alike), decoded
// once. The values are shared between entries: the invariants read them and never change
// them. memo may be nil.
func decodeJSONWith(data []byte, memo *decodeMemo) any {
	d := jsonDecoder{in: data, memo: memo}
	v, err := d.value(0)
	if err == nil {
		d.space()
		if d.pos == len(d.in) {
			return v
		}
	}
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

var errJSON = errors.New("invalid JSON")

type jsonDecoder struct {
	in   []byte
	pos  int
	memo *decodeMemo
}

// decodeMemo maps the bytes of an object to its decoded value.
type decodeMemo struct {
	values map[string]any
	// bytes is the size of the keys held, bounded by maxMemoBytes.
	bytes int
}

// Objects shorter than minMemoBytes are decoded each time; the memo stops growing at
// maxMemoBytes; objects nesting deeper than maxMemoNesting are not remembered, so that a
// remembered object would have been accepted at any depth it is met again.
const (
	minMemoBytes   = 64
	maxMemoBytes   = 64 << 20
	maxMemoNesting = 1_000
)

// memoized decodes the object at d.pos through the memo.
func (d *jsonDecoder) memoized(depth int) (any, error) {
	end, nesting, ok := jsonscan.End(d.in, d.pos)
	if !ok || end-d.pos < minMemoBytes || nesting > maxMemoNesting {
		return d.object(depth)
	}
	if v, ok := d.memo.values[string(d.in[d.pos:end])]; ok {
		d.pos = end
		return v, nil
	}
	start := d.pos
	v, err := d.object(depth)
	if err != nil || d.pos != end {
		return v, err
	}
	if m := d.memo; m.bytes < maxMemoBytes {
		if m.values == nil {
			m.values = map[string]any{}
		}
		m.values[string(d.in[start:end])] = v
		m.bytes += end - start
	}
	return v, nil
}

// interned holds the keys and values traces repeat most, so decoding them allocates nothing.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"type", "role", "content", "text", "thinking", "toolCall", "id", "name", "arguments",
		"message", "messages", "partial", "contentIndex", "delta", "timestamp", "usage", "input", "output", "cacheRead",
		"cacheWrite", "totalTokens", "cost", "total", "api", "provider", "model", "stopReason", "thinkingLevel",
		"assistant", "user", "system", "toolResult", "toolCallId", "toolName", "isError", "details", "durationMs",
		"result", "args", "assistantMessageEvent", "toolsAdded", "toolsRemoved", "description", "parameters",
		"faux", "faux-1", "pending", "stop", "toolUse", "length", "error", "aborted", "off", "object", "properties",
		"required", "context", "tools", "turn", "toolResults", "newMessages", "terminate", "stream", "reason"} {
		m[s] = s
	}
	return m
}()

func (d *jsonDecoder) space() {
	for d.pos < len(d.in) {
		switch d.in[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (any, error) {
	if depth > 10_000 {
		return nil, errJSON
	}
	d.space()
	if d.pos >= len(d.in) {
		return nil, errJSON
	}
	switch c := d.in[d.pos]; {
	case c == '{':
		if d.memo != nil && (depth == 1 || depth == 2) {
			return d.memoized(depth)
		}
		return d.object(depth)
	case c == '[':
		d.pos++
		a := []any{}
		d.space()
		if d.pos < len(d.in) && d.in[d.pos] == ']' {
			d.pos++
			return a, nil
		}
		for {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			d.space()
			if d.pos >= len(d.in) {
				return nil, errJSON
			}
			if d.in[d.pos] == ']' {
				d.pos++
				return a, nil
			}
			if d.in[d.pos] != ',' {
				return nil, errJSON
			}
			d.pos++
		}
	case c == '"':
		return d.str()
	case c == 't':
		return d.literal("true", true)
	case c == 'f':
		return d.literal("false", false)
	case c == 'n':
		return d.literal("null", nil)
	default:
		start := d.pos
		for d.pos < len(d.in) {
			c := d.in[d.pos]
			if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				d.pos++
				continue
			}
			break
		}
		f, err := strconv.ParseFloat(string(d.in[start:d.pos]), 64)
		if err != nil || start == d.pos {
			return nil, errJSON
		}
		return f, nil
	}
}

// object decodes the object at d.pos.
func (d *jsonDecoder) object(depth int) (any, error) {
	d.pos++
	m := map[string]any{}
	d.space()
	if d.pos < len(d.in) && d.in[d.pos] == '}' {
		d.pos++
		return m, nil
	}
	for {
		d.space()
		if d.pos >= len(d.in) || d.in[d.pos] != '"' {
			return nil, errJSON
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.pos >= len(d.in) || d.in[d.pos] != ':' {
			return nil, errJSON
		}
		d.pos++
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.space()
		if d.pos >= len(d.in) {
			return nil, errJSON
		}
		if d.in[d.pos] == '}' {
			d.pos++
			return m, nil
		}
		if d.in[d.pos] != ',' {
			return nil, errJSON
		}
		d.pos++
	}
}

func (d *jsonDecoder) literal(word string, v any) (any, error) {
	if len(d.in)-d.pos < len(word) || string(d.in[d.pos:d.pos+len(word)]) != word {
		return nil, errJSON
	}
	d.pos += len(word)
	return v, nil
}

// str reads a string token; one with escapes or non-ASCII goes through encoding/json.
func (d *jsonDecoder) str() (string, error) {
	start := d.pos
	d.pos++
	plain := true
	for d.pos < len(d.in) {
		switch c := d.in[d.pos]; {
		case c == '"':
			d.pos++
			if plain {
				raw := d.in[start+1 : d.pos-1]
				if s, ok := interned[string(raw)]; ok {
					return s, nil
				}
				return string(raw), nil
			}
			var s string
			if err := json.Unmarshal(d.in[start:d.pos], &s); err != nil {
				return "", errJSON
			}
			return s, nil
		case c == '\\':
			plain = false
			d.pos += 2
		case c < 0x20:
			return "", errJSON
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			d.pos++
		}
	}
	return "", errJSON
}
