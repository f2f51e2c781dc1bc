"""Slow, independent reference implementations for the best-neuron tests.

Nothing here shares code with the library's search path: patterns come from
an incremental LP enumeration (scipy linprog/HiGHS), per-pattern optima from
exhaustive face enumeration over ALL row subsets, and values from a direct
formula on h = relu(Phi theta).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.linalg import null_space
from scipy.optimize import linprog


def _strictly_feasible(G: np.ndarray) -> np.ndarray | None:
    """theta with G theta >= t > 0 maximal (|theta|_inf <= 1), or None."""
    p, m = G.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-G, np.ones((p, 1))])
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(p), bounds=[(-1, 1)] * m + [(0, 1)], method="highs")
    if res.status == 0 and -res.fun > 1e-7:
        return res.x[:m]
    return None


def lp_patterns(Phi: np.ndarray) -> set[bytes]:
    """All realized patterns (chambers), by incremental LP enumeration."""
    n, m = Phi.shape
    nz = [i for i in range(n) if np.any(Phi[i] != 0)]
    prefixes: list[tuple[int, ...]] = [()]
    for k in range(1, len(nz) + 1):
        rows = Phi[nz[:k]]
        new = []
        for pre in prefixes:
            for s in (1, -1):
                signs = np.array(pre + (s,), dtype=float)
                if _strictly_feasible(signs[:, None] * rows) is not None:
                    new.append(pre + (s,))
        prefixes = new
    out = set()
    for pre in prefixes:
        mask = np.zeros(n, dtype=bool)
        mask[nz] = np.array(pre) > 0
        out.add(mask.tobytes())
    return out


def values(Phi, U_K, thetas, H=None):
    """Objective of relu(Phi theta) per row of thetas (nan if excluded)."""
    h = np.maximum(Phi @ np.atleast_2d(thetas).T, 0)
    if H is not None:
        Q = np.linalg.svd(H, full_matrices=False)[0][:, : np.linalg.matrix_rank(H)]
        h = h - Q @ (Q.T @ h)
    num = np.sum((U_K.T @ h) ** 2, axis=0)
    den = np.sum(h**2, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 1e-18, num / den, np.nan)


def pattern_best(Phi, U_K, mask, H=None, tol=1e-9) -> float:
    """Exact max over the closed cone of one pattern, by all faces."""
    n, m = Phi.shape
    signs = np.where(mask, 1.0, -1.0)
    nzr = np.any(Phi != 0, axis=1)
    G = (signs[:, None] * Phi)[nzr]
    best = -np.inf
    r = np.linalg.matrix_rank(Phi)
    for k in range(0, r):
        for J in itertools.combinations(range(G.shape[0]), k):
            Nsp = null_space(G[list(J)]) if J else np.eye(m)
            if Nsp.shape[1] == 0:
                continue
            SP = (Phi * mask[:, None]) @ Nsp
            if H is not None:
                Q = np.linalg.svd(H, full_matrices=False)[0][:, : np.linalg.matrix_rank(H)]
                R = SP - Q @ (Q.T @ SP)
                C = U_K.T @ R
            else:
                R = SP
                C = U_K.T @ SP
            # generalized eigenproblem on range(R): top right singular vectors
            Ur, s, Vt = np.linalg.svd(R, full_matrices=False)
            keep = s > 1e-10 * max(s.max(initial=0), 1e-300)
            if not np.any(keep):
                continue
            W = Vt[keep].T / s[keep]
            Mx = C @ W
            ev, Y = np.linalg.eigh(Mx.T @ Mx)
            top = ev[-1]
            idx = np.flatnonzero(ev >= top - 1e-10)
            for j in idx:
                x = Nsp @ (W @ Y[:, j])
                for sg in (1, -1):
                    th = sg * x
                    if np.all(G @ th >= -1e-9 * np.abs(G @ th).max()):
                        v = values(Phi, U_K, th, H)[0]
                        if not np.isnan(v):
                            best = max(best, v)
    return best


def realizes_exactly(Phi, mask, w) -> bool:
    """Exact rational check that w strictly realizes mask (zero rows inactive)."""
    from fractions import Fraction

    wf = [Fraction(float(x)) for x in w]
    for i, row in enumerate(Phi):
        if not np.any(row != 0):
            if mask[i]:
                return False
            continue
        z = sum(Fraction(float(a)) * b for a, b in zip(row, wf))
        if (z > 0) != bool(mask[i]) or z == 0:
            return False
    return True


def brute_best(Phi, U_K, H=None, extra_patterns=()):
    """Global max over all realized patterns, each solved by all faces.

    ``extra_patterns``: further masks (already checked to be realized) to
    include, e.g. chambers too thin for the LP margin.
    """
    masks = lp_patterns(Phi) | {np.asarray(m, dtype=bool).tobytes() for m in extra_patterns}
    return max(pattern_best(Phi, U_K, np.frombuffer(b, dtype=bool), H) for b in masks)
