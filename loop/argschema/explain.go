package argschema

import (
	"math"
	"strings"
)

// A port of pi-schema's explain.js: the errors of a value that failed the check, from a walk over the schema that
// reports each failing keyword at the value it failed on, using the compiled checks for subschemas.

// explainer explains failures of one compiled schema, for one errors() call.
type explainer struct {
	c *compiler
	// memo holds the errors of $ref targets for objects and arrays within one call: a recursive union explains each
	// branch to pick the one to blame, and every branch would explain the same children again.
	memo map[*object]map[any]memoErrors
}

type memoErrors struct {
	path   string
	errors []Error
}

// errors is the errors of v, at least one (v failed the check).
func (e *explainer) errors(v any) []Error {
	var out []Error
	e.walk(e.c.schema, e.c.r.rootBase, v, "", &out)
	if len(out) == 0 {
		out = append(out, Error{Path: "", Message: "invalid"})
	}
	return out
}

// ok runs the compiled check of node; a subschema that does not compile passes nothing.
func (e *explainer) ok(node any, base string, v any) (result bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isCompile := r.(compileError); !isCompile {
				if _, isRestart := r.(restartSignal); !isRestart {
					panic(r)
				}
			}
			result = false
		}
	}()
	return e.c.check(node, base)(v)
}

func (e *explainer) walk(node any, base string, v any, path string, out *[]Error) {
	if node == true {
		return
	}
	if node == false {
		*out = append(*out, Error{Path: path, Message: "no value is allowed here"})
		return
	}
	n, ok := node.(*object)
	if !ok {
		return
	}
	b := e.c.r.baseFor(n, base)
	if e.ok(n, b, v) {
		return
	}
	start := len(*out)
	push := func(message, at string) {
		*out = append(*out, Error{Path: at, Message: message})
	}
	if types, ok := typesOf(n); ok {
		passes := false
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = jsString(t, true)
			if s, ok := t.(string); ok {
				if chk, ok := typeChecks[s]; ok && chk(v) {
					passes = true
				}
			}
		}
		if !passes {
			push("expected "+strings.Join(names, " or ")+", got "+typeName(v), path)
			return
		}
	}
	if list, ok := n.at("enum").(*array); ok && !enumCheck(list.items)(v) {
		push("expected one of "+listValues(list.items), path)
	}
	if value, ok := n.get("const"); ok && !deepEqual(v, value) {
		push("expected "+jsonStringify(value, ""), path)
	}
	switch x := v.(type) {
	case string:
		if n.at("type") != any("bytes") {
			e.walkString(n, x, path, push)
		}
	case float64:
		walkNumber(n, x, path, push)
	case *object:
		e.walkObject(n, b, x, path, out, push)
	case *array:
		e.walkArray(n, b, x, path, out, push)
	}
	if list, ok := n.at("allOf").(*array); ok {
		for _, s := range list.items {
			e.walk(s, b, v, path, out)
		}
	}
	if list, ok := n.at("anyOf").(*array); ok {
		e.walkUnion(list.items, b, v, path, out, false)
	}
	if list, ok := n.at("oneOf").(*array); ok {
		e.walkUnion(list.items, b, v, path, out, true)
	}
	if not, ok := n.get("not"); ok && e.ok(not, b, v) {
		push("must not match the schema in not", path)
	}
	if cond, ok := n.get("if"); ok {
		branch := n.at("else")
		if e.ok(cond, b, v) {
			branch = n.at("then")
		}
		if branch != undefined {
			e.walk(branch, b, v, path, out)
		}
	}
	if ref, ok := n.at("$ref").(string); ok {
		e.walkRef(ref, b, v, path, out)
	}
	if len(*out) == start && (n.has("unevaluatedProperties") || n.has("unevaluatedItems")) {
		e.walkUnevaluated(n, b, v, path, out)
	}
	if _, ok := n.at("$dynamicRef").(string); ok && len(*out) == start {
		push("does not match the dynamically referenced schema", path)
	}
}

