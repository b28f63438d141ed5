package loop

import (
	"fmt"
	"strconv"
	"strings"
)

// Change is one observable behaviour change of pi's loop (or of the pi-ai functions it calls)
// between two releases. The reference behaves as a release by turning off every change that
// release did not have (see BehaviourOf).
type Change uint8

// The behaviour changes from pi 0.87.1 to 1.6.0, in release order. docs/VERSIONS.md lists the
// scenarios that detect each.
const (
	// ThinkingLevelStamp (0.99.1): the final assistant message gets the requested
	// thinkingLevel ("off" for none), whatever the stream answered.
	ThinkingLevelStamp Change = iota + 1
	// ToolResultIsError (0.99.1): a tool result with isError true is an error result (before,
	// only a thrown error was; the result's isError stayed in the result and was ignored).
	ToolResultIsError
	// AfterToolCallStructuredContent (0.99.1): afterToolCall's structuredContent replaces the
	// result's, and content given without it drops it (before, the hook's structuredContent
	// was ignored and the executed result's kept).
	AfterToolCallStructuredContent
	// ToolResultNothing (0.99.1): an execute that resolves undefined or null gets an error result
	// "Cannot read properties of undefined (reading 'isError')" (of null), with durationMs from
	// 1.3.0 (the same line that introduced ToolResultIsError reads result.isError). Before, the
	// call ended with no result and isError false, and the run failed building its tool-result
	// message ("Cannot read properties of undefined (reading 'content')"); an afterToolCall
	// answer leaving content, details, usage or terminate out failed the call the same way.
	ToolResultNothing
	// ArgumentsError (1.3.0, pi-ai's validateToolArguments): a tool call with argumentsError
	// fails with `Invalid arguments for tool "NAME": ERROR` (before, the field was ignored
	// and the arguments validated as they were).
	ArgumentsError
	// DurationMs (1.3.0): tool_execution_end and the tool-result message of an executed tool
	// carry durationMs, execute's duration on the monotonic clock.
	DurationMs
	// RequestIdentity (1.4.0): the stream function's options carry identity, pi's
	// DEFAULT_AGENT_IDENTITY merged field by field with Config.Identity (before, Config.Identity
	// as it was, none when unset). Observable in scenarios with stream options (protocol 2).
	RequestIdentity
	// SchemaValidator (1.5.0, pi-ai): tool arguments are validated by pi-schema (package
	// argschema); before, by a TypeBox-based validator whose error texts differ. The
	// reference has only pi-schema's validator: traces of earlier releases are compared
	// with the semantic profile, which leaves the validator's messages free.
	SchemaValidator
	// AbortFirst (1.6.0): preparing a tool call checks the abort signal first, before the
	// tool lookup, argument validation and beforeToolCall (before, an aborted call could still
	// fail as not found or invalid, and beforeToolCall still ran, the abort checked after it).
	AbortFirst
	// AbortCompletesBatch (1.6.0): once aborted, the executors go on through the batch and
	// every remaining call gets an "Operation aborted" result (before, they stopped after
	// the call during which the abort was seen: later calls got no start, end or result).
	AbortCompletesBatch
)

// changeInfo describes a Change.
type changeInfo struct {
	name  string
	since string
}

var changes = [...]changeInfo{
	ThinkingLevelStamp:             {"thinking-level-stamp", "0.99.1"},
	ToolResultIsError:              {"tool-result-is-error", "0.99.1"},
	AfterToolCallStructuredContent: {"after-tool-call-structured-content", "0.99.1"},
	ToolResultNothing:              {"tool-result-nothing", "0.99.1"},
	ArgumentsError:                 {"arguments-error", "1.3.0"},
	DurationMs:                     {"duration-ms", "1.3.0"},
	RequestIdentity:                {"request-identity", "1.4.0"},
	SchemaValidator:                {"schema-validator", "1.5.0"},
	AbortFirst:                     {"abort-first", "1.6.0"},
	AbortCompletesBatch:            {"abort-completes-batch", "1.6.0"},
}

// Changes returns every Change, in release order.
func Changes() []Change {
	out := make([]Change, 0, len(changes)-1)
	for c := range changes {
		if c > 0 {
			out = append(out, Change(c))
		}
	}
	return out
}

