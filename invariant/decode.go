package invariant

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// decodeJSON decodes JSON into the values encoding/json gives an any (map[string]any, []any,
// string, float64, bool, nil), several times faster: traces are large and decoding them is
// most of the checking time. Input that it does not accept goes to encoding/json.
func decodeJSON(data []byte) any {
	d := jsonDecoder{in: data}
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
	in  []byte
	pos int
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
