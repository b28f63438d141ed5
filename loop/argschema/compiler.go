package argschema

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// A port of pi-schema's compiler.js and checks.js: a schema to one boolean check closure, built once and cached by
// schema object. pi-schema's specializations (leaf codes, declared-object loops, tagged and const unions) are
// performance work with the same answers; they are written here as the plain keyword checks they stand for.

// checkFn is a compiled schema: whether a value is valid.
type checkFn func(v any) bool

// annotatedFn is a compiled schema that also records what it evaluated, for unevaluatedProperties/Items.
type annotatedFn func(v any, a *annotations) bool

// compileError is raised (as a panic, like a JavaScript throw) by an invalid schema and recovered at the package
// boundary.
type compileError struct {
	msg string
}

func (e compileError) Error() string { return e.msg }

// restartSignal is raised by a compile without dynamic scope tracking that meets a bookended $dynamicRef.
type restartSignal struct{}

// stackOverflow is raised by a check that recursed through references deeper than maxRecursion: a schema that
// refers to itself without consuming the value (`anyOf: [{ $ref: "#" }]`). V8 throws a RangeError there; a Go stack
// overflow would end the process instead.
type stackOverflow struct{}

// maxRecursion bounds the nesting of recursive references during one check.
const maxRecursion = 10000

// stackOverflowMessage is V8's RangeError message.
const stackOverflowMessage = "Maximum call stack size exceeded"

func always(any) bool { return true }
func never(any) bool  { return false }

// typeChecks are pi-schema's TYPE_CHECKS. bytes and bigint are JavaScript-only values that no JSON value is; a
// number is finite.
var typeChecks = map[string]checkFn{
	"string":    func(v any) bool { _, ok := v.(string); return ok },
	"number":    isFiniteNumber,
	"integer":   isInteger,
	"boolean":   func(v any) bool { _, ok := v.(bool); return ok },
	"null":      func(v any) bool { return v == nil },
	"array":     func(v any) bool { _, ok := v.(*array); return ok },
	"object":    isPlainObject,
	"bytes":     never,
	"bigint":    never,
	"undefined": func(v any) bool { return v == undefined },
}

// neutralKeywords never affect a check.
var neutralKeywords = map[string]bool{
	"$schema": true, "$comment": true, "title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$defs": true, "definitions": true,
	"contentEncoding": true, "contentMediaType": true, "minContains": true, "maxContains": true, "$vocabulary": true,
}

