package argschema

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A port of pi-schema's resolver.js: schema resources, anchors and JSON Pointers over the root schema. No other
// documents are registered (pi-ai registers none), so a reference to another document names nothing.

// defaultBase is the base URI of a root schema without $id.
const defaultBase = "https://json-schema.invalid/root.json"

// target is a resolved reference: the schema it names and the base URI that schema compiles under.
type target struct {
	node any
	base string
}

// resolver resolves references of one schema; with pi-ai's `unresolvedRefs: "reject"`, a reference that names
// nothing resolves to the schema `false`.
type resolver struct {
	root           any
	rootBase       string
	baseOf         map[*object]string
	dynamicAnchors map[string]*object
	unresolved     map[string]bool
	resources      map[string]any
	anchors        map[string]*object
	indexed        bool
}

func newResolver(root any) *resolver {
	return &resolver{
		root:           root,
		rootBase:       defaultBase,
		baseOf:         map[*object]string{},
		dynamicAnchors: map[string]*object{},
		unresolved:     map[string]bool{},
		resources:      map[string]any{},
		anchors:        map[string]*object{},
	}
}

// baseFor is the base URI of node, whose parent has base: its $id changes it; once indexed, the indexed base.
func (r *resolver) baseFor(node *object, base string) string {
	if b, ok := r.baseOf[node]; ok {
		return b
	}
	id, ok := node.get("$id")
	ids, isString := id.(string)
	if !ok || !isString {
		return base
	}
	if !r.indexed {
		r.ensureIndexed()
		if b, ok := r.baseOf[node]; ok {
			return b
		}
	}
	return documentOf(resolveURI(ids, base))
}

func (r *resolver) ensureIndexed() {
	if r.indexed {
		return
	}
	r.indexed = true
	r.resources[defaultBase] = r.root
	r.index(r.root, defaultBase)
}

// resolve is the schema ref names from base, or false (recorded as unresolved) when it names nothing.
func (r *resolver) resolve(ref, base string) target {
	r.ensureIndexed()
	t, err := r.find(ref, base)
	if err != nil {
		r.unresolved[resolveURI(ref, base)] = true
		return target{node: false, base: base}
	}
	return t
}

// isUnresolved reports whether ref, from base, named nothing and resolved to false.
func (r *resolver) isUnresolved(ref, base string) bool {
	return r.unresolved[resolveURI(ref, base)]
}

var errUnresolved = errors.New("unresolved reference")

func (r *resolver) find(ref, base string) (target, error) {
	uri := resolveURI(ref, base)
	doc := documentOf(uri)
	fragment := ""
	if len(uri) > len(doc) {
		decoded, err := decodeURIComponent(uri[len(doc)+1:])
		if err != nil {
			return target{}, err
		}
		fragment = decoded
	}
	root, ok := r.resources[doc]
	if !ok {
		return target{}, errUnresolved
	}
	if fragment == "" {
		return target{node: root, base: doc}, nil
	}
	if strings.HasPrefix(fragment, "/") {
		return r.pointer(root, doc, fragment)
	}
	node, ok := r.anchors[doc+"#"+fragment]
	if !ok {
		return target{}, errUnresolved
	}
	if b, ok := r.baseOf[node]; ok {
		return target{node: node, base: b}, nil
	}
	return target{node: node, base: doc}, nil
}

// isResource reports whether node is the root of the schema resource at base.
func (r *resolver) isResource(node *object, base string) bool {
	r.ensureIndexed()
	res, ok := r.resources[base]
	return ok && res == any(node)
}

var (
	schemaKeywords = []string{"additionalProperties", "propertyNames", "contains", "not", "if", "then", "else",
		"unevaluatedProperties", "unevaluatedItems", "additionalItems", "contentSchema", "items"}
	mapKeywords   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	arrayKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// index walks only keywords that hold subschemas, recording each schema object's base, resources and anchors.
func (r *resolver) index(node any, base string) {
	n, ok := node.(*object)
	if !ok {
		return
	}
	if _, done := r.baseOf[n]; done {
		return
	}
	b := base
	if id, ok := n.at("$id").(string); ok {
		uri := resolveURI(id, b)
		b = documentOf(uri)
		r.resources[b] = n
		if len(uri) > len(b)+1 {
			r.anchors[uri] = n
		}
	}
	r.baseOf[n] = b
	if anchor, ok := n.at("$anchor").(string); ok {
		r.anchors[b+"#"+anchor] = n
	}
	if anchor, ok := n.at("$dynamicAnchor").(string); ok {
		r.anchors[b+"#"+anchor] = n
		r.dynamicAnchors[b+"#"+anchor] = n
	}
	for _, k := range schemaKeywords {
		r.index(n.at(k), b)
	}
	for _, k := range mapKeywords {
		if m, ok := n.at(k).(*object); ok {
			for _, key := range m.keys {
				r.index(m.vals[key], b)
			}
		}
	}
	for _, k := range arrayKeywords {
		if list, ok := n.at(k).(*array); ok {
			for _, s := range list.items {
				r.index(s, b)
			}
		}
	}
}

func (r *resolver) pointer(root any, base, fragment string) (target, error) {
	node := root
	b := base
	for _, raw := range strings.Split(fragment, "/")[1:] {
		key := strings.ReplaceAll(strings.ReplaceAll(raw, "~1", "/"), "~0", "~")
		switch x := node.(type) {
		case *object:
			v, ok := x.get(key)
			if !ok {
				return target{}, errUnresolved
			}
			node = v
		case *array:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(x.items) || strconv.Itoa(i) != key {
				return target{}, errUnresolved
			}
			node = x.items[i]
		default:
			return target{}, errUnresolved
		}
		if o, ok := node.(*object); ok {
			if ob, ok := r.baseOf[o]; ok {
				b = ob
			}
		}
	}
	return target{node: node, base: b}, nil
}

// specialSchemes are the WHATWG URL schemes whose host is normalized.
var specialSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true, "file": true}

// resolveURI is `new URL(ref, base).href`, approximated with net/url; a base that cannot take ref (a URN, for one)
// takes only fragment-only references, as in resolver.js.
func resolveURI(ref, base string) string {
	fallback := func() string {
		if strings.HasPrefix(ref, "#") {
			return documentOf(base) + ref
		}
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return fallback()
	}
	if r.IsAbs() {
		return normalizeURL(r)
	}
	b, err := url.Parse(base)
	if err != nil || !b.IsAbs() || b.Opaque != "" {
		return fallback()
	}
	return normalizeURL(b.ResolveReference(r))
}

func normalizeURL(u *url.URL) string {
	if specialSchemes[u.Scheme] {
		u.Host = strings.ToLower(u.Host)
		if u.Path == "" && u.Opaque == "" {
			u.Path = "/"
		}
	}
	return u.String()
}

// documentOf is uri without its fragment.
func documentOf(uri string) string {
	if i := strings.IndexByte(uri, '#'); i >= 0 {
		return uri[:i]
	}
	return uri
}

// decodeURIComponent fails, as JavaScript's does, on a malformed escape or one that is not UTF-8.
func decodeURIComponent(s string) (string, error) {
	d, err := url.PathUnescape(s)
	if err != nil {
		return "", err
	}
	if !utf8.ValidString(d) {
		return "", errors.New("URI malformed")
	}
	return d, nil
}