func (e *explainer) walkRef(ref, base string, v any, path string, out *[]Error) {
	t := e.c.r.resolve(ref, base)
	if t.node == false && e.c.r.isUnresolved(ref, base) {
		*out = append(*out, Error{Path: path, Message: "unresolved reference " + ref})
		return
	}
	node, isSchema := t.node.(*object)
	_, isObject := v.(*object)
	_, isArray := v.(*array)
	if !isSchema || (!isObject && !isArray) {
		e.walk(t.node, t.base, v, path, out)
		return
	}
	if e.memo == nil {
		e.memo = map[*object]map[any]memoErrors{}
	}
	values := e.memo[node]
	if known, ok := values[v]; ok && known.path == path {
		*out = append(*out, known.errors...)
		return
	}
	var errs []Error
	e.walk(node, t.base, v, path, &errs)
	if values == nil {
		values = map[any]memoErrors{}
		e.memo[node] = values
	}
	values[v] = memoErrors{path: path, errors: errs}
	*out = append(*out, errs...)
}

func (e *explainer) walkString(n *object, v string, path string, push func(string, string)) {
	count := float64(codePoints(v))
	if minLen, ok := number(n, "minLength"); ok && count < minLen {
		push("expected at least "+jsNumber(minLen)+" characters", path)
	}
	if maxLen, ok := number(n, "maxLength"); ok && count > maxLen {
		push("expected at most "+jsNumber(maxLen)+" characters", path)
	}
	if pattern, ok := n.at("pattern").(string); ok && !e.c.regex(pattern).test(v) {
		push("expected to match "+pattern, path)
	}
	if name, ok := n.at("format").(string); ok {
		if format := e.c.formats[name]; format != nil && !format(v) {
			push("expected format "+name, path)
		}
	}
}

func walkNumber(n *object, v float64, path string, push func(string, string)) {
	if bound, ok := number(n, "minimum"); ok && v < bound {
		push("expected >= "+jsNumber(bound), path)
	}
	if bound, ok := number(n, "maximum"); ok && v > bound {
		push("expected <= "+jsNumber(bound), path)
	}
	if bound, ok := number(n, "exclusiveMinimum"); ok && v <= bound {
		push("expected > "+jsNumber(bound), path)
	}
	if bound, ok := number(n, "exclusiveMaximum"); ok && v >= bound {
		push("expected < "+jsNumber(bound), path)
	}
	if d, ok := number(n, "multipleOf"); ok && !isMultiple(v, d) {
		push("expected a multiple of "+jsNumber(d), path)
	}
}

func (e *explainer) walkObject(n *object, b string, v *object, path string, out *[]Error, push func(string, string)) {
	properties, _ := n.at("properties").(*object)
	if properties == nil {
		properties = newObject(0)
	}
	if required, ok := n.at("required").(*array); ok {
		for _, k := range required.items {
			if key, ok := k.(string); ok && !v.has(key) {
				push("missing", pointer(path, key))
			}
		}
	}
	for _, k := range properties.keys {
		if x, ok := v.get(k); ok && x != undefined {
			e.walk(properties.vals[k], b, x, pointer(path, k), out)
		}
	}
	patterns, _ := n.at("patternProperties").(*object)
	if patterns == nil {
		patterns = newObject(0)
	}
	additional, hasAdditional := n.get("additionalProperties")
	names, hasNames := n.get("propertyNames")
	for _, k := range v.keys {
		matched := properties.has(k)
		for _, p := range patterns.keys {
			if e.c.regex(p).test(k) {
				matched = true
				e.walk(patterns.vals[p], b, v.vals[k], pointer(path, k), out)
			}
		}
		if !matched && hasAdditional {
			if additional == false {
				push("unknown field", pointer(path, k))
			} else {
				e.walk(additional, b, v.vals[k], pointer(path, k), out)
			}
		}
		if hasNames && !e.ok(names, b, k) {
			push("invalid property name", pointer(path, k))
		}
	}
	count := float64(len(v.keys))
	if minProps, ok := number(n, "minProperties"); ok && count < minProps {
		push("expected at least "+jsNumber(minProps)+" properties", path)
	}
	if maxProps, ok := number(n, "maxProperties"); ok && count > maxProps {
		push("expected at most "+jsNumber(maxProps)+" properties", path)
	}
	// `{ ...dependentRequired, ...dependencies }`: a key of both keeps its first place and the later value.
	dependencies := newObject(0)
	if m, ok := n.at("dependentRequired").(*object); ok {
		for _, k := range m.keys {
			dependencies.set(k, m.vals[k])
		}
	}
	if m, ok := n.at("dependencies").(*object); ok {
		for _, k := range m.keys {
			dependencies.set(k, m.vals[k])
		}
	}
	for _, k := range dependencies.keys {
		if !v.has(k) {
			continue
		}
		d := dependencies.vals[k]
		list, isList := d.(*array)
		if !isList {
			e.walk(d, b, v, path, out)
			continue
		}
		for _, r := range list.items {
			if key := propertyKey(r); !v.has(key) {
				push("required when "+k+" is present", pointer(path, key))
			}
		}
	}
	if m, ok := n.at("dependentSchemas").(*object); ok {
		for _, k := range m.keys {
			if v.has(k) {
				e.walk(m.vals[k], b, v, path, out)
			}
		}
	}
}

