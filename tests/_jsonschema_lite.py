"""A small JSON Schema checker for the keywords relu_gating/schemas uses (tests only).

Supports: type (incl. lists and "integer"), const, enum, pattern, minimum, minItems,
properties, required, additionalProperties (bool or schema), items.  Returns the
list of violations (empty when the document conforms).
"""

from __future__ import annotations

import re

_TYPES = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "integer": lambda x: isinstance(x, int) and not isinstance(x, bool),
    "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
}
_KNOWN = {"$schema", "title", "description", "type", "const", "enum", "pattern", "minimum", "minItems",
          "properties", "required", "additionalProperties", "items"}


def violations(doc, schema: dict, path: str = "$") -> list[str]:
    unknown = set(schema) - _KNOWN
    if unknown:
        return [f"{path}: schema uses unsupported keywords {sorted(unknown)}"]
    out: list[str] = []
    types = schema.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_TYPES[t](doc) for t in types):
            return [f"{path}: {type(doc).__name__} is not {types}"]
    if "const" in schema and doc != schema["const"]:
        out.append(f"{path}: {doc!r} != {schema['const']!r}")
    if "enum" in schema and doc not in schema["enum"]:
        out.append(f"{path}: {doc!r} not in {schema['enum']}")
    if "pattern" in schema and isinstance(doc, str) and not re.search(schema["pattern"], doc):
        out.append(f"{path}: {doc[:40]!r} does not match {schema['pattern']}")
    if "minimum" in schema and _TYPES["number"](doc) and doc < schema["minimum"]:
        out.append(f"{path}: {doc} < {schema['minimum']}")
    if isinstance(doc, list):
        if len(doc) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, x in enumerate(doc):
                out += violations(x, schema["items"], f"{path}[{i}]")
    if isinstance(doc, dict):
        props = schema.get("properties", {})
        out += [f"{path}: missing {k!r}" for k in schema.get("required", []) if k not in doc]
        extra = schema.get("additionalProperties", True)
        for k, v in doc.items():
            if k in props:
                out += violations(v, props[k], f"{path}.{k}")
            elif extra is False:
                out.append(f"{path}: unexpected key {k!r}")
            elif isinstance(extra, dict):
                out += violations(v, extra, f"{path}.{k}")
    return out
