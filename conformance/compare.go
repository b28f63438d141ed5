package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

// Profile says how strictly two traces must agree.
type Profile string

// The comparison profiles.
const (
	// Strict requires every entry's canonical JSON line to be byte-equal to the reference's.
	Strict Profile = "strict"
	// Semantic requires the same entries in the same order, with the same kinds, names,
	// targets, virtual times, ids, flags and payloads, but compares free text by rule (see
	// SemanticRules) and numbers by value.
	Semantic Profile = "semantic"
)

// ParseProfile reads a profile name.
func ParseProfile(s string) (Profile, error) {
	switch Profile(s) {
	case Strict, Semantic:
		return Profile(s), nil
	}
	return "", fmt.Errorf("unknown comparison profile %q (want strict or semantic)", s)
}

// SemanticRules documents how the semantic profile compares free text. Each rule rewrites
// every JSON string of an entry (its data, its answer and its error) before comparison.
var SemanticRules = []string{
	`a text starting with "Validation failed for tool \"" is compared up to its first newline: the tool name must agree; the validator's messages and its echo of the arguments are free`,
}

// normalizeText applies SemanticRules to one string.
func normalizeText(s string) string {
	const validation = `Validation failed for tool "`
	if strings.HasPrefix(s, validation) {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			return s[:i]
		}
	}
	return s
}

// entriesAgree compares two entries (nil: the trace has ended) under the profile; when they
// differ, detail says where.
func entriesAgree(want, got *trace.Entry, profile Profile) (bool, string) {
	switch {
	case want == nil && got == nil:
		return true, ""
	case want == nil:
		return false, "the implementation's trace goes on where the reference's ended"
	case got == nil:
		return false, "the implementation's trace ends here"
	}
	if profile != Semantic {
		wl, gl := entryLine(*want), entryLine(*got)
		if bytes.Equal(wl, gl) {
			return true, ""
		}
		return false, firstDifference(decodeLine(wl, false), decodeLine(gl, false), "")
	}
	wv, gv := SemanticValue(*want), SemanticValue(*got)
	if reflect.DeepEqual(wv, gv) {
		return true, ""
	}
	return false, firstDifference(wv, gv, "")
}

// entryLine is an entry as its canonical JSON line (the form of Trace.JSONL).
func entryLine(e trace.Entry) []byte {
	t := trace.Trace{Entries: []trace.Entry{e}}
	return bytes.TrimSuffix(t.JSONL(), []byte{'\n'})
}

// SemanticValue is an entry decoded for the semantic profile: numbers as float64, strings
// rewritten by SemanticRules. The sequence number is left out (positions are compared).
func SemanticValue(e trace.Entry) any {
	v := decodeLine(entryLine(e), true)
	if m, ok := v.(map[string]any); ok {
		delete(m, "seq")
	}
	return normalizeStrings(v)
}

// decodeLine decodes JSON; with floats, numbers become float64 (compared by value),
// otherwise json.Number (compared by their text).
func decodeLine(data []byte, floats bool) any {
	dec := json.NewDecoder(bytes.NewReader(data))
	if !floats {
		dec.UseNumber()
	}
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(data)
	}
	return v
}

func normalizeStrings(v any) any {
	switch x := v.(type) {
	case string:
		return normalizeText(x)
	case []any:
		for i := range x {
			x[i] = normalizeStrings(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalizeStrings(x[k])
		}
	}
	return v
}

// firstDifference names the first JSON path at which two decoded values differ, with both
// values: "at data.result.terminate: expected (absent), actual false".
func firstDifference(want, got any, path string) string {
	show := func(v any, absent bool) string {
		if absent {
			return "(absent)"
		}
		data, _ := json.Marshal(v)
		s := string(data)
		if len(s) > 160 {
			s = s[:160] + "…"
		}
		return s
	}
	d, ok := trace.FirstDifference(want, got, nil)
	at := d.Path
	if path != "" && at != "" {
		at = path + "." + at
	} else if path != "" {
		at = path
	}
	if at == "" {
		at = "(the whole entry)"
	}
	wa, wList := d.Want.([]any)
	ga, gList := d.Got.([]any)
	switch {
	case !ok:
		return fmt.Sprintf("at %s: the values differ", at)
	case wList && gList:
		return fmt.Sprintf("at %s: expected %d elements, actual %d", at, len(wa), len(ga))
	}
	return fmt.Sprintf("at %s: expected %s, actual %s", at, show(d.Want, d.WantAbsent), show(d.Got, d.GotAbsent))
}
