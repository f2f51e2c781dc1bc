"""Slow, independent references for pattern enumeration (tests only).

* :func:`brute_force_patterns`: incremental arrangement construction with an LP
  (HiGHS) per candidate sign vector: extend every chamber of the first k rows by
  both signs of row k+1 and keep the feasible ones (max-margin LP, normalised
  rows, margin > ``tol``).  Zero rows are always inactive.  Exponential-free but
  slow: small n only, and only on data whose chambers are not thinner than tol.
* :func:`fraction_rank` / :func:`fraction_general_position`: exact rational
  Gaussian elimination, for the Cover-formula oracle on random and
  near-degenerate data.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import comb

import numpy as np
from scipy.optimize import linprog


def cover(n: int, r: int) -> int:
    return 2 * sum(comb(n - 1, k) for k in range(r))


def _margin(A: np.ndarray, sg: np.ndarray) -> float:
    m = A.shape[1]
    A_ub = np.concatenate([-(sg[:, None] * A), np.ones((A.shape[0], 1))], axis=1)
    res = linprog(np.r_[np.zeros(m), -1.0], A_ub=A_ub, b_ub=np.zeros(A.shape[0]),
                  bounds=[(-1, 1)] * m + [(None, 1)], method="highs")
    return -res.fun if res.status == 0 else -np.inf


def brute_force_patterns(Phi: np.ndarray, tol: float = 1e-7) -> set:
    """Set of realized masks (tuples of bool, length n) by incremental LP construction."""
    Phi = np.asarray(Phi, dtype=float)
    n = Phi.shape[0]
    nz = np.flatnonzero(np.any(Phi != 0, axis=1))
    A = Phi[nz] / np.linalg.norm(Phi[nz], axis=1, keepdims=True)
    cands = [np.zeros(0)]
    for k in range(len(nz)):
        new = []
        for sg in cands:
            for s in (1.0, -1.0):
                t = np.r_[sg, s]
                if _margin(A[:k + 1], t) > tol:
                    new.append(t)
        cands = new
    out = set()
    for sg in cands:
        mask = np.zeros(n, dtype=bool)
        mask[nz] = sg > 0
        out.add(tuple(mask.tolist()))
    return out


def _frac_matrix(A) -> list:
    return [[Fraction(float(x)) for x in row] for row in np.asarray(A, dtype=float)]


def fraction_rank(A) -> int:
    M = _frac_matrix(A)
    rank, rows = 0, len(M)
    cols = len(M[0]) if rows else 0
    for c in range(cols):
        piv = next((i for i in range(rank, rows) if M[i][c] != 0), None)
        if piv is None:
            continue
        M[rank], M[piv] = M[piv], M[rank]
        for i in range(rows):
            if i != rank and M[i][c] != 0:
                f = M[i][c] / M[rank][c]
                M[i] = [a - f * b for a, b in zip(M[i], M[rank])]
        rank += 1
    return rank


def fraction_general_position(Phi) -> bool:
    """Every r-subset of rows (r = exact rank) is linearly independent (exact)."""
    r = fraction_rank(Phi)
    return all(fraction_rank(Phi[list(S)]) == r for S in combinations(range(Phi.shape[0]), r))


def exact_witness_ok(Phi, masks, witnesses) -> bool:
    """Every witness strictly realizes its mask, in exact rational arithmetic."""
    Phi = np.asarray(Phi, dtype=float)
    F = _frac_matrix(Phi)
    for mask, w in zip(np.asarray(masks, dtype=bool), np.asarray(witnesses, dtype=float)):
        wf = [Fraction(float(x)) for x in w]
        for i, row in enumerate(F):
            v = sum((a * b for a, b in zip(row, wf)), Fraction(0))
            if not any(row):
                if mask[i]:
                    return False
            elif v == 0 or (v > 0) != bool(mask[i]):
                return False
    return True
