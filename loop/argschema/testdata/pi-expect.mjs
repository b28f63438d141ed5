// Produces the expectations of the argschema tests by running pi itself:
//
//   npm ci --prefix bench && cd bench && node ../loop/argschema/testdata/pi-expect.mjs > ../loop/argschema/testdata/pi-cases.json
//
// The working directory must hold node_modules with @earendil-works/pi-ai@1.6.0 and @earendil-works/pi-schema@1.6.0.
// Each case runs pi-schema's compile(schema, { formats, coerce: true, unresolvedRefs: "reject" }).parse() on a
// structuredClone of the arguments, exactly as pi-ai's validateToolArguments does; cases with a `tool` name also
// record validateToolArguments' full error text. The output keeps every object's key order.
import path from "node:path";
import { pathToFileURL } from "node:url";

const modules = path.join(process.cwd(), "node_modules", "@earendil-works");
const load = (file) => import(pathToFileURL(path.join(modules, file)).href);
const { compile } = await load("pi-schema/dist/index.js");
const { formats } = await load("pi-schema/dist/formats/index.js");
const { validateToolArguments } = await load("pi-ai/dist/utils/validation.js");

const obj = (properties, required = Object.keys(properties), extra = {}) => ({
	type: "object",
	properties,
	required,
	...extra,
});

