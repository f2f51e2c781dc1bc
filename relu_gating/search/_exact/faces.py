"""Exact evidence for a chamber whose supremum lies on a one-sample face of its boundary (private).

A neuron active on one sample ``a`` alone, ``h = c e_a``, has the value ``v_a = ||M^T e_a||^2 /
||(I - Pi_H) e_a||^2`` (the leverage ``l_a = ||U_K^T e_a||^2`` for ``N_K``), an exact rational of the
inputs.  When it is the best neuron of a query, every chamber whose closed cone contains it (the
chambers across the walls of the one-sample chamber ``{a}``, and across its edges) has its supremum
``v_a`` on its boundary, not inside: at ``u = v_a`` the dual slack ``u B_S - A_S - G_T^T N G_T``
must be singular along that neuron, so a solver's float multipliers leave it indefinite by their own
error, and the claim the exact check proves stays 1e-8 above the value (a 12-sample ``N_K`` query
said "certified NO").

Here the multipliers are built from the exact pencil instead.  On a chamber with active set ``T``
every neuron is ``h = S Phi theta``, supported on ``T`` with ``h_T = Phi_T theta >= 0``, and

.. math::  u B_S - A_S - G_T^T N G_T = \\Phi_T^T (R(u) - N) \\Phi_T, \\qquad
           R(u) = u (I - \\Pi_H)_{TT} - (M M^T)_{TT},

with the active rows ``G_T = Phi_T`` as the evidence rows.  So ``R(u) - N`` positive semidefinite
with ``N >= 0`` (``h_a h_b >= 0`` on the cone) proves ``u`` (decided first on the ``|T| x |T|``
matrices, then in ``theta`` by the checker's rule).  At ``u`` just above ``v_a`` the row
``a`` of ``R(u)`` is nearly zero on the diagonal, and its positive off-diagonal entries are what a
boundary supremum leaves (they are ``-P_ab >= 0`` for ``N_K`` whenever ``e_a`` is the chamber's
maximum): ``N`` clears them exactly, here ``N_ab = R_ab`` rounded to a float (53 bits), and the
rest of ``R(u)`` must then be PSD.  Two choices are tried: the row of ``a`` cleared, and every positive
off-diagonal entry cleared (a copositivity certificate of Diananda's form on the orthant).  The claim
is decided by the search's exact test (:func:`relu_gating.certificate.exact_claim`, the checker's
rule), at the float just above ``v_a`` and one step of the checker's ladder (``2^-40``) above it.

Nothing here is trusted: the evidence is ordinary dual evidence ``(rows, N)`` with float ``N``,
which the checker decides in exact rationals (``FORMAT.md``, "dual evidence").
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["one_sample_values", "face_candidates", "face_claim", "FACE_GAP", "FACE_MAX_ACTIVE"]

#: A chamber is tried when its claim exceeds its best one-sample value by at most this (relative):
#: a float dual bound left above a boundary supremum by the multipliers' error (1e-8 seen).
FACE_GAP = 1e-4

#: Chambers with more active samples are not tried (the orthant multipliers on ``T x T`` rarely
#: prove anything there, and the exact pencil grows with ``|T|``).
FACE_MAX_ACTIVE = 12

#: The checker's first ladder step (:data:`relu_gating.checker.ROUNDING_STEP`): tried above ``v_a``.
_STEP = 2.0**-40


def one_sample_values(obj: Any) -> np.ndarray:
    """Float value of each one-sample neuron ``h = e_a`` (n,): ``||M_a||^2 / (1 - ||QH_a||^2)``
    (``M^T (I - Pi_H) e_a = M_a``), nan where ``e_a`` is nearly in ``col(H)``; a filter only."""
    cache = obj.__dict__.setdefault("_face_cache", {}) if hasattr(obj, "__dict__") else {}
    if "v" not in cache:
        num = np.sum(np.asarray(obj.M, dtype=float) ** 2, axis=1)
        den = np.ones(obj.n) if obj.Q_H is None else 1.0 - np.sum(np.asarray(obj.Q_H) ** 2, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            cache["v"] = np.where(den > 1e-12, num / np.where(den > 1e-12, den, 1.0), np.nan)
    return cache["v"]


def face_candidates(obj: Any, masks: np.ndarray, bounds: np.ndarray) -> list[int]:
    """Positions whose bound exceeds the best one-sample value of their active set by more than the
    checker's ladder step and at most :data:`FACE_GAP` (relative): a boundary supremum left open."""
    v = one_sample_values(obj)
    out = []
    for i in range(masks.shape[0]):
        T = np.flatnonzero(masks[i])
        if not (0 < T.size <= FACE_MAX_ACTIVE) or not np.isfinite(bounds[i]):
            continue
        vt = v[T]
        if not np.any(np.isfinite(vt)):
            continue
        top = float(np.nanmax(vt))
        scale = max(1.0, abs(top))
        if 2 * _STEP * scale < bounds[i] - top <= FACE_GAP * scale:
            out.append(i)
    return out


