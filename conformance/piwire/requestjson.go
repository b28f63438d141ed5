package piwire

import (
	"encoding/json"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
)

// requestJSON is what StreamRequest's MarshalJSON wrote through encoding/json's reflection,
// byte for byte, written by hand (each message by loop.MarshalMessage); ok is false when it
// is left to encoding/json (an identity among the options, a message it cannot write).
// TestStreamRequestJSONIsReflections holds the two to the same bytes.
func (r *StreamRequest) requestJSON() (b []byte, ok bool) {
	if r.Options != nil && r.Options.Identity != nil {
		return nil, false
	}
	b = append(b, `{"model":{"id":`...)
	b = jsonvalue.AppendString(b, r.Model.ID)
	if r.Model.Name != "" {
		b = append(b, `,"name":`...)
		b = jsonvalue.AppendString(b, r.Model.Name)
	}
	b = append(b, `,"api":`...)
	b = jsonvalue.AppendString(b, r.Model.API)
	b = append(b, `,"provider":`...)
	b = jsonvalue.AppendString(b, r.Model.Provider)
	b = append(b, `},"messages":[`...)
	for i, m := range r.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		data, err := loop.MarshalMessage(m)
		if err != nil {
			return nil, false
		}
		b = append(b, data...)
	}
	b = append(b, `],"thinkingLevel":`...)
	b = jsonvalue.AppendString(b, string(r.ThinkingLevel))
	b = append(b, `,"apiKey":`...)
	b = jsonvalue.AppendString(b, r.APIKey)
	if r.Options != nil {
		b = append(b, `,"options":{`...)
		if r.Options.SessionID != "" {
			b = append(b, `"sessionId":`...)
			b = jsonvalue.AppendString(b, r.Options.SessionID)
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// requestJSONByReflection is the request through encoding/json, messages [] when none.
func (r StreamRequest) requestJSONByReflection() ([]byte, error) {
	type plain StreamRequest
	r.Messages = nonNil(r.Messages)
	return json.Marshal(plain(r))
}