const cases = [
	// ---- coercion ----
	["number from numeric string", obj({ n: { type: "number" } }), { n: "42" }],
	["number from padded and exponent strings", obj({ a: { type: "number" }, b: { type: "number" } }), { a: " 12 ", b: "1e3" }],
	["number from hex string and empty string", obj({ a: { type: "number" }, b: { type: "number" } }), { a: "0x10", b: "" }],
	["number from bigint-style string", obj({ n: { type: "number" } }), { n: "12n" }],
	["number from boolean string and boolean", obj({ a: { type: "number" }, b: { type: "number" } }), { a: "TRUE", b: false }],
	["number from non-numeric string fails", obj({ n: { type: "number" } }), { n: "ten" }],
	["integer truncates decimal string", obj({ n: { type: "integer" } }), { n: "3.5" }],
	["integer truncates number", obj({ n: { type: "integer" } }), { n: -2.7 }],
	["integer from text fails", obj({ offset: { type: "integer", minimum: 1 } }), { offset: "ten" }],
	["boolean from strings", obj({ a: { type: "boolean" }, b: { type: "boolean" }, c: { type: "boolean" } }), { a: "true", b: "FALSE", c: "1" }],
	["boolean from numbers", obj({ a: { type: "boolean" }, b: { type: "boolean" } }), { a: 1, b: 0 }],
	["boolean from other string fails", obj({ a: { type: "boolean" } }), { a: "yes" }],
	["string from number and boolean", obj({ a: { type: "string" }, b: { type: "string" } }), { a: 42, b: true }],
	["string from float keeps JS text", obj({ a: { type: "string" } }), { a: 0.1 }],
	["required null string becomes null text", obj({ a: { type: "string" } }), { a: null }],
	["required null number becomes 0", obj({ a: { type: "number" } }), { a: null }],
	["optional null dropped", obj({ path: { type: "string" }, limit: { type: "integer" } }, ["path"]), { path: "a.txt", limit: null }],
	["optional null kept when nullable", obj({ limit: { anyOf: [{ type: "integer" }, { type: "null" }] } }, []), { limit: null }],
	["null from null text", obj({ a: { type: "null" } }), { a: "null" }],
	["single value wrapped into array", obj({ tags: { type: "array", items: { type: "string" } } }), { tags: "a" }],
	["single value wrapped and converted", obj({ ids: { type: "array", items: { type: "integer" } } }), { ids: "5" }],
	["array items converted", obj({ ids: { type: "array", items: { type: "number" } } }), { ids: ["1", 2, "3.5"] }],
	["tuple items converted, never wrapped", obj({ t: { type: "array", prefixItems: [{ type: "number" }, { type: "boolean" }] } }), { t: ["1", "true"] }],
	["anyOf keeps a value one branch accepts", obj({ v: { anyOf: [{ type: "number" }, { type: "string" }] } }), { v: "5" }],
	["anyOf takes first branch conversion", obj({ v: { anyOf: [{ type: "number" }, { type: "boolean" }] } }), { v: "true" }],
	["oneOf converts by first fitting branch", obj({ v: { oneOf: [{ type: "integer" }, { type: "array", items: { type: "string" } }] } }), { v: "7" }],
	["enum takes the member the value converts to", obj({ level: { enum: ["1", "2", "3"] } }), { level: 2 }],
	["const converts", obj({ v: { const: 5 } }), { v: "5" }],
	["type array integer or null from numeric string", obj({ a: { type: ["integer", "null"] } }), { a: "7" }],
	["type array integer or null from empty string", obj({ a: { type: ["integer", "null"] } }), { a: "" }],
	["nested object converted", obj({ opts: obj({ n: { type: "integer" }, flag: { type: "boolean" } }) }), { opts: { n: "10", flag: "false" } }],
	["additionalProperties schema converts", { type: "object", additionalProperties: { type: "number" } }, { a: "1", b: "2" }],
	["patternProperties converts", { type: "object", patternProperties: { "^n_": { type: "integer" } } }, { n_a: "4", s: "x" }],
	["$ref target converts", { type: "object", properties: { p: { $ref: "#/$defs/point" } }, required: ["p"], $defs: { point: obj({ x: { type: "number" }, y: { type: "number" } }) } }, { p: { x: "1", y: "2" } }],
	["allOf converts with each member", { allOf: [obj({ a: { type: "number" } }), obj({ b: { type: "boolean" } })] }, { a: "1", b: "true" }],
	["valid value passes unchanged", obj({ path: { type: "string" }, edits: { type: "array", items: obj({ oldText: { type: "string" }, newText: { type: "string" } }) } }), { path: "x.go", edits: [{ oldText: "a", newText: "b" }] }],

	// ---- messages ----
	["root type error", { type: "object" }, "hello"],
	["root type error for array", { type: "object" }, [1, 2]],
	["type error names object and number", obj({ a: { type: "string" }, b: { type: "boolean" } }), { a: { x: 1 }, b: 1.5 }],
	["type list message", obj({ a: { type: ["string", "number"] } }), { a: [] }],
	["required missing", obj({ path: { type: "string" }, mode: { enum: ["text", "binary"] } }), {}],
	["additionalProperties false unknown field", { type: "object", properties: { a: { type: "string" } }, additionalProperties: false }, { a: "x", extra: true, other: 1 }],
	["enum message", obj({ mode: { enum: ["text", "binary"] } }), { mode: "video" }],
	["enum with numbers and null", obj({ v: { enum: [1, "two", null] } }), { v: "x" }],
	["const message", obj({ kind: { const: "text" } }), { kind: "image" }],
	["const object message", obj({ v: { const: { a: 1, b: [true] } } }), { v: { a: 2 } }],
	["minimum and maximum", obj({ a: { type: "number", minimum: 1 }, b: { type: "number", maximum: 10 } }), { a: 0, b: 11 }],
	["exclusive bounds", obj({ a: { type: "number", exclusiveMinimum: 0 }, b: { type: "number", exclusiveMaximum: 1.5 } }), { a: 0, b: 1.5 }],
	["multipleOf decimal", obj({ a: { type: "number", multipleOf: 0.1 }, b: { type: "number", multipleOf: 0.1 } }), { a: 0.3, b: 0.35 }],
	["number formatting in messages", obj({ a: { type: "number", maximum: 1e21 }, b: { type: "number", minimum: 0.000001 }, c: { type: "number", minimum: 1e-7 } }), { a: 2e21, b: 0, c: 0 }],
	["minLength and maxLength count code points", obj({ a: { type: "string", minLength: 3 }, b: { type: "string", maxLength: 2 } }), { a: "😀😀", b: "abc" }],
	["pattern message", obj({ id: { type: "string", pattern: "^[a-z]+-\\d+$" } }), { id: "ABC-1" }],
	["pattern with lookahead", obj({ pw: { type: "string", pattern: "^(?=.*\\d)(?=.*[a-z]).{6,}$" } }), { pw: "abcdefg" }],
	["minItems maxItems uniqueItems", obj({ a: { type: "array", minItems: 2 }, b: { type: "array", maxItems: 1 }, c: { type: "array", uniqueItems: true } }), { a: [1], b: [1, 2], c: [1, { x: 1 }, { x: 1 }] }],
	["minProperties maxProperties", obj({ a: { type: "object", minProperties: 1 }, b: { type: "object", maxProperties: 1 } }), { a: {}, b: { x: 1, y: 2 } }],
	["formats fail", obj({ email: { type: "string", format: "email" }, when: { type: "string", format: "date-time" }, id: { type: "string", format: "uuid" }, site: { type: "string", format: "uri" }, ip: { type: "string", format: "ipv4" }, host: { type: "string", format: "hostname" }, day: { type: "string", format: "date" } }), { email: "not-an-email", when: "2024-13-01T00:00:00Z", id: "1234", site: "example.com", ip: "1.2.3.256", host: "-bad-.com", day: "2023-02-29" }],
	["formats pass", obj({ email: { type: "string", format: "email" }, when: { type: "string", format: "date-time" }, id: { type: "string", format: "uuid" }, site: { type: "string", format: "uri" }, ip: { type: "string", format: "ipv6" }, host: { type: "string", format: "hostname" }, day: { type: "string", format: "date" }, t: { type: "string", format: "time" }, d: { type: "string", format: "duration" }, u: { type: "string", format: "url" }, idn: { type: "string", format: "idn-hostname" } }), { email: "a.b@example.com", when: "2024-02-29T23:59:60Z", id: "123e4567-e89b-12d3-a456-426614174000", site: "https://example.com/a?b#c", ip: "::1", host: "xn--bcher-kva.example", day: "2024-02-29", t: "10:00:00+02:00", d: "P1DT2H", u: "http://localhost:8080/x", idn: "bücher.example" }],
	["unknown format is an annotation", obj({ a: { type: "string", format: "color" } }), { a: "anything" }],
	["nested path of array item", obj({ edits: { type: "array", items: obj({ oldText: { type: "string" }, newText: { type: "string" } }) } }), { edits: [{ oldText: "a", newText: "b" }, { newText: 3 }] }],
	["pointer escaping of / and ~", obj({ "a/b": { type: "string" }, "c~d": { type: "string" } }), { "a/b": { x: 1 }, "c~d": [] }],
	["anyOf blames the branch declaring most keys", obj({ v: { anyOf: [obj({ name: { type: "string" } }), obj({ id: { type: "integer" }, label: { type: "string" } })] } }), { v: { id: "x", label: "y" } }],
	["anyOf primitive blames deepest error", obj({ v: { anyOf: [{ type: "string", minLength: 5 }, { type: "number" }] } }), { v: "abc" }],
	["tagged union unknown tag", { anyOf: [obj({ kind: { const: "text" }, text: { type: "string" } }), obj({ kind: { const: "image" }, width: { type: "integer", minimum: 0 } })] }, { kind: "video" }],
	["tagged union selected branch", { anyOf: [obj({ kind: { const: "text" }, text: { type: "string" } }), obj({ kind: { const: "image" }, width: { type: "integer", minimum: 0 } })] }, { kind: "image", width: -1 }],
	["oneOf matches more than one", obj({ v: { oneOf: [{ type: "number" }, { type: "integer" }] } }), { v: 3 }],
	["not message", obj({ v: { not: { type: "string" } } }), { v: "x" }],
	["if then else", { type: "object", if: { properties: { kind: { const: "a" } }, required: ["kind"] }, then: { required: ["a"] }, else: { required: ["b"] } }, { kind: "a" }],
	["unresolved reference", obj({ v: { $ref: "#/$defs/missing" } }), { v: 1 }],
	["false subschema", obj({ v: false }), { v: 1 }],
	["false root schema", false, {}],
	["true root schema", true, { any: ["thing"] }],
	["dependentRequired", { type: "object", dependentRequired: { card: ["cvv"] } }, { card: "1234" }],
	["propertyNames", { type: "object", propertyNames: { pattern: "^[a-z]+$" } }, { good: 1, Bad: 2 }],
	["contains", obj({ a: { type: "array", contains: { type: "string" } } }), { a: [1, 2] }],
	["unevaluatedProperties", { type: "object", allOf: [{ properties: { a: { type: "string" } } }], unevaluatedProperties: false }, { a: "x", b: 1 }],
	["patternProperties with additionalProperties false", { type: "object", patternProperties: { "^x-": { type: "string" } }, additionalProperties: false }, { "x-a": 1, y: 2 }],
	["long enum is cut", obj({ v: { enum: Array.from({ length: 25 }, (_, i) => `v${i}`) } }), { v: "z" }],
	["recursive $ref tree", { $ref: "#/$defs/node", $defs: { node: obj({ name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }) } }, { name: "root", children: [{ name: "a", children: [] }, { name: 5, children: [{ name: "c" }] }] }],
	["many errors keep pi's order", obj({ path: { type: "string" }, offset: { type: "integer", minimum: 1 }, mode: { enum: ["text", "binary"] } }, ["path", "mode"], { additionalProperties: false }), { offset: 0, extra: true }],
	["items false after tuple", obj({ t: { type: "array", prefixItems: [{ type: "string" }], items: false } }), { t: ["a", "b"] }],

	// ---- edge cases found by differential runs against pi ----
	["coercion of other numeric spellings", obj({ a: { type: "number" }, b: { type: "number" }, c: { type: "number" } }), { a: "0b101", b: ".5", c: "-0" }],
	["Infinity is not a number", obj({ a: { type: "number" } }), { a: "Infinity" }],
	["type array coerces by first type that converts", obj({ a: { type: ["number", "string"] }, b: { type: ["integer", "boolean"] }, c: { type: ["boolean", "null"] } }), { a: true, b: "5.5", c: "false" }],
	["optional nulls dropped inside array items", { type: "array", items: obj({ a: { type: "string" } }, []) }, [{ a: null }, { a: 1 }]],
	["optional null through $ref becomes text", obj({ a: { $ref: "#/$defs/s" } }, [], { $defs: { s: { type: "string" } } }), { a: null }],
	["required null in union takes first branch", obj({ a: { anyOf: [{ type: "string" }, { type: "number" }] } }), { a: null }],
	["$id-relative reference", { $id: "https://example.com/root.json", type: "object", $defs: { a: { $id: "a.json", type: "object", properties: { y: { $ref: "#/$defs/b" } }, $defs: { b: { type: "integer" } } } }, properties: { x: { $ref: "a.json" } } }, { x: { y: "3.5" } }],
	["$anchor reference", { type: "object", $defs: { a: { $anchor: "foo", type: "integer" } }, properties: { x: { $ref: "#foo" } } }, { x: "z" }],
	["draft-7 definitions and percent-encoded pointer", { type: "object", definitions: { "a b": { type: "integer" } }, properties: { x: { $ref: "#/definitions/a%20b" } } }, { x: "z" }],
	["reference to another document is unresolved", { type: "object", properties: { x: { $ref: "other.json#/x" } } }, { x: 1 }],
	["$dynamicRef resolves through the dynamic scope", { $id: "https://e.com/strict", $ref: "https://e.com/tree", $defs: { node: { $dynamicAnchor: "node", properties: { data: { type: "string" } } }, tree: { $id: "https://e.com/tree", $dynamicAnchor: "node", type: "object", properties: { data: true, children: { type: "array", items: { $dynamicRef: "#node" } } } } } }, { children: [{ data: 1 }, { data: [] }] }],
	["unevaluatedItems", { type: "array", prefixItems: [true], contains: { type: "string" }, unevaluatedItems: { type: "number" } }, [1, "a", null, 3]],
	["unknown fields in JavaScript key order", { type: "object", additionalProperties: false }, { z: 1, 10: 1, a: 1, 9: 1, "-1": 1, "01": 1 }],
	["pattern with Unicode script property", obj({ a: { type: "string", pattern: "^\\p{Script=Greek}+$" }, b: { type: "string", pattern: "^\\p{Alphabetic}+$" } }), { a: "abc", b: "ab1" }],
	["pattern invalid with u flag falls back", obj({ a: { type: "string", pattern: "^\\d{3}\\-\\Aa$" }, b: { type: "string", pattern: "\\p{L}" } }), { a: "123-Aa", b: "é" }],
	["format regex checks the u flag grammar", obj({ a: { type: "string", format: "regex" }, b: { type: "string", format: "regex" }, c: { type: "string", format: "regex" } }), { a: "^[\\w-]+$", b: "\\-", c: "(?<n>a)\\k<n>" }],
	["url iri and idn-hostname formats", obj({ a: { type: "string", format: "url" }, b: { type: "string", format: "url" }, c: { type: "string", format: "iri" }, d: { type: "string", format: "idn-hostname" }, e: { type: "string", format: "idn-hostname" } }), { a: "http://@b", b: "http://1.2.3.256", c: "http://例え.jp/パス", d: "例え.テスト", e: "\u0627\u0661\u06f1.com" }],
	["left-recursive union reaches its type branch first", { $defs: { t: { anyOf: [{ $ref: "#/$defs/t" }, { type: "string" }] } }, $ref: "#/$defs/t" }, 5],
	["left-recursive union overflows", { $defs: { t: { anyOf: [{ $ref: "#/$defs/t" }, { type: "string" }] } }, $ref: "#/$defs/t" }, [1]],

	// ---- full validateToolArguments messages ----
	["message: edit tool", obj({ path: { type: "string" }, edits: { type: "array", items: obj({ oldText: { type: "string" }, newText: { type: "string" } }) } }), { path: "main.go", edits: [{ oldText: "a" }, { oldText: 1, newText: "b" }], note: 1e21 }, "edit"],
	["message: read tool", obj({ path: { type: "string", minLength: 1 }, offset: { type: "integer", minimum: 1 }, limit: { type: "integer" } }, ["path"], { additionalProperties: false }), { path: "", offset: "0", limit: 2.5, extra: { "nested\n\"quote\"": [null, true, -0.5, []], empty: {} } }, "read"],
	["message: root error", { type: "object" }, ["not", "an", "object"], "bash"],
	["message: key order and string escapes", obj({ s: { type: "string" } }, ["s"], { additionalProperties: false }), { s: { b: "\u0000\t\u001f\"\\/ü😀\u2028", a: [1e21, 1e-7, -0, 0.1] }, 2: true, 1: false }, "write"],
];

