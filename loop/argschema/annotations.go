package argschema

import "math"

// A port of pi-schema's annotations.js and the compiler's annotating checks: only schemas with
// unevaluatedProperties or unevaluatedItems compile into these, recording which properties and items they evaluated.

// annotations are the properties and items a schema evaluated.
type annotations struct {
	props    map[string]bool
	allProps bool
	items    int
	allItems bool
	indexes  map[int]bool
}

func (a *annotations) merge(b *annotations) {
	for k := range b.props {
		a.addProp(k)
	}
	a.allProps = a.allProps || b.allProps
	if b.items > a.items {
		a.items = b.items
	}
	a.allItems = a.allItems || b.allItems
	for i := range b.indexes {
		a.addIndex(i)
	}
}

func (a *annotations) addProp(k string) {
	if a.props == nil {
		a.props = map[string]bool{}
	}
	a.props[k] = true
}

func (a *annotations) addIndex(i int) {
	if a.indexes == nil {
		a.indexes = map[int]bool{}
	}
	a.indexes[i] = true
}

// annotating is the annotating check of a schema evaluated in place (only below unevaluated*).
func (c *compiler) annotating(node any, base string) annotatedFn {
	switch n := node.(type) {
	case bool:
		return func(any, *annotations) bool { return n }
	case *object:
		if cached, ok := c.annCache[n]; ok {
			return cached
		}
		var slot annotatedFn
		c.annCache[n] = func(v any, a *annotations) bool {
			c.enter()
			defer c.leave()
			return slot(v, a)
		}
		done := false
		defer func() {
			if !done {
				delete(c.annCache, n)
			}
		}()
		chk := c.buildAnnotating(n, c.r.baseFor(n, base))
		slot = chk
		c.annCache[n] = chk
		done = true
		return chk
	default:
		panic(notASchema(node))
	}
}

func (c *compiler) buildAnnotating(n *object, base string) annotatedFn {
	rest := newObject(len(n.keys))
	annotates := false
	for _, k := range n.keys {
		if annotatingKeywords[k] {
			annotates = true
		} else {
			rest.set(k, n.vals[k])
		}
	}
	plain := c.plain(rest, base)
	var parts []annotatedFn
	if annotates {
		parts = c.annotatingParts(n, base)
	}
	all := func(v any, a *annotations) bool {
		if !plain(v) {
			return false
		}
		for _, p := range parts {
			if !p(v, a) {
				return false
			}
		}
		return true
	}
	own := all
	if n.has("unevaluatedProperties") || n.has("unevaluatedItems") {
		// unevaluated* sees only the annotations of its own schema, never those of its siblings in the parent.
		own = func(v any, a *annotations) bool {
			b := &annotations{}
			if !all(v, b) {
				return false
			}
			a.merge(b)
			return true
		}
	}
	if c.dynamic && c.r.isResource(n, base) {
		inner := own
		return func(v any, a *annotations) bool {
			c.scope = append(c.scope, base)
			ok := inner(v, a)
			c.scope = c.scope[:len(c.scope)-1]
			return ok
		}
	}
	return own
}

func (c *compiler) annotatingParts(n *object, base string) []annotatedFn {
	var parts []annotatedFn
	if n.has("properties") || n.has("patternProperties") || n.has("additionalProperties") {
		parts = append(parts, c.annotateObject(n, base))
	}
	if n.has("prefixItems") || n.has("items") || n.has("contains") {
		parts = append(parts, c.annotateArray(n, base))
	}
	if list, ok := n.at("allOf").(*array); ok {
		for _, s := range list.items {
			parts = append(parts, c.annotating(s, base))
		}
	}
	if list, ok := n.at("anyOf").(*array); ok {
		parts = append(parts, annotateAny(c.annotatingList(list.items, base), false))
	}
	if list, ok := n.at("oneOf").(*array); ok {
		parts = append(parts, annotateAny(c.annotatingList(list.items, base), true))
	}
	if cond, ok := n.get("if"); ok {
		var then, otherwise annotatedFn
		if s, ok := n.get("then"); ok {
			then = c.annotating(s, base)
		}
		if s, ok := n.get("else"); ok {
			otherwise = c.annotating(s, base)
		}
		test := c.annotating(cond, base)
		parts = append(parts, func(v any, a *annotations) bool {
			b := &annotations{}
			if test(v, b) {
				a.merge(b)
				return then == nil || then(v, a)
			}
			return otherwise == nil || otherwise(v, a)
		})
	}
	if ref, ok := n.at("$ref").(string); ok {
		parts = append(parts, c.annotatingRef(ref, base))
	}
	if ref, ok := n.at("$dynamicRef").(string); ok {
		parts = append(parts, c.annotatingDynamicRef(ref, base))
	}
	if m, ok := n.at("dependentSchemas").(*object); ok {
		for _, k := range m.keys {
			key, chk := k, c.annotating(m.vals[k], base)
			parts = append(parts, func(v any, a *annotations) bool {
				o, ok := v.(*object)
				return !ok || !o.has(key) || chk(v, a)
			})
		}
	}
	if s, ok := n.get("unevaluatedProperties"); ok {
		chk := c.check(s, base)
		parts = append(parts, func(v any, a *annotations) bool {
			o, ok := v.(*object)
			if !ok || a.allProps {
				return true
			}
			for _, k := range o.keys {
				if !a.props[k] && !chk(o.vals[k]) {
					return false
				}
			}
			a.allProps = true
			return true
		})
	}
	if s, ok := n.get("unevaluatedItems"); ok {
		chk := c.check(s, base)
		parts = append(parts, func(v any, a *annotations) bool {
			arr, ok := v.(*array)
			if !ok || a.allItems {
				return true
			}
			for i := a.items; i < len(arr.items); i++ {
				if !a.indexes[i] && !chk(arr.items[i]) {
					return false
				}
			}
			a.allItems = true
			return true
		})
	}
	return parts
}

