"""Stacks of small matrices, shape (r, r, k): k patterns at once, one numpy operation per
entry (private; the bound pass, :mod:`relu_gating.search._kernels.bound`).

The factorizations are the textbook ones, entry by entry, so the rounding analyses of the
bound pass (Demmel's bound for a completed float Cholesky factorization) apply as stated.
"""

from __future__ import annotations

import numpy as np

from relu_gating._inputs.scaling import pow2_norms

__all__ = ["sym", "gram", "frob", "cholesky", "cholesky_ok", "forward", "backward"]


def sym(flat: np.ndarray, iu: tuple, r: int) -> np.ndarray:
    X = np.empty((r, r, flat.shape[1]))
    X[iu[0], iu[1]] = flat
    X[iu[1], iu[0]] = flat
    return X


def gram(Y: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """``Y^T Z`` for stacks ``Y`` (a, b, k), ``Z`` (a, c, k): shape (b, c, k)."""
    if Y.shape[0] == 1:  # one product per entry (3x faster than einsum's loop)
        return Y[0][:, None, :] * Z[0][None, :, :]
    return np.einsum("abk,ack->bck", Y, Z, optimize=False)


def frob(X: np.ndarray) -> np.ndarray:
    """Frobenius norms of the k matrices of a stack (a, b, k); where a sum of squares falls below
    ``2^-900`` (entries near ``2^-537`` square to nothing: an error allowance would be taken as 0), the
    norm with each entry scaled by a power of two (:func:`pow2_norms`).  (The pencils' entries are at
    most ``n``: no square overflows.)"""
    s = np.einsum("ijk,ijk->k", X, X, optimize=False)
    out = np.sqrt(s)
    if not s.size or s.min() >= 2.0**-900:  # the usual case: one reduction (nan goes on)
        return out
    odd = ~(s >= 2.0**-900)
    if odd.any():
        odd[odd] = (s[odd] != 0) | (np.abs(X[:, :, odd]).max(axis=(0, 1), initial=0.0) > 0)  # zero is exact
        if odd.any():
            out[odd] = pow2_norms(X[:, :, odd].reshape(-1, int(odd.sum())), axis=0)
    return out


def cholesky(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower Cholesky factors of a stack (r, r, k) and where the factorization completed
    (every pivot positive); failed columns hold garbage."""
    L = X.copy()
    ok = cholesky_ok(L)
    up = np.triu_indices(X.shape[0], 1)
    L[up[0], up[1]] = 0.0
    return L, ok


def cholesky_ok(X: np.ndarray) -> np.ndarray:
    """Where the Cholesky factorization of the stack completes (every pivot positive), computed
    in place: ``X``'s lower triangle becomes the factor (nothing above the diagonal is read)."""
    r, _, k = X.shape
    ok = np.ones(k, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(r):
            d = X[j, j] - np.einsum("ik,ik->k", X[j, :j], X[j, :j]) if j else X[j, j].copy()
            ok &= d > 0
            X[j, j] = np.sqrt(np.where(d > 0, d, 1.0))
            if j + 1 < r:
                sub = X[j + 1:, j] - np.einsum("aik,ik->ak", X[j + 1:, :j], X[j, :j]) if j else X[j + 1:, j]
                X[j + 1:, j] = sub / X[j, j]
    return ok


def forward(L: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``L^{-1} Y`` for stacks L (r, r, k), Y (r, c, k)."""
    Z = np.empty_like(Y)
    for i in range(L.shape[0]):
        s = Y[i] - np.einsum("jk,jck->ck", L[i, :i], Z[:i]) if i else Y[i]
        Z[i] = s / L[i, i]
    return Z


def backward(L: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``L^{-T} y`` for stacks L (r, r, k), y (r, k)."""
    r = L.shape[0]
    x = np.empty_like(y)
    for i in range(r - 1, -1, -1):
        s = y[i] - np.einsum("jk,jk->k", L[i + 1:, i], x[i + 1:]) if i + 1 < r else y[i]
        x[i] = s / L[i, i]
    return x
