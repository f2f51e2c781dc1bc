"""Input data: files, built-in data sets."""

from __future__ import annotations

from relu_gating.data.io import (  # noqa: F401
    InputData,
    load_input,
    Problem,
    resolve_problem,
    DEFAULT_K,
    NPZ_KEYS,
)
from relu_gating.data.datasets import (  # noqa: F401
    two_moons,
    circles,
    blobs,
)

__all__ = ['InputData', 'load_input', 'Problem', 'resolve_problem', 'DEFAULT_K', 'NPZ_KEYS', 'two_moons', 'circles', 'blobs']