func (c *compiler) annotatingList(nodes []any, base string) []annotatedFn {
	out := make([]annotatedFn, len(nodes))
	for i, s := range nodes {
		out[i] = c.annotating(s, base)
	}
	return out
}

// annotateObject is properties, patternProperties and additionalProperties, recording the keys they evaluated.
func (c *compiler) annotateObject(n *object, base string) annotatedFn {
	type entry struct {
		key string
		chk checkFn
	}
	type patternEntry struct {
		re  *jsRegexp
		chk checkFn
	}
	var props []entry
	declared := map[string]bool{}
	if m, ok := n.at("properties").(*object); ok {
		for _, k := range m.keys {
			props = append(props, entry{k, c.check(m.vals[k], base)})
			declared[k] = true
		}
	}
	var pats []patternEntry
	if m, ok := n.at("patternProperties").(*object); ok {
		for _, p := range m.keys {
			pats = append(pats, patternEntry{c.regex(p), c.check(m.vals[p], base)})
		}
	}
	var extra checkFn
	if s, ok := n.get("additionalProperties"); ok {
		extra = c.check(s, base)
	}
	return func(v any, a *annotations) bool {
		o, ok := v.(*object)
		if !ok {
			return true
		}
		var seen []string
		for _, p := range props {
			x, ok := o.get(p.key)
			if !ok {
				continue
			}
			if !p.chk(x) {
				return false
			}
			seen = append(seen, p.key)
		}
		for _, k := range o.keys {
			matched := declared[k]
			for _, p := range pats {
				if p.re.test(k) {
					if !p.chk(o.vals[k]) {
						return false
					}
					matched = true
					seen = append(seen, k)
				}
			}
			if !matched && extra != nil {
				if !extra(o.vals[k]) {
					return false
				}
				seen = append(seen, k)
			}
		}
		for _, k := range seen {
			a.addProp(k)
		}
		return true
	}
}

// annotateArray is prefixItems/items/additionalItems and contains, recording the items they evaluated.
func (c *compiler) annotateArray(n *object, base string) annotatedFn {
	var prefixNodes []any
	if list, ok := n.at("prefixItems").(*array); ok {
		prefixNodes = list.items
	} else if list, ok := n.at("items").(*array); ok {
		prefixNodes = list.items
	}
	var restNode any
	if _, ok := n.at("items").(*array); ok {
		restNode = n.at("additionalItems")
	} else {
		restNode = n.at("items")
	}
	prefix := c.checks(prefixNodes, base)
	var rest checkFn
	if restNode != undefined {
		rest = c.check(restNode, base)
	}
	var contains checkFn
	if s, ok := n.get("contains"); ok {
		contains = c.check(s, base)
	}
	minContains := orDefault(n, "minContains", 1)
	maxContains := orDefault(n, "maxContains", math.Inf(1))
	return func(v any, a *annotations) bool {
		arr, ok := v.(*array)
		if !ok {
			return true
		}
		m := min(len(arr.items), len(prefix))
		for i := 0; i < m; i++ {
			if !prefix[i](arr.items[i]) {
				return false
			}
		}
		if rest != nil {
			for i := len(prefix); i < len(arr.items); i++ {
				if !rest(arr.items[i]) {
					return false
				}
			}
			a.allItems = true
		}
		if m > a.items {
			a.items = m
		}
		if contains != nil {
			count := 0.0
			for i, item := range arr.items {
				if contains(item) {
					count++
					a.addIndex(i)
				}
			}
			if count < minContains || count > maxContains {
				return false
			}
		}
		return true
	}
}

// annotateAny is anyOf (or oneOf when exactlyOne): every passing branch contributes its annotations.
func annotateAny(branches []annotatedFn, exactlyOne bool) annotatedFn {
	return func(v any, a *annotations) bool {
		count := 0
		for _, branch := range branches {
			b := &annotations{}
			if branch(v, b) {
				count++
				a.merge(b)
			}
		}
		if exactlyOne {
			return count == 1
		}
		return count > 0
	}
}

func (c *compiler) annotatingRef(ref, base string) annotatedFn {
	t := c.r.resolve(ref, base)
	chk := c.annotating(t.node, t.base)
	if c.dynamic && t.base != base {
		return func(v any, a *annotations) bool {
			c.scope = append(c.scope, t.base)
			ok := chk(v, a)
			c.scope = c.scope[:len(c.scope)-1]
			return ok
		}
	}
	return chk
}

func (c *compiler) annotatingDynamicRef(ref, base string) annotatedFn {
	initial, name, ok := c.bookended(ref, base)
	if !ok {
		return c.annotatingRef(ref, base)
	}
	fallback := c.annotating(initial.node, initial.base)
	lookup := c.dynamicLookup(name, func(node *object, b string) any { return c.annotating(node, b) })
	return func(v any, a *annotations) bool {
		for _, uri := range c.scope {
			if chk := lookup(uri); chk != nil {
				return chk.(annotatedFn)(v, a)
			}
		}
		return fallback(v, a)
	}
}