def _unit_columns(n: int, T: np.ndarray) -> np.ndarray:
    E = np.zeros((n, T.size))
    E[T, np.arange(T.size)] = 1.0
    return E


def _float_above(x: Fraction) -> float:
    """The least float ``>= x``."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _multipliers(R: list[list[Fraction]], a: int, whole: bool) -> np.ndarray:
    """Float multipliers clearing the positive off-diagonal entries of ``R`` in the row of ``a``
    (``whole``: everywhere), rounded to nearest."""
    t = len(R)
    N = np.zeros((t, t))
    for i in range(t):
        for j in range(i + 1, t):
            if (whole or a in (i, j)) and R[i][j] > 0:
                N[i, j] = N[j, i] = float(R[i][j])
    return N


def face_claim(obj: Any, basis: Any, mask: np.ndarray, claim: float, bound: float, budget: Any = None
               ) -> tuple[float, tuple] | None:
    """``(u, (rows, N))``: the least ``u < bound`` proven by multipliers on the active rows built from
    the exact pencil at ``u`` (see the module docstring), tried at the best one-sample value of the
    active set (the float just above it, then one ladder step above), and at ``claim`` when that lies
    between; None when none is proven."""
    from relu_gating.certificate import exact_below, exact_claim, exact_pencil

    T = np.flatnonzero(mask)
    if T.size == 0 or T.size > FACE_MAX_ACTIVE:
        return None
    A, B = exact_pencil(_unit_columns(obj.n, T), obj.U_K, basis, np.ones(obj.n, dtype=bool))
    vals = [A[k][k] / B[k][k] if B[k][k] > 0 else None for k in range(T.size)]
    live = [k for k, x in enumerate(vals) if x is not None]
    if not live:
        return None
    a = max(live, key=lambda k: vals[k])
    f0 = _float_above(vals[a])
    tries = {f0, f0 + _STEP * max(1.0, abs(f0))}
    if np.isfinite(claim) and f0 <= claim:
        tries.add(float(claim))
    for u in sorted(x for x in tries if x < bound):
        U = Fraction(u)
        R = [[U * B[i][j] - A[i][j] for j in range(T.size)] for i in range(T.size)]
        seen = []
        for whole in (False, True):
            N = _multipliers(R, a, whole)
            if any(np.array_equal(N, s) for s in seen):
                continue
            seen.append(N)
            AN = [[A[i][j] + Fraction(float(N[i, j])) for j in range(T.size)] for i in range(T.size)]
            if not exact_below(U, AN, B):  # R(u) - N not PSD on the active coordinates: no proof here
                continue
            if budget is not None:
                if budget.left <= 0:
                    return None
                budget.left -= 1
            if exact_claim(u, obj.Phi, obj.U_K, basis, mask, T, N):  # the checker's rule, in theta
                return u, (T.astype(np.int64), N)
    return None
