"""A small JSON-Schema validator with type coercion, enough for tool arguments.

It checks the keywords tool schemas use (type, properties, required, additionalProperties,
items, enum, const, the numeric, string, array and object bounds, pattern, allOf / anyOf /
prefixItems, oneOf / not) and converts values the way pi's validator does: ``"42"``, ``"0x10"``,
``"12n"`` or ``"TRUE"`` against a number, truncation for integers, a number against a string
is its text, a single value against an array is wrapped, an optional property given as null is
dropped, enum and const members and the first fitting anyOf branch convert. Anything else in a
schema (``$ref``, ``format``, ``if``/``then``, …) is ignored: test_jsonschema_lite.py lists, from
pi's own cases, where that makes it disagree with pi.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

_DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_RADIX = re.compile(r"^0([xXoObB])([0-9a-fA-F]+)$")
_BIGINT = re.compile(r"^-?\d+n$")


def _js_numeric(text: str) -> int | float | None:
    """A string read as a number the way pi's conversion does (JavaScript's Number(), plus
    "12n" and "true"/"false" in any case); None when it is not one."""
    t = text.strip()
    if t == "":
        return 0
    if t.lower() in ("true", "false"):
        return int(t.lower() == "true")
    if _BIGINT.match(t):
        return int(t[:-1])
    m = _RADIX.match(t)
    if m:
        try:
            return int(m.group(2), {"x": 16, "o": 8, "b": 2}[m.group(1).lower()])
        except ValueError:
            return None
    if _DECIMAL.match(t):
        return _js_number(float(t))
    return None


def _type_of(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "integer" if v.is_integer() else "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _is(v: Any, t: str) -> bool:
    actual = _type_of(v)
    return actual == t or (t == "number" and actual == "integer")


def _js_number(x: int | float) -> int | float:
    """A number as JavaScript holds it: an integral float is an integer."""
    if isinstance(x, float) and math.isfinite(x) and x.is_integer():
        return int(x)
    return x


def _coerce(v: Any, t: str) -> tuple[bool, Any]:
    """Coerces a scalar to type t; (False, v) when it cannot."""
    if t in ("number", "integer"):
        if isinstance(v, str):
            n = _js_numeric(v)
        elif isinstance(v, bool):
            n = int(v)
        elif isinstance(v, (int, float)):
            n = v
        elif v is None:
            n = 0
        else:
            n = None
        if n is None:
            return False, v
        if t == "integer" and isinstance(n, float) and math.isfinite(n):
            n = math.trunc(n)  # pi truncates: "3.5" and -2.7 run as 3 and -2
        return True, _js_number(n)
    if t == "string":
        if isinstance(v, bool):
            return True, "true" if v else "false"
        if isinstance(v, (int, float)):
            return True, json.dumps(_js_number(v))
        if v is None:
            return True, "null"
        return False, v
    if t == "boolean":
        if isinstance(v, str) and v.lower() in ("true", "1"):
            return True, True
        if isinstance(v, str) and v.lower() in ("false", "0"):
            return True, False
        if v in (1, 0) and not isinstance(v, (bool, float)):
            return True, v == 1
        return False, v
    if t == "null":
        if v == "null" or v == "":
            return True, None
    return False, v


def _convert_to_member(v: Any, members: list[Any]) -> Any:
    """An enum or const value converted to the member it stands for, when one matches."""
    if v in members:
        return v
    for m in members:
        ok, c = _coerce(v, _type_of(m) if _type_of(m) != "integer" else "number")
        if ok and c == m and type(c) is type(m):
            return c
    return v


def _matches(pattern: str, text: str) -> bool:
    """A JavaScript pattern searched in text; one Python's re cannot read (\\p{L}, …) passes."""
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return True


def validate(schema: Any, value: Any) -> tuple[Any, list[tuple[str, str]]]:
    """Validates a copy of value; returns it coerced, and the errors as (path, message)."""
    errors: list[tuple[str, str]] = []
    out = _check(schema, copy.deepcopy(value), "", errors)
    return out, errors


