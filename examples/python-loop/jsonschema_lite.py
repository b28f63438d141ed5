"""A small JSON-Schema validator with type coercion, enough for tool arguments.

It checks the keywords tool schemas use (type, properties, required, additionalProperties,
items, enum, const, the numeric, string, array and object bounds, pattern, allOf / anyOf /
oneOf / not) and coerces scalars the way pi's validator does (``"42"`` against a number is
42, a number against a string is its text). Anything else in a schema (``$ref``, ``format``,
``if``/``then``, …) is ignored: see expected-failures.txt for what that costs.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

_NUMBER = re.compile(r"^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")


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
        if isinstance(v, str) and _NUMBER.match(v):
            n = _js_number(float(v))
        elif isinstance(v, bool):
            n = int(v)
        elif v is None:
            n = 0
        else:
            return False, v
        return (t == "number" or isinstance(n, int)), n
    if t == "string":
        if isinstance(v, bool):
            return True, "true" if v else "false"
        if isinstance(v, (int, float)):
            return True, json.dumps(_js_number(v))
        if v is None:
            return True, ""
        return False, v
    if t == "boolean":
        if v in ("true", 1) and not isinstance(v, float):
            return True, True
        if v in ("false", 0) and not isinstance(v, float):
            return True, False
        if v is None:
            return True, False
        return False, v
    if t == "null":
        if v in ("", 0, False):
            return True, None
    return False, v


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
        if not any(_is(v, x) for x in types):
            for x in types:
                ok, c = _coerce(v, x)
                if ok:
                    v = c
                    break
            else:
                errors.append((path, f"expected {' or '.join(types)}, got {_type_of(v)}"))
                return v
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
        n = len(v.encode("utf-16-le")) // 2
        if isinstance(schema.get("minLength"), int) and n < schema["minLength"]:
            errors.append((path, f"expected at least {schema['minLength']} characters"))
        if isinstance(schema.get("maxLength"), int) and n > schema["maxLength"]:
            errors.append((path, f"expected at most {schema['maxLength']} characters"))
        if isinstance(schema.get("pattern"), str) and not re.search(schema["pattern"], v):
            errors.append((path, f'expected to match {schema["pattern"]}'))
    if isinstance(v, list):
        if isinstance(schema.get("minItems"), int) and len(v) < schema["minItems"]:
            errors.append((path, f"expected at least {schema['minItems']} items"))
        if isinstance(schema.get("maxItems"), int) and len(v) > schema["maxItems"]:
            errors.append((path, f"expected at most {schema['maxItems']} items"))
        if isinstance(schema.get("items"), dict):
            v = [_check(schema["items"], x, f"{path}/{i}", errors) for i, x in enumerate(v)]
    if isinstance(v, dict):
        if isinstance(schema.get("minProperties"), int) and len(v) < schema["minProperties"]:
            errors.append((path, f"expected at least {schema['minProperties']} properties"))
        if isinstance(schema.get("maxProperties"), int) and len(v) > schema["maxProperties"]:
            errors.append((path, f"expected at most {schema['maxProperties']} properties"))
        for name in schema.get("required") or []:
            if name not in v:
                errors.append((f"{path}/{name}", "missing"))
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
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
            passing = [o for o in options if not validate(o, v)[1]]
            if not passing or (key == "oneOf" and len(passing) > 1):
                errors.append((path, f"must match {'exactly one' if key == 'oneOf' else 'a'} schema in {key}"))
    if isinstance(schema.get("not"), dict) and not validate(schema["not"], v)[1]:
        errors.append((path, "must NOT be valid"))
    return v


def message(tool: str, errors: list[tuple[str, str]], received: Any) -> str:
    """pi's validation text: 'Validation failed for tool "NAME":\\n  - PATH: MSG…\\n\\nReceived arguments:\\n…'."""
    lines = "\n".join(f"  - {path[1:].replace('/', '.') or 'root'}: {msg}" for path, msg in errors)
    return f'Validation failed for tool "{tool}":\n{lines}\n\nReceived arguments:\n{json.dumps(received, indent=2, ensure_ascii=False)}'
