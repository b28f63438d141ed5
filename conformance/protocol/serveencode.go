package protocol

import (
	"strconv"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// The served side's calls and notifications, written by hand: their data is what
// json.Marshal writes of it (compact, escaped as encoding/json escapes) when wireReady says
// so, which is what the served reference's data always is; any other message goes through
// json.Marshal, whose line this is byte for byte.

// callOrNotifyLine is the line of a call or notification m, newline included; ok is false
// when m is neither, or its data must go through json.Marshal.
func callOrNotifyLine(m *Message) (line []byte, ok bool) {
	switch {
	case m.Type == TypeCall && m.Call != nil && m.Notification == nil && m.onlyCallFields():
		if !wireReady(m.Call.Data) {
			return nil, false
		}
		line = make([]byte, 0, len(m.Call.Data)+len(m.Call.Kind)+len(m.Call.Name)+96)
		line = append(line, `{"type":"call"`...)
		line = appendIDs(line, m)
		line = append(line, `,"call":{"kind":`...)
		line = jsonvalue.AppendString(line, m.Call.Kind)
		if m.Call.Name != "" {
			line = append(line, `,"name":`...)
			line = jsonvalue.AppendString(line, m.Call.Name)
		}
		line = appendData(line, m.Call.Data)
		line = append(line, '}')
		if m.Standing {
			line = append(line, `,"standing":true`...)
		}
	case m.Type == TypeNotify && m.Notification != nil && m.Call == nil && !m.Standing && m.onlyCallFields():
		if !wireReady(m.Notification.Data) {
			return nil, false
		}
		line = make([]byte, 0, len(m.Notification.Data)+len(m.Notification.Kind)+96)
		line = append(line, `{"type":"notify"`...)
		line = appendIDs(line, m)
		line = append(line, `,"notification":{"kind":`...)
		line = jsonvalue.AppendString(line, m.Notification.Kind)
		line = appendData(line, m.Notification.Data)
		line = append(line, '}')
	default:
		return nil, false
	}
	return append(line, "}\n"...), true
}

// onlyCallFields reports whether m sets no field but those of a call or notification.
func (m *Message) onlyCallFields() bool {
	return m.Protocol == 0 && m.Protocols == nil && m.Name == "" && m.Version == "" && m.Tracks == "" &&
		m.Capabilities == nil && m.Setup == nil && m.StandingAnswers == nil && m.Delivery == nil &&
		m.Data == nil && m.Error == "" && !m.Abort && m.Wait == "" && !m.UntilAbort && m.Message == ""
}

// appendIDs appends a message's id and session, each left out when 0 (omitempty).
func appendIDs(line []byte, m *Message) []byte {
	if m.ID != 0 {
		line = append(line, `,"id":`...)
		line = strconv.AppendInt(line, m.ID, 10)
	}
	if m.Session != 0 {
		line = append(line, `,"session":`...)
		line = strconv.AppendInt(line, int64(m.Session), 10)
	}
	return line
}

// appendData appends member data: null when there is none (a nil json.RawMessage).
func appendData(line, data []byte) []byte {
	line = append(line, `,"data":`...)
	if data == nil {
		return append(line, "null"...)
	}
	return append(line, data...)
}

// maxWireDepth bounds the nesting wireReady reads; deeper data goes through json.Marshal.
const maxWireDepth = 1_000

// wireReady reports whether data (nil aside, which is null) is one valid JSON value written
// as json.Marshal writes a json.RawMessage: no space between tokens, and no <, >, & or
// U+2028, U+2029 inside strings (which it escapes). False means not certain.
func wireReady(data []byte) bool {
	if data == nil {
		return true
	}
	end, ok := wireValue(data, 0, 0)
	return ok && end == len(data)
}

// wireValue reads the value at data[i:] and returns where it ends.
func wireValue(data []byte, i, depth int) (int, bool) {
	if i >= len(data) || depth > maxWireDepth {
		return 0, false
	}
	switch c := data[i]; {
	case c == '{':
		i++
		if i < len(data) && data[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(data) || data[i] != '"' {
				return 0, false
			}
			var ok bool
			if i, ok = wireString(data, i); !ok || i >= len(data) || data[i] != ':' {
				return 0, false
			}
			if i, ok = wireValue(data, i+1, depth+1); !ok || i >= len(data) {
				return 0, false
			}
			switch data[i] {
			case ',':
				i++
			case '}':
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '[':
		i++
		if i < len(data) && data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = wireValue(data, i, depth+1); !ok || i >= len(data) {
				return 0, false
			}
			switch data[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '"':
		return wireString(data, i)
	case c == '-' || c >= '0' && c <= '9':
		return wireNumber(data, i)
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
			return i + len(lit), true
		}
	}
	return 0, false
}

// wireString reads the string at data[i:] (its opening quote) and returns where it ends.
func wireString(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20, c == '<', c == '>', c == '&':
			return 0, false
		case c == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9):
			return 0, false // U+2028, U+2029
		case c == '\\':
			i++
			if i >= len(data) {
				return 0, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return 0, false
				}
				for _, h := range data[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// wireNumber reads the number at data[i:] and returns where it ends.
func wireNumber(data []byte, i int) (int, bool) {
	digits := func(i int) (int, bool) {
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i, i > start
	}
	if data[i] == '-' {
		i++
	}
	if i >= len(data) {
		return 0, false
	}
	if data[i] == '0' {
		i++
	} else {
		var ok bool
		if i, ok = digits(i); !ok {
			return 0, false
		}
	}
	if i < len(data) && data[i] == '.' {
		var ok bool
		if i, ok = digits(i + 1); !ok {
			return 0, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(i); !ok {
			return 0, false
		}
	}
	return i, true
}
