"""The value a result reports (private).

The objective of a reported neuron: the float value where its proven error (from ``eta_H``, the
proven distance of the float projector onto ``col(H)`` from the exact one
(:func:`relu_gating._feature_basis.feature_basis`), and the rounding of ``relu(Phi theta)``,
Higham's ``gamma_j``) is below :data:`VALUE_ACCURACY`, else the exact objective in rationals of
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

from relu_gating._feature_basis import feature_basis

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
