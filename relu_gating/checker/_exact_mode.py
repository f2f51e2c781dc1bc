"""Exact mode (``verify(..., exact=True)``, loaded then): every pattern claim, exclusion and the global cap
decided exactly, the float proofs only choosing where the exact ones are tried.  Claims and exclusions are
decided on forms in integers (:mod:`._int_pencil`: floats accept only with a proven bound, an integer vector
refutes, elimination decides the rest), over ``theta`` itself (all columns of ``Phi_r``, not a basis of the
pattern's span: dual evidence constrains ``theta`` on the inactive rows too)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from relu_gating.checker._constants import EXCLUDE_RTOL
from relu_gating.checker._exact_claims import evidence_duals, first_holding, ladder
from relu_gating.checker._int_pencil import Meter, dual_form, node_forms, psd, psd_excluding
from relu_gating.checker._exact_problem import ExactProblem
from relu_gating.checker._problem import StatedProblem
from relu_gating.checker._rational import is_psd

__all__ = ["prove_exact", "exact_cap", "mtm", "int_claim", "int_excluded"]


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


def _dual(E: ExactProblem, mask: np.ndarray, rows: np.ndarray, N: np.ndarray) -> tuple:
    """``G_T^T N G_T`` (``N`` made symmetric, >= 0) as an integer matrix over its denominator."""
    return dual_form(np.array([[(1 if mask[i] else -1) * y for y in E.Y[int(i)]] for i in rows], dtype=object)
                     .reshape(len(rows), -1), N)


def int_claim(P: StatedProblem, mask: np.ndarray, claims: list, rows: np.ndarray | None = None,
              N: np.ndarray | None = None, meter: Meter | None = None) -> float:
    """:func:`relu_gating.checker._exact_claims.exact_claim` on integer forms: the first of ``claims`` at
    which ``u B_S - A_S - D`` is PSD, decided exactly (``inf`` if none); the exact eliminations charged to
    ``meter`` (None: unlimited, the claims at most ``EXACT_LIMIT``)."""
    E, meter = P.exact, Meter(np.inf) if meter is None else meter
    forms = node_forms(E, np.flatnonzero(mask).tolist(), [], full=True)
    return first_holding(claims, N, evidence_duals(mask, rows, N, lambda rr, NN: _dual(E, mask, rr, NN)),
                         lambda u, D: psd_excluding(u, forms, meter, D))


def int_excluded(P: StatedProblem, mask: np.ndarray) -> bool:
    """Every neuron of the pattern is excluded (``h = 0`` or ``||(I - Pi_H) h|| <= EXCLUDE_RTOL ||h||``):
    ``EXCLUDE_RTOL^2 ZZ - B`` PSD on the integer forms, decided exactly."""
    if not mask.any():
        return True
    if P.QH is None:
        return False
    _, B, ZZ, _, sB = node_forms(P.exact, np.flatnonzero(mask).tolist(), [], full=True)
    t2 = Fraction(EXCLUDE_RTOL) ** 2
    return bool(psd(t2.numerator * sB * ZZ - t2.denominator * B, Meter(np.inf)))


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
    """:func:`relu_gating.checker._bounds.prove` exactly (in integers): every claim decided at its
    :func:`ladder` and at that of its float proof ``floats`` (which only chooses where to try)."""
    out = np.full(claims.size, np.inf)
    for i in range(claims.size):
        if pruned[i]:
            out[i] = -np.inf if int_excluded(P, masks[i]) else np.inf
            continue
        steps = sorted(set(ladder(claims[i]) + (ladder(floats[i]) if np.isfinite(floats[i]) else [])))
        rows, N = evidence.get(i, (None, None))
        out[i] = min(int_claim(P, masks[i], steps, rows, N), exact_cap(P, steps))
        if not np.isfinite(out[i]):
            out[i] = int_claim(P, masks[i], steps)
        if not np.isfinite(out[i]) and int_excluded(P, masks[i]):
            out[i] = -np.inf
    return out