const compileErrors = [
	["compile error: non-schema property", obj({ a: 5 })],
	["compile error: null not", { not: null }],
	["compile error: invalid pattern", obj({ a: { type: "string", pattern: "(" } })],
];

const out = [];
for (const [name, schema, args, tool] of cases) {
	const validator = compile(schema, { formats, coerce: true, unresolvedRefs: "reject" });
	const entry = { name, schema, args };
	try {
		const result = validator.parse(structuredClone(args));
		entry.ok = result.ok;
		if (result.ok) entry.value = result.value;
		else entry.errors = result.errors.map((e) => ({ path: e.path, message: e.message }));
	} catch (e) {
		// parse() itself throws (a schema that recurses without end): validateToolArguments passes the exception on.
		entry.throws = e.message;
	}
	if (tool !== undefined) {
		entry.tool = tool;
		try {
			validateToolArguments({ name: tool, description: "", parameters: schema }, { name: tool, arguments: args });
			entry.message = null;
		} catch (e) {
			entry.message = e.message;
		}
	}
	out.push(entry);
}
for (const [name, schema] of compileErrors) {
	try {
		compile(schema, { formats, coerce: true, unresolvedRefs: "reject" });
		out.push({ name, schema, compileError: null });
	} catch (e) {
		out.push({ name, schema, compileError: e.message });
	}
}
console.log(JSON.stringify(out, null, "\t"));
