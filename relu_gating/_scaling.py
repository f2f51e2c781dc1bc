"""Exact rescaling by powers of two (private, shared by the enumerator and the search)."""

from __future__ import annotations

import numpy as np

__all__ = ["pow2_column_scales"]


def pow2_column_scales(Phi: np.ndarray) -> np.ndarray:
    """Per column, the power of two bringing its largest entry into ``[0.5, 1)`` (1 for a zero column).

    Scaling by powers of two is exact in binary floating point (barring
    under/overflow), so ``Phi * d`` holds the same numbers with other
    exponents and the same hyperplanes (``theta -> d * theta``).
    """
    top = np.abs(Phi).max(axis=0)
    _, e = np.frexp(np.where(top > 0, top, 1.0))
    return np.ldexp(1.0, -e)
