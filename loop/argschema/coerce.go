package argschema

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// A port of pi-schema's coerce.js. Three passes, in order:
//  1. Optional nulls: a null in an optional property whose schema rejects null is dropped, as if omitted.
//  2. Conversions ported from TypeBox's Value.Convert, keyed on JSON Schema keywords (the first that applies): $ref,
//     const, enum, anyOf/oneOf, allOf, then type (numeric strings to numbers, "true" to true, a single value to a
//     one-item array, ...); a union keeps a value one branch accepts, else takes the first branch's conversion that
//     the whole union accepts.
//  3. Primitive coercion by type, as Ajv's coerceTypes, for what pass 2 leaves (type arrays such as
//     ["integer", "null"]).
//
// Every pass is copy-on-write: an object or array is copied only when one of its members changes, so the input is
// never modified. A value no rule applies to stays as it is; the check then reports it.

// coercer coerces values for one compiled schema, for one coerce() call.
type coercer struct {
	c *compiler
	// entered is the stack of (schema node, value) pairs pass 2 is converting through a re-entry point ($ref, or
	// wrapping a single value into an array); a pair already on it leaves the value unchanged, so a recursive schema
	// that meets a value no branch accepts does not convert it without end.
	entered []enteredPair
	// cuts counts the re-entries cut short; results computed across one are not memoized.
	cuts int
	// memo holds results of $ref targets by (node, value).
	memo map[*object]map[any]any
}

type enteredPair struct {
	node  *object
	value any
}

// coerce is value coerced: a copy along the changed paths only, or value itself when nothing changes.
func (co *coercer) coerce(value any) any {
	base := co.c.r.rootBase
	withoutNulls := co.dropOptionalNulls(value, co.c.schema, base)
	converted := co.convert(co.c.schema, base, withoutNulls)
	return co.coerceTypes(converted, co.c.schema, base)
}

// passes reports whether value passes node; known is false when node cannot be compiled.
func (co *coercer) passes(node any, base string, value any) (result, known bool) {
	scope := len(co.c.scope)
	defer func() {
		// As pi-schema's try/catch: any failure (a subschema that does not compile, a recursion without end) is
		// "unknown".
		if r := recover(); r != nil {
			co.c.scope = co.c.scope[:scope]
			result, known = false, false
		}
	}()
	return co.c.check(node, co.baseOf(node, base))(value), true
}

func (co *coercer) passesTrue(node any, base string, value any) bool {
	ok, known := co.passes(node, base, value)
	return known && ok
}

func (co *coercer) baseOf(node any, base string) string {
	if n, ok := node.(*object); ok {
		return co.c.r.baseFor(n, base)
	}
	return base
}

// reenter converts value by node at a re-entry point: unchanged when that pair is already being converted.
func (co *coercer) reenter(node *object, base string, value any, memoize bool) any {
	for _, p := range co.entered {
		if p.node == node && p.value == value {
			co.cuts++
			return value
		}
	}
	if memoize {
		if result, ok := co.memo[node][value]; ok {
			return result
		}
	}
	cuts := co.cuts
	co.entered = append(co.entered, enteredPair{node, value})
	result := co.convert(node, base, value)
	co.entered = co.entered[:len(co.entered)-1]
	if memoize && co.cuts == cuts {
		if co.memo == nil {
			co.memo = map[*object]map[any]any{}
		}
		if co.memo[node] == nil {
			co.memo[node] = map[any]any{}
		}
		co.memo[node][value] = result
	}
	return result
}

// objectWriter copies an object on its first change.
type objectWriter struct {
	value *object
	out   *object
}

func (w *objectWriter) current() *object {
	if w.out != nil {
		return w.out
	}
	return w.value
}

func (w *objectWriter) set(key string, next any) {
	if next == w.current().at(key) {
		return
	}
	if w.out == nil {
		w.out = w.value.clone()
	}
	w.out.set(key, next)
}

func (w *objectWriter) remove(key string) {
	if w.out == nil {
		w.out = w.value.clone()
	}
	w.out.remove(key)
}

func (w *objectWriter) result() any {
	return w.current()
}

// patternSchemas are the compiled patterns of a node's patternProperties with their schemas.
type patternSchema struct {
	re     *jsRegexp
	schema any
}

