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

// wireReady reports whether data (nil aside, which is null) is one valid JSON value written
// as json.Marshal writes a json.RawMessage (jsonvalue.MarshalForm).
func wireReady(data []byte) bool { return data == nil || jsonvalue.MarshalForm(data) }
