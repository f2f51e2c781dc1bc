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

__all__ = ["FeatureBasis", "feature_basis", "exact_pivots", "projector_gap"]

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


def feature_basis(H: np.ndarray) -> FeatureBasis:
    """The :class:`FeatureBasis` of ``H`` (module docstring)."""
    Hs = H * pow2_column_scales(H, "features")
    piv = list(range(Hs.shape[1]))
    O = np.linalg.svd(Hs, full_matrices=False)[0]
    eta, sigma = projector_gap(O, Hs)
    if not np.isfinite(eta):  # full column rank not proven in floats: decided in rationals
        piv = exact_pivots(Hs)
        O = np.linalg.svd(Hs[:, piv], full_matrices=False)[0][:, :len(piv)]
        eta, sigma = projector_gap(O, Hs[:, piv]) if piv else (0.0, 0.0)
    return FeatureBasis(tuple(piv), Hs[:, piv], O, float(eta), float(sigma))
