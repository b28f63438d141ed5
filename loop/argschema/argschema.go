package argschema

import (
	"fmt"
	"strings"
	"sync"
)

// Validator is a compiled tool parameter schema. It is safe for concurrent use; calls to Parse are serialized.
type Validator struct {
	mu    sync.Mutex
	c     *compiler
	check checkFn
}

// Error is one failing keyword: Path is a JSON Pointer ("" for the root), Message pi-schema's text.
type Error struct{ Path, Message string }

// Compile prepares a JSON Schema given as decoded JSON (map[string]any, bool, as from encoding/json).
//
// A json.RawMessage is also accepted and keeps the schema's key order, as JavaScript does; map keys, which have no
// order, are taken in sorted order. The order decides the order of errors for properties and of the values named by
// const and enum messages. The error of an invalid schema names what is wrong, as pi-schema's compile throws it.
func Compile(schema any) (*Validator, error) {
	root, err := fromGo(schema)
	if err != nil {
		return nil, fmt.Errorf("argschema: schema is not JSON: %w", err)
	}
	c, check, err := compileRoot(root, false)
	if _, restart := err.(restartError); restart {
		c, check, err = compileRoot(root, true)
	}
	if err != nil {
		return nil, fmt.Errorf("argschema: invalid schema: %w", err)
	}
	return &Validator{c: c, check: check}, nil
}

// restartError reports a compile that must run again with dynamic scope tracking.
type restartError struct{}

func (restartError) Error() string { return "restart with dynamic scope" }

func compileRoot(root any, dynamic bool) (c *compiler, check checkFn, err error) {
	c = newCompiler(root, dynamic)
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case compileError:
				err = e
			case restartSignal:
				err = restartError{}
			default:
				panic(r)
			}
		}
	}()
	return c, c.root(), nil
}

// Parse coerces a deep copy of value the way pi-schema's parse() with coerce:true does, then validates it.
// It returns the coerced value when valid, else the errors (one per failing keyword, in pi's order). It never modifies value.
//
// value is as decoded by encoding/json; a json.RawMessage keeps its key order (map keys are taken in sorted order),
// which decides the order of errors for unknown or pattern properties.
func (v *Validator) Parse(value any) (result any, errs []Error) {
	in, err := fromGo(value)
	if err != nil {
		in = undefined
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.c.scope, v.c.depth = v.c.scope[:0], 0
	defer func() {
		// JavaScript throws here, and validateToolArguments passes the exception's message on: a subschema compiled
		// only now (pi-schema compiles some lazily) may be invalid, and a schema may recurse without end.
		if r := recover(); r != nil {
			switch e := r.(type) {
			case compileError:
				result, errs = nil, []Error{{Path: "", Message: e.msg}}
			case stackOverflow:
				result, errs = nil, []Error{{Path: "", Message: stackOverflowMessage}}
			default:
				panic(r)
			}
		}
	}()
	coerced := (&coercer{c: v.c}).coerce(in)
	if v.check(coerced) {
		return toGo(coerced), nil
	}
	return nil, (&explainer{c: v.c}).errors(coerced)
}

// FormatPath renders a JSON Pointer as pi shows it: "" -> "root", "/edits/0/oldText" -> "edits.0.oldText" (with ~1 and ~0 unescaped).
func FormatPath(pointer string) string {
	if pointer == "" {
		return "root"
	}
	segments := strings.Split(pointer[1:], "/")
	for i, s := range segments {
		segments[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return strings.Join(segments, ".")
}

// Message builds the exact error text of pi's validateToolArguments for a failed validation:
// `Validation failed for tool "NAME":\n  - PATH: MSG ...\n\nReceived arguments:\n<JSON.stringify(args, null, 2)>`
//
// rawArgs are the arguments as the model sent them, before coercion. JSON.stringify writes object keys in their
// insertion order; Go maps have none, so the keys of a map are written in sorted order (a json.RawMessage keeps its
// own order, and so matches pi byte for byte). Numbers are written as JavaScript writes them (42, 0.5, 1e+21).
func Message(toolName string, errs []Error, rawArgs any) string {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = "  - " + FormatPath(e.Path) + ": " + e.Message
	}
	args, err := fromGo(rawArgs)
	if err != nil {
		args = undefined
	}
	return "Validation failed for tool \"" + toolName + "\":\n" + strings.Join(lines, "\n") +
		"\n\nReceived arguments:\n" + jsonStringify(args, "  ")
}
