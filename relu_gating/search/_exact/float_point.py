"""A float point strictly inside a chamber, near a rational one (private).

A chamber of relative width ``2^-52`` (two active rows within an ulp of exact negatives) may hold
no float ``theta`` near a given direction: rounding each weight moves ``Phi theta`` by more than
the chamber is wide.  The objective is a ratio, so any positive multiple ``lambda theta`` will do,
and some multiples round well: for ``theta = (1, -2^-520 (1 + 2^-53))`` the multiple
``2^53 - 1`` is ``(2^53 - 1, -2^-467 (1 - 2^-106))``, within ``2^-573`` of the float
``(2^53 - 1, -2^-467)``.  Such multiples are simultaneous Diophantine approximations of the
ratios ``theta_j / theta_0``: found by lattice reduction (LLL, exact integers, ``m <= 8``) of
the basis ``[[eps, r_1, .., r_(m-1)], [0, 1, 0, ..], ..]`` at a few ``eps``, each reduced vector
giving a candidate ``(q, p_1 2^-k_1, ..)`` with ``|q|, |p_j| < 2^53`` (exact floats).

Every candidate is checked **exactly** (rationals) for the chamber's strict signs on every
nonzero row; floats never decide membership.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["strictly_inside", "float_points"]

def strictly_inside(Phi: np.ndarray, mask: np.ndarray, theta: list | np.ndarray) -> bool:
    """``(2 mask - 1) (phi_i . theta) > 0`` on every nonzero row, in exact rationals."""
    th = [t if isinstance(t, Fraction) else Fraction(float(t)) for t in theta]
    for i in np.flatnonzero(np.any(Phi != 0, axis=1)).tolist():
        s = sum((Fraction(float(a)) * t for a, t in zip(Phi[i], th) if a and t), Fraction(0))
        if (s > 0) != bool(mask[i]) or s == 0:
            return False
    return True


def _as_float(x: Fraction) -> float | None:
    try:
        f = float(x)
    except OverflowError:
        return None
    return f if math.isfinite(f) and (f != 0 or x == 0) else None


def _rounded(theta: list) -> np.ndarray | None:
    """``theta`` scaled by a power of two (largest weight near 1) and rounded."""
    top = max(abs(t) for t in theta)
    if top == 0:
        return None
    k = top.numerator.bit_length() - top.denominator.bit_length()
    sc = Fraction(2) ** -k if k >= 0 else Fraction(2) ** (-k)
    out = [_as_float(t * sc) for t in theta]
    return None if any(x is None for x in out) else np.array(out, dtype=float)


def _unit(r: Fraction) -> tuple[Fraction, int]:
    """``r = r' 2^e`` with ``|r'|`` in ``[1/2, 1)``."""
    e = abs(r).numerator.bit_length() - abs(r).denominator.bit_length()
    rp = r / Fraction(2) ** e if e >= 0 else r * Fraction(2) ** -e
    if abs(rp) >= 1:
        rp, e = rp / 2, e + 1
    elif abs(rp) < Fraction(1, 2):
        rp, e = rp * 2, e - 1
    return rp, e


def _approximations(theta: list) -> list[np.ndarray]:
    """Candidates ``lambda theta`` rounded, ``lambda`` from best rational approximations of each
    ratio ``theta_j / theta_j0`` (``j0`` the largest weight; :meth:`Fraction.limit_denominator`):
    ``q`` at ``j0`` and ``round(q r'_j) 2^e_j`` elsewhere (``r_j = r'_j 2^e_j``, ``|r'_j| < 1``), all
    exact floats since ``q < 2^53`` (module docstring)."""
    m = len(theta)
    j0 = max(range(m), key=lambda j: abs(theta[j]))
    others = [j for j in range(m) if j != j0 and theta[j] != 0]
    parts = {j: _unit(theta[j] / theta[j0]) for j in others}
    sign = 1.0 if theta[j0] > 0 else -1.0
    qs: set[int] = set()
    for j in others:
        for bits in (53, 44, 35, 26):
            qs.add(parts[j][0].limit_denominator(2**bits - 1).denominator)
    out = []
    for q in sorted(qs):
        th = [0.0] * m
        th[j0] = sign * q
        ok = True
        for j in others:
            rp, e = parts[j]
            v = _as_float(Fraction(round(q * rp)) * (Fraction(2) ** e if e >= 0 else Fraction(1, 2 ** -e)) * int(sign))
            ok = ok and v is not None
            th[j] = v if v is not None else 0.0
        if ok:
            out.append(np.array(th))
    return out


def float_points(Phi: np.ndarray, mask: np.ndarray, theta: list) -> list[np.ndarray]:
    """Float weights strictly inside the chamber ``mask`` (decided exactly) near the rational
    direction ``theta``: its rounding and the lattice candidates, those strictly inside."""
    if not any(theta):
        return []
    first = _rounded(theta)
    cands = ([] if first is None else [first]) + _approximations(theta)
    out: list[np.ndarray] = []
    for t in cands:
        if not any(np.array_equal(t, u) for u in out) and strictly_inside(Phi, mask, t):
            out.append(t)
    return out
