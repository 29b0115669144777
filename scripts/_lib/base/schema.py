"""A small JSON Schema (draft 2020-12) checker for the hot paths.

`jsonschema` costs ~90 ms to import, too much for a command that must finish in
100 ms. This covers the keywords our own schemas in `schemas/` use; the test
suite checks the same schemas with the real `jsonschema` package.
"""

from __future__ import annotations

import functools
import json
import re
from collections import namedtuple
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


class Violation(namedtuple("Violation", "path message")):
    """One place where an instance breaks its schema; `path` is dotted (`scopes.default`, `tags[2]`)."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def schema_dir() -> Path:
    """The `schemas/` directory, from a checkout or an installed package."""
    lib = Path(__file__).resolve().parent.parent  # scripts/_lib (or the installed package's _lib)
    for candidate in (lib.parent.parent / "schemas", lib.parent / "schemas"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("schemas directory not found beside the scripts")


@functools.cache
def load(name: str) -> dict[str, Any]:
    """Load `schemas/<name>.schema.json`."""
    with open(schema_dir() / f"{name}.schema.json", encoding="utf-8") as handle:
        return json.load(handle)


def validate(instance: Any, schema: dict[str, Any]) -> list[Violation]:
    """Every violation of `schema` by `instance` (empty when valid)."""
    found: list[Violation] = []
    _check(instance, schema, schema, "", found)
    return found


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[name])


def _check(value: Any, schema: dict[str, Any] | bool, root: dict[str, Any], path: str,
           found: list[Violation]) -> None:
    if schema is True:
        return
    if schema is False:
        found.append(Violation(path, "is not allowed here"))
        return
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        _check(value, target, root, path, found)
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_is_type(value, name) for name in names):
            found.append(Violation(path, f"must be of type {' or '.join(names)} (got {_describe(value)})"))
            return
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(_describe(choice) for choice in schema["enum"])
        found.append(Violation(path, f"must be one of {choices} (got {_describe(value)})"))
    if "const" in schema and value != schema["const"]:
        found.append(Violation(path, f"must be {_describe(schema['const'])} (got {_describe(value)})"))
    if "anyOf" in schema:
        if not any(not validate_sub(value, option, root) for option in schema["anyOf"]):
            found.append(Violation(path, schema.get("description") or f"does not match any allowed form (got {_describe(value)})"))
    if isinstance(value, str):
        _check_string(value, schema, path, found)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(value, schema, path, found)
    elif isinstance(value, list):
        _check_array(value, schema, root, path, found)
    elif isinstance(value, dict):
        _check_object(value, schema, root, path, found)


def validate_sub(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> list[Violation]:
    found: list[Violation] = []
    _check(value, schema, root, "", found)
    return found


def _check_string(value: str, schema: dict[str, Any], path: str, found: list[Violation]) -> None:
    if "minLength" in schema and len(value) < schema["minLength"]:
        found.append(Violation(path, f"must be at least {schema['minLength']} characters"))
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        found.append(Violation(path, f"must be at most {schema['maxLength']} characters (got {len(value)})"))
    if "pattern" in schema and not _matches(schema["pattern"], value):
        hint = schema.get("description") or f"must match {schema['pattern']}"
        found.append(Violation(path, f"{hint} (got {_describe(value)})"))


def _matches(pattern: str, value: str) -> bool:
    """ECMA-262 semantics for anchored patterns: Python's `$` would also accept a trailing newline."""
    if pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$"):
        return re.fullmatch(f"(?:{pattern[1:-1]})", value) is not None
    return re.search(pattern, value) is not None


def _check_number(value: float, schema: dict[str, Any], path: str, found: list[Violation]) -> None:
    if "minimum" in schema and value < schema["minimum"]:
        found.append(Violation(path, f"must be >= {schema['minimum']} (got {value})"))
    if "maximum" in schema and value > schema["maximum"]:
        found.append(Violation(path, f"must be <= {schema['maximum']} (got {value})"))
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        found.append(Violation(path, f"must be > {schema['exclusiveMinimum']} (got {value})"))


def _check_array(value: list[Any], schema: dict[str, Any], root: dict[str, Any], path: str,
                 found: list[Violation]) -> None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        found.append(Violation(path, f"must have at least {schema['minItems']} item(s)"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        found.append(Violation(path, f"must have at most {schema['maxItems']} items"))
    if schema.get("uniqueItems"):
        seen: list[Any] = []
        for item in value:
            if item in seen:
                found.append(Violation(path, f"has a duplicate item {_describe(item)}"))
                break
            seen.append(item)
    if "items" in schema:
        for position, item in enumerate(value):
            _check(item, schema["items"], root, _join(path, position), found)


def _check_object(value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], path: str,
                  found: list[Violation]) -> None:
    for key in schema.get("required", ()):
        if key not in value:
            found.append(Violation(_join(path, key), "is required"))
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    names = schema.get("propertyNames")
    for key, item in value.items():
        if names is not None:
            _check(key, names, root, _join(path, key), found)
        if key in properties:
            _check(item, properties[key], root, _join(path, key), found)
            continue
        matched = False
        for pattern, sub in patterns.items():
            if re.search(pattern, key):
                matched = True
                _check(item, sub, root, _join(path, key), found)
        if not matched:
            if extra is False:
                found.append(Violation(_join(path, key), "is not an allowed key"))
            elif isinstance(extra, dict):
                _check(item, extra, root, _join(path, key), found)