// objectExtras are the object keywords besides the core (properties, required, patternProperties,
// additionalProperties).
var objectExtras = []string{"propertyNames", "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "dependencies"}

// annotatingKeywords are handled by an annotating check itself; every other keyword compiles into its plain part.
var annotatingKeywords = map[string]bool{
	"properties": true, "patternProperties": true, "additionalProperties": true, "prefixItems": true, "items": true,
	"additionalItems": true, "contains": true, "minContains": true, "maxContains": true, "allOf": true, "anyOf": true,
	"oneOf": true, "if": true, "then": true, "else": true, "$ref": true, "$dynamicRef": true, "dependentSchemas": true,
	"unevaluatedProperties": true, "unevaluatedItems": true,
}

// compiler compiles one schema (draft 2020-12, as pi-ai compiles every tool schema).
type compiler struct {
	schema   any
	r        *resolver
	formats  map[string]func(string) bool
	dynamic  bool
	scope    []string
	cache    map[*object]checkFn
	annCache map[*object]annotatedFn
	regexes  map[string]*jsRegexp
	// depth is how deep checks are nested in recursive references.
	depth int
}

func newCompiler(schema any, dynamic bool) *compiler {
	return &compiler{
		schema:   schema,
		r:        newResolver(schema),
		formats:  formats,
		dynamic:  dynamic,
		cache:    map[*object]checkFn{},
		annCache: map[*object]annotatedFn{},
		regexes:  map[string]*jsRegexp{},
	}
}

func (c *compiler) root() checkFn {
	return c.check(c.schema, c.r.rootBase)
}

// regex is pi-schema's sharedRegex, cached per compile.
func (c *compiler) regex(source string) *jsRegexp {
	if re, ok := c.regexes[source]; ok {
		return re
	}
	re, err := compileJSRegexp(source)
	if err != nil {
		panic(compileError{err.Error()})
	}
	c.regexes[source] = re
	return re
}

func notASchema(node any) compileError {
	return compileError{"A schema must be an object or a boolean, got " + jsonStringify(node, "")}
}

// check is the check of a schema, cached by schema object; a recursive reference goes through an indirection.
func (c *compiler) check(node any, base string) checkFn {
	switch n := node.(type) {
	case bool:
		if n {
			return always
		}
		return never
	case *object:
		if cached, ok := c.cache[n]; ok {
			return cached
		}
		if bare := bareType(n); bare != nil {
			return bare
		}
		var slot checkFn
		c.cache[n] = func(v any) bool {
			c.enter()
			defer c.leave()
			return slot(v)
		}
		done := false
		defer func() {
			if !done {
				delete(c.cache, n)
			}
		}()
		chk := c.build(n, c.r.baseFor(n, base))
		slot = chk
		c.cache[n] = chk
		done = true
		return chk
	default:
		panic(notASchema(node))
	}
}

// enter and leave bracket a recursive reference.
func (c *compiler) enter() {
	c.depth++
	if c.depth > maxRecursion {
		panic(stackOverflow{})
	}
}

func (c *compiler) leave() { c.depth-- }

func (c *compiler) build(n *object, base string) checkFn {
	if n.has("unevaluatedProperties") || n.has("unevaluatedItems") {
		ann := c.annotating(n, base)
		return func(v any) bool { return ann(v, &annotations{}) }
	}
	chk := c.plain(n, base)
	if c.dynamic && c.r.isResource(n, base) {
		return c.scoped(base, chk)
	}
	return chk
}

// scoped runs chk with uri pushed onto the dynamic scope.
func (c *compiler) scoped(uri string, chk checkFn) checkFn {
	return func(v any) bool {
		c.scope = append(c.scope, uri)
		ok := chk(v)
		c.scope = c.scope[:len(c.scope)-1]
		return ok
	}
}

// bareType is the shared check of a schema that is only a `type` (with annotations), `always` for one without any
// assertion, nil for every other schema.
func bareType(n *object) checkFn {
	var typ any = undefined
	for _, k := range n.keys {
		if k == "type" {
			typ = n.vals[k]
		} else if !neutralKeywords[k] {
			return nil
		}
	}
	if typ == undefined {
		return always
	}
	if s, ok := typ.(string); ok {
		return typeChecks[s]
	}
	return nil
}

// isBareTypeCheck reports a schema whose check is one of typeChecks: only a known `type` name and annotations.
func isBareTypeCheck(n *object) bool {
	t, ok := n.at("type").(string)
	_, known := typeChecks[t]
	return ok && known && bareType(n) != nil
}

// number is a keyword's value when it is a number.
func number(n *object, k string) (float64, bool) {
	f, ok := n.at(k).(float64)
	return f, ok
}

// orDefault is a number keyword or its default.
func orDefault(n *object, k string, def float64) float64 {
	if f, ok := number(n, k); ok {
		return f
	}
	return def
}

// typesOf is a node's `type` as a list, nil when it has none.
func typesOf(n *object) ([]any, bool) {
	t, ok := n.get("type")
	if !ok {
		return nil, false
	}
	if list, ok := t.(*array); ok {
		return list.items, true
	}
	return []any{t}, true
}

// plain compiles every keyword of n, not tracking annotations.
func (c *compiler) plain(n *object, base string) checkFn {
	var parts []checkFn
	types, hasType := typesOf(n)
	single := ""
	if len(types) == 1 {
		single, _ = types[0].(string)
	}
	typeInGroup := false
	if single == "bytes" {
		parts = append(parts, never)
		typeInGroup = true
	} else {
		str := c.stringGroup(n, single == "string")
		if str != nil {
			parts = append(parts, str)
		}
		mode := 0
		switch single {
		case "number":
			mode = 1
		case "integer":
			mode = 2
		case "bigint":
			mode = 3
		}
		num := numberGroup(n, mode)
		if num != nil {
			parts = append(parts, num)
		}
		obj := c.objectGroup(n, base, single == "object")
		if obj != nil {
			parts = append(parts, obj)
		}
		arr := c.arrayGroup(n, base, single == "array")
		if arr != nil {
			parts = append(parts, arr)
		}
		typeInGroup = (single == "string" && str != nil) || (mode != 0 && num != nil) ||
			(single == "object" && obj != nil) || (single == "array" && arr != nil)
	}
	if hasType && !typeInGroup {
		parts = append([]checkFn{typeCheck(types)}, parts...)
	}
	parts = c.inPlace(n, base, parts)
	return and(parts)
}

// inPlace adds the keywords that apply to the value itself, whatever its type.
func (c *compiler) inPlace(n *object, base string, parts []checkFn) []checkFn {
	if list, ok := n.at("enum").(*array); ok {
		parts = append(parts, enumCheck(list.items))
	}
	if value, ok := n.get("const"); ok {
		parts = append(parts, func(v any) bool { return deepEqual(v, value) })
	}
	if list, ok := n.at("allOf").(*array); ok {
		parts = append(parts, and(c.checks(list.items, base)))
	}
	if list, ok := n.at("anyOf").(*array); ok {
		// pi-schema tests the branches that are only a type first (one type test for all of them), then the others.
		// The answer is the same; the order decides whether a branch that recurses without end is reached.
		var bare, rest []checkFn
		for i, chk := range c.checks(list.items, base) {
			if s, ok := list.items[i].(*object); ok && isBareTypeCheck(s) {
				bare = append(bare, chk)
			} else {
				rest = append(rest, chk)
			}
		}
		parts = append(parts, anyCheck(append(bare, rest...)))
	}
	if list, ok := n.at("oneOf").(*array); ok {
		parts = append(parts, oneCheck(c.checks(list.items, base)))
	}
	if not, ok := n.get("not"); ok {
		chk := c.check(not, base)
		parts = append(parts, func(v any) bool { return !chk(v) })
	}
	if cond, ok := n.get("if"); ok && (n.has("then") || n.has("else")) {
		then, otherwise := checkFn(always), checkFn(always)
		if s, ok := n.get("then"); ok {
			then = c.check(s, base)
		}
		if s, ok := n.get("else"); ok {
			otherwise = c.check(s, base)
		}
		test := c.check(cond, base)
		parts = append(parts, func(v any) bool {
			if test(v) {
				return then(v)
			}
			return otherwise(v)
		})
	}
	if ref, ok := n.at("$ref").(string); ok {
		parts = append(parts, c.ref(ref, base))
	}
	if ref, ok := n.at("$dynamicRef").(string); ok {
		parts = append(parts, c.dynamicRef(ref, base))
	}
	return parts
}

func (c *compiler) checks(nodes []any, base string) []checkFn {
	out := make([]checkFn, len(nodes))
	for i, s := range nodes {
		out[i] = c.check(s, base)
	}
	return out
}

func (c *compiler) ref(ref, base string) checkFn {
	t := c.r.resolve(ref, base)
	chk := c.check(t.node, t.base)
	if c.dynamic && t.base != base {
		return c.scoped(t.base, chk)
	}
	return chk
}

func (c *compiler) dynamicRef(ref, base string) checkFn {
	initial, name, ok := c.bookended(ref, base)
	if !ok {
		return c.ref(ref, base)
	}
	fallback := c.check(initial.node, initial.base)
	lookup := c.dynamicLookup(name, func(node *object, b string) any { return c.check(node, b) })
	return func(v any) bool {
		for _, uri := range c.scope {
			if chk := lookup(uri); chk != nil {
				return chk.(checkFn)(v)
			}
		}
		return fallback(v)
	}
}

// bookended is the initial target and anchor name of a $dynamicRef that resolves dynamically; ok is false for one
// that acts as a plain $ref.
func (c *compiler) bookended(ref, base string) (initial target, name string, ok bool) {
	initial = c.r.resolve(ref, base)
	uri := resolveURI(ref, base)
	name = ""
	if doc := documentOf(uri); len(uri) > len(doc) {
		name = uri[len(doc)+1:]
	}
	node, isObject := initial.node.(*object)
	anchored := isObject && node.at("$dynamicAnchor") == any(name)
	if name == "" || strings.HasPrefix(name, "/") || !anchored {
		return target{}, "", false
	}
	if !c.dynamic {
		panic(restartSignal{})
	}
	return initial, name, true
}

// dynamicLookup finds, at run time, the schema a dynamic anchor names in a resource of the dynamic scope.
func (c *compiler) dynamicLookup(name string, compile func(*object, string) any) func(uri string) any {
	found := map[string]any{}
	return func(uri string) any {
		key := uri + "#" + name
		chk, ok := found[key]
		if !ok {
			if t, ok := c.r.dynamicAnchors[key]; ok {
				b, ok := c.r.baseOf[t]
				if !ok {
					b = uri
				}
				chk = compile(t, b)
			}
			found[key] = chk
		}
		return chk
	}
}

func (c *compiler) stringGroup(n *object, strict bool) checkFn {
	minLen := orDefault(n, "minLength", 0)
	maxLen := orDefault(n, "maxLength", math.Inf(1))
	var re *jsRegexp
	if p, ok := n.at("pattern").(string); ok {
		re = c.regex(p)
	}
	var format func(string) bool
	if name, ok := n.at("format").(string); ok {
		format = c.formats[name]
	}
	if minLen == 0 && math.IsInf(maxLen, 1) && re == nil && format == nil {
		return nil
	}
	return func(v any) bool {
		s, ok := v.(string)
		if !ok {
			return !strict
		}
		count := float64(codePoints(s))
		return count >= minLen && count <= maxLen && (re == nil || re.test(s)) && (format == nil || format(s))
	}
}

// numberGroup compiles the number keywords. mode: 0 passes other types, 1 requires a number, 2 an integer, 3 a
// bigint (which no JSON value is).
func numberGroup(n *object, mode int) checkFn {
	minimum, hasMin := number(n, "minimum")
	maximum, hasMax := number(n, "maximum")
	xmin, hasXmin := number(n, "exclusiveMinimum")
	xmax, hasXmax := number(n, "exclusiveMaximum")
	multipleOf, hasMultiple := number(n, "multipleOf")
	if !hasMin && !hasMax && !hasXmin && !hasXmax && !hasMultiple {
		return nil
	}
	inf := math.Inf(1)
	if !hasMin {
		minimum = -inf
	}
	if !hasMax {
		maximum = inf
	}
	if !hasXmin {
		xmin = -inf
	}
	if !hasXmax {
		xmax = inf
	}
	return func(v any) bool {
		f, ok := v.(float64)
		if !ok {
			return mode == 0
		}
		if mode == 3 || (mode != 0 && !isFiniteNumber(f)) {
			return false
		}
		if mode == 2 && !isInteger(f) {
			return false
		}
		return f >= minimum && f <= maximum && f > xmin && f < xmax && (!hasMultiple || isMultiple(f, multipleOf))
	}
}

// isMultiple reports whether v is a multiple of d, exactly for decimals (0.0075 / 0.0001 is 74.99999999999999 in
// floating point), as checks.js does through the numbers' shortest decimal forms.
func isMultiple(v, d float64) bool {
	q := v / d
	if isInteger(q) {
		return true
	}
	if math.IsInf(q, 0) || math.IsNaN(q) {
		return math.Mod(v, d) == 0
	}
	vc, ve := decimal(v)
	dc, de := decimal(d)
	ten := big.NewInt(10)
	if ve >= de {
		scaled := new(big.Int).Mul(vc, new(big.Int).Exp(ten, big.NewInt(int64(ve-de)), nil))
		return new(big.Int).Rem(scaled, dc).Sign() == 0
	}
	scaled := new(big.Int).Mul(dc, new(big.Int).Exp(ten, big.NewInt(int64(de-ve)), nil))
	return new(big.Int).Rem(vc, scaled).Sign() == 0
}

// decimal is |x| as a coefficient and a power of ten, read from its JavaScript text.
func decimal(x float64) (*big.Int, int) {
	mantissa, exponent, _ := strings.Cut(jsNumber(math.Abs(x)), "e")
	exp := 0
	if exponent != "" {
		exp, _ = strconv.Atoi(exponent)
	}
	fraction := 0
	if point := strings.IndexByte(mantissa, '.'); point >= 0 {
		fraction = len(mantissa) - point - 1
	}
	coefficient, _ := new(big.Int).SetString(strings.Replace(mantissa, ".", "", 1), 10)
	return coefficient, exp - fraction
}

func (c *compiler) objectGroup(n *object, base string, strict bool) checkFn {
	onlyCore := true
	for _, k := range objectExtras {
		if n.has(k) {
			onlyCore = false
		}
	}
	core := c.objectCore(n, base)
	var parts []checkFn
	if core != nil {
		parts = append(parts, core)
	}
	if !onlyCore {
		if names, ok := n.get("propertyNames"); ok {
			chk := c.check(names, base)
			parts = append(parts, func(v any) bool {
				for _, k := range v.(*object).keys {
					if !chk(k) {
						return false
					}
				}
				return true
			})
		}
		minProps, hasMin := number(n, "minProperties")
		maxProps, hasMax := number(n, "maxProperties")
		if hasMin || hasMax {
			if !hasMin {
				minProps = 0
			}
			if !hasMax {
				maxProps = math.Inf(1)
			}
			parts = append(parts, func(v any) bool {
				count := float64(len(v.(*object).keys))
				return count >= minProps && count <= maxProps
			})
		}
		type dependentSchema struct {
			key string
			chk checkFn
		}
		var requiredBy [][2]any
		var schemas []dependentSchema
		if m, ok := n.at("dependentRequired").(*object); ok {
			for _, k := range m.keys {
				if list, ok := m.vals[k].(*array); ok {
					requiredBy = append(requiredBy, [2]any{k, list})
				}
			}
		}
		if m, ok := n.at("dependentSchemas").(*object); ok {
			for _, k := range m.keys {
				schemas = append(schemas, dependentSchema{k, c.check(m.vals[k], base)})
			}
		}
		if m, ok := n.at("dependencies").(*object); ok {
			for _, k := range m.keys {
				if list, ok := m.vals[k].(*array); ok {
					requiredBy = append(requiredBy, [2]any{k, list})
				} else {
					schemas = append(schemas, dependentSchema{k, c.check(m.vals[k], base)})
				}
			}
		}
		if len(requiredBy) > 0 {
			parts = append(parts, func(v any) bool {
				o := v.(*object)
				for _, entry := range requiredBy {
					if !o.has(entry[0].(string)) {
						continue
					}
					for _, r := range entry[1].(*array).items {
						if !o.has(propertyKey(r)) {
							return false
						}
					}
				}
				return true
			})
		}
		if len(schemas) > 0 {
			parts = append(parts, func(v any) bool {
				o := v.(*object)
				for _, s := range schemas {
					if o.has(s.key) && !s.chk(v) {
						return false
					}
				}
				return true
			})
		}
	}
	if len(parts) == 0 {
		if strict {
			return typeChecks["object"]
		}
		return nil
	}
	inner := and(parts)
	if strict {
		return func(v any) bool { return isPlainObject(v) && inner(v) }
	}
	return func(v any) bool { return !isPlainObject(v) || inner(v) }
}

// propertyKey is a value as a property name (JavaScript's ToPropertyKey).
func propertyKey(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return jsString(v, false)
}

// objectCore compiles properties, required, patternProperties and additionalProperties; it is applied only to
// objects.
func (c *compiler) objectCore(n *object, base string) checkFn {
	properties, _ := n.at("properties").(*object)
	if properties == nil {
		properties = newObject(0)
	}
	var required []string
	if list, ok := n.at("required").(*array); ok {
		for _, k := range list.items {
			if s, ok := k.(string); ok {
				required = append(required, s)
			}
		}
	}
	patterns, _ := n.at("patternProperties").(*object)
	if patterns == nil {
		patterns = newObject(0)
	}
	additional, hasAdditional := n.get("additionalProperties")
	if len(properties.keys)+len(required)+len(patterns.keys) == 0 && (!hasAdditional || additional == true) {
		return nil
	}
	type declared struct {
		key      string
		chk      checkFn
		required bool
	}
	isRequired := map[string]bool{}
	for _, k := range required {
		isRequired[k] = true
	}
	entries := make([]declared, len(properties.keys))
	for i, k := range properties.keys {
		entries[i] = declared{k, c.check(properties.vals[k], base), isRequired[k]}
	}
	var extraRequired []string
	for _, k := range required {
		if !properties.has(k) {
			extraRequired = append(extraRequired, k)
		}
	}
	type patternEntry struct {
		re  *jsRegexp
		chk checkFn
	}
	pats := make([]patternEntry, len(patterns.keys))
	for i, p := range patterns.keys {
		pats[i] = patternEntry{c.regex(p), c.check(patterns.vals[p], base)}
	}
	var extra checkFn
	if hasAdditional && additional != true {
		extra = c.check(additional, base)
	}
	return func(v any) bool {
		o, ok := v.(*object)
		if !ok {
			return true
		}
		for _, e := range entries {
			x, present := o.get(e.key)
			if !present {
				if e.required {
					return false
				}
				continue
			}
			if !e.chk(x) {
				return false
			}
		}
		for _, k := range extraRequired {
			if !o.has(k) {
				return false
			}
		}
		if len(pats) == 0 && extra == nil {
			return true
		}
		for _, k := range o.keys {
			matched := properties.has(k)
			for _, p := range pats {
				if p.re.test(k) {
					matched = true
					if !p.chk(o.vals[k]) {
						return false
					}
				}
			}
			if !matched && extra != nil && !extra(o.vals[k]) {
				return false
			}
		}
		return true
	}
}

func (c *compiler) arrayGroup(n *object, base string, strict bool) checkFn {
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
	prefixChecks := c.checks(prefix, base)
	var restCheck checkFn
	if rest != undefined && rest != true {
		restCheck = c.check(rest, base)
	}
	var parts []checkFn
	if len(prefixChecks) > 0 || restCheck != nil {
		parts = append(parts, func(v any) bool {
			items := v.(*array).items
			for i, item := range items {
				if i < len(prefixChecks) {
					if !prefixChecks[i](item) {
						return false
					}
				} else if restCheck != nil && !restCheck(item) {
					return false
				}
			}
			return true
		})
	}
	minItems, hasMin := number(n, "minItems")
	maxItems, hasMax := number(n, "maxItems")
	if hasMin || hasMax {
		if !hasMin {
			minItems = 0
		}
		if !hasMax {
			maxItems = math.Inf(1)
		}
		parts = append(parts, func(v any) bool {
			count := float64(len(v.(*array).items))
			return count >= minItems && count <= maxItems
		})
	}
	if contains, ok := n.get("contains"); ok {
		chk := c.check(contains, base)
		minContains := orDefault(n, "minContains", 1)
		maxContains := orDefault(n, "maxContains", math.Inf(1))
		parts = append(parts, containsCheck(chk, minContains, maxContains))
	}
	if n.at("uniqueItems") == true {
		parts = append(parts, func(v any) bool { return uniqueItems(v.(*array).items) })
	}
	if len(parts) == 0 {
		if strict {
			return typeChecks["array"]
		}
		return nil
	}
	inner := and(parts)
	if strict {
		return func(v any) bool { _, ok := v.(*array); return ok && inner(v) }
	}
	return func(v any) bool { _, ok := v.(*array); return !ok || inner(v) }
}

// containsCheck is `contains` with its bounds, for an array.
func containsCheck(chk checkFn, minContains, maxContains float64) checkFn {
	return func(v any) bool {
		count := 0.0
		for _, item := range v.(*array).items {
			if chk(item) {
				count++
				if count > maxContains {
					return false
				}
			}
		}
		return count >= minContains
	}
}

func uniqueItems(items []any) bool {
	for i := 1; i < len(items); i++ {
		for j := 0; j < i; j++ {
			if deepEqual(items[i], items[j]) {
				return false
			}
		}
	}
	return true
}

// typeCheck is any of the named types; names it does not know match nothing.
func typeCheck(types []any) checkFn {
	var checks []checkFn
	for _, t := range types {
		if s, ok := t.(string); ok {
			if chk, ok := typeChecks[s]; ok {
				checks = append(checks, chk)
			}
		}
	}
	return anyCheck(checks)
}

func enumCheck(values []any) checkFn {
	return func(v any) bool {
		for _, x := range values {
			if deepEqual(v, x) {
				return true
			}
		}
		return false
	}
}

func and(parts []checkFn) checkFn {
	switch len(parts) {
	case 0:
		return always
	case 1:
		return parts[0]
	}
	return func(v any) bool {
		for _, p := range parts {
			if !p(v) {
				return false
			}
		}
		return true
	}
}

func anyCheck(checks []checkFn) checkFn {
	return func(v any) bool {
		for _, chk := range checks {
			if chk(v) {
				return true
			}
		}
		return false
	}
}

func oneCheck(checks []checkFn) checkFn {
	return func(v any) bool {
		count := 0
		for _, chk := range checks {
			if chk(v) {
				count++
				if count > 1 {
					return false
				}
			}
		}
		return count == 1
	}
}