func (co *coercer) patternsOf(n *object) []patternSchema {
	m, ok := n.at("patternProperties").(*object)
	if !ok {
		return nil
	}
	out := make([]patternSchema, len(m.keys))
	for i, p := range m.keys {
		out[i] = patternSchema{co.c.regex(p), m.vals[p]}
	}
	return out
}

// ---------------------------------------------------------------------------------------------------------------
// Pass 1: optional nulls
// ---------------------------------------------------------------------------------------------------------------

func (co *coercer) dropOptionalNulls(value any, schema any, base string) any {
	n, ok := schema.(*object)
	if !ok {
		return value
	}
	b := co.baseOf(n, base)
	if arr, ok := value.(*array); ok {
		return mapItems(arr, func(item any, i int) any {
			itemSchema := itemSchemaAt(n, i)
			if itemSchema == undefined {
				return item
			}
			return co.dropOptionalNulls(item, itemSchema, b)
		})
	}
	o, ok := value.(*object)
	if !ok {
		return value
	}
	properties, hasProperties := n.at("properties").(*object)
	if !hasProperties {
		properties = newObject(0)
	}
	patterns := co.patternsOf(n)
	additional, hasAdditional := n.at("additionalProperties").(*object)
	if len(patterns) == 0 && !hasAdditional && !hasProperties {
		return value
	}
	required := map[string]bool{}
	if list, ok := n.at("required").(*array); ok {
		for _, k := range list.items {
			if s, ok := k.(string); ok {
				required[s] = true
			}
		}
	}
	w := &objectWriter{value: o}
	for _, key := range properties.keys {
		x, present := o.get(key)
		if !present {
			continue
		}
		property := properties.vals[key]
		isRef := false
		if p, ok := property.(*object); ok {
			_, isRef = p.at("$ref").(string)
		}
		if x == nil && !required[key] && !isRef {
			if ok, known := co.passes(property, b, nil); known && !ok {
				w.remove(key)
				continue
			}
		}
		w.set(key, co.dropOptionalNulls(x, property, b))
	}
	// Values of pattern and additional properties are walked for their own optional nulls; the keys themselves are
	// not optional properties, so they stay.
	if len(patterns) > 0 || hasAdditional {
		for _, key := range o.keys {
			matched := properties.has(key)
			for _, p := range patterns {
				if !p.re.test(key) {
					continue
				}
				matched = true
				w.set(key, co.dropOptionalNulls(w.current().at(key), p.schema, b))
			}
			if !matched && hasAdditional {
				w.set(key, co.dropOptionalNulls(o.at(key), additional, b))
			}
		}
	}
	return w.result()
}

// ---------------------------------------------------------------------------------------------------------------
// Pass 2: TypeBox's conversion rules
// ---------------------------------------------------------------------------------------------------------------

func (co *coercer) convert(node any, base string, value any) any {
	n, ok := node.(*object)
	if !ok {
		return value
	}
	b := co.baseOf(n, base)
	if ref, ok := n.at("$ref").(string); ok {
		t := co.c.r.resolve(ref, b)
		if target, ok := t.node.(*object); ok {
			return co.reenter(target, t.base, value, true)
		}
		return value
	}
	return co.convertNode(n, b, value)
}

// convertNode is one schema node's conversion: its first keyword among const, enum, the unions, allOf and type.
func (co *coercer) convertNode(n *object, b string, value any) any {
	if literal, ok := n.get("const"); ok {
		return convertLiteral(literal, value)
	}
	if list, ok := n.at("enum").(*array); ok {
		return co.convertEnum(n, list.items, b, value)
	}
	// A union or intersection node may also declare members: they convert after the branches.
	if list, ok := n.at("anyOf").(*array); ok {
		return co.convertUnion(n, list.items, b, value)
	}
	if list, ok := n.at("oneOf").(*array); ok {
		return co.convertUnion(n, list.items, b, value)
	}
	if list, ok := n.at("allOf").(*array); ok {
		next := value
		for _, member := range list.items {
			next = co.convert(member, b, next)
		}
		return co.convertMembers(n, b, next)
	}
	typ, hasType := n.get("type")
	if !hasType {
		if n.has("properties") || n.has("patternProperties") {
			return co.convertObject(n, b, value)
		}
		if n.has("items") || n.has("prefixItems") {
			return co.convertArray(n, b, value)
		}
		return value
	}
	switch typ {
	case "string":
		return convertWith(tryString, value)
	case "number":
		return convertWith(tryNumber, value)
	case "integer":
		if result, ok := tryNumber(value); ok {
			return math.Trunc(result.(float64))
		}
		return value
	case "boolean":
		return convertWith(tryBoolean, value)
	case "null":
		return convertWith(tryNull, value)
	case "array":
		return co.convertArray(n, b, value)
	case "object":
		return co.convertObject(n, b, value)
	}
	return value
}

