"""Rigorous float64 error bounds (the checker's own): a float result may *accept* a claim only
through these (Higham, *Accuracy and Stability of Numerical Algorithms*, Thm 3.5 for products)."""

from __future__ import annotations

import math

import numpy as np

from relu_gating.checker._constants import EPS, FORM_EPS_FACTOR

__all__ = ["gamma", "allow", "fro", "sigma_min_lower", "projector_gap", "basis_error", "dot_rounded"]


def gamma(j: int) -> float:
    """Higham's ``gamma_j = j u / (1 - j u)``: relative error of a j-term float dot product."""
    return j * EPS / (1.0 - j * EPS)


def allow(n: int, d: int) -> float:
    """Relative allowance of a formed ``d x d`` matrix (sums of ``n`` products) and its eigenvalues."""
    return FORM_EPS_FACTOR * (n + d * d) * EPS


def fro(A: np.ndarray) -> float:
    """Frobenius norm; entries beyond ``2^±400`` first scaled by a power of two (no square overflows;
    ``inf`` only where the norm exceeds the float range).  Entries lost to underflow by the scaling
    (``2^-1075`` each at most) are added back as ``sqrt(size) 2^-1074``: never below the norm by more
    than the float sum's own rounding."""
    a = np.asarray(A, dtype=np.float64).ravel()  # first the sum of squares (vdot: no overflow warning) where no
    # square overflowed (s < 2^800) and those that underflowed are below its rounding (s > 2^-800); 0, inf, nan as they are
    if 2.0**-800 < (s := float(np.vdot(a, a))) < 2.0**800 or not 0 < (top := float(np.abs(a).max(initial=0.0))) < math.inf:
        return math.sqrt(s)
    e = math.frexp(top)[1]
    with np.errstate(under="ignore", over="ignore"):
        b = np.ldexp(a, -e)
        return float(np.ldexp(math.sqrt(float(b @ b)) + (math.sqrt(a.size) * 2.0**-1074 if e > 0 else 0.0), e))


def sigma_min_lower(Y: np.ndarray, Z: np.ndarray | None = None) -> float:
    """A proven lower bound on ``sigma_min(Y)`` of a small square ``Y`` (0 if none is found):
    with ``Z ~ Y^{-1}`` and ``beta >= ||I - Z Y||_2 < 1/2``, ``||Y^{-1}|| <= ||Z||_F / (1 - beta)``."""
    c = Y.shape[0]
    if Z is None:
        try:
            Z = np.linalg.inv(Y)
        except np.linalg.LinAlgError:
            return 0.0
    if not np.isfinite(Z).all():
        return 0.0
    E = np.eye(c) - Z @ Y
    beta = (fro(E) + gamma(c + 1) * fro(np.abs(Z) @ np.abs(Y)) + c * EPS) * (1 + 4 * EPS)
    if beta >= 0.5:
        return 0.0
    return (1.0 - beta) / (fro(Z) * (1 + 4 * EPS)) * (1 - 4 * EPS)


def projector_gap(O: np.ndarray, X: np.ndarray, Z: np.ndarray | None = None) -> tuple[float, float, float]:
    """``(eta, s, delta)``: proven ``eta >= ||P_X - O O^T||_2`` (``inf`` if none is found),
    ``s <= sigma_min(X)`` and ``delta >= ||O^T O - I||_2``, from residuals computed here (nothing
    trusted from the SVD that gave ``O``; ``Z ~ (O^T X)^{-1}`` only sharpens the bound).

    With ``Y = O^T X`` and ``R = X - O Y``: ``sigma_min(X) >= sqrt(1 - delta) sigma_min(Y) - ||R||``;
    a unit ``x`` of ``col(X)`` is within ``||R|| / sigma_min(X)`` of ``col(O)`` (same dimension),
    and ``||P_O - O O^T|| <= (1 + delta) delta / (1 - delta)``.
    """
    k, c = X.shape
    aO, aX = np.abs(O), np.abs(X)
    delta = (fro(O.T @ O - np.eye(c)) + gamma(k + 1) * fro(O) ** 2 + c * EPS) * (1 + 4 * EPS)
    if delta >= 0.5:
        return np.inf, 0.0, delta
    Y = O.T @ X
    R = X - O @ Y
    aOX = aO.T @ aX
    rho = (fro(R) + gamma(k + c + 2) * 2.0 * fro(aO @ aOX) + gamma(1) * fro(aX)) * (1 + 4 * EPS)
    sy = max(sigma_min_lower(Y, Z) - gamma(k) * fro(aOX) * (1 + 4 * EPS), 0.0)
    s = (math.sqrt(1.0 - delta) * sy - rho) * (1 - 4 * EPS)
    if s <= 0:
        return np.inf, 0.0, delta
    return (rho / s + (1 + delta) * delta / (1 - delta)) * (1 + 4 * EPS), s, delta


def basis_error(O: np.ndarray, X: np.ndarray) -> float:
    """A proven ``eps >= ||O - O*||_2`` for some exactly orthonormal basis ``O*`` of ``col(X)``
    (``O`` computed for it; ``inf`` when unproven): ``4 (eta + delta)`` by the bounds of
    :func:`projector_gap` (``(I - P_X) O`` and the orthonormalisation of ``P_X O``)."""
    eta, _, delta = projector_gap(O, X)
    return 4.0 * (eta + delta) * (1 + delta) if np.isfinite(eta) else np.inf



_SPLIT = 134217729.0  # 2^27 + 1: Dekker's splitting


def dot_rounded(A: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, float]:
    """``A @ x`` with every entry correctly rounded (Dekker's error-free products, summed exactly by
    :func:`math.fsum`) and a proven Frobenius error bound (half an ulp per entry, plus underflow);
    ``(A @ x, inf)`` where the splitting could overflow (entries of ``2^400`` or more)."""
    A, x = np.asarray(A, dtype=float), np.asarray(x, dtype=float)
    if not max(float(np.abs(A).max(initial=0.0)), float(np.abs(x).max(initial=0.0))) < 2.0**400:
        return A @ x, math.inf
    b = x[None, :]
    p = A * b
    ca, cb = _SPLIT * A, _SPLIT * b
    ah, bh = ca - (ca - A), cb - (cb - b)
    al, bl = A - ah, b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    out = np.array([math.fsum(row) for row in np.concatenate([p, e], axis=1).tolist()])
    return out, (EPS / 2 * fro(out) + 8.0 * A.size * float(np.finfo(float).tiny)) * (1 + 4 * EPS)
