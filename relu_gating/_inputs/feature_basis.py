"""The features' basis with its rank decided exactly (private; the search's and its certificate
writer's: the checker keeps its own).

The columns of ``H`` are scaled by exact powers of two
(:func:`relu_gating._inputs.scaling.pow2_column_scales`); full column rank is proven in floats where a
proven lower bound on ``sigma_min`` is positive (the usual case, no exact work), else the
independent columns are found by exact elimination in rationals.  The float orthonormal basis
``Q_H`` of those columns comes with a proven ``eta_H >= ||Q_H Q_H^T - Pi_H||_2`` (``inf`` where
none is found: features nearly dependent, condition 2^50).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from relu_gating._inputs.scaling import pow2_column_scales

__all__ = ["FeatureBasis", "feature_basis", "exact_pivots", "extend_echelon", "projector_gap", "m_error", "pencil_allowances",
           "UK_ORTHONORMAL_TOL"]

#: ``U_K`` is orthonormal to this (checked on input by the search and the checker): ``||U_K||_2^2 <= 1 + K`` times it.
UK_ORTHONORMAL_TOL = 1e-10

_EPS = float(np.finfo(float).eps)


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


def projector_gap(O: np.ndarray, X: np.ndarray) -> tuple[float, float]:
    """``(eta, s)``: a proven ``eta >= ||P_X - O O^T||_2`` for a float ``O`` (n x c) meant as an
    orthonormal basis of ``col(X)`` (n x c) and a proven ``s <= sigma_min(X)``; ``(inf, 0)`` where
    none is found (then ``X`` may be rank-deficient).

    With ``delta >= ||O^T O - I||``, ``Y = O^T X`` and ``R = X - O Y``: ``sigma_min(X) >=
    sqrt(1 - delta) sigma_min(Y) - ||R||``; a unit vector of ``col(X)`` is within ``||R|| /
    sigma_min(X)`` of ``col(O)``, and ``||P_O - O O^T|| <= (1 + delta) delta / (1 - delta)``.
    """
    k, c = X.shape
    aO, aX = np.abs(O), np.abs(X)
    delta = (_fro(O.T @ O - np.eye(c)) + _gamma(k + 1) * _fro(O) ** 2 + c * _EPS) * (1 + 4 * _EPS)
    if delta >= 0.5 or not np.all(np.isfinite(O)):
        return math.inf, 0.0
    Y = O.T @ X
    aOX = aO.T @ aX
    rho = (_fro(X - O @ Y) + _gamma(k + c + 2) * 2.0 * _fro(aO @ aOX) + _gamma(1) * _fro(aX)) * (1 + 4 * _EPS)
    sy = max(_sigma_min_lower(Y) - _gamma(k) * _fro(aOX) * (1 + 4 * _EPS), 0.0)
    s = (math.sqrt(1.0 - delta) * sy - rho) * (1 - 4 * _EPS)
    if not s > 0:
        return math.inf, 0.0
    return (rho / s + (1 + delta) * delta / (1 - delta)) * (1 + 4 * _EPS), s


def exact_pivots(A: np.ndarray) -> list[int]:
    """The first independent columns of a float matrix taken as the rationals it holds (elimination
    in fractions; their number is the exact rank)."""
    basis: list[tuple[int, list[Fraction]]] = []
    cols = np.asarray(A, dtype=float).T
    return [j for j in range(cols.shape[0]) if extend_echelon(basis, cols[j])]


def extend_echelon(basis: list, vec: np.ndarray) -> bool:
    """Reduce the float ``vec`` (the rationals it holds) against the echelon ``basis`` (pairs of a
    pivot and a row of fractions); append it and say True where it is independent of the basis."""
    v = [Fraction(float(x)) for x in vec]
    for p, b in basis:
        if v[p]:
            f = v[p] / b[p]
            v = [x - f * y for x, y in zip(v, b)]
    first = next((i for i, x in enumerate(v) if x), None)
    if first is not None:
        basis.append((first, v))
    return first is not None


@dataclass(frozen=True)
class FeatureBasis:
    """``col(H)`` for the search: ``pivots`` the independent columns of ``H`` (decided exactly),
    ``Hs`` those columns scaled by exact powers of two, ``Q`` a float orthonormal basis of their span,
    ``eta`` a proven ``||Q Q^T - Pi_H||_2`` and ``sigma`` a proven ``<= sigma_min(Hs)`` (``inf`` and
    0 where none is found: features nearly dependent)."""

    pivots: tuple
    Hs: np.ndarray
    Q: np.ndarray
    eta: float
    sigma: float


#: Where the float basis's proven ``eta_H`` exceeds this (features of condition about 1e4 and more),
#: an orthogonal basis of ``col(H)`` is built in exact rationals instead (:func:`orthogonal_basis`),
#: work permitting (:data:`EXACT_BASIS_WORK`).
EXACT_BASIS_ETA = 1e-12

#: At most this many integer multiply-adds (``n q^2``) for :func:`orthogonal_basis`, ...
EXACT_BASIS_WORK = 200_000
#: ... and integers of at most this many bits (beyond: the float basis stays).
EXACT_BASIS_BITS = 20_000


def feature_basis(H: np.ndarray) -> FeatureBasis:
    """The :class:`FeatureBasis` of ``H`` (module docstring); with nearly dependent features (``eta``
    above :data:`EXACT_BASIS_ETA` or unproven) ``Q`` comes from :func:`orthogonal_basis`, whose
    ``eta`` is of the order of the rounding whatever the condition of ``H``."""
    Hs = H * pow2_column_scales(H, "features")
    piv = list(range(Hs.shape[1]))
    O = np.linalg.svd(Hs, full_matrices=False)[0]
    eta, sigma = projector_gap(O, Hs)
    if not np.isfinite(eta):  # full column rank not proven in floats: decided in rationals
        piv = exact_pivots(Hs)
        O = np.linalg.svd(Hs[:, piv], full_matrices=False)[0][:, :len(piv)]
        eta, sigma = projector_gap(O, Hs[:, piv]) if piv else (0.0, 0.0)
    if piv and not eta <= EXACT_BASIS_ETA and Hs.shape[0] * len(piv) ** 2 <= EXACT_BASIS_WORK and len(piv) <= 16:
        got = orthogonal_basis(Hs[:, piv])
        if got is not None and got[1] < eta:
            O, eta = got
            sigma = projector_gap(O, Hs[:, piv])[1]
    return FeatureBasis(tuple(piv), Hs[:, piv], O, float(eta), float(sigma))


def _exact_orthogonal(X: np.ndarray) -> list[list[int]] | None:
    """Integer columns with exactly the span of the (independent) float columns of ``X``, pairwise
    orthogonal: fraction-free Gram-Schmidt on ``X 2^s`` taken as the integers it is (None where an
    integer would exceed :data:`EXACT_BASIS_BITS` bits)."""
    nz = X[X != 0]
    s = max(0, 53 - int(np.min(np.frexp(nz)[1]))) if nz.size else 0  # every entry times 2^s is an integer
    cols = [[int(Fraction(x) * (1 << s)) for x in col] for col in X.T.tolist()]
    out: list[list[int]] = []
    for c in cols:
        w = c
        for b in out:
            bb, cb = sum(x * x for x in b), sum(x * y for x, y in zip(w, b))
            if cb:
                w = [bb * x - cb * y for x, y in zip(w, b)]
            if max(abs(x) for x in w).bit_length() > EXACT_BASIS_BITS:
                return None
        g = math.gcd(*w)
        out.append([x // g for x in w] if g > 1 else w)
    return out


def orthogonal_basis(X: np.ndarray) -> tuple[np.ndarray, float] | None:
    """``(O, eta)``: a float orthonormal basis ``O`` of ``col(X)`` (independent columns) with a proven
    ``eta >= ||O O^T - P_X||_2`` of the order of the rounding, whatever the condition of ``X``; None
    where none is proven.

    ``W`` (exact, pairwise orthogonal integer columns spanning ``col(X)``, :func:`_exact_orthogonal`),
    each column scaled by a power of two to a largest entry in [1/2, 1), is rounded once to ``W~``
    (``||W - W~||_F <= u ||W~||_F`` plus underflow); with ``sigma_min(W) >= min_j ||w_j||`` (orthogonal
    columns) and ``s <= sigma_min(W~)`` and ``eta_0 >= ||O O^T - P_{W~}||`` (:func:`projector_gap`),
    ``||P_W - P_{W~}|| <= ||W - W~|| max(1 / sigma_min(W), 1 / sigma_min(W~))`` (equal ranks)."""
    cols = _exact_orthogonal(X)
    if cols is None:
        return None
    Wf = np.empty((X.shape[0], len(cols)))
    for j, w in enumerate(cols):
        top = max(abs(x) for x in w).bit_length()
        Wf[:, j] = [x / (1 << top) for x in w]  # int / int: correctly rounded
    E = (_EPS / 2 * _fro(Wf) + Wf.size * 2.0**-1074) * (1 + 4 * _EPS)
    smin_W = min(_fro(Wf[:, j]) for j in range(Wf.shape[1])) * (1 - _gamma(X.shape[0] + 2)) - E
    O = np.linalg.svd(Wf, full_matrices=False)[0]
    eta0, s = projector_gap(O, Wf)
    if not (np.isfinite(eta0) and s > 0 and smin_W > 0):
        return None
    return O, float((eta0 + E * max(1.0 / smin_W, 1.0 / s)) * (1 + 4 * _EPS))


def _norm_U(K: int) -> float:
    """``||U_K||_2`` bound: ``U_K^T U_K`` within :data:`UK_ORTHONORMAL_TOL` of ``I`` entrywise."""
    return math.sqrt(1.0 + K * (UK_ORTHONORMAL_TOL + 1e-12))


def m_error(U_K: np.ndarray, Q_H: np.ndarray, eta: float) -> float:
    """A proven ``||M - (I - Pi_H) U_K||_2`` for the float ``M = U_K - Q_H (Q_H^T U_K)``:
    ``eta ||U_K||_2`` (``eta >= ||Q_H Q_H^T - Pi_H||_2``) plus the rounding of ``M``,
    ``gamma_{n+q+2}`` times the Frobenius norm of ``|U_K| + |Q_H| (|Q_H|^T |U_K|)`` (Higham's bound
    for the two products and the difference); ``inf`` where ``eta`` is."""
    n, K = U_K.shape
    aU, aQ = np.abs(U_K), np.abs(Q_H)
    rnd = _gamma(n + Q_H.shape[1] + 2) * _fro(aU + aQ @ (aQ.T @ aU))
    return float((eta * _norm_U(K) + rnd) * (1 + 1e-6)) if math.isfinite(eta) else math.inf


def pencil_allowances(eta: float, d: float, Psi: np.ndarray, K: int) -> tuple[float, float]:
    """``(a, b)``: proven ``||A_S - A~_S||_2 <= a`` and ``||B_S - B~_S||_2 <= b`` for every 0/1
    diagonal ``S``, between the pencils of the true projector (``A_S = C^T C``,
    ``C = ((I - Pi_H) U_K)^T S Psi``, ``B_S = Psi^T S (I - Pi_H) S Psi``) and those formed with a float
    ``M`` (``||M - (I - Pi_H) U_K|| <= d``) and ``Q_H`` (``||Q_H Q_H^T - Pi_H|| <= eta``), each up to
    its own rounding: with ``p >= ||Psi||_2^2`` (``||S Psi|| <= ||Psi||``), ``delta = d sqrt(p) >=
    ||C - C~||`` and ``||C~|| <= (||U_K|| + d) sqrt(p)``, ``b = eta p`` and ``a = 2 ||C~|| delta +
    delta^2``.  ``inf`` where ``eta`` or ``d`` is."""
    if not (math.isfinite(eta) and math.isfinite(d)):
        return math.inf, math.inf
    r = Psi.shape[1]
    p = 1.0 + _fro(Psi.T @ Psi - np.eye(r)) + _gamma(Psi.shape[0]) * _fro(Psi) ** 2 * 1.01
    delta = d * math.sqrt(p)
    a = (2.0 * (_norm_U(K) + d) * math.sqrt(p) * delta + delta * delta) * (1 + 1e-6)
    return float(a), float(eta * p * (1 + 1e-6))
