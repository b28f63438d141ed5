package scenarios

import (
	"encoding/json"
	"fmt"
	"github.com/agnivade/levenshtein"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Error is one problem in a scenario file, at a position.
type Error struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// Errors is every problem found in one file, in file order.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// decoder walks a YAML syntax tree, decoding values and collecting positioned errors.
type decoder struct {
	file string
	errs Errors
	// aliases holds each alias's anchor value (resolveAliases).
	aliases map[*ast.AliasNode]ast.Node
	// unknownKeys counts the unknown keys met: an error about what a mapping lacks is left
	// out when the mapping had one (most likely the missing key, mistyped).
	unknownKeys int
}

func (d *decoder) errorf(n ast.Node, format string, args ...any) {
	e := &Error{File: d.file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			e.Line, e.Column = tk.Position.Line, tk.Position.Column
		}
	}
	d.errs = append(d.errs, e)
}

// errorAt records an error at a given position.
func (d *decoder) errorAt(line, col int, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

// plural is "1 response", "2 responses".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// field is one key of a mapping with its value.
type field struct {
	key   string
	keyN  ast.Node
	value ast.Node
}

// unwrap skips tags, anchors and comments around a node and resolves aliases.
func (d *decoder) unwrap(n ast.Node) ast.Node {
	for depth := 0; ; depth++ {
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			target, ok := d.aliases[v]
			if !ok || depth > 100 {
				return v
			}
			n = target
		case *ast.CommentGroupNode:
			return nil
		default:
			return n
		}
	}
}

// nearestKey is the allowed key closest to key when it is close enough to be a typo of it
// (an edit distance of at most a third of its length, and at least one), else "".
func nearestKey(key string, allowed []string) string {
	best, bestD := "", max(1, len(key)/3)+1
	for _, a := range allowed {
		if d := levenshtein.ComputeDistance(key, a); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

// mapping reads a mapping whose keys must be among allowed; unknown and duplicate keys are
// errors. A nil result means n is not a mapping (an error was recorded).
func (d *decoder) mapping(n ast.Node, what string, allowed ...string) []field {
	n = d.unwrap(n)
	var pairs []*ast.MappingValueNode
	switch v := n.(type) {
	case *ast.MappingNode:
		pairs = v.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{v}
	case nil, *ast.NullNode:
		return []field{}
	default:
		d.errorf(n, "%s must be a mapping, not %s", what, d.describeNode(n))
		return nil
	}
	var out []field
	seen := map[string]bool{}
	for _, p := range pairs {
		key := strings.TrimSpace(p.Key.String())
		if k, ok := d.unwrap(p.Key).(*ast.StringNode); ok {
			key = k.Value
		}
		if seen[key] {
			d.errorf(p.Key, "duplicate key %q in %s", key, what)
			continue
		}
		seen[key] = true
		if allowed != nil && !slices.Contains(allowed, key) {
			d.unknownKeys++
			if near := nearestKey(key, allowed); near != "" {
				d.errorf(p.Key, "unknown key %q in %s: did you mean %q? (allowed: %s)", key, what, near, strings.Join(allowed, ", "))
			} else {
				d.errorf(p.Key, "unknown key %q in %s (allowed: %s)", key, what, strings.Join(allowed, ", "))
			}
			continue
		}
		out = append(out, field{key: key, keyN: p.Key, value: p.Value})
	}
	return out
}

// sequence reads a sequence; a single non-sequence value counts as a one-item sequence when
// single is true.
func (d *decoder) sequence(n ast.Node, what string, single bool) []ast.Node {
	n = d.unwrap(n)
	switch v := n.(type) {
	case *ast.SequenceNode:
		return v.Values
	case nil, *ast.NullNode:
		return nil
	default:
		if single {
			return []ast.Node{n}
		}
		d.errorf(n, "%s must be a list, not %s", what, d.describeNode(n))
		return nil
	}
}

func (d *decoder) str(n ast.Node, what string) string {
	switch v := d.unwrap(n).(type) {
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		return v.Value.Value
	case *ast.NullNode, nil:
		return ""
	}
	d.errorf(n, "%s must be a string, not %s", what, d.describeNode(n))
	return ""
}

// isString reports whether n is a scalar string.
func (d *decoder) isString(n ast.Node) bool {
	switch d.unwrap(n).(type) {
	case *ast.StringNode, *ast.LiteralNode:
		return true
	}
	return false
}

func (d *decoder) integer(n ast.Node, what string) int64 {
	if v, ok := d.unwrap(n).(*ast.IntegerNode); ok {
		switch x := v.Value.(type) {
		case int64:
			return x
		case uint64:
			return int64(x)
		}
	}
	d.errorf(n, "%s must be an integer, not %s", what, d.describeNode(n))
	return 0
}

// duration reads a non-negative number of virtual milliseconds.
func (d *decoder) duration(n ast.Node, what string) int64 {
	v := d.integer(n, what)
	if v < 0 {
		d.errorf(n, "%s must not be negative", what)
		return 0
	}
	return v
}

func (d *decoder) boolean(n ast.Node, what string) bool {
	if v, ok := d.unwrap(n).(*ast.BoolNode); ok {
		return v.Value
	}
	d.errorf(n, "%s must be true or false, not %s", what, d.describeNode(n))
	return false
}

// oneOf reads a string that must be one of choices.
func (d *decoder) oneOf(n ast.Node, what string, choices ...string) string {
	s := d.str(n, what)
	if s != "" && !slices.Contains(choices, s) {
		d.errorf(n, "%s must be one of %s, not %q", what, strings.Join(choices, ", "), s)
		return ""
	}
	return s
}

// json reads any value as JSON data (numbers become float64, as encoding/json decodes them).
func (d *decoder) json(n ast.Node, what string) any {
	var v any
	if err := yaml.NodeToValue(n, &v); err != nil {
		d.errorf(n, "%s: %v", what, err)
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		d.errorf(n, "%s is not JSON data: %v", what, err)
		return nil
	}
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

// object reads a JSON object.
func (d *decoder) object(n ast.Node, what string) map[string]any {
	if _, ok := d.unwrap(n).(*ast.NullNode); ok {
		return nil
	}
	v := d.json(n, what)
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.errorf(n, "%s must be a mapping, not %s", what, d.describeNode(n))
	}
	return m
}

// index reads a 1-based call number used as a mapping key.
func (d *decoder) index(f field, what string) int {
	i, err := strconv.Atoi(f.key)
	if err != nil || i < 1 {
		d.errorf(f.keyN, "%s keys are call numbers from 1, not %q", what, f.key)
		return 0
	}
	return i
}

func (d *decoder) describeNode(n ast.Node) string {
	switch d.unwrap(n).(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.NullNode, nil:
		return "null"
	}
	return "a " + d.unwrap(n).Type().String()
}

// throwAlone reports a throw: beside other keys of a hook's answer: the hook fails, so they
// would be ignored. It returns the fields.
func (d *decoder) throwAlone(fields []field, what string) []field {
	var throw *field
	var others []string
	for i := range fields {
		switch fields[i].key {
		case "throw":
			throw = &fields[i]
		case "abort", "delay", "untilAbort": // a hook may abort the run, or take time, and throw
		default:
			others = append(others, fields[i].key+":")
		}
	}
	if throw != nil && len(others) > 0 {
		d.errorf(throw.keyN, "%s has throw: beside %s; a hook that throws answers nothing else (the throw would win), so keep one or the other", what, strings.Join(others, " "))
	}
	return fields
}
