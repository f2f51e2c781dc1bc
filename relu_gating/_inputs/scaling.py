"""Exact rescaling by powers of two (private, shared by the enumerator and the search).

A column is multiplied by ``s = 2^k`` only where the product is exact, entry by entry
(``A[:, j] * s / s == A[:, j]``): the scaled matrix holds the same rationals with other
exponents, so it has the same hyperplanes, ranks and signs (``theta -> s * theta``).  Scaling
the largest entry into ``[0.5, 1)`` is exact unless the column spans more than the float range
below it (an entry's last bit would fall under ``2^-1074``, a subnormal losing bits): then the
exponent is raised until the lowest significant bit of every entry stays at or above
``2^-1074``, if the largest entry then stays below ``2^MAX_SCALED_EXPONENT``; otherwise the
input is refused.  A column whose entries are all subnormal is refused too (rescale it: the
objective does not depend on the scale of a column).  The checker keeps its own copy of this
rule (``relu_gating.checker._problem.pow2_scales``).
"""

from __future__ import annotations

import numpy as np

from relu_gating.errors import InputError

__all__ = ["pow2_column_scales", "MAX_SCALED_EXPONENT", "lowest_bit_exponent", "pow2_norms", "unit_rows"]

#: Where the usual scaling is inexact, the exact one may leave a column's largest entry at most this
#: power of two (its squares, summed over the rows, stay far from overflow).
MAX_SCALED_EXPONENT = 64


def lowest_bit_exponent(x: np.ndarray) -> int:
    """The exponent ``t`` of the lowest set bit over the nonzero floats ``x``: every entry is an
    integer multiple of ``2^t`` (``t >= -1074``)."""
    f, e = np.frexp(np.abs(x))
    mant = (f * 2.0**53).astype(np.int64)  # exact: f in [0.5, 1) has 53 bits
    tz = [(int(v) & -int(v)).bit_length() - 1 for v in mant.tolist()]
    return int(min(int(a) - 53 + b for a, b in zip(e.tolist(), tz)))


def _exact_exponent(col: np.ndarray, name: str, j: int) -> int:
    """The smallest ``k`` with ``col * 2^k`` exact (``-1074 - lowest bit``), or InputError when the
    largest entry would then reach ``2^MAX_SCALED_EXPONENT``."""
    nz = col[col != 0]
    t = lowest_bit_exponent(nz)
    e_top = int(np.frexp(np.abs(nz).max())[1])  # top in [2^(e_top - 1), 2^e_top)
    k = -1074 - t
    if e_top + k > MAX_SCALED_EXPONENT:
        raise InputError(f"{name} column {j} spans 2^{e_top - 1} to a lowest significant bit of 2^{t} "
                         f"({e_top - t} binary orders): no power-of-two scaling represents it exactly in floats "
                         f"with its largest entry below 2^{MAX_SCALED_EXPONENT}; round its smallest entries")
    return k


def pow2_column_scales(A: np.ndarray, name: str = "Phi") -> np.ndarray:
    """Per column, an exact power-of-two scale ``s`` (``A[:, j] * s / s == A[:, j]``): the one
    bringing the largest entry into ``[0.5, 1)`` where that is exact, else the smallest exact one
    (module docstring); 1 for a zero column.

    Raises
    ------
    InputError
        A column whose nonzero entries are all subnormal, or one spanning too wide a range to be
        scaled exactly (the message names ``name``, the column and its range).
    """
    A = np.asarray(A, dtype=np.float64)
    top = np.abs(A).max(axis=0) if A.shape[0] else np.zeros(A.shape[1])
    tiny = np.flatnonzero((top > 0) & (top < np.finfo(float).tiny))
    if tiny.size:
        j = int(tiny[0])
        raise InputError(f"{name} column {j} has only subnormal entries (largest |entry| {top[j]:.3g} < 2^-1022): "
                         "rescale it (the objective does not depend on the scale of a column)")
    k = -np.frexp(np.where(top > 0, top, 1.0))[1].astype(np.int64)
    with np.errstate(under="ignore"):
        lost = np.any(np.ldexp(np.ldexp(A, k), -k) != A, axis=0)
    for j in np.flatnonzero(lost).tolist():
        k[j] = _exact_exponent(A[:, j], name, j)
    s = np.ldexp(1.0, k)
    with np.errstate(under="ignore"):
        if np.any(A * s / s != A):  # the rule, checked as stated (cannot fail by construction)
            raise InputError(f"{name}: no exact power-of-two scaling of its columns was found")
    return s


def pow2_norms(A: np.ndarray, axis: int = -1) -> np.ndarray:
    """Euclidean norms along ``axis``, each vector first brought to a largest entry in ``[0.5, 1)`` by a
    power of two: no square overflows (entries up to ``2^1023``) or underflows to nothing (``2^-1074``).

    Where every nonzero entry lies within ``2^±400`` this is ``np.linalg.norm(A, axis=axis)`` itself;
    ``inf`` only where a norm exceeds the float range, ``nan`` for nan entries.
    """
    A = np.asarray(A, dtype=np.float64)
    a = np.abs(A)
    if A.size and a.max() < 2.0**400 and a[a > 0].min(initial=1.0) > 2.0**-400:  # no square over/underflows
        return np.linalg.norm(A, axis=axis)
    top = a.max(axis=axis, keepdims=True, initial=0.0)
    k = np.frexp(np.where((top > 0) & np.isfinite(top), top, 1.0))[1]
    with np.errstate(under="ignore"):
        S = np.ldexp(A, -k)
        out = np.sqrt((S * S).sum(axis=axis))
    with np.errstate(over="ignore"):
        return np.ldexp(out, np.squeeze(k, axis=axis))


def unit_rows(A: np.ndarray) -> np.ndarray:
    """The rows of ``A`` divided by their :func:`pow2_norms` (unit rows for any nonzero row, also one of
    norm below ``2^-1022`` or above ``2^1023``, whose squares underflow or overflow); zero rows stay zero."""
    A = np.asarray(A, dtype=np.float64)
    top = np.abs(A).max(axis=1, keepdims=True, initial=0.0)
    k = np.frexp(np.where((top > 0) & np.isfinite(top), top, 1.0))[1]
    with np.errstate(under="ignore"):
        S = np.ldexp(A, -k)  # largest entry of each row in [0.5, 1)
    nrm = np.sqrt((S * S).sum(axis=1, keepdims=True))
    return S / np.where(nrm > 0, nrm, 1.0)
