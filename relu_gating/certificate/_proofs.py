"""The verifier's own bound proofs, in plain numpy (private).

Nothing here is shared with the search: no solver, no pencil routine of
:mod:`relu_gating.objectives`.  For a stack of gating patterns ``S`` and the
verifier's orthonormal basis ``Q`` of ``col(Phi)``, every neuron of a pattern
is ``h = S Q v`` with ``v`` in the pattern's cone, and its objective is the
quotient ``v^T A_S v / v^T B_S v`` with

.. math::  A_S = Q^T S M M^T S Q,\\qquad B_S = Q^T S (I - \\Pi_H) S Q.

A claimed bound ``u`` of a pattern is proven by one of:

* **pencil**: ``u B_S - A_S - D ⪰ 0`` (``D = G_T^T N G_T`` for dual evidence,
  0 otherwise), tested with ``eigvalsh`` and an explicit allowance ``delta``
  for the rounding of the formation and of the eigenvalues; if the smallest
  eigenvalue ``lam`` falls short of ``delta``, the proven bound is
  ``u + (delta - lam) / beta`` with ``beta`` a lower bound on
  ``lambda_min(B_S)`` (``+inf`` when ``B_S`` is numerically singular);
* **support**: the maximum over all ``h`` supported on the active samples,
  computed here in ``K x K`` form (Prop 4.1 and its marginal-gain analogue);
* **cap**: ``1`` for ``N_K``, ``||M||_2^2 = s_K(H)^2`` for ``G_H``;
* **dual evidence** (exactly solved patterns): ``u B_S - A_S - G_T^T N G_T``
  positive definite decided in exact rational arithmetic
  (:func:`exact_slack_pd`), else bounded in floats (:func:`dual_bound`).

The proven bound of a pattern is the smallest of these.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["pattern_pencils", "pencil_bounds", "support_bounds", "cap_bound", "dual_bound", "FORM_EPS_FACTOR",
           "SINGULAR_RTOL", "exact_slack_pd"]

_EPS = np.finfo(float).eps

#: Allowance multiplier: rounding of a sum of ``n`` products and of ``eigvalsh``
#: is taken as ``FORM_EPS_FACTOR * (n + d^2) * eps`` times the magnitude involved.
FORM_EPS_FACTOR = 8.0

#: ``B_S`` (or the support pencil) counts as singular below this relative eigenvalue.
SINGULAR_RTOL = 1e-12


def _allow(n: int, d: int) -> float:
    return FORM_EPS_FACTOR * (n + d * d) * _EPS


def _masked(masks: np.ndarray, L: np.ndarray, R: np.ndarray) -> np.ndarray:
    """``L^T S R`` for every mask ``S`` (rows of ``masks``): shape (k, a, b)."""
    n, a = L.shape
    b = R.shape[1]
    return (masks @ (L[:, :, None] * R[:, None, :]).reshape(n, a * b)).reshape(-1, a, b)


def pattern_pencils(masks: np.ndarray, Q: np.ndarray, M: np.ndarray,
                    QH: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``(A_S, B_S)`` for a stack of float 0/1 masks (k, n): shapes (k, r, r)."""
    C = _masked(masks, M, Q)  # M^T S Q
    A = np.einsum("kai,kaj->kij", C, C)
    B = _masked(masks, Q, Q)
    if QH is not None:
        E = _masked(masks, QH, Q)  # QH^T S Q
        B = B - np.einsum("kai,kaj->kij", E, E)
    return 0.5 * (A + np.transpose(A, (0, 2, 1))), 0.5 * (B + np.transpose(B, (0, 2, 1)))


def _trace(X: np.ndarray) -> np.ndarray:
    return np.abs(np.einsum("kii->k", X))