// convertEnum treats an enum as a union of its values: a member stays, else the first value the input converts to.
func (co *coercer) convertEnum(n *object, values []any, base string, value any) any {
	for _, member := range values {
		if member == value {
			return value
		}
	}
	for _, member := range values {
		candidate := convertLiteral(member, value)
		if candidate != value && co.passesTrue(n, base, candidate) {
			return candidate
		}
	}
	return value
}

// convertUnion keeps a value one branch accepts; else it takes the first branch's conversion that the whole union
// accepts, converting branches in order and only until one is accepted.
func (co *coercer) convertUnion(n *object, branches []any, base string, value any) any {
	for _, branch := range branches {
		if co.passesTrue(branch, base, value) {
			return co.convertMembers(n, base, value)
		}
	}
	for _, branch := range branches {
		candidate := co.convertMembers(n, base, co.convert(branch, base, value))
		if co.passesTrue(n, base, candidate) {
			return candidate
		}
	}
	return co.convertMembers(n, base, value)
}

// convertMembers converts the object members of a union or intersection node, when it declares any.
func (co *coercer) convertMembers(n *object, base string, value any) any {
	if n.has("properties") || n.has("patternProperties") || n.has("additionalProperties") {
		return co.convertObject(n, base, value)
	}
	return value
}

func (co *coercer) convertArray(n *object, base string, value any) any {
	var prefix []any
	itemsList, itemsIsList := n.at("items").(*array)
	hasPrefix := false
	if itemsIsList {
		prefix, hasPrefix = itemsList.items, true
	} else if list, ok := n.at("prefixItems").(*array); ok {
		prefix, hasPrefix = list.items, true
	}
	if hasPrefix {
		// A tuple converts its items and never wraps a single value.
		arr, ok := value.(*array)
		if !ok {
			return value
		}
		var rest any = undefined
		if !itemsIsList {
			rest = n.at("items")
		}
		return mapItems(arr, func(item any, i int) any {
			schema := rest
			if i < len(prefix) {
				schema = prefix[i]
			}
			if schema == undefined {
				return item
			}
			return co.convert(schema, base, item)
		})
	}
	items, hasItems := n.get("items")
	if arr, ok := value.(*array); ok {
		if !hasItems {
			return value
		}
		return mapItems(arr, func(item any, _ int) any { return co.convert(items, base, item) })
	}
	// The wrapped single value is converted by the item schema with the same value: a re-entry point.
	if item, ok := items.(*object); ok {
		return &array{items: []any{co.reenter(item, base, value, false)}}
	}
	return &array{items: []any{value}}
}

func (co *coercer) convertObject(n *object, base string, value any) any {
	o, ok := value.(*object)
	if !ok {
		return value
	}
	properties, _ := n.at("properties").(*object)
	if properties == nil {
		properties = newObject(0)
	}
	patterns := co.patternsOf(n)
	additional, hasAdditional := n.at("additionalProperties").(*object)
	w := &objectWriter{value: o}
	for _, key := range o.keys {
		x := o.vals[key]
		if x == undefined {
			continue
		}
		next := x
		matched := properties.has(key)
		if matched {
			next = co.convert(properties.vals[key], base, next)
		}
		for _, p := range patterns {
			if !p.re.test(key) {
				continue
			}
			matched = true
			next = co.convert(p.schema, base, next)
		}
		if !matched && hasAdditional {
			next = co.convert(additional, base, next)
		}
		if next != x {
			if w.out == nil {
				w.out = o.clone()
			}
			w.out.set(key, next)
		}
	}
	return w.result()
}

// ---------------------------------------------------------------------------------------------------------------
// Pass 3: primitive coercion by type
// ---------------------------------------------------------------------------------------------------------------