// String is the change's name, as in docs/VERSIONS.md ("duration-ms").
func (c Change) String() string {
	if int(c) <= 0 || int(c) >= len(changes) {
		return fmt.Sprintf("change(%d)", c)
	}
	return changes[c].name
}

// Since is the pi release that introduced the change.
func (c Change) Since() string {
	if int(c) <= 0 || int(c) >= len(changes) {
		return ""
	}
	return changes[c].since
}

// Observable reports whether the change can show in a trace of the conformance protocol
// (RequestIdentity only in scenarios with stream options, protocol 2).
func (c Change) Observable() bool { return true }

// Modelled reports whether the loop's behaviour depends on the change. One does not:
// SchemaValidator (package argschema is pi-schema's validator in every release; the older
// validator differs only in its error texts, which the semantic comparison profile leaves free).
func (c Change) Modelled() bool { return c != SchemaValidator }

// OldestVersion and NewestVersion bound the pi releases the reference can behave as.
const (
	OldestVersion = "0.87.0"
	NewestVersion = "1.6.0"
)

// Releases are the pi-agent-core releases the reference is checked against (pi's adapter
// installs each, make conform-pi-versions runs them): every npm release from 0.87.1 to 1.6.0
// but 0.87.0 and 1.5.0, whose loops equal those of 0.87.1 and 1.5.2.
var Releases = []string{"0.87.1", "0.99.1", "1.0.3", "1.3.0", "1.4.0", "1.5.2", "1.6.0"}

// Behaviour is the set of changes a run behaves with. The zero value has every change: the
// newest pi (NewestVersion).
type Behaviour struct {
	without uint32
}

// Has reports whether the behaviour includes the change.
func (b Behaviour) Has(c Change) bool { return b.without&(1<<c) == 0 }

// Without returns the behaviour without the change (as before its release).
func (b Behaviour) Without(c Change) Behaviour { b.without |= 1 << c; return b }

// With returns the behaviour with the change.
func (b Behaviour) With(c Change) Behaviour { b.without &^= 1 << c; return b }

// String lists the changes the behaviour lacks: "newest" when none, else "without a, b".
func (b Behaviour) String() string {
	var off []string
	for _, c := range Changes() {
		if !b.Has(c) {
			off = append(off, c.String())
		}
	}
	if len(off) == 0 {
		return "newest"
	}
	return "without " + strings.Join(off, ", ")
}

// BehaviourOf returns the behaviour of pi release version: every change released after it is
// turned off. Any version from OldestVersion on is accepted ("1.1.0" behaves as 1.0.3, the
// release it follows; "1.7.0" as the newest; "" means NewestVersion); an older one, or one
// that is not a version, is an error.
func BehaviourOf(version string) (Behaviour, error) {
	if version == "" {
		return Behaviour{}, nil
	}
	if _, err := parseVersion(version); err != nil {
		return Behaviour{}, err
	}
	if VersionLess(version, OldestVersion) {
		return Behaviour{}, fmt.Errorf("pi %s is older than %s, the oldest release the reference can behave as", version, OldestVersion)
	}
	var b Behaviour
	for _, c := range Changes() {
		if VersionLess(version, c.Since()) {
			b = b.Without(c)
		}
	}
	return b, nil
}

// VersionLess reports whether version a comes before b, comparing dot-separated numbers
// ("0.99.1" < "1.6.0"); a part that is not a number compares as text, a missing part as 0.
func VersionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		x, y := "0", "0"
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		nx, errX := strconv.Atoi(x)
		ny, errY := strconv.Atoi(y)
		switch {
		case errX == nil && errY == nil && nx != ny:
			return nx < ny
		case (errX != nil || errY != nil) && x != y:
			return x < y
		}
	}
	return false
}

// parseVersion checks that version is dot-separated numbers ("1.6.0", "1.6", a "v" prefix
// not allowed).
func parseVersion(version string) ([]int, error) {
	parts := strings.Split(version, ".")
	out := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" {
			return nil, fmt.Errorf("%q is not a pi version (want numbers separated by dots, such as 1.6.0)", version)
		}
		out = append(out, n)
	}
	return out, nil
}
