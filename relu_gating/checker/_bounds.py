"""Proofs of the claimed pattern bounds (the checker's own), floats first.

For a gating pattern ``S`` every neuron is ``h = S Q v`` (``Q`` an orthonormal basis of
``col(Phi)``) with ``v`` in the pattern's cone, and its objective is ``v^T A_S v / v^T B_S v``
with ``A_S = Q^T S M M^T S Q``, ``B_S = Q^T S (I - Pi_H) S Q``.  A claim ``u`` is proven by:

* **pencil**: ``u B_S - A_S - D`` positive semidefinite (``D = G_T^T N G_T`` for dual evidence,
  else 0).  Floats *accept* when the smallest computed eigenvalue clears a rigorous allowance
  (rounding of the formation and of ``eigvalsh``, and the distance of ``Q``, ``QH``, ``M`` from
  their exact counterparts); with a proven lower bound ``beta > 0`` on ``lambda_min(B_S)`` a
  shortfall proves ``u + shortfall / beta``.  Where floats cannot accept, the inequality is
  decided in exact rationals (:mod:`._exact_claims`): at the claim, at the float estimate of the
  supremum, and at ``claim + BOUND_SLACK``.  No direction is ever dropped as a "kernel";
* **support**: the maximum over all ``h`` supported on the active samples (``K x K`` form);
* **cap**: ``1`` for ``N_K``, ``||M||_2^2`` for ``G_H``.

Exclusions are decided exactly (:func:`relu_gating.checker._exact_claims.excluded`); exact mode
(``verify(..., exact=True)``) decides every claim in rationals (:mod:`._exact_mode`, loaded then).
"""

from __future__ import annotations

import numpy as np

from relu_gating.checker._constants import BOUND_SLACK, CHUNK, EXACT_LIMIT
from relu_gating.checker._exact_claims import exact_claim, excluded, ladder
from relu_gating.checker._floats import allow
from relu_gating.checker._problem import StatedProblem

__all__ = ["prove", "pattern_pencils", "cap_bound", "pencil_bounds", "support_bounds"]

_TINY = np.finfo(float).tiny