func (co *coercer) coerceTypes(value any, schema any, base string) any {
	n, ok := schema.(*object)
	if !ok {
		return value
	}
	b := co.baseOf(n, base)
	next := value
	if list, ok := n.at("allOf").(*array); ok {
		for _, member := range list.items {
			next = co.coerceTypes(next, member, b)
		}
	}
	if list, ok := n.at("anyOf").(*array); ok {
		next = co.coerceUnion(next, list.items, b)
	}
	if list, ok := n.at("oneOf").(*array); ok {
		next = co.coerceUnion(next, list.items, b)
	}
	types := typeNames(n)
	matchesUnionMember := false
	if len(types) > 1 {
		for _, t := range types {
			if matchesType(next, t) {
				matchesUnionMember = true
			}
		}
	}
	if len(types) > 0 && !matchesUnionMember {
		for _, t := range types {
			if candidate := coercePrimitive(next, t); candidate != next {
				next = candidate
				break
			}
		}
	}
	if o, ok := next.(*object); ok && contains(types, "object") {
		next = co.coerceProperties(o, n, b)
	}
	if arr, ok := next.(*array); ok && contains(types, "array") {
		next = mapItems(arr, func(item any, i int) any {
			if itemSchema, ok := itemSchemaAt(n, i).(*object); ok {
				return co.coerceTypes(item, itemSchema, b)
			}
			return item
		})
	}
	return next
}

func (co *coercer) coerceUnion(value any, branches []any, base string) any {
	for _, branch := range branches {
		if co.passesTrue(branch, base, value) {
			return value
		}
	}
	for _, branch := range branches {
		coerced := co.coerceTypes(value, branch, base)
		if co.passesTrue(branch, base, coerced) {
			return coerced
		}
	}
	return value
}

func (co *coercer) coerceProperties(o *object, n *object, base string) any {
	properties, _ := n.at("properties").(*object)
	if properties == nil {
		properties = newObject(0)
	}
	patterns := co.patternsOf(n)
	additional, hasAdditional := n.at("additionalProperties").(*object)
	w := &objectWriter{value: o}
	for _, key := range properties.keys {
		if x, ok := o.get(key); ok {
			w.set(key, co.coerceTypes(x, properties.vals[key], base))
		}
	}
	for _, key := range o.keys {
		matched := properties.has(key)
		for _, p := range patterns {
			if !p.re.test(key) {
				continue
			}
			matched = true
			w.set(key, co.coerceTypes(w.current().at(key), p.schema, base))
		}
		if !matched && hasAdditional {
			w.set(key, co.coerceTypes(o.at(key), additional, base))
		}
	}
	return w.result()
}

// itemSchemaAt is the schema of an array's item at index: a tuple's for its prefix, then items; undefined when
// nothing applies.
func itemSchemaAt(n *object, index int) any {
	if list, ok := n.at("items").(*array); ok {
		if index < len(list.items) {
			return list.items[index]
		}
		return undefined
	}
	if list, ok := n.at("prefixItems").(*array); ok && index < len(list.items) {
		return list.items[index]
	}
	return n.at("items")
}

// mapItems is arr mapped by fn; arr itself when every item maps to itself.
func mapItems(arr *array, fn func(item any, i int) any) any {
	var out *array
	for i, item := range arr.items {
		next := fn(item, i)
		if next == item {
			continue
		}
		if out == nil {
			out = &array{items: append([]any(nil), arr.items...)}
		}
		out.items[i] = next
	}
	if out == nil {
		return arr
	}
	return out
}

// convertWith is the conversion of value by try, or value itself when try does not apply.
func convertWith(try func(any) (any, bool), value any) any {
	if result, ok := try(value); ok {
		return result
	}
	return value
}

// convertLiteral takes a literal (const, an enum value) from a value of another type that converts to exactly it.
func convertLiteral(literal, value any) any {
	if literal == value {
		return value
	}
	var result any
	var ok bool
	switch literal.(type) {
	case string:
		result, ok = tryString(value)
	case float64:
		result, ok = tryNumber(value)
	case bool:
		result, ok = tryBoolean(value)
	}
	if ok && result == literal {
		return result
	}
	return value
}

