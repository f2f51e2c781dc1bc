"""Batched top generalized eigenvalues for stacks of small symmetric pencils.

For each pencil ``(A[k], B[k])`` (A, B symmetric positive semidefinite,
``m x m`` with m small) compute

.. math::

    \\lambda_{\\max}(A, B) = \\max_{x \\in \\operatorname{range}(B)}
        \\frac{x^T A x}{x^T B x},

the unconstrained upper bound of a cone-constrained quotient (Prop 4.3 of the
paper; the cone is dropped).  Everything is vectorised over the stack with
``numpy.linalg.eigh``; there is no Python loop per pencil.

Rigour.  Whitening ``B`` amplifies rounding errors by ``1 / w_min`` where
``w_min`` is the smallest kept eigenvalue of ``B`` relative to its largest.
Pencils whose ``B`` has a relative eigenvalue below ``cond_limit`` (nearly or
exactly singular) are reported as *unreliable*: their bound is ``+inf`` so that
callers fall back to a bound that does not depend on ``B`` (or to an exact
solve).  Reliable bounds are returned with an explicit error allowance added,
so that they remain upper bounds despite rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BatchedEig", "top_generalized_eig", "sym_eigmax_small"]

_EPS = np.finfo(float).eps


@dataclass(frozen=True)
class BatchedEig:
    """Top generalized eigenpairs of a stack of pencils.

    Attributes
    ----------
    values : ndarray, shape (N,)
        Top generalized eigenvalue of each pencil (``nan`` where unreliable).
    upper : ndarray, shape (N,)
        Rigorous upper bound: ``values`` plus a rounding allowance, ``+inf``
        where the pencil is numerically singular (see ``reliable``).
    vectors : ndarray, shape (N, m)
        A top generalized eigenvector per pencil, normalised to ``x^T B x = 1``
        (zeros where unreliable).
    gap : ndarray, shape (N,)
        Difference between the top two generalized eigenvalues (0 for a
        multiple top eigenvalue: the eigenvector is then not unique).
    reliable : ndarray of bool, shape (N,)
        False where ``B`` is singular or too ill-conditioned for a rigorous bound.
    """

    values: np.ndarray
    upper: np.ndarray
    vectors: np.ndarray
    gap: np.ndarray
    reliable: np.ndarray


def top_generalized_eig(A: np.ndarray, B: np.ndarray, *, cond_limit: float = 1e-8) -> BatchedEig:
    """Top generalized eigenpair of each pencil in a stack.

    Parameters
    ----------
    A, B : ndarray, shape (N, m, m)
        Stacks of symmetric PSD matrices.
    cond_limit : float
        Smallest admissible ratio ``lambda_min(B) / lambda_max(B)``; pencils
        below it are flagged unreliable (bound ``+inf``).

    Returns
    -------
    BatchedEig
    """
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    if A.ndim == 2:
        A = A[None]
        B = B[None]
    if A.shape != B.shape or A.ndim != 3 or A.shape[1] != A.shape[2]:
        raise ValueError(f"A and B must be stacks of square matrices of equal shape, got {A.shape} and {B.shape}")
    N, m, _ = A.shape
    if N == 0:
        z = np.zeros(0)
        return BatchedEig(z, z, np.zeros((0, m)), z, np.zeros(0, dtype=bool))
    w, V = np.linalg.eigh(B)
    wmax = w[:, -1]
    reliable = (wmax > 0) & (w[:, 0] > cond_limit * np.where(wmax > 0, wmax, 1.0))
    safe_w = np.where(reliable[:, None], w, 1.0)
    C = V / np.sqrt(safe_w)[:, None, :]  # whitening: C^T B C = I
    Ahat = np.einsum("nji,njk,nkl->nil", C, A, C)
    Ahat = 0.5 * (Ahat + np.transpose(Ahat, (0, 2, 1)))
    mu, Y = np.linalg.eigh(Ahat)
    top = mu[:, -1]
    gap = mu[:, -1] - mu[:, -2] if m > 1 else np.full(N, np.inf)
    vec = np.einsum("nij,nj->ni", C, Y[:, :, -1])
    # Rounding allowance: backward errors of eigh are O(eps * ||.||); whitening
    # amplifies the error in A by 1 / w_min (relative to ||B||).
    rel_wmin = np.where(reliable, w[:, 0] / np.where(wmax > 0, wmax, 1.0), 1.0)
    anorm = np.abs(mu).max(axis=1)
    allowance = 64 * m * _EPS * (anorm + np.abs(top)) / rel_wmin + 1e-13
    values = np.where(reliable, top, np.nan)
    upper = np.where(reliable, top + allowance, np.inf)
    vec = np.where(reliable[:, None], vec, 0.0)
    return BatchedEig(values=values, upper=upper, vectors=vec, gap=np.where(reliable, gap, 0.0), reliable=reliable)


def sym_eigmax_small(G: np.ndarray) -> np.ndarray | None:
    """Largest eigenvalue of each symmetric matrix of a stack ``G`` (p, p, k), p <= 3, in closed
    form (trigonometric formula for p = 3); ``None`` for p > 3.

    An *estimate* (relative error of a few ulps of ``||G||``, more near a double root of
    the cubic): callers that need a bound certify it (``mu I - G`` positive definite).
    Non-finite entries give ``nan``.  Vectorised over ``k``: a few dozen array operations.
    """
    p = G.shape[0]
    if p == 1:
        return G[0, 0].copy()
    if p == 2:
        a, b, c = G[0, 0], G[0, 1], G[1, 1]
        return 0.5 * (a + c) + np.hypot(0.5 * (a - c), b)
    if p != 3:
        return None
    t = np.abs(G).max(axis=(0, 1))  # scaled to entries of at most 1: no overflow or underflow
    t = np.where(t > 0, t, 1.0)
    a, b, c = G[0, 0] / t, G[1, 1] / t, G[2, 2] / t
    d, e, f = G[0, 1] / t, G[0, 2] / t, G[1, 2] / t
    q = (a + b + c) / 3.0
    a0, b0, c0 = a - q, b - q, c - q
    s = np.sqrt((a0 * a0 + b0 * b0 + c0 * c0 + 2.0 * (d * d + e * e + f * f)) / 6.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(s > 0, s, 1.0)
        a0, b0, c0, d, e, f = a0 / w, b0 / w, c0 / w, d / w, e / w, f / w
        det = a0 * (b0 * c0 - f * f) - d * (d * c0 - f * e) + e * (d * f - b0 * e)
        top = q + 2.0 * s * np.cos(np.arccos(np.clip(0.5 * det, -1.0, 1.0)) / 3.0)
    return t * np.where(s > 0, top, q)
