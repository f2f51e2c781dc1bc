"""Exact mode (``verify(..., exact=True)``, loaded then): every pattern claim and the global cap decided
in rationals, the float proofs only choosing where the exact ones are tried."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from relu_gating.checker._exact_claims import exact_claim, excluded, ladder
from relu_gating.checker._problem import ExactProblem, StatedProblem
from relu_gating.checker._rational import is_psd

__all__ = ["prove_exact", "exact_cap", "mtm"]


def mtm(E: ExactProblem) -> list:
    """``M^T M = U^T (I - Pi_H) U`` (fractions, K x K) of the exact problem ``E``."""
    K = E.K
    G = [[sum(u[a] * u[b] for u in E.Ui) for b in range(K)] for a in range(K)]
    if E.Hi is not None:
        q = len(E.Ginv)
        HU = [[sum(h[c] * u[k] for h, u in zip(E.Hi, E.Ui)) for k in range(K)] for c in range(q)]
        G = [[G[a][b] - sum(HU[c][a] * E.GinvHU[c][b] for c in range(q)) for b in range(K)] for a in range(K)]
    scale = Fraction(1, 1 << (2 * E.su))
    return [[x * scale for x in row] for row in G]


def exact_cap(P: StatedProblem, claims: list) -> float:
    """The first of ``claims`` at least ``lambda_max(M^T M)`` (the global cap), decided exactly."""
    G = mtm(P.exact)
    K = len(G)
    for u in sorted(claims):
        U = Fraction(float(u))
        if np.isfinite(u) and is_psd([[U * (i == j) - G[i][j] for j in range(K)] for i in range(K)]):
            return float(u)
    return np.inf


def prove_exact(P: StatedProblem, masks: np.ndarray, claims: np.ndarray, evidence: dict,
                pruned: np.ndarray, floats: np.ndarray) -> np.ndarray:
    """:func:`relu_gating.checker._bounds.prove` in exact rationals: every claim decided at its
    :func:`ladder` and at that of its float proof ``floats`` (which only chooses where to try)."""
    out = np.full(claims.size, np.inf)
    for i in range(claims.size):
        if pruned[i]:
            out[i] = -np.inf if excluded(P, masks[i]) else np.inf
            continue
        steps = sorted(set(ladder(claims[i]) + (ladder(floats[i]) if np.isfinite(floats[i]) else [])))
        rows, N = evidence.get(i, (None, None))
        out[i] = min(exact_claim(P, masks[i], steps, rows, N), exact_cap(P, steps))
        if not np.isfinite(out[i]):
            out[i] = exact_claim(P, masks[i], steps)
        if not np.isfinite(out[i]) and excluded(P, masks[i]):
            out[i] = -np.inf
    return out
