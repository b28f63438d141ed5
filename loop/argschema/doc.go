// Package argschema validates LLM tool-call arguments exactly as pi does: a port of @earendil-works/pi-ai@1.6.0's
// validateToolArguments, which runs @earendil-works/pi-schema@1.6.0's
// `compile(schema, { formats, coerce: true, unresolvedRefs: "reject" }).parse(structuredClone(args))`.
//
// Compile builds a Validator from a JSON Schema (draft 2020-12, as pi-ai compiles every tool schema, whatever its
// $schema says). Validator.Parse coerces a copy of the arguments (pi-schema's coerce.js: optional nulls dropped,
// TypeBox's conversions such as "42" to 42, "true" to true, a single value to a one-item array and the first union
// branch that converts, then Ajv-style coercion by type arrays) and checks the result: the coerced value, or one
// Error per failing keyword with pi-schema's JSON Pointer path and message text (explain.js). Message renders a
// failure as validateToolArguments' error text, and FormatPath a pointer as that text shows it.
//
// The port follows compiler.js, checks.js, annotations.js, explain.js, coerce.js, resolver.js and the format checks
// keyword by keyword: every validation keyword of 2020-12 (and draft 7's dependencies and items arrays, which pi
// also honours), local $ref, $anchor, $id-based references, $dynamicRef with its dynamic scope,
// unevaluatedProperties/Items, boolean schemas, and the formats pi checks. The tests in this folder compare against
// output produced by running pi itself (testdata/pi-expect.mjs writes testdata/pi-cases.json); beyond those, the
// port was compared with pi on about 19,000 generated and hand-written cases of schemas, arguments and full
// messages.
//
// Where it differs from pi:
//
//   - Key order. JavaScript objects keep insertion order; Go maps have none. Schemas and arguments given as maps are
//     read in sorted key order (array-index keys first, as JavaScript orders them). That order decides the order of
//     errors across properties (pi reports required keys in `required` order, then properties in `properties` order,
//     then unknown fields in the arguments' order), the text of const and enum messages naming objects, and the
//     "Received arguments" JSON of Message. Passing the schema, the arguments or Message's rawArgs as
//     json.RawMessage keeps their own order and matches pi byte for byte.
//   - JavaScript-only values. pi-schema's bigint, bytes and undefined types match no JSON value here, and coercion
//     into them is not done (pi turns "12" into 12n for `type: "bigint"`). Strings are UTF-8: a lone surrogate
//     escaped in JSON becomes U+FFFD.
//   - Regular expressions (pattern, patternProperties, the regex format) run on github.com/dlclark/regexp2 in its
//     ECMAScript mode. Whether a source is valid with the `u` flag is decided by a parser of ECMAScript's grammar
//     (as V8 in Node 20 reads it), and sources invalid with it are read as Annex B does, as in pi. Unicode property
//     escapes use Go's Unicode tables: script aliases (\p{sc=Grek}) and properties Go has no table for (\p{Emoji},
//     \p{ID_Start}, ...) make Compile fail instead of matching. Without the `u` flag, `.` and classes match whole code
//     points rather than UTF-16 units. A match that runs longer than two seconds counts as no match.
//   - Formats url, iri and iri-reference use JavaScript's URL.canParse in pi; here an approximation of the WHATWG
//     parser checks the scheme, authority, IPv4/IPv6 host and port, without IDNA processing of host names.
//     hostname, idn-hostname and idn-email use Go's Unicode tables and golang.org/x/text NFC.
//   - $ref resolution uses net/url in place of WHATWG URL; for the references tool schemas use (fragments, relative
//     $id documents) the two agree.
//   - Where pi's parse throws, Parse returns one Error at the root with the exception's message: a schema that
//     recurses through references without consuming the value ("Maximum call stack size exceeded", raised here
//     after 10,000 nested references rather than at V8's stack limit) or a subschema that only fails to compile when
//     first used. validateToolArguments would throw that message alone, not a "Validation failed" text.
//   - Compile's errors wrap pi-schema's message ("A schema must be an object or a boolean, got 5"); the wording of
//     invalid regular expression errors is regexp2's, not V8's.
//
// A Validator is safe for concurrent use; its calls to Parse are serialized.
package argschema
