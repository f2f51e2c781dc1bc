"""Euclidean norms without overflow (private): each vector scaled by a power of two first.

The verified path forms floats from exact rationals that may reach ``2^1023``; their squares overflow
(``np.linalg.norm`` returns ``inf`` and warns).  Scaling by a power of two commutes with rounding, so
where every nonzero entry lies within ``2^±400`` this is ``np.linalg.norm`` itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["norm2"]


def norm2(x: Any, axis: int | None = None) -> Any:
    """``||x||_2`` (``axis`` None: of all entries, a float) or the norms along ``axis`` (an array)."""
    A = np.asarray(x, dtype=np.float64)
    a = np.abs(A)
    if A.size and a.max() < 2.0**400 and a[a > 0].min(initial=1.0) > 2.0**-400:  # no square over/underflows
        return float(np.linalg.norm(A)) if axis is None else np.linalg.norm(A, axis=axis)
    if axis is None:
        A = A.ravel()
    top = np.abs(A).max(axis=-1 if axis is None else axis, keepdims=True, initial=0.0)
    k = np.frexp(np.where((top > 0) & np.isfinite(top), top, 1.0))[1]
    with np.errstate(under="ignore", over="ignore"):
        S = np.ldexp(A, -k)
        out = np.ldexp(np.sqrt((S * S).sum(axis=-1 if axis is None else axis)),
                       np.squeeze(k, axis=-1 if axis is None else axis))
    return float(out) if axis is None else out