def _check(schema: Any, v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
    if schema is True or not isinstance(schema, dict):
        return v
    if schema is False:
        errors.append((path, "no value is allowed here"))
        return v
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if "array" in types and not isinstance(v, list) and not any(_is(v, x) for x in types):
            v = [v]  # pi wraps a single value into an array
        if not any(_is(v, x) for x in types):
            for x in types:
                ok, c = _coerce(v, x)
                if ok:
                    v = c
                    break
            else:
                errors.append((path, f"expected {' or '.join(types)}, got {_type_of(v)}"))
                return v
    if "const" in schema:
        v = _convert_to_member(v, [schema["const"]])
    if isinstance(schema.get("enum"), list):
        v = _convert_to_member(v, schema["enum"])
    if "const" in schema and v != schema["const"]:
        errors.append((path, f"expected {json.dumps(schema['const'], separators=(',', ':'))}"))
    if "enum" in schema and v not in schema["enum"]:
        errors.append((path, "expected one of " + ", ".join(json.dumps(x) for x in schema["enum"])))
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        for key, bad, word in (("minimum", lambda a, b: a < b, ">="), ("maximum", lambda a, b: a > b, "<="),
                               ("exclusiveMinimum", lambda a, b: a <= b, ">"), ("exclusiveMaximum", lambda a, b: a >= b, "<")):
            if isinstance(schema.get(key), (int, float)) and bad(v, schema[key]):
                errors.append((path, f"expected {word} {schema[key]}"))
        m = schema.get("multipleOf")
        if isinstance(m, (int, float)) and m > 0 and not (v / m).is_integer():
            errors.append((path, f"expected a multiple of {m}"))
    if isinstance(v, str):
        n = len(v)  # code points, as pi-schema counts: one emoji is one character
        if isinstance(schema.get("minLength"), int) and n < schema["minLength"]:
            errors.append((path, f"expected at least {schema['minLength']} characters"))
        if isinstance(schema.get("maxLength"), int) and n > schema["maxLength"]:
            errors.append((path, f"expected at most {schema['maxLength']} characters"))
        if isinstance(schema.get("pattern"), str) and not _matches(schema["pattern"], v):
            errors.append((path, f'expected to match {schema["pattern"]}'))
    if isinstance(v, list):
        if isinstance(schema.get("minItems"), int) and len(v) < schema["minItems"]:
            errors.append((path, f"expected at least {schema['minItems']} items"))
        if isinstance(schema.get("maxItems"), int) and len(v) > schema["maxItems"]:
            errors.append((path, f"expected at most {schema['maxItems']} items"))
        if schema.get("uniqueItems") is True and len({json.dumps(x, sort_keys=True) for x in v}) < len(v):
            errors.append((path, "expected unique items"))
        prefix = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else []
        v = [_check(prefix[i], x, f"{path}/{i}", errors) if i < len(prefix) else x for i, x in enumerate(v)]
        if isinstance(schema.get("items"), dict):
            v = v[:len(prefix)] + [_check(schema["items"], x, f"{path}/{i + len(prefix)}", errors)
                                   for i, x in enumerate(v[len(prefix):])]
    if isinstance(v, dict):
        if isinstance(schema.get("minProperties"), int) and len(v) < schema["minProperties"]:
            errors.append((path, f"expected at least {schema['minProperties']} properties"))
        if isinstance(schema.get("maxProperties"), int) and len(v) > schema["maxProperties"]:
            errors.append((path, f"expected at most {schema['maxProperties']} properties"))
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") or []
        for key in [k for k, x in v.items() if x is None and k not in required and k in props]:
            if not _accepts_null(props[key]):
                del v[key]  # pi drops an optional property given as null
        for name in required:
            if name not in v:
                errors.append((f"{path}/{name}", "missing"))
        extra = schema.get("additionalProperties", True)
        for key in list(v):
            if key in props:
                v[key] = _check(props[key], v[key], f"{path}/{key}", errors)
            elif extra is False:
                errors.append((f"{path}/{key}", "unknown field"))
            elif isinstance(extra, dict):
                v[key] = _check(extra, v[key], f"{path}/{key}", errors)
    for sub in schema.get("allOf") or []:
        v = _check(sub, v, path, errors)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            results = [validate(o, v) for o in options]
            passing = [value for value, errs in results if not errs]
            exact = [value for value in passing if json.dumps(value) == json.dumps(v)]
            if passing and not exact:
                v = passing[0]  # no branch takes it as it is: the first branch it converts to
            if not passing or (key == "oneOf" and len(exact) > 1):
                errors.append((path, f"must match {'exactly one' if key == 'oneOf' else 'a'} schema in {key}"))
    if isinstance(schema.get("not"), dict) and not validate(schema["not"], v)[1]:
        errors.append((path, "must NOT be valid"))
    return v


def _accepts_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return True
    t = schema.get("type")
    return t is None or t == "null" or (isinstance(t, list) and "null" in t)


def message(tool: str, errors: list[tuple[str, str]], received: Any) -> str:
    """pi's validation text: 'Validation failed for tool "NAME":\\n  - PATH: MSG…\\n\\nReceived arguments:\\n…'."""
    lines = "\n".join(f"  - {path[1:].replace('/', '.') or 'root'}: {msg}" for path, msg in errors)
    return f'Validation failed for tool "{tool}":\n{lines}\n\nReceived arguments:\n{json.dumps(received, indent=2, ensure_ascii=False)}'
