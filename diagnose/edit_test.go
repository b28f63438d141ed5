package diagnose_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/turnstile-dev/turnstile/trace"
)

// The edits of testdata/*.txt, one a line, applied to the implementation's trace; prefixed
// "ref" to the reference's, "both" to both. testdata/README.md lists them.

// applyEdit applies one edit line.
func applyEdit(want, got *trace.Trace, line string) error {
	targets := []*trace.Trace{got}
	switch {
	case strings.HasPrefix(line, "ref "):
		targets, line = []*trace.Trace{want}, strings.TrimPrefix(line, "ref ")
	case strings.HasPrefix(line, "both "):
		targets, line = []*trace.Trace{want, got}, strings.TrimPrefix(line, "both ")
	}
	toks, err := tokenize(line)
	if err != nil {
		return err
	}
	if len(toks) == 0 {
		return errors.New("an empty edit")
	}
	for _, tr := range targets {
		if err := edit1(tr, toks[0], toks[1:]); err != nil {
			return fmt.Errorf("%s: %w", line, err)
		}
	}
	return nil
}

// edit1 applies one verb with its arguments to tr.
func edit1(tr *trace.Trace, verb string, args []string) error {
	need := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %d arguments, not %d", verb, n, len(args))
		}
		return nil
	}
	switch verb {
	case "set", "unset", "reverse":
		if len(args) < 2 {
			return fmt.Errorf("%s needs an entry and a path", verb)
		}
		is, err := selectAll(tr, args[0])
		if err != nil {
			return err
		}
		var v any
		if verb == "set" {
			if err := need(3); err != nil {
				return err
			}
			if v, err = valueOf(tr, args[2]); err != nil {
				return err
			}
		}
		for _, i := range is {
			if err := editData(tr, i, func(d any) (any, error) {
				switch verb {
				case "set":
					return setPath(d, args[1], v)
				case "unset":
					return unsetPath(d, args[1])
				}
				l, err := getPath(d, args[1])
				if s, ok := l.([]any); ok && err == nil {
					slices.Reverse(s)
					return d, nil
				}
				return nil, fmt.Errorf("%s is not a list", args[1])
			}); err != nil {
				return err
			}
		}
		return nil
	case "delete":
		if err := need(1); err != nil {
			return err
		}
		i, j, err := selectRange(tr, args[0], false)
		if err != nil {
			return err
		}
		tr.Entries = slices.Delete(tr.Entries, i, j)
		return nil
	case "truncate":
		if err := need(1); err != nil {
			return err
		}
		i, err := select1(tr, args[0])
		tr.Entries = tr.Entries[:max(i, 0)]
		return err
	case "swap", "swap-data":
		if err := need(2); err != nil {
			return err
		}
		i, err := select1(tr, args[0])
		if err != nil {
			return err
		}
		j, err := select1(tr, args[1])
		if err != nil {
			return err
		}
		if verb == "swap" {
			tr.Entries[i], tr.Entries[j] = tr.Entries[j], tr.Entries[i]
		} else {
			tr.Entries[i].Data, tr.Entries[j].Data = tr.Entries[j].Data, tr.Entries[i].Data
		}
		return nil
	case "duplicate":
		if err := need(1); err != nil {
			return err
		}
		i, err := select1(tr, args[0])
		if err != nil {
			return err
		}
		tr.Entries = slices.Insert(tr.Entries, i+1, tr.Entries[i])
		return nil
	case "insert", "replace", "append":
		at := len(tr.Entries)
		if verb != "append" {
			if err := need(2); err != nil {
				return err
			}
			var err error
			if at, err = select1(tr, args[0]); err != nil {
				return err
			}
			args = args[1:]
		} else if err := need(1); err != nil {
			return err
		}
		e, err := parseEntry(args[0])
		if err != nil {
			return err
		}
		if !strings.Contains(args[0], `"t":`) && at < len(tr.Entries) {
			e.T = tr.Entries[at].T
		}
		if verb == "replace" {
			tr.Entries[at] = e
		} else {
			tr.Entries = slices.Insert(tr.Entries, at, e)
		}
		return nil
	case "fail":
		if err := need(2); err != nil {
			return err
		}
		i, err := select1(tr, args[0])
		if err != nil {
			return err
		}
		msg, err := parseValue(args[1])
		if s, ok := msg.(string); ok && err == nil {
			tr.Entries[i].Error = s
			return nil
		}
		return fmt.Errorf("fail needs a JSON string, not %s", args[1])
	case "shift":
		if err := need(2); err != nil {
			return err
		}
		i, j, err := selectRange(tr, args[0], true)
		if err != nil {
			return err
		}
		dt, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil {
			return err
		}
		for k := i; k < j; k++ {
			tr.Entries[k].T += dt
		}
		return nil
	case "walk":
		return walk(tr, args)
	}
	return fmt.Errorf("unknown edit %q", verb)
}