def _masked(masks: np.ndarray, *pairs: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """``L^T S R`` for every mask ``S`` (rows of ``masks``) and every pair ``(L, R)``: (k, a, b)."""
    blocks = [(L[:, :, None] * R[:, None, :]).reshape(L.shape[0], -1) for L, R in pairs]
    out = masks @ np.concatenate(blocks, axis=1)
    res, c = [], 0
    for L, R in pairs:
        w = L.shape[1] * R.shape[1]
        res.append(out[:, c:c + w].reshape(-1, L.shape[1], R.shape[1]))
        c += w
    return res


def _trace(X: np.ndarray) -> np.ndarray:
    return np.abs(np.einsum("kii->k", X))


def pattern_pencils(masks: np.ndarray, P: StatedProblem) -> tuple[np.ndarray, np.ndarray]:
    """``(A_S, B_S)`` for a stack of float 0/1 masks (k, n): shapes (k, r, r)."""
    Q, M, QH = P.Q, P.M, P.QH
    got = _masked(masks, *([(M, Q), (Q, Q)] + ([] if QH is None else [(QH, Q)])))
    C, B = got[0], got[1]
    A = np.einsum("kai,kaj->kij", C, C)
    if QH is not None:
        B = B - np.einsum("kai,kaj->kij", got[2], got[2])
    return 0.5 * (A + np.transpose(A, (0, 2, 1))), 0.5 * (B + np.transpose(B, (0, 2, 1)))


def pencil_bounds(P: StatedProblem, A: np.ndarray, B: np.ndarray, ub: np.ndarray, D: np.ndarray | None = None,
                  normD: float = 0.0) -> np.ndarray:
    """Proven bounds from the claims ``ub`` (k,): ``ub`` when ``ub B - A - D`` is PSD with margin,
    else ``ub`` plus the shortfall over a proven ``beta <= lambda_min(B)``, else ``+inf``."""
    r = A.shape[1]
    ubc = np.where(np.isfinite(ub), ub, 0.0)
    C = ubc[:, None, None] * B - A - (0.0 if D is None else D)
    mag = np.abs(ubc) * _trace(B) + _trace(A) + (0.0 if D is None else np.abs(D).sum(axis=(1, 2)))
    delta = allow(P.n, r) * mag + P.basis_allowance(ubc, normD) + _TINY
    lam = np.linalg.eigvalsh(C)[:, 0]
    beta = np.linalg.eigvalsh(B)[:, 0] - allow(P.n, r) * _trace(B) - P.basis_allowance(1.0)
    short = np.maximum(delta - lam, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        via_beta = np.where(beta > 0, ubc + short / np.where(beta > 0, beta, 1.0), np.inf)
    return np.where(np.isfinite(ub), np.where(lam >= delta, ubc, via_beta), np.inf)


def support_bounds(P: StatedProblem, masks: np.ndarray) -> np.ndarray:
    """Max of the objective over all ``h`` supported on the active samples (k,): ``||U_A||_2^2``
    for ``N_K``; for ``G_H`` the top eigenvalue of ``M_A^T M_A + X (I - QH_A^T QH_A)^{-1} X^T``
    (``X = M_A^T QH_A``), ``+inf`` where ``I - QH_A^T QH_A`` is not proven nonsingular."""
    U, M, QH = P.U, P.M, P.QH
    n, K = U.shape
    if QH is None:
        (T,) = _masked(masks, (U, U))
        return np.linalg.eigvalsh(T)[:, -1] + allow(n, K) * _trace(T)
    q = QH.shape[1]
    QQ, X, MM = _masked(masks, (QH, QH), (M, QH), (M, M))
    Gq = np.eye(q)[None] - QQ
    wq = np.linalg.eigvalsh(Gq)[:, 0] - allow(n, q) * q - 2 * P.eta_H
    ok = wq > 0
    Gs = np.where(ok[:, None, None], Gq, np.eye(q)[None])
    T = MM + X @ np.linalg.solve(Gs, np.transpose(X, (0, 2, 1)))
    top = np.linalg.eigvalsh(0.5 * (T + np.transpose(T, (0, 2, 1))))[:, -1]
    slack = (allow(n, K + q) * (_trace(T) + 1.0) + 4 * (P.eta_H + P.d_M) * (1.0 + _trace(T))) / np.where(ok, wq, 1.0)
    return np.where(ok, top + slack, np.inf)


def cap_bound(P: StatedProblem) -> float:
    """The global cap: ``lambda_max(U_K^T U_K)`` (1 to rounding) for ``N_K``; ``||M||_2^2`` for
    ``G_H`` (``<= ||U_K||_2^2``), each with its rounding and the error of ``M``."""
    n, K = P.U.shape
    top_u = float(np.linalg.eigvalsh(P.U.T @ P.U)[-1]) + allow(n, K) * K
    if P.QH is None:
        return top_u
    top = float(np.linalg.norm(P.M, 2)) * (1 + allow(n, K)) + P.d_M
    return float(min(top_u, top * top + allow(n, K) * K))


def _estimate(A: np.ndarray, B: np.ndarray, D: np.ndarray) -> float:
    """A float estimate of ``sup v^T (A + D) v / v^T B v`` (where to try an exact proof; decides nothing)."""
    w, W = np.linalg.eigh(B)
    keep = w > 1e-12 * max(float(w[-1]), _TINY)
    if not keep.any():
        return np.inf
    R = W[:, keep] / np.sqrt(w[keep])
    T = R.T @ (A + D) @ R
    return float(np.linalg.eigvalsh(0.5 * (T + T.T))[-1])


def _dual(P: StatedProblem, mask: np.ndarray, claim: float, rows: np.ndarray, N: np.ndarray) -> float:
    """The bound proven by dual evidence: floats with their allowance, else exactly."""
    if N.dtype == object or not np.all(np.abs(N) < 2.0**500):  # exact multipliers, or floats would overflow
        return exact_claim(P, mask, ladder(claim), rows, N)
    A, B = pattern_pencils(mask.astype(float)[None], P)
    G = np.where(mask[rows], 1.0, -1.0)[:, None] * P.Q[rows]
    Nc = np.maximum(0.5 * N + 0.5 * N.T, 0.0)
    D = G.T @ Nc @ G
    proven = float(pencil_bounds(P, A, B, np.array([claim]), D[None], float(np.abs(Nc).sum()))[0])
    if proven > claim:
        est = _estimate(A[0], B[0], D)
        return min(proven, exact_claim(P, mask, ladder(claim) + [est * (1 + 1e-12) + 1e-15], rows, N))
    return proven


def prove(P: StatedProblem, masks: np.ndarray, claims: np.ndarray, evidence: dict, pruned: np.ndarray,
          exact: bool = False) -> np.ndarray:
    """The bound proven per pattern (min of pencil, support, cap and dual evidence; ``-inf`` where
    no neuron is admissible; ``+inf`` where that is claimed (``pruned``) and false).  ``exact``: every claim decided in exact rationals."""
    if exact:  # the float proofs only choose where the exact ones are tried
        from relu_gating.checker._exact_mode import prove_exact  # exact mode only: loaded then

        return prove_exact(P, masks, claims, evidence, pruned, prove(P, masks, claims, evidence, pruned))
    out = np.empty(claims.size)
    cap = cap_bound(P)
    for s in range(0, claims.size, CHUNK):
        mk = masks[s:s + CHUNK].astype(float)
        A, B = pattern_pencils(mk, P)
        claim = claims[s:s + CHUNK]
        pen = np.minimum(pencil_bounds(P, A, B, claim), cap)
        weak = np.flatnonzero(pen > claim)
        if weak.size:
            pen[weak] = np.minimum(pen[weak], support_bounds(P, mk[weak]))
        out[s:s + CHUNK] = pen
    for i, (rows, N) in evidence.items():
        if 0 <= i < out.size and out[i] > claims[i]:
            out[i] = min(out[i], _dual(P, masks[i], claims[i], rows, N))
    # floats too coarse: claims unproven, or proven only above every claim (they would raise the upper bound)
    top = float(np.max(claims[np.isfinite(claims)], initial=-np.inf))
    coarse = np.flatnonzero(((out > claims + BOUND_SLACK) | ((out > claims) & (out > top))) & np.isfinite(claims)
                            & ~pruned)
    for i in coarse[:EXACT_LIMIT]:
        out[i] = min(out[i], exact_claim(P, masks[i], ladder(claims[i])))
    for i in np.flatnonzero(pruned | (out > claims + BOUND_SLACK)):
        if excluded(P, masks[i]):
            out[i] = -np.inf
        elif pruned[i]:  # a false claim of no admissible neuron: unproven, whatever its bound
            out[i] = np.inf
    return out
