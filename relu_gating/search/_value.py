"""The features' basis with its rank decided exactly, and the value a result reports (private).

``col(H)``: the columns of ``H`` are scaled by exact powers of two
(:func:`relu_gating._scaling.pow2_column_scales`); full column rank is proven in floats where
a proven lower bound on ``sigma_min`` is positive (the usual case, no exact work), else the
independent columns are found by exact elimination in rationals.  The float orthonormal basis
``Q_H`` of those columns comes with a proven ``eta_H >= ||Q_H Q_H^T - Pi_H||_2`` (``inf`` where
none is found: features nearly dependent, condition 2^50).

The value of a reported neuron: the float value where its proven error (from ``eta_H`` and the
rounding of ``relu(Phi theta)``, Higham's ``gamma_j``) is below :data:`VALUE_ACCURACY`, else the
exact objective in rationals of the float ``theta`` and the float inputs, rounded once; beyond
:data:`EXACT_VALUE_WORK` rational operations, the float value flagged as not evaluated to the
tolerance (the result is then not certified).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating._scaling import pow2_column_scales

#: The objective's definition (``relu_gating.search.objectives.EXCLUDE_RTOL``, the checker's too): a
#: neuron with ``||(I - Pi_H) h|| <= EXCLUDE_RTOL ||h||`` is excluded.
EXCLUDE_RTOL = 1e-9

__all__ = ["feature_basis", "reported_value", "exact_value", "VALUE_ACCURACY", "EXACT_VALUE_WORK"]

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


def _sigma_min_lower(Y: np.ndarray) -> float:
    """A proven lower bound on ``sigma_min`` of a small square ``Y`` (0 if none is found):
    ``||Y^{-1}|| <= ||Z||_F / (1 - beta)`` for ``Z ~ Y^{-1}`` and ``beta >= ||I - Z Y||_2 < 1/2``."""
    c = Y.shape[0]
    try:
        Z = np.linalg.inv(Y)
    except np.linalg.LinAlgError:
        return 0.0
    if not np.isfinite(Z).all():
        return 0.0
    beta = (_fro(np.eye(c) - Z @ Y) + _gamma(c + 1) * _fro(np.abs(Z) @ np.abs(Y)) + c * _EPS) * (1 + 4 * _EPS)
    if beta >= 0.5:
        return 0.0
    return (1.0 - beta) / (_fro(Z) * (1 + 4 * _EPS)) * (1 - 4 * _EPS)


def projector_gap(O: np.ndarray, X: np.ndarray) -> float:
    """A proven ``eta >= ||P_X - O O^T||_2`` for a float ``O`` (n x c) meant as an orthonormal basis
    of ``col(X)`` (n x c); ``inf`` where none is found (then ``X`` may be rank-deficient).

    With ``delta >= ||O^T O - I||``, ``Y = O^T X`` and ``R = X - O Y``: ``sigma_min(X) >=
    sqrt(1 - delta) sigma_min(Y) - ||R||``; a unit vector of ``col(X)`` is within ``||R|| /
    sigma_min(X)`` of ``col(O)``, and ``||P_O - O O^T|| <= (1 + delta) delta / (1 - delta)``.
    """
    k, c = X.shape
    aO, aX = np.abs(O), np.abs(X)
    delta = (_fro(O.T @ O - np.eye(c)) + _gamma(k + 1) * _fro(O) ** 2 + c * _EPS) * (1 + 4 * _EPS)
    if delta >= 0.5 or not np.all(np.isfinite(O)):
        return math.inf
    Y = O.T @ X
    aOX = aO.T @ aX
    rho = (_fro(X - O @ Y) + _gamma(k + c + 2) * 2.0 * _fro(aO @ aOX) + _gamma(1) * _fro(aX)) * (1 + 4 * _EPS)
    sy = max(_sigma_min_lower(Y) - _gamma(k) * _fro(aOX) * (1 + 4 * _EPS), 0.0)
    s = (math.sqrt(1.0 - delta) * sy - rho) * (1 - 4 * _EPS)
    if not s > 0:
        return math.inf
    return (rho / s + (1 + delta) * delta / (1 - delta)) * (1 + 4 * _EPS)


def exact_pivots(A: np.ndarray) -> list[int]:
    """The first independent columns of a float matrix taken as the rationals it holds (elimination
    in fractions; their number is the exact rank)."""
    basis: list[tuple[int, list[Fraction]]] = []
    piv: list[int] = []
    for j, col in enumerate(np.asarray(A, dtype=float).T.tolist()):
        v = [Fraction(x) for x in col]
        for p, b in basis:
            if v[p]:
                f = v[p] / b[p]
                v = [x - f * y for x, y in zip(v, b)]
        first = next((i for i, x in enumerate(v) if x), None)
        if first is not None:
            basis.append((first, v))
            piv.append(j)
    return piv


def feature_basis(H: np.ndarray) -> tuple[list[int], np.ndarray, float]:
    """``(pivots, Q_H, eta_H)``: the independent columns of ``H`` (decided exactly), a float
    orthonormal basis of their span and a proven ``eta_H >= ||Q_H Q_H^T - Pi_H||_2`` (``inf`` if none)."""
    Hs = H * pow2_column_scales(H, "features")
    piv = list(range(Hs.shape[1]))
    O = np.linalg.svd(Hs, full_matrices=False)[0]
    eta = projector_gap(O, Hs)
    if not np.isfinite(eta):  # full column rank not proven in floats: decided in rationals
        piv = exact_pivots(Hs)
        O = np.linalg.svd(Hs[:, piv], full_matrices=False)[0][:, :len(piv)]
        eta = projector_gap(O, Hs[:, piv]) if piv else 0.0
    return piv, O, float(eta)


def _float_value(obj: Any, theta: np.ndarray, h: np.ndarray, dh: float) -> tuple[float, float]:
    """``(value, proven error)`` of the float objective of ``h`` (within ``dh`` of the exact
    ``relu(Phi theta)`` in norm); error ``inf`` where none is proven."""
    n, K = obj.U_K.shape
    hn = float(np.linalg.norm(h))
    if not (hn > 0 and np.isfinite(hn)):
        return math.nan, math.inf
    if obj.Q_H is None:
        y, D = h, dh
    else:
        q = obj.Q_H.shape[1]
        y = h - obj.Q_H @ (obj.Q_H.T @ h)
        D = ((1 + obj.eta_H) * dh + obj.eta_H * (hn + dh)
             + 2 * _gamma(n + q + 2) * _fro(obj.Q_H) ** 2 * hn) * (1 + 4 * _EPS)
    yn = float(np.linalg.norm(y))
    if not (np.isfinite(D) and yn > 4 * D + 1e-300):  # ||y|| - D is the least ||(I - Pi_H) h|| proven
        return math.nan, math.inf
    if obj.Q_H is not None and not yn - D > 1.01 * EXCLUDE_RTOL * (hn + dh):  # maybe excluded: decided exactly
        return math.nan, math.inf
    delta = D / (yn - D)
    value = float(np.sum((obj.U_K.T @ y) ** 2) / (yn * yn))  # U^T y = M^T y: y is orthogonal to col(H)
    normU2 = 1.0 + K * 1e-10  # ||U_K||_2^2: U_K orthonormal to 1e-10 (checked on input)
    err = (4 * delta * normU2 + 3 * (K + 1) * _gamma(n + 2) * normU2) * (1 + 1e-6)
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
        z = obj.Phi @ theta
        dh = _gamma(m) * float(np.linalg.norm(np.abs(obj.Phi) @ np.abs(theta)))
        value, err = _float_value(obj, theta, np.maximum(z, 0.0), dh)
    if err <= VALUE_ACCURACY and np.isfinite(value):
        return value, True
    q = 0 if obj.Q_H is None else len(obj.H_pivots)
    if n * (m + obj.U_K.shape[1] + q + q * q) > EXACT_VALUE_WORK:
        return value, False
    return exact_value(obj, theta), True


#: Above this proven ``||Q_H Q_H^T - Pi_H||_2`` (features nearly dependent, condition about 1e8 and
#: more) the search's float bounds, formed with ``Q_H``, carry no proven allowance for its error:
#: a certified result is then confirmed by the checker before it is reported certified.
CONFIRM_ETA = 1e-8

#: Up to this many samples the confirmation runs the checker in exact mode, beyond in float mode
#: (both sound; exact mode is the tests' oracle).
CONFIRM_EXACT_N = 64


def confirmed(obj: Any, result: Any) -> Any:
    """``result`` itself, or where ``eta_H > CONFIRM_ETA`` and the checker does not certify it, the
    same result not certified, with the checker's proven upper bound and a note."""
    if not result.certified or obj.Q_H is None or obj.eta_H <= CONFIRM_ETA:
        return result
    import dataclasses

    from relu_gating.certificate import verify

    rep = verify(result, obj.Phi, obj.U_K, features=obj.stated_features, exact=obj.n <= CONFIRM_EXACT_N)
    if rep.certified:
        return result
    note = (f"features nearly dependent (proven ||Q_H Q_H^T - Pi_H|| <= {obj.eta_H:.1e}): the checker does not "
            f"confirm the bounds ({rep.reasons[0] if rep.reasons else 'not certified'}): not certified")
    return dataclasses.replace(result, certified=False, upper_bound=float(max(result.upper_bound, rep.upper_bound)),
                               notes=tuple(result.notes) + (note,))