def pencil_bounds(A: np.ndarray, B: np.ndarray, ub: np.ndarray, n: int,
                  D: np.ndarray | None = None) -> np.ndarray:
    """Proven bounds from the claims ``ub`` (k,): ``ub`` itself when ``ub B - A - D ⪰ 0`` holds
    with margin, else ``ub`` plus the shortfall over ``lambda_min(B)``, else ``+inf``."""
    r = A.shape[1]
    ubc = np.where(np.isfinite(ub), ub, 0.0)
    C = ubc[:, None, None] * B - A - (0.0 if D is None else D)
    mag = np.abs(ubc) * _trace(B) + _trace(A) + (0.0 if D is None else np.abs(D).sum(axis=(1, 2)))
    delta = _allow(n, r) * mag + np.finfo(float).tiny
    lam = np.linalg.eigvalsh(C)[:, 0]
    wB = np.linalg.eigvalsh(B)
    beta = wB[:, 0] - _allow(n, r) * _trace(B)
    ok_beta = beta > SINGULAR_RTOL * np.maximum(wB[:, -1], np.finfo(float).tiny)
    short = np.maximum(delta - lam, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        via_beta = np.where(ok_beta, ubc + short / np.where(ok_beta, beta, 1.0), np.inf)
    out = np.where(lam >= delta, ubc, via_beta)
    return np.where(np.isfinite(ub), out, np.inf)


def support_bounds(masks: np.ndarray, U: np.ndarray, M: np.ndarray, QH: np.ndarray | None) -> np.ndarray:
    """Max of the objective over all ``h`` supported on the active samples (k,).

    ``N_K``: ``||U_A||_2^2``.  ``G_H``: the top eigenvalue of
    ``M_A^T M_A + X (I - QH_A^T QH_A)^{-1} X^T`` with ``X = M_A^T QH_A``
    (Woodbury form of the pencil ``(M_A M_A^T, I - QH_A QH_A^T)``); ``+inf``
    where ``I - QH_A^T QH_A`` is singular (a vector on the support lies in
    ``col(H)``).
    """
    n, K = U.shape
    if QH is None:
        T = _masked(masks, U, U)
        return np.linalg.eigvalsh(T)[:, -1] + _allow(n, K) * _trace(T)
    q = QH.shape[1]
    Gq = np.eye(q)[None] - _masked(masks, QH, QH)
    X = _masked(masks, M, QH)
    wq = np.linalg.eigvalsh(Gq)[:, 0] - _allow(n, q) * q
    ok = wq > SINGULAR_RTOL
    Gs = np.where(ok[:, None, None], Gq, np.eye(q)[None])
    T = _masked(masks, M, M) + X @ np.linalg.solve(Gs, np.transpose(X, (0, 2, 1)))
    top = np.linalg.eigvalsh(0.5 * (T + np.transpose(T, (0, 2, 1))))[:, -1]
    allowance = _allow(n, K + q) * (_trace(T) + 1.0) / np.where(ok, wq, 1.0)
    return np.where(ok, top + allowance, np.inf)


def cap_bound(M: np.ndarray, features: bool) -> float:
    """``1`` for ``N_K``; ``||M||_2^2 = s_K(H)^2`` (plus rounding) for the marginal gain."""
    if not features:
        return 1.0
    n, K = M.shape
    return float(min(1.0, np.linalg.norm(M, 2) ** 2 + _allow(n, K) * K))


def dual_bound(A: np.ndarray, B: np.ndarray, D: np.ndarray, n: int) -> float:
    """Proven ``sup v^T (A + D) v / v^T B v`` for one pattern (bounds the objective on the cone).

    ``D = G_T^T N G_T`` with ``N >= 0``, so ``v^T A v <= v^T (A + D) v`` on the
    cone.  With ``B = W diag(w) W^T``: on ``range(B)`` whitened coordinates,
    on ``ker B`` the block of ``A + D`` must be negative definite (then the
    supremum is the top eigenvalue of the Schur complement) or vanish with
    its coupling (then ``ker B`` plays no part); otherwise ``+inf``.
    """
    r = A.shape[0]
    Mx = A + D
    Mx = 0.5 * (Mx + Mx.T)
    w, W = np.linalg.eigh(B)
    wmax = max(float(w[-1]), np.finfo(float).tiny)
    rng = w > SINGULAR_RTOL * wmax
    scale = float(np.abs(Mx).sum() + np.abs(B).sum())
    delta = _allow(n, r) * scale
    R = W[:, rng] / np.sqrt(w[rng])
    top = R.T @ Mx @ R
    Z = W[:, ~rng]
    if Z.shape[1]:
        Mz = Z.T @ Mx @ Z
        Cz = R.T @ Mx @ Z
        mu = np.linalg.eigvalsh(Mz)
        if mu[-1] < -delta:
            top = top - Cz @ np.linalg.solve(Mz, Cz.T)
            delta = delta * (1.0 + float(np.abs(Cz).sum()) ** 2 / float(-mu[-1]))
        elif not (np.abs(Mz).max() <= delta and np.abs(Cz).max() <= delta):
            return float("inf")
    if top.size == 0:
        return float("-inf")
    lam = float(np.linalg.eigvalsh(0.5 * (top + top.T))[-1])
    return lam + delta / max(float(w[rng].min()), np.finfo(float).tiny) * (1.0 + abs(lam))


def _fr(a: np.ndarray) -> list:
    """A float array as nested lists of exact fractions."""
    return [[Fraction(float(x)) for x in row] for row in np.atleast_2d(a)]


def _gram(X: list, Y: list) -> list:
    """``X^T Y`` in exact arithmetic (X, Y as lists of rows)."""
    a, b = len(X[0]), len(Y[0])
    out = [[Fraction(0)] * b for _ in range(a)]
    for xr, yr in zip(X, Y):
        for i in range(a):
            if xr[i]:
                oi, xi = out[i], xr[i]
                for j in range(b):
                    oi[j] += xi * yr[j]
    return out


def exact_slack_pd(ub: float, Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, mask: np.ndarray,
                   G: np.ndarray, N: np.ndarray) -> bool:
    """Is ``ub B_S - A_S - G^T N G`` positive definite, in exact rational arithmetic?

    Every float input is taken as the exact rational it is, the pencil is
    formed and an ``L D L^T`` factorization is run on fractions: no rounding
    anywhere, so a True is a proof for the verifier's basis ``Q``.  Used for
    the few patterns with dual evidence, where float allowances would be
    too coarse.
    """
    act = np.flatnonzero(mask)
    Y = _fr(Q[act])
    C1 = _gram(_fr(M[act]), Y)  # M_A^T Y (K x r)
    A = _gram(C1, C1)
    B = _gram(Y, Y)
    if QH is not None:
        E = _gram(_fr(QH[act]), Y)
        EE = _gram(E, E)
        B = [[b - e for b, e in zip(rb, re)] for rb, re in zip(B, EE)]
    r = Q.shape[1]
    if G.shape[0] == 0:
        G, N = np.zeros((1, r)), np.zeros((1, 1))
    Gf = _fr(G)
    NG = [[sum((nij * g[j] for nij, g in zip(nrow, Gf)), Fraction(0)) for j in range(len(Gf[0]))] for nrow in _fr(N)]
    D = _gram(Gf, NG)  # G^T N G
    u = Fraction(float(ub))
    C = [[u * b - a - d for b, a, d in zip(rb, ra, rd)] for rb, ra, rd in zip(B, A, D)]
    return _ldl_pd(C)


def _ldl_pd(C: list) -> bool:
    """Positive definiteness of a symmetric rational matrix by exact Gaussian elimination."""
    C = [row[:] for row in C]
    r = len(C)
    for k in range(r):
        if C[k][k] <= 0:
            return False
        for i in range(k + 1, r):
            f = C[i][k] / C[k][k]
            if f:
                for j in range(k + 1, r):
                    C[i][j] -= f * C[k][j]
    return True