func (e *explainer) walkArray(n *object, b string, v *array, path string, out *[]Error, push func(string, string)) {
	var prefix []any
	var rest any = undefined
	if list, ok := n.at("items").(*array); ok {
		prefix = list.items
		rest = n.at("additionalItems")
	} else {
		if list, ok := n.at("prefixItems").(*array); ok {
			prefix = list.items
		}
		rest = n.at("items")
	}
	for i, item := range v.items {
		s := rest
		if i < len(prefix) {
			s = prefix[i]
		}
		if s != undefined {
			e.walk(s, b, item, path+"/"+jsNumber(float64(i)), out)
		}
	}
	count := float64(len(v.items))
	if minItems, ok := number(n, "minItems"); ok && count < minItems {
		push("expected at least "+jsNumber(minItems)+" items", path)
	}
	if maxItems, ok := number(n, "maxItems"); ok && count > maxItems {
		push("expected at most "+jsNumber(maxItems)+" items", path)
	}
	if n.at("uniqueItems") == true && !uniqueItems(v.items) {
		push("expected unique items", path)
	}
	if contains, ok := n.get("contains"); ok {
		minContains := orDefault(n, "minContains", 1)
		maxContains := orDefault(n, "maxContains", math.Inf(1))
		chk := e.c.check(contains, b)
		if !containsCheck(chk, minContains, maxContains)(v) {
			push(containsMessage(minContains, maxContains), path)
		}
	}
}

func (e *explainer) walkUnion(branches []any, b string, v any, path string, out *[]Error, exactlyOne bool) {
	matches := 0
	for _, s := range branches {
		if e.ok(s, b, v) {
			matches++
		}
	}
	if matches == 1 || (!exactlyOne && matches > 0) {
		return
	}
	if matches > 1 {
		*out = append(*out, Error{Path: path, Message: "matches more than one alternative"})
		return
	}
	// A tagged union reports the branch its tag selects; otherwise the branch whose first error is deepest.
	if key, values, ok := e.tagOf(branches, b); ok {
		if o, isObject := v.(*object); isObject {
			i := -1
			if tag, present := o.get(key); present {
				for j, t := range values {
					if t == tag {
						i = j
						break
					}
				}
			}
			if i < 0 {
				*out = append(*out, Error{Path: pointer(path, key), Message: "expected one of " + listValues(values)})
			} else {
				e.walk(branches[i], b, v, path, out)
			}
			return
		}
	}
	// An object is blamed on the branch that declares most of its properties (the one it was most likely meant for),
	// then on the branch whose first error is deepest.
	var best []Error
	bestDeclared := 0
	for _, s := range branches {
		var errs []Error
		e.walk(s, b, v, path, &errs)
		if len(errs) == 0 {
			continue
		}
		declared := 0
		if o, isObject := v.(*object); isObject {
			declared = e.declaredKeys(s, b, o)
		}
		if best == nil || declared > bestDeclared ||
			(declared == bestDeclared && utf16Len(errs[0].Path) > utf16Len(best[0].Path)) {
			best, bestDeclared = errs, declared
		}
	}
	if best == nil {
		message := "matches no alternative"
		*out = append(*out, Error{Path: path, Message: message})
		return
	}
	*out = append(*out, best...)
}

// resolvedBranch is a union branch through its $ref.
func (e *explainer) resolvedBranch(s any, b string) any {
	if n, ok := s.(*object); ok {
		if ref, ok := n.at("$ref").(string); ok {
			return e.c.r.resolve(ref, e.c.r.baseFor(n, b)).node
		}
	}
	return s
}

// declaredKeys is how many of the keys of v the branch s (through a $ref) declares in properties.
func (e *explainer) declaredKeys(s any, b string, v *object) int {
	node, _ := e.resolvedBranch(s, b).(*object)
	count := 0
	if node != nil {
		if properties, ok := node.at("properties").(*object); ok {
			for _, k := range v.keys {
				if properties.has(k) {
					count++
				}
			}
		}
	}
	return count
}

