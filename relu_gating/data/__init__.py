"""Input data: files, built-in data sets (the data sets load on first use: reading a file loads
no data-set code)."""

from __future__ import annotations

from typing import Any

from relu_gating.data.io import (  # noqa: F401
    InputData,
    load_input,
    Problem,
    resolve_problem,
    DEFAULT_K,
    NPZ_KEYS,
)

__all__ = ['InputData', 'load_input', 'Problem', 'resolve_problem', 'DEFAULT_K', 'NPZ_KEYS', 'two_moons', 'circles', 'blobs']


def __getattr__(name: str) -> Any:
    if name in ("two_moons", "circles", "blobs"):
        from relu_gating.data import datasets

        return getattr(datasets, name)
    raise AttributeError(f"module 'relu_gating.data' has no attribute {name!r}")
