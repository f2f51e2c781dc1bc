"""The value a result reports (private).

The objective of a reported neuron: the float value where its proven error (products in twice
the working precision, :func:`solvers.matmul2`; the projection onto ``col(H)`` bounded through the
proven ``sigma_min`` of :func:`relu_gating._inputs.feature_basis.feature_basis`) is below
:data:`VALUE_ACCURACY`, else the exact objective in rationals of
the float ``theta`` and the float inputs, rounded once; beyond :data:`EXACT_VALUE_WORK` rational
operations, the float value flagged as not evaluated to the tolerance (the result is then not
certified).  :func:`confirmed`: a certified result with nearly dependent features is confirmed by
the checker.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

#: The objective's definition (``relu_gating.search.objectives.EXCLUDE_RTOL``, the checker's too): a
#: neuron with ``||(I - Pi_H) h|| <= EXCLUDE_RTOL ||h||`` is excluded.
EXCLUDE_RTOL = 1e-9

__all__ = ["reported_value", "exact_value", "VALUE_ACCURACY", "EXACT_VALUE_WORK"]

_EPS = float(np.finfo(float).eps)

#: A float value is reported only where its proven error is below this (a tenth of the checker's
#: value tolerance, 1e-9); elsewhere the value is computed in rationals.
VALUE_ACCURACY = 1e-10

#: At most this many rational multiply-adds (about ``n (m + K + q) + n q^2``) for one exact value.
EXACT_VALUE_WORK = 20_000_000


def _gamma(j: int) -> float:
    return j * _EPS / (1.0 - j * _EPS)


def _fro(A: np.ndarray) -> float:
    a = np.asarray(A, dtype=float).ravel()
    return math.sqrt(float(a @ a))


def _dot2(X: np.ndarray, W: np.ndarray, rough: float) -> tuple[np.ndarray, float]:
    """``X @ W`` in twice the working precision with a proven Frobenius error bound
    (:func:`solvers.matmul2`); the float product and ``rough`` where the entries are too large."""
    from solvers import matmul2

    P, err = matmul2(np.ascontiguousarray(X), np.ascontiguousarray(W))
    return (P, err) if np.isfinite(err) else (X @ W, rough)


_SPLIT = 134217729.0  # 2^27 + 1 (Dekker's splitting)


def _dots(X: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, float]:
    """``X^T r`` (X: n x c) with each entry correctly rounded (Dekker's exact products summed by
    :func:`math.fsum`) and a proven Frobenius error bound; ``inf`` where the splitting could overflow."""
    big = max(float(np.abs(X).max(initial=0.0)), float(np.abs(r).max(initial=0.0)))
    if not big < 2.0**400:
        return X.T @ r, math.inf
    a, b = X, r[:, None]
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ah, bh = ca - (ca - a), cb - (cb - b)
    e = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
    out = np.array([math.fsum(np.concatenate([p[:, j], e[:, j]]).tolist()) for j in range(X.shape[1])])
    err = (_EPS / 2 * _fro(out) + 8.0 * X.size * 2.0**-1022) * (1 + 4 * _EPS)  # rounding once; underflow
    return out, err


def _float_value(obj: Any, theta: np.ndarray) -> tuple[float, float]:
    """``(value, proven error)`` of the float objective of ``relu(Phi theta)``; error ``inf`` where
    none is proven (then the value is decided exactly).

    ``z = Phi theta`` in twice the working precision (error ``dz``); with features, ``r = h - Hs c``
    for the least-squares ``c`` (any ``c``: ``(I - Pi_H) (h - Hs c) = (I - Pi_H) h`` exactly), and
    ``||Pi_H r|| <= ||Hs^T r|| / sigma_min(Hs)``: ``r`` is within ``D`` of ``y = (I - Pi_H) h``, and
    ``||U^T r||^2 / ||r||^2`` within ``4 D / (||r|| - D)`` of the exact ``||U^T y||^2 / ||y||^2``
    (``U^T y = M^T y``), plus its own rounding.
    """
    n, K = obj.U_K.shape
    aPhi = np.abs(obj.Phi)
    z, dz = _dot2(obj.Phi, theta[:, None], _gamma(obj.Phi.shape[1]) * _fro(aPhi @ np.abs(theta)) * (1 + 4 * _EPS))
    h = np.maximum(z[:, 0], 0.0)
    hn = _fro(h)
    if not (hn > 0 and np.isfinite(hn)):
        return math.nan, math.inf
    r, D = h, dz
    if obj.Q_H is not None:
        b = obj.H_basis
        if not b.sigma > 0:
            return math.nan, math.inf
        c = np.linalg.lstsq(b.Hs, h, rcond=None)[0]
        X = np.c_[b.Hs, h]
        r, er = _dot2(X, np.r_[-c, 1.0][:, None], math.inf)
        r = r[:, 0]
        g, eg = _dots(b.Hs, r)
        D = ((er + dz) * (1 + _fro(b.Hs) / b.sigma) + (_fro(g) + eg) / b.sigma) * (1 + 8 * _EPS)
    rn = _fro(r)
    if not (np.isfinite(D) and rn > 4 * D + 1e-300):
        return math.nan, math.inf
    if obj.Q_H is not None and not rn - D > 1.01 * EXCLUDE_RTOL * (hn + dz):  # maybe excluded: decided exactly
        return math.nan, math.inf
    ur, eu = _dots(obj.U_K, r)
    num = float(np.sum(ur**2))
    value = num / (rn * rn)
    normU2 = 1.0 + K * 1e-10  # ||U_K||_2^2: U_K orthonormal to 1e-10 (checked on input)
    err = (4 * D / (rn - D) * normU2 + (2 * math.sqrt(num) * eu + eu * eu) / (rn * rn)
           + 8 * (K + n) * _EPS * max(value, 1.0)) * (1 + 1e-6)
    return value, err


def exact_value(obj: Any, theta: np.ndarray) -> float:
    """The objective of ``relu(Phi theta)`` in exact rationals (the float ``theta`` and the float
    inputs taken as the rationals they are; ``H``'s independent columns), rounded once; ``nan``
    when excluded (``h = 0`` or ``||(I - Pi_H) h|| <= EXCLUDE_RTOL ||h||``)."""
    from solvers import exact_solve

    th = [Fraction(t) for t in theta.tolist()]
    h = [max(sum((Fraction(a) * t for a, t in zip(row, th) if a), Fraction(0)), Fraction(0)) for row in obj.Phi.tolist()]
    y = h
    H = obj.feature_matrix
    if H is not None:
        Hf = [[Fraction(x) for x in row] for row in H[:, list(obj.H_pivots)].tolist()]
        q = len(obj.H_pivots)
        G = [[sum((r[a] * r[b] for r in Hf), Fraction(0)) for b in range(q)] for a in range(q)]
        c = exact_solve(G, [sum((r[a] * x for r, x in zip(Hf, h) if x), Fraction(0)) for a in range(q)])
        if c is None:  # cannot happen: the pivot columns are independent
            return math.nan
        y = [x - sum((r[a] * c[a] for a in range(q)), Fraction(0)) for r, x in zip(Hf, h)]
    hh, yy = sum((x * x for x in h), Fraction(0)), sum((x * x for x in y), Fraction(0))
    if hh == 0 or yy <= Fraction(EXCLUDE_RTOL) ** 2 * hh:
        return math.nan
    num = sum((sum((Fraction(u) * x for u, x in zip(col, y) if x), Fraction(0)) ** 2 for col in obj.U_K.T.tolist()),
              Fraction(0))
    return float(num / yy)


def reported_value(obj: Any, theta: np.ndarray) -> tuple[float, bool]:
    """``(value, evaluated)``: the objective of ``relu(Phi theta)`` to within :data:`VALUE_ACCURACY`
    (float with a proven error bound, else exact), ``nan`` when excluded; ``evaluated`` False when
    neither is possible (the float value returned, beyond :data:`EXACT_VALUE_WORK`)."""
    theta = np.asarray(theta, dtype=float)
    n, m = obj.Phi.shape
    with np.errstate(all="ignore"):
        value, err = _float_value(obj, theta)
    if err <= VALUE_ACCURACY and np.isfinite(value):
        return value, True
    q = 0 if obj.Q_H is None else len(obj.H_pivots)
    if n * (m + obj.U_K.shape[1] + q + q * q) > EXACT_VALUE_WORK:
        return value, False
    return exact_value(obj, theta), True


#: Above this proven condition of the features (``||H_s||_F / sigma_min(H_s)``, ``H_s`` their
#: independent columns scaled; about 1e6 and more: nearly dependent) the search's float bounds, formed
#: with ``Q_H``, carry no proven allowance for its error (about ``eps`` times the condition): a certified
#: result is then confirmed by the checker before it is reported certified.
CONFIRM_COND = 1e6

#: Up to this many samples the confirmation runs the checker in exact mode, beyond in float mode
#: (both sound; exact mode is the tests' oracle).
CONFIRM_EXACT_N = 64


def confirmed(obj: Any, result: Any) -> Any:
    """``result`` itself, or where the features' condition exceeds :data:`CONFIRM_COND` and the
    checker does not certify it, the same result not certified, with the checker's proven upper
    bound and a note."""
    if not result.certified or obj.Q_H is None:
        return result
    b = obj.H_basis
    if b.sigma > 0 and _fro(b.Hs) <= CONFIRM_COND * b.sigma:
        return result
    import dataclasses

    from relu_gating.checker import verify

    rep = verify(result, obj.Phi, obj.U_K, features=obj.stated_features, exact=obj.n <= CONFIRM_EXACT_N)
    if rep.certified:
        return result
    note = (f"features nearly dependent (condition above {CONFIRM_COND:g}): the checker does not "
            f"confirm the bounds ({rep.reasons[0] if rep.reasons else 'not certified'}): not certified")
    return dataclasses.replace(result, certified=False, upper_bound=float(max(result.upper_bound, rep.upper_bound)),
                               notes=tuple(result.notes) + (note,))
