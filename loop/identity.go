package loop

import (
	"bytes"
	"encoding/json"
)

// Identity is how requests identify the calling application to providers (pi-ai's
// ClientIdentity). Every field is optional; a nil field is absent and leaves the value it is
// merged over.
type Identity struct {
	// UserAgent is "short", "detailed" or {"custom": "…"}, as JSON data.
	UserAgent any
	// Attribution is who requests are attributed to.
	Attribution *Attribution
	// NoAttribution is attribution null: none, also turning off an attribution merged over.
	NoAttribution bool
	// Version is the version in the detailed User-Agent.
	Version *string
}

// Attribution is a provider attribution (pi-ai's ClientAttribution).
type Attribution struct {
	Name       string   `json:"name"`
	URL        string   `json:"url"`
	Categories []string `json:"categories,omitempty"`
}

// DefaultIdentity is pi's DEFAULT_AGENT_IDENTITY (1.4.0 and later): attribution to pi.
func DefaultIdentity() Identity {
	return Identity{Attribution: &Attribution{Name: "pi", URL: "https://pi.dev", Categories: []string{"cli-agent"}}}
}

// MergeIdentity merges identities field by field, later ones winning and absent fields
// skipped (pi-ai's mergeClientIdentity); nil when every one is nil.
func MergeIdentity(sources ...*Identity) *Identity {
	var merged *Identity
	for _, s := range sources {
		if s == nil {
			continue
		}
		if merged == nil {
			merged = &Identity{}
		}
		if s.UserAgent != nil {
			merged.UserAgent = s.UserAgent
		}
		if s.Attribution != nil || s.NoAttribution {
			merged.Attribution, merged.NoAttribution = s.Attribution, s.NoAttribution && s.Attribution == nil
		}
		if s.Version != nil {
			merged.Version = s.Version
		}
	}
	return merged
}

// MarshalJSON writes the identity in pi-ai's shape: absent fields left out, attribution null
// when NoAttribution.
func (id Identity) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	if id.UserAgent != nil {
		out["userAgent"] = id.UserAgent
	}
	switch {
	case id.Attribution != nil:
		out["attribution"] = id.Attribution
	case id.NoAttribution:
		out["attribution"] = nil
	}
	if id.Version != nil {
		out["version"] = *id.Version
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads pi-ai's shape; attribution null sets NoAttribution.
func (id *Identity) UnmarshalJSON(data []byte) error {
	var raw struct {
		UserAgent   any             `json:"userAgent"`
		Attribution json.RawMessage `json:"attribution"`
		Version     *string         `json:"version"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*id = Identity{UserAgent: raw.UserAgent, Version: raw.Version}
	switch {
	case len(raw.Attribution) == 0:
	case bytes.Equal(bytes.TrimSpace(raw.Attribution), []byte("null")):
		id.NoAttribution = true
	default:
		id.Attribution = &Attribution{}
		if err := json.Unmarshal(raw.Attribution, id.Attribution); err != nil {
			return err
		}
	}
	return nil
}

// requestIdentity is the identity a request carries: the default merged with the configured
// one from pi 1.4.0, the configured one before.
func (r *run) requestIdentity() *Identity {
	if !r.cfg.Behaviour.Has(RequestIdentity) {
		return r.cfg.Identity
	}
	def := DefaultIdentity()
	return MergeIdentity(&def, r.cfg.Identity)
}
