"""The JSON the command line prints: strict (no NaN/Infinity), versioned by a ``schema`` field (private).

Each output's shape is published as a JSON Schema in ``relu_gating/schemas/``
(``<kind>.schema.json``); ``tests/test_json_schemas.py`` checks every command's
output against it.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps", "finite", "schema_id", "SCHEMA_VERSION"]

#: Version of the printed JSON shapes; bumped when a key changes meaning or disappears.
SCHEMA_VERSION = 1


def schema_id(kind: str) -> str:
    """``relu-gating-<kind>/<version>``: the value of the ``schema`` field of that output."""
    return f"relu-gating-{kind}/{SCHEMA_VERSION}"


def finite(x: Any) -> Any:
    """A copy with every NaN or infinite float replaced by None (undefined numbers are ``null``)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    return x


def dumps(obj: dict, kind: str, **kwargs: Any) -> str:
    """``obj`` as strict JSON, with ``"schema": schema_id(kind)`` first; NaN and infinities become null."""
    return json.dumps(finite({"schema": schema_id(kind), **obj}), indent=2, allow_nan=False, **kwargs)
