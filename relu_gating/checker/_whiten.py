"""A proven orthonormal basis of a column space, also from a whitened spanning set (the tree
node bound's blocks on clustered data: ``Phi``'s rows nearly dependent, its basis ill-conditioned)."""

from __future__ import annotations

import numpy as np

from relu_gating.checker._constants import EPS
from relu_gating.checker._floats import fro, gamma, projector_gap

__all__ = ["WHITEN_ABOVE", "basis", "basis_whitened", "matmul2"]

#: Above this proven projector gap, the checker also tries the whitened basis of
#: :func:`basis_whitened` (a choice of where to look, never a decision: both gaps are proven).
WHITEN_ABOVE = 1e-10


def _pow2_columns(X: np.ndarray) -> np.ndarray:
    """``X`` with each column whose largest entry lies beyond ``2^±400`` brought into ``[0.5, 1)`` by a
    power of two where that is exact (the same column space; no square of the SVD's overflows)."""
    top = np.abs(X).max(axis=0, initial=0.0)
    k = np.where((top > 2.0**-400) & (top < 2.0**400) | ~(top > 0) | ~np.isfinite(top), 0, -np.frexp(top)[1])
    if not k.any():  # (the common case: no column to scale)
        return X
    with np.errstate(under="ignore"):
        Y = np.ldexp(X, k)
        return np.where(np.all(np.ldexp(Y, -k) == X, axis=0), Y, X)  # exact columns only


def basis(X: np.ndarray, scale: bool = True) -> tuple[np.ndarray, float]:
    """An orthonormal basis ``O`` of ``col(X)`` (SVD of ``X``, columns beyond ``2^±400`` scaled exactly by
    powers of two; ``scale=False`` where no column can be: every nonzero entry within ``2^±400``) and the proven
    ``eta >= ||P_X - O O^T||`` (inf: none)."""
    X = _pow2_columns(X) if scale else X
    O, sv, Vt = np.linalg.svd(X, full_matrices=False)
    Z = Vt.T / sv if sv[-1] > 2.0**-1000 else None  # ~ (O^T X)^-1 (entries of Vt at most 1: no overflow)
    eta, _, _ = projector_gap(O, X, Z)
    return O, float(eta)


def basis_whitened(X: np.ndarray) -> tuple[np.ndarray, float]:
    """:func:`basis` of ``X W`` (``W`` the float inverse of ``X``'s R factor): the same column space
    when ``X W`` has full rank, whatever ``W`` is.  The computed ``Xw = fl(X W)`` differs from
    ``X W`` by a proven ``||E||`` (a product in twice the working precision, :func:`matmul2`), so
    ``sigma_min(X W) >= s - ||E|| > 0`` (full rank) and ``||P_{XW} - P_{Xw}|| <= ||E|| / (s - ||E||)`` (``s`` proven for ``Xw``) are added to ``eta``."""
    with np.errstate(all="ignore"):
        R = np.linalg.qr(X, mode="r")
        try:
            W = np.linalg.inv(R)
        except np.linalg.LinAlgError:
            return X, np.inf
        Xw, err = matmul2(X, W) if np.isfinite(W).all() else (X, np.inf)
    if not (np.isfinite(err) and np.isfinite(Xw).all()):
        return X, np.inf
    O, sv, Vt = np.linalg.svd(Xw, full_matrices=False)
    eta, s, _ = projector_gap(O, Xw, Vt.T / sv if sv[-1] > 0 else None)
    if not (np.isfinite(eta) and s > err):
        return X, np.inf
    return O, float((eta + err / (s - err)) * (1 + 4 * EPS))


_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a * b = p + e`` exactly (Dekker; no overflow for ``|a|, |b| < 2^996``)."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ah, bh = ca - (ca - a), cb - (cb - b)
    al, bl = a - ah, b - bh
    return p, al * bl - (((p - ah * bh) - al * bh) - ah * bl)


def matmul2(X: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, float]:
    """``X W`` as if computed in twice the working precision (Ogita, Rump and Oishi's ``Dot2``,
    SIAM J. Sci. Comput. 26 (2005), Prop. 5.5) and a proven bound on its error in Frobenius norm:
    ``|fl - x^T w| <= eps |x^T w| + gamma_c^2 |x|^T |w|`` per entry, plus an absolute underflow
    term; ``inf`` when an entry is too large for the splitting."""
    k, c = X.shape
    if max(float(np.abs(X).max(initial=0.0)), float(np.abs(W).max(initial=0.0))) >= 2.0**400:
        return X @ W, np.inf
    p, s = _two_product(X[:, :1], W[:1, :])
    for j in range(1, c):
        h, r = _two_product(X[:, j:j + 1], W[j:j + 1, :])
        t = p + h
        z = t - p
        s = s + (((p - (t - z)) + (h - z)) + r)
        p = t
    out = p + s
    bound = (EPS / 2 * fro(out) * (1 + 2 * EPS) + gamma(c) ** 2 * fro(np.abs(X) @ np.abs(W))
             + 8.0 * c * k * np.finfo(float).tiny) * (1 + 4 * EPS)
    return out, float(bound)