// tagOf finds the key whose const, in every branch's properties, is a distinct primitive.
func (e *explainer) tagOf(branches []any, b string) (string, []any, bool) {
	resolved := make([]any, len(branches))
	for i, s := range branches {
		resolved[i] = e.resolvedBranch(s, b)
	}
	if len(resolved) == 0 {
		return "", nil, false
	}
	first, ok := resolved[0].(*object)
	if !ok {
		return "", nil, false
	}
	firstProps, ok := first.at("properties").(*object)
	if !ok {
		return "", nil, false
	}
	for _, key := range firstProps.keys {
		values := make([]any, len(resolved))
		primitive := true
		for i, s := range resolved {
			values[i] = undefined
			if n, ok := s.(*object); ok {
				if props, ok := n.at("properties").(*object); ok {
					if tag, ok := props.at(key).(*object); ok {
						values[i] = tag.at("const")
					}
				}
			}
			switch values[i].(type) {
			case undefinedValue, *object, *array:
				primitive = false
			}
		}
		if primitive && distinct(values) {
			return key, values, true
		}
	}
	return "", nil, false
}

// distinct reports whether the primitives in values differ pairwise (a Set of them is as long as the list).
func distinct(values []any) bool {
	for i := range values {
		for j := 0; j < i; j++ {
			if values[i] == values[j] {
				return false
			}
		}
	}
	return true
}

func (e *explainer) walkUnevaluated(n *object, b string, v any, path string, out *[]Error) {
	// b already applies the node's $id; the copy must not apply it again.
	rest := newObject(len(n.keys))
	for _, k := range n.keys {
		if k != "unevaluatedProperties" && k != "unevaluatedItems" && k != "$id" {
			rest.set(k, n.vals[k])
		}
	}
	a := &annotations{}
	e.c.annotating(rest, b)(v, a)
	if o, ok := v.(*object); ok && n.has("unevaluatedProperties") && !a.allProps {
		unevaluated := n.at("unevaluatedProperties")
		for _, k := range o.keys {
			if a.props[k] {
				continue
			}
			if unevaluated == false {
				*out = append(*out, Error{Path: pointer(path, k), Message: "unknown field"})
			} else {
				e.walk(unevaluated, b, o.vals[k], pointer(path, k), out)
			}
		}
	}
	if arr, ok := v.(*array); ok && n.has("unevaluatedItems") && !a.allItems {
		unevaluated := n.at("unevaluatedItems")
		for i := a.items; i < len(arr.items); i++ {
			if a.indexes[i] {
				continue
			}
			at := path + "/" + jsNumber(float64(i))
			if unevaluated == false {
				*out = append(*out, Error{Path: at, Message: "unexpected item"})
			} else {
				e.walk(unevaluated, b, arr.items[i], at, out)
			}
		}
	}
}

// listedValues is how many values an enum error names; a long list is cut so the message stays readable.
const listedValues = 20

// listValues is values as JSON, at most listedValues of them, then how many more there are.
func listValues(values []any) string {
	if len(values) <= listedValues {
		return jsonStringify(&array{items: values}, "")
	}
	listed := jsonStringify(&array{items: values[:listedValues]}, "")
	return listed[:len(listed)-1] + ", ... and " + jsNumber(float64(len(values)-listedValues)) + " more]"
}

func containsMessage(minContains, maxContains float64) string {
	if math.IsInf(maxContains, 1) {
		noun := "items"
		if minContains == 1 {
			noun = "item"
		}
		return "expected at least " + jsNumber(minContains) + " matching " + noun
	}
	if minContains == 0 {
		noun := "items"
		if maxContains == 1 {
			noun = "item"
		}
		return "expected at most " + jsNumber(maxContains) + " matching " + noun
	}
	return "expected between " + jsNumber(minContains) + " and " + jsNumber(maxContains) + " matching items"
}

// pointer appends key to a JSON Pointer.
func pointer(path, key string) string {
	return path + "/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// typeName is how a type error names the value's type.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case *array:
		return "array"
	case float64:
		if isInteger(x) {
			return "integer"
		}
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return jsNumber(x)
		}
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	case *object:
		return "object"
	}
	return "undefined"
}
