"""jsonschema_lite against pi's own validator: the cases of loop/argschema/testdata/pi-cases.json
(produced by running pi). Each case must agree with pi — valid or not, and the converted value —
except the ones listed in DISAGREES, each with the reason; a listed case that starts agreeing
fails too, so the list only shrinks.

    cd examples/python-loop && python3 -m unittest test_jsonschema_lite
"""

import json
import os
import unittest

from jsonschema_lite import message, validate

CASES = os.path.join(os.path.dirname(__file__), "..", "..", "loop", "argschema", "testdata", "pi-cases.json")

UNSUPPORTED = "keyword not supported"
DISAGREES = {
    "formats fail": UNSUPPORTED + ": format",
    "url iri and idn-hostname formats": UNSUPPORTED + ": format",
    "format regex checks the u flag grammar": UNSUPPORTED + ": format",
    "if then else": UNSUPPORTED + ": if/then/else",
    "dependentRequired": UNSUPPORTED + ": dependentRequired",
    "propertyNames": UNSUPPORTED + ": propertyNames",
    "contains": UNSUPPORTED + ": contains",
    "unevaluatedProperties": UNSUPPORTED + ": unevaluatedProperties",
    "unevaluatedItems": UNSUPPORTED + ": unevaluatedItems",
    "items false after tuple": UNSUPPORTED + ": items false after prefixItems",
    "patternProperties converts": UNSUPPORTED + ": patternProperties",
    "false subschema": UNSUPPORTED + ": false as a subschema",
    "false root schema": UNSUPPORTED + ": false as the schema",
    "$ref target converts": UNSUPPORTED + ": $ref",
    "recursive $ref tree": UNSUPPORTED + ": $ref",
    "unresolved reference": UNSUPPORTED + ": $ref",
    "optional null through $ref becomes text": UNSUPPORTED + ": $ref",
    "$id-relative reference": UNSUPPORTED + ": $ref / $id",
    "$anchor reference": UNSUPPORTED + ": $ref / $anchor",
    "draft-7 definitions and percent-encoded pointer": UNSUPPORTED + ": $ref / definitions",
    "reference to another document is unresolved": UNSUPPORTED + ": $ref",
    "$dynamicRef resolves through the dynamic scope": UNSUPPORTED + ": $dynamicRef",
    "left-recursive union reaches its type branch first": UNSUPPORTED + ": $ref",
    "pattern with Unicode script property": "JavaScript regex: \\p{…} is not Python re (such a pattern is skipped)",
    "pattern invalid with u flag falls back": "JavaScript regex: \\A means 'A' without the u flag",
    "type array integer or null from empty string": "conversion order of a type list ('' to null before 0)",
    "type array coerces by first type that converts": "conversion order of a type list",
}


def agrees(case) -> bool:
    value, errors = validate(case["schema"], case["args"])
    if case["ok"] != (not errors):
        return False
    return not case["ok"] or json.dumps(value, sort_keys=True) == json.dumps(case["value"], sort_keys=True)


class AgainstPi(unittest.TestCase):
    def test_every_case_agrees_with_pi_but_the_listed_ones(self):
        with open(CASES, encoding="utf-8") as f:
            cases = [c for c in json.load(f) if "ok" in c]  # the rest are pi's compile errors and a stack overflow
        names = {c["name"] for c in cases}
        self.assertFalse(set(DISAGREES) - names, "listed cases that no longer exist")
        for case in cases:
            with self.subTest(case["name"]):
                if case["name"] in DISAGREES:
                    self.assertFalse(agrees(case), f"agrees with pi now: remove it from DISAGREES ({DISAGREES[case['name']]})")
                else:
                    self.assertTrue(agrees(case), json.dumps(case)[:400])

    def test_the_error_text_has_pi_frame(self):
        _, errors = validate({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n", "m"]}, {"n": "x"})
        self.assertEqual(message("work", errors, {"n": "x"}),
                         'Validation failed for tool "work":\n  - m: missing\n  - n: expected number, got string\n\n'
                         'Received arguments:\n{\n  "n": "x"\n}')


if __name__ == "__main__":
    unittest.main()