// tokenize splits an edit line at spaces outside quotes, brackets and braces.
func tokenize(line string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	depth, quoted, escaped := 0, false, false
	for _, r := range line {
		switch {
		case escaped:
			escaped = false
		case quoted && r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
		case quoted:
		case r == '[' || r == '{':
			depth++
		case r == ']' || r == '}':
			depth--
		case r == ' ' && depth == 0:
			if cur.Len() > 0 {
				toks = append(toks, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if quoted || depth != 0 {
		return nil, fmt.Errorf("unbalanced quotes or brackets in %q", line)
	}
	if cur.Len() > 0 {
		toks = append(toks, cur.String())
	}
	return toks, nil
}

// selector is "[KEY]" (the first entry of that trace.Key), "[KEY ~TEXT]" (the first whose data
// holds TEXT) or "[end]" (the last entry), then "#N" (the Nth such), "*" (every one) or
// "+N"/"-N" (the entry that many after or before).
var selector = regexp.MustCompile(`^\[([^~\]]+?)(?: ~(.+))?\](?:#(\d+)|(\*)|([+-]\d+))?$`)

// selectAll is the indexes a selector names.
func selectAll(tr *trace.Trace, sel string) ([]int, error) {
	m := selector.FindStringSubmatch(sel)
	if m == nil {
		return nil, fmt.Errorf("not an entry selector: %q", sel)
	}
	key, text, nth, all, off := m[1], m[2], m[3], m[4] != "", m[5]
	var is []int
	for i, e := range tr.Entries {
		if key == "end" && i == len(tr.Entries)-1 || key != "end" && trace.Key(e) == key && strings.Contains(string(e.Data), text) {
			is = append(is, i)
		}
	}
	n := 1
	if nth != "" {
		n, _ = strconv.Atoi(nth)
	}
	if len(is) < n {
		return nil, fmt.Errorf("%s: the trace has %d such entries", sel, len(is))
	}
	if all {
		return is, nil
	}
	i := is[n-1]
	if off != "" {
		d, _ := strconv.Atoi(off)
		i += d
	}
	if i < 0 || i >= len(tr.Entries) {
		return nil, fmt.Errorf("%s: no entry %d", sel, i+1)
	}
	return []int{i}, nil
}

// select1 is the index of the one entry a selector names.
func select1(tr *trace.Trace, sel string) (int, error) {
	is, err := selectAll(tr, sel)
	if err != nil {
		return -1, err
	}
	if len(is) != 1 {
		return -1, fmt.Errorf("%s names %d entries", sel, len(is))
	}
	return is[0], nil
}

// selectRange is the half-open range a selector names: "SEL" its entry, "SEL..SEL" from the
// first up to the second, "SEL.." from it to the last entry (open: past the last).
func selectRange(tr *trace.Trace, sel string, open bool) (int, int, error) {
	from, to, isRange := strings.Cut(sel, "..")
	i, err := select1(tr, from)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case !isRange:
		return i, i + 1, nil
	case to == "" && open:
		return i, len(tr.Entries), nil
	case to == "":
		return 0, 0, fmt.Errorf("%s: say where the range ends", sel)
	}
	j, err := select1(tr, to)
	if err != nil || j < i {
		return 0, 0, fmt.Errorf("%s: not a range (%v)", sel, err)
	}
	return i, j, nil
}

// editData rewrites the data of entry i with f, as the world writes it (keys sorted).
func editData(tr *trace.Trace, i int, f func(any) (any, error)) error {
	var d any
	if err := json.Unmarshal(tr.Entries[i].Data, &d); err != nil {
		return fmt.Errorf("entry %d: %w", i+1, err)
	}
	d, err := f(d)
	if err != nil {
		return fmt.Errorf("entry %d: %w", i+1, err)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	tr.Entries[i].Data = data
	return nil
}

// fromEntry is a value taken from another entry: @SEL.path.
var fromEntry = regexp.MustCompile(`^@(\[[^\]]*\](?:#\d+|[+-]\d+)?)\.(.+)$`)

// valueOf is a value written as JSON ("text"*N repeated) or taken from an entry (@SEL.path).
func valueOf(tr *trace.Trace, s string) (any, error) {
	m := fromEntry.FindStringSubmatch(s)
	if m == nil {
		return parseValue(s)
	}
	i, err := select1(tr, m[1])
	if err != nil {
		return nil, err
	}
	var d any
	if err := json.Unmarshal(tr.Entries[i].Data, &d); err != nil {
		return nil, err
	}
	return getPath(d, m[2])
}

// parseEntry reads an entry as a trace line writes it ({"kind":…,"name":…,"data":…}).
func parseEntry(s string) (trace.Entry, error) {
	var e trace.Entry
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		return e, fmt.Errorf("not an entry: %w", err)
	}
	return e, nil
}

// repeated is a JSON string repeated: "text"*N.
var repeated = regexp.MustCompile(`^("(?:[^"\\]|\\.)*")\*(\d+)$`)

// expandValue is a JSON string's text, repeated for "text"*N; any other text as it is.
func expandValue(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	v, err := parseValue(s)
	if err != nil {
		return "", err
	}
	text, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("not a string: %s", s)
	}
	return text, nil
}

// parseValue reads a JSON value, or "text"*N: the text N times.
func parseValue(s string) (any, error) {
	if m := repeated.FindStringSubmatch(s); m != nil {
		var text string
		if err := json.Unmarshal([]byte(m[1]), &text); err != nil {
			return nil, err
		}
		n, _ := strconv.Atoi(m[2])
		return strings.Repeat(text, n), nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("not a JSON value: %s", s)
	}
	return v, nil
}

// pathStep is one step of a path: a member, or with index >= 0 an item of a list.
type pathStep struct {
	member string
	index  int
}

// pathStepRE is one step: "name", "name[2]" or "[2]".
var pathStepRE = regexp.MustCompile(`^([^.\[\]]*)((?:\[\d+\])*)$`)

// parsePath cuts "message.content[0].text" into steps; "." is the whole value.
func parsePath(p string) ([]pathStep, error) {
	if p == "." {
		return nil, nil
	}
	var steps []pathStep
	for _, part := range strings.Split(p, ".") {
		m := pathStepRE.FindStringSubmatch(part)
		if m == nil || m[1] == "" && m[2] == "" {
			return nil, fmt.Errorf("not a path: %q", p)
		}
		if m[1] != "" {
			steps = append(steps, pathStep{member: m[1], index: -1})
		}
		for _, ix := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			n, _ := strconv.Atoi(ix)
			steps = append(steps, pathStep{index: n})
		}
	}
	return steps, nil
}

// step is the value one step into v.
func step(v any, s pathStep) (any, bool) {
	if s.index >= 0 {
		l, ok := v.([]any)
		if !ok || s.index >= len(l) {
			return nil, false
		}
		return l[s.index], true
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	x, ok := o[s.member]
	return x, ok
}

// getPath is the value at a path.
func getPath(v any, p string) (any, error) {
	steps, err := parsePath(p)
	if err != nil {
		return nil, err
	}
	for _, s := range steps {
		var ok bool
		if v, ok = step(v, s); !ok {
			return nil, fmt.Errorf("no %s", p)
		}
	}
	return v, nil
}

// setPath sets the value at a path (its last member may be new) and returns the root.
func setPath(root any, p string, val any) (any, error) {
	steps, err := parsePath(p)
	if err != nil || len(steps) == 0 {
		return val, err
	}
	parent, err := getPath(root, joinSteps(steps[:len(steps)-1]))
	if err != nil {
		return nil, err
	}
	last := steps[len(steps)-1]
	switch x := parent.(type) {
	case map[string]any:
		if last.index < 0 {
			x[last.member] = val
			return root, nil
		}
	case []any:
		if last.index >= 0 && last.index < len(x) {
			x[last.index] = val
			return root, nil
		}
	}
	return nil, fmt.Errorf("cannot set %s", p)
}

// unsetPath takes the member or list item at a path away.
func unsetPath(root any, p string) (any, error) {
	steps, err := parsePath(p)
	if err != nil || len(steps) == 0 {
		return nil, fmt.Errorf("cannot unset %q", p)
	}
	parentPath := joinSteps(steps[:len(steps)-1])
	parent, err := getPath(root, parentPath)
	if err != nil {
		return nil, err
	}
	last := steps[len(steps)-1]
	switch x := parent.(type) {
	case map[string]any:
		if _, ok := x[last.member]; ok && last.index < 0 {
			delete(x, last.member)
			return root, nil
		}
	case []any:
		if last.index >= 0 && last.index < len(x) {
			return setPath(root, parentPath, slices.Delete(x, last.index, last.index+1))
		}
	}
	return nil, fmt.Errorf("no %s to unset", p)
}

// joinSteps writes steps back as a path.
func joinSteps(steps []pathStep) string {
	if len(steps) == 0 {
		return "."
	}
	var b strings.Builder
	for _, s := range steps {
		if s.index >= 0 {
			fmt.Fprintf(&b, "[%d]", s.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.member)
	}
	return b.String()
}

// walk is "walk RANGE COND… => ACTION…": on every JSON object in the data of the entries of
// RANGE ("all", or "SEL.." from an entry on) that meets every condition, the actions.
// Conditions: path=JSON, path^="prefix", path? (present), !path (absent), path#N (a list or
// object of N items), path#+ (of some). Actions: path=JSON, -path (take away), path+=N.
func walk(tr *trace.Trace, args []string) error {
	arrow := slices.Index(args, "=>")
	if len(args) < 3 || arrow < 1 {
		return errors.New(`walk RANGE COND… => ACTION…`)
	}
	from, to := 0, len(tr.Entries)
	if args[0] != "all" {
		var err error
		if from, to, err = selectRange(tr, args[0], true); err != nil {
			return err
		}
	}
	conds, actions := args[1:arrow], args[arrow+1:]
	var bad error
	var visit func(v any)
	visit = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ok, err := meets(x, conds); err != nil {
				bad = err
			} else if ok {
				if err := act(x, actions); err != nil {
					bad = err
				}
			}
			for _, m := range x {
				visit(m)
			}
		case []any:
			for _, m := range x {
				visit(m)
			}
		}
	}
	for i := from; i < to; i++ {
		if len(tr.Entries[i].Data) == 0 {
			continue
		}
		if err := editData(tr, i, func(d any) (any, error) { visit(d); return d, bad }); err != nil {
			return err
		}
	}
	return nil
}

// condRE is a walk condition: !path, path?, path#N, path#+, path^=JSON or path=JSON.
var condRE = regexp.MustCompile(`^(!?)([^=?#^!]+)(\?|#\d+|#\+|\^=.+|=.+)?$`)

// meets says whether object o meets every condition.
func meets(o map[string]any, conds []string) (bool, error) {
	for _, c := range conds {
		m := condRE.FindStringSubmatch(c)
		if m == nil || (m[1] == "") == (m[3] == "") {
			return false, fmt.Errorf("not a condition: %q", c)
		}
		v, err := getPath(o, m[2])
		present := err == nil
		op := m[3]
		switch {
		case m[1] == "!":
			if present {
				return false, nil
			}
		case op == "?":
			if !present {
				return false, nil
			}
		case strings.HasPrefix(op, "#"):
			n := -1
			switch x := v.(type) {
			case []any:
				n = len(x)
			case map[string]any:
				n = len(x)
			}
			if op == "#+" && n <= 0 || op != "#+" && strconv.Itoa(n) != op[1:] {
				return false, nil
			}
		case strings.HasPrefix(op, "^="):
			prefix, err := parseValue(op[2:])
			if err != nil {
				return false, err
			}
			if !present || !strings.HasPrefix(fmt.Sprint(v), fmt.Sprint(prefix)) {
				return false, nil
			}
		default:
			want, err := parseValue(op[1:])
			if err != nil {
				return false, err
			}
			if !present || !jsonEqual(v, want) {
				return false, nil
			}
		}
	}
	return true, nil
}

// act applies walk actions to object o.
func act(o map[string]any, actions []string) error {
	for _, a := range actions {
		var err error
		switch p, n, add := strings.Cut(a, "+="); {
		case strings.HasPrefix(a, "-"):
			_, err = unsetPath(o, a[1:])
		case add:
			var v any
			var d float64
			if v, err = getPath(o, p); err == nil {
				if d, err = strconv.ParseFloat(n, 64); err == nil {
					f, ok := v.(float64)
					if !ok {
						return fmt.Errorf("%s is not a number", p)
					}
					_, err = setPath(o, p, f+d)
				}
			}
		default:
			p, val, ok := strings.Cut(a, "=")
			if !ok {
				return fmt.Errorf("not an action: %q", a)
			}
			var v any
			if v, err = parseValue(val); err == nil {
				_, err = setPath(o, p, v)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
	}
	return nil
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