func tryString(value any) (any, bool) {
	switch x := value.(type) {
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		if isFiniteNumber(x) {
			return jsNumber(x), true
		}
	case nil:
		return "null", true
	case string:
		return x, true
	case undefinedValue:
		return "", true
	}
	return nil, false
}

const maxSafeInteger = 1<<53 - 1

var (
	bigIntSuffixed = regexp.MustCompile(`^-?(0|[1-9][0-9]*)n$`)
	bigIntDecimal  = regexp.MustCompile(`^-?(0|[1-9][0-9]*)\.[0-9]+$`)
	bigIntPlain    = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
)

func tryNumber(value any) (any, bool) {
	switch x := value.(type) {
	case bool:
		if x {
			return 1.0, true
		}
		return 0.0, true
	case float64:
		if isFiniteNumber(x) {
			return x, true
		}
		return nil, false
	case nil, undefinedValue:
		return 0.0, true
	case string:
		if coerced := jsToNumber(x); isFiniteNumber(coerced) {
			return coerced, true
		}
		switch strings.ToLower(x) {
		case "false":
			return 0.0, true
		case "true":
			return 1.0, true
		}
		// TypeBox's TryBigInt of a string: `12n`, `12.5` (truncated) or `12`, within the safe integers.
		var digits string
		switch {
		case bigIntSuffixed.MatchString(x):
			digits = x[:len(x)-1]
		case bigIntDecimal.MatchString(x):
			digits, _, _ = strings.Cut(x, ".")
		case bigIntPlain.MatchString(x):
			digits = x
		default:
			return nil, false
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n > maxSafeInteger || n < -maxSafeInteger {
			return nil, false
		}
		return float64(n), true
	}
	return nil, false
}

func tryBoolean(value any) (any, bool) {
	switch x := value.(type) {
	case bool:
		return x, true
	case float64:
		if x == 0 {
			return false, true
		}
		if x == 1 {
			return true, true
		}
	case nil, undefinedValue:
		return false, true
	case string:
		lower := strings.ToLower(x)
		if lower == "false" || x == "0" {
			return false, true
		}
		if lower == "true" || x == "1" {
			return true, true
		}
	}
	return nil, false
}

func tryNull(value any) (any, bool) {
	switch x := value.(type) {
	case bool:
		if !x {
			return nil, true
		}
	case float64:
		if x == 0 {
			return nil, true
		}
	case nil, undefinedValue:
		return nil, true
	case string:
		lower := strings.ToLower(x)
		if lower == "undefined" || lower == "null" || x == "" || x == "0" {
			return nil, true
		}
	}
	return nil, false
}

// typeNames is a node's `type` names (a string, or the strings of a list).
func typeNames(n *object) []string {
	switch t := n.at("type").(type) {
	case string:
		return []string{t}
	case *array:
		var names []string
		for _, item := range t.items {
			if s, ok := item.(string); ok {
				names = append(names, s)
			}
		}
		return names
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func matchesType(value any, typ string) bool {
	switch typ {
	case "number":
		return isFiniteNumber(value)
	case "integer":
		return isInteger(value)
	case "boolean":
		_, ok := value.(bool)
		return ok
	case "string":
		_, ok := value.(string)
		return ok
	case "null":
		return value == nil
	case "undefined":
		return value == undefined
	case "array":
		_, ok := value.(*array)
		return ok
	case "object":
		return isPlainObject(value)
	}
	return false
}

func coercePrimitive(value any, typ string) any {
	switch typ {
	case "number", "integer":
		switch x := value.(type) {
		case nil:
			return 0.0
		case string:
			if jsTrim(x) != "" {
				parsed := jsToNumber(x)
				if (typ == "number" && isFiniteNumber(parsed)) || (typ == "integer" && isInteger(parsed)) {
					return parsed
				}
			}
		case bool:
			if x {
				return 1.0
			}
			return 0.0
		}
	case "boolean":
		switch value {
		case nil:
			return false
		case "true", 1.0:
			return true
		case "false", 0.0:
			return false
		}
	case "string":
		switch x := value.(type) {
		case nil:
			return ""
		case float64:
			return jsNumber(x)
		case bool:
			return strconv.FormatBool(x)
		}
	case "null":
		switch value {
		case "", 0.0, false:
			return nil
		}
	}
	return value
}
