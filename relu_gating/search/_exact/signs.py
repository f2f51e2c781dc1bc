"""The signs of ``Phi theta``, decided exactly (private).

A reported pattern is the signs of ``Phi theta``.  In floats ``Phi theta`` overflows at the ends of the
float range (an entry ``2^511`` times a weight ``2^180``: ``-inf``, and ``inf - inf`` is nan) and rounds
near walls.  Here ``theta`` is first brought to a largest weight of ``2^-(bit_length(m) + 1)`` by a
power of two (the signs are those of any positive multiple), so no product or sum can overflow; each
sign is taken from the float product where its proven rounding error (Higham's ``gamma_m`` on
``|Phi| |theta|``, plus ``2^-1074`` per product for underflow) is below ``|Phi theta|``, and in exact
rationals elsewhere.  Floats never decide a sign.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["scaled_products", "exact_signs"]

_EPS = float(np.finfo(float).eps) / 2  # the unit roundoff


def _scaled(theta: np.ndarray, m: int) -> tuple[np.ndarray, bool]:
    """``theta 2^-k`` with its largest weight below ``2^-bit_length(m)`` and whether it is exact."""
    theta = np.asarray(theta, dtype=np.float64)
    top = float(np.abs(theta).max(initial=0.0))
    if not (top > 0 and np.isfinite(top)):
        return theta, True
    k = int(np.frexp(top)[1]) + m.bit_length() + 1
    with np.errstate(under="ignore"):
        ts = np.ldexp(theta, -k)
        return ts, bool(np.array_equal(np.ldexp(ts, k), theta))


def scaled_products(Phi: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``Phi theta`` times a positive power of two that keeps every product and sum in the float range
    (floats, rounded: for relative comparisons, e.g. near-ties; the signs are :func:`exact_signs`)."""
    ts, _ = _scaled(theta, Phi.shape[1])
    with np.errstate(under="ignore"):
        return Phi @ ts


def exact_signs(Phi: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The signs (-1, 0, 1; int8) of ``Phi theta`` for the float inputs taken as the rationals they are
    (module docstring): floats where the proven error decides, exact rationals elsewhere."""
    n, m = Phi.shape
    ts, exact = _scaled(theta, m)
    with np.errstate(under="ignore"):
        z = Phi @ ts
        size = np.abs(Phi) @ np.abs(ts)
    g = (m + 1) * _EPS / (1 - (m + 1) * _EPS)
    err = (g * size + (m + 1) * 2.0**-1074) * (1 + 4 * g)
    out = np.sign(z).astype(np.int8)
    open_ = np.flatnonzero(~(np.abs(z) > err) | ~np.isfinite(z)) if exact else np.arange(n)
    if open_.size:
        th = [Fraction(float(t)) for t in np.asarray(theta, dtype=np.float64).tolist()]
        for i in open_.tolist():
            s = sum((Fraction(float(a)) * t for a, t in zip(Phi[i].tolist(), th) if a and t), Fraction(0))
            out[i] = (s > 0) - (s < 0)
    return out
