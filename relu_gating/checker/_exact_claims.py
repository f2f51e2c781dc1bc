"""Exact proofs of a pattern's claims and exclusions, in rationals (the checker's own; where floats
cannot accept a claim, and for every claim in exact mode).

A claim ``u`` of a pattern ``S`` holds when ``u B - A - D`` is positive semidefinite in the
coordinates ``theta`` of ``Phi`` itself (:meth:`ExactProblem.forms`; ``D`` from dual evidence, made
exact), or, counting only admissible neurons, its S-lemma relaxation (:func:`psd_excluding`); tried
at the claims of :func:`ladder`.  An exclusion (every neuron of a pattern has
``||(I - Pi_H) h|| <= EXCLUDE_RTOL ||h||``) is decided exactly: ``EXCLUDE_RTOL^2 Z^T Z - Z^T (I - Pi_H) Z``
PSD on ``Z = S Phi``.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np

from relu_gating.checker._constants import BOUND_SLACK, EXCLUDE_RTOL, ROUNDING_STEP
from relu_gating.checker._problem import StatedProblem
from relu_gating.checker._rational import is_psd

__all__ = ["ladder", "exact_claim", "psd_excluding", "excluded"]


def ladder(claim: float) -> list:
    """Where exact proofs of a claim are tried, in order (see ``ROUNDING_STEP``)."""
    return [claim, claim + ROUNDING_STEP * max(1.0, abs(claim)), claim + BOUND_SLACK]


def _exact_D(P: StatedProblem, mask: np.ndarray, rows: np.ndarray, N: np.ndarray) -> list:
    """``G_T^T N G_T`` in exact rationals, in the coordinates of ``Phi_r`` (``N`` made symmetric, >= 0)."""
    E = P.exact
    r = P.Phi_r.shape[1]
    G = [[(1 if mask[i] else -1) * y for y in E.Y[int(i)]] for i in rows]
    Nc = [[max((Fraction(N[a, b]) + Fraction(N[b, a])) / 2, Fraction(0)) for b in range(len(rows))]
          for a in range(len(rows))]
    NG = [[sum(Nc[a][c] * G[c][j] for c in range(len(rows))) for j in range(r)] for a in range(len(rows))]
    return [[sum(G[a][i] * NG[a][j] for a in range(len(rows))) for j in range(r)] for i in range(r)]


def exact_claim(P: StatedProblem, mask: np.ndarray, claims: list, rows: np.ndarray | None = None,
                N: np.ndarray | None = None) -> float:
    """The first of ``claims`` at which ``u B_S - A_S - D`` is PSD in exact rationals (``inf`` if none)."""
    E = P.exact
    r = P.Phi_r.shape[1]
    A, B, ZZ = E.forms(E.pattern(mask), r)
    return first_holding(claims, N, evidence_duals(mask, rows, N, lambda rr, NN: _exact_D(P, mask, rr, NN)),
                         lambda u, D: psd_excluding(u, A, B, ZZ, D))


def evidence_duals(mask: np.ndarray, rows: np.ndarray | None, N: np.ndarray | None, dual: Callable) -> list:
    """The dual terms a pattern claim is tried with: none (``[None]``) without evidence; else the
    evidence's ``dual(rows, N)``, then its multipliers on the active rows only (still valid evidence:
    where ``S Phi`` has an exact kernel, inactive rows see it and the active ones do not)."""
    if rows is None or not len(rows) or N is None:
        return [None]
    act = np.flatnonzero(mask[rows])
    return [dual(rows, N)] + ([dual(rows[act], N[np.ix_(act, act)])] if 0 < act.size < len(rows) else [])


def first_holding(claims: list, N: np.ndarray | None, Ds: list, holds: Callable) -> float:
    """The first of ``claims`` at which ``holds(u, D)`` for one of ``Ds`` (``inf`` if none). The test is
    monotone in ``u``: with exact multipliers, a ``D`` refuted at the largest claim is dropped first."""
    us = sorted({float(c) for c in claims if np.isfinite(c)})
    if N is not None and N.dtype == object and len(us) > 1:
        Ds = [D for D in Ds if holds(us[-1], D)]
    for u in us:
        for D in Ds:
            if holds(u, D):
                return u
    return np.inf


def psd_excluding(u: float, A: list, B: list, ZZ: list, D: list | None) -> bool:
    """``u`` bounds the objective: ``u B - A - D`` PSD, or, counting only admissible neurons
    (``B > EXCLUDE_RTOL^2 ZZ``; S-lemma with ``lam = ROUNDING_STEP max(1, |u|)``),
    ``(u - lam) B - A - D + lam EXCLUDE_RTOL^2 ZZ`` PSD: then ``u B - A >= D + lam (B - tau^2 ZZ) >= 0``
    on every admissible neuron of the cone (nearly excluded directions no longer count)."""
    r = len(A)
    U, lam = Fraction(u), Fraction(ROUNDING_STEP * max(1.0, abs(u)))
    t2 = lam * Fraction(EXCLUDE_RTOL) ** 2
    for V, w in ((U, 0), (U - lam, t2)):
        C = [[V * B[i][j] - A[i][j] - (0 if D is None else D[i][j]) + w * ZZ[i][j] for j in range(r)]
             for i in range(r)]
        if is_psd(C):
            return True
    return False


def excluded(P: StatedProblem, mask: np.ndarray) -> bool:
    """Every neuron of the pattern is excluded (``h = 0`` or ``||(I - Pi_H) h|| <= EXCLUDE_RTOL ||h||``),
    decided exactly (floats only refuse the clear cases)."""
    if not mask.any():
        return True
    if P.QH is None:
        return False
    SQ = P.Q * mask[:, None]
    s = np.linalg.svd(SQ - P.QH @ (P.QH.T @ SQ), compute_uv=False)
    if s[0] > 2 * EXCLUDE_RTOL + 1e-6:  # some neuron of the span is clearly not excluded: refuse
        return False
    E = P.exact
    r = P.Phi_r.shape[1]
    _, B, ZZ = E.forms(E.pattern(mask), r)
    t2 = Fraction(EXCLUDE_RTOL) ** 2
    return is_psd([[t2 * ZZ[i][j] - B[i][j] for j in range(r)] for i in range(r)])
