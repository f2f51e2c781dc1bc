"""Lifted multipliers at a level by ADMM on the relaxation's primal, facially reduced (private).

The lifted relaxation of :mod:`relu_gating.search.bnb._strong` proves ``level`` on a node when some
symmetric ``N >= 0`` and ``mu`` make ``S = level B - A - G^T N G - sum_i mu_i C_i`` positive definite.  In
the coordinates ``w = G x`` (``G`` has full column rank) every ``C_i`` is ``G^T E_i G`` with ``E_i`` the
symmetric unit pair ``(y_i, z_i)`` of ``w`` (``x^T C_i x = y_i (y_i - q_i^T v) = w_{y_i} w_{z_i}``), so
``S = G^T (R_w - L) G`` with ``R_w = G^{+T} (level B - A) G^+`` and ``L = N + sum_i mu_i E_i``: ``L``
entrywise nonnegative except on the pairs ``(y_i, z_i)``, where it is free.  Its conic dual is the doubly
nonnegative program

.. math::  \\min \\langle R_w, W \\rangle : W = V R V^T,\\ R \\succeq 0,\\ \\operatorname{tr} R = 1,\\
           W \\ge 0,\\ W_{y_i z_i} = 0

(``V`` an orthonormal basis of ``G``'s range: the facial reduction of ``W = G X G^T``), whose optimum is
positive exactly when the level is proven with room.  ADMM splits it into ``R`` (one eigendecomposition
of size ``r + |U|`` a step: the projection on the unit-trace PSD matrices) and ``W`` (entrywise: clip
below at 0, the pairs ``(y_i, z_i)`` set to 0), as for doubly nonnegative relaxations of quadratic
assignment (Oliveira, Wolkowicz and Xu, 2018).  Its dual iterate ``Z`` gives ``L = R_w + Z`` projected on
the dual cone, hence ``(N, mu)``.  Measured on iris greedy steps 5, 6 and 8 (``benchmarks/lifted_level.py``;
docs/branch-and-bound.md, "ADMM at the level"): on nodes of 40-80 undecided rows where the first-order steps
of :mod:`relu_gating.search.bnb._strong` fail, it proves the level on 24 of 38, 25 of 40 and 25 of 40, in about
40 ms (20-60 steps); the search does not use it by default (``_strong.LEVEL_ADMM``: it did not pay at equal CPU).

Nothing here is trusted: the caller's ``accept`` (``_strong.proven_at``) decides, and the checker
(:mod:`relu_gating.search.proofs._lifted`) tests the evidence again.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.linalg

__all__ = ["admm_level", "ADMM_STEPS", "ADMM_CHECK", "ADMM_SHRINK", "ADMM_BETA"]

#: ADMM steps at most (each one eigendecomposition of size ``r + |U|`` and a few products of ``p x p`` by ``p x d``).
ADMM_STEPS = 300
#: Every ``ADMM_CHECK`` steps the multipliers are read off and their slack's least eigenvalue computed.
ADMM_CHECK = 10
#: Every ``ADMM_STALL`` steps the deficit (minus the best least eigenvalue) must have shrunk to ``ADMM_SHRINK``
#: of what it was, else the steps stop (the relaxation is near or above the level: the node is split instead).
ADMM_STALL, ADMM_SHRINK = 40, 0.5
#: The penalty of the augmented Lagrangian, with ``level B - A`` scaled by its largest absolute row sum (at least
#: its spectral norm) and ``G``'s rows to norm 1.
ADMM_BETA = 1.0
#: The projection from a Rayleigh-Ritz step warm-started at the previous step's eigenvectors
#: (:func:`_spectraplex_warm`; LAPACK's ``syevr`` every ``ADMM_CHECK``-th step and where it cannot tell), or
#: always ``syevr`` (False, the default).
ADMM_WARM = False
#: The dual step (Fortin and Glowinski's (1 + sqrt 5) / 2 times the penalty).
ADMM_GAMMA = 1.618


def _simplex(w: np.ndarray) -> np.ndarray:
    """The projection of ``w`` on ``{x >= 0, sum x = 1}``."""
    s = np.sort(w)[::-1]
    css = np.cumsum(s) - 1.0
    k = np.flatnonzero(s - css / np.arange(1, w.size + 1) > 0)[-1]
    return np.maximum(w - css[k] / (k + 1), 0.0)


def _spectraplex(S: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """The projection of the symmetric ``S`` on the unit-trace PSD matrices, as its factor ``F`` (``F F^T``),
    from the ``k`` largest eigenpairs (LAPACK's ``syevr`` for those only), more where the ``k``-th is above
    the projection's threshold (then the whole ``eigh``)."""
    d = S.shape[0]
    if k < d:
        try:
            w, U = scipy.linalg.eigh(S, subset_by_index=[d - k, d - 1], driver="evr", check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            w = None
        if w is not None and np.all(np.isfinite(w)):
            lam = _simplex(w)
            if lam[0] <= 0.0:  # the k-th eigenvalue is at most the threshold: so are the others
                keep = lam > 0
                return U[:, keep] * np.sqrt(lam[keep]), k
    w, U = np.linalg.eigh(S)
    lam = _simplex(w)
    keep = lam > 0
    return U[:, keep] * np.sqrt(lam[keep]), d


def _spectraplex_warm(S: np.ndarray, U: np.ndarray) -> np.ndarray | None:
    """:func:`_spectraplex`'s factor from a Rayleigh-Ritz step on ``[U, S U]`` (``U`` orthonormal: the previous
    step's kept eigenvectors), or None where the least Ritz value is above the projection's threshold (an
    eigenvalue outside the subspace may be too): about 4-5x cheaper than ``syevr`` at sizes 60-120, not exact
    (the multipliers are proven by the caller anyway)."""
    Qm = np.linalg.qr(np.hstack([U, S @ U]))[0]
    w, V = np.linalg.eigh(Qm.T @ S @ Qm)
    lam = _simplex(w)
    if lam[0] > 0.0:
        return None
    keep = lam > 0
    return (Qm @ V[:, keep]) * np.sqrt(lam[keep])


def _least(S: np.ndarray) -> float:
    """The least eigenvalue of the symmetric ``S``."""
    try:
        return float(scipy.linalg.eigh(S, subset_by_index=[0, 0], eigvals_only=True, driver="evr",
                                       check_finite=False)[0])
    except (np.linalg.LinAlgError, ValueError):
        return float(np.linalg.eigvalsh(S)[0])


class _Rows:
    """The node's constraint rows ``G = [[D, 0], [0, I], [-Q_U, I]]`` (decided rows, ``y_i``, ``y_i - q_i^T v``)
    scaled to unit norm (``s``; ``ok`` False where a row is zero), applied by their blocks: ``O(p |U| r)`` a product
    where the dense ``G`` costs ``O(p^2 d)``."""

    def __init__(self, G: np.ndarray, nd: int, u: int) -> None:
        r = G.shape[1] - u
        norms = np.linalg.norm(G, axis=1)
        self.ok = bool(np.all(norms > 0))
        self.s = 1.0 / np.where(norms > 0, norms, 1.0)
        self.D, self.Qu, self.nd, self.u, self.r = G[:nd, :r], -G[nd + u:, :r], nd, u, r

    def times(self, F: np.ndarray) -> np.ndarray:
        """``s G F`` (``p x k``)."""
        Fv, Fy = F[:self.r], F[self.r:]
        out = np.concatenate([self.D @ Fv, Fy, Fy - self.Qu @ Fv])
        return out * self.s[:, None]

    def congruence(self, M: np.ndarray) -> np.ndarray:
        """``(s G)^T M (s G)`` (``d x d``) for a ``p x p`` ``M``."""
        nd, u = self.nd, self.u
        Ms = M * np.outer(self.s, self.s)
        MG = np.concatenate([Ms[:, :nd] @ self.D - Ms[:, nd + u:] @ self.Qu, Ms[:, nd:nd + u] + Ms[:, nd + u:]], axis=1)
        return np.concatenate([self.D.T @ MG[:nd] - self.Qu.T @ MG[nd + u:], MG[nd:nd + u] + MG[nd + u:]])


def admm_level(A: np.ndarray, B: np.ndarray, G: np.ndarray, u: int, level: float,
               accept: Callable[[np.ndarray, np.ndarray], bool], steps: int = ADMM_STEPS,
               beta: float = ADMM_BETA) -> tuple[np.ndarray, np.ndarray, int] | None:
    """``(N, mu, steps taken)`` that ``accept`` takes (the caller's proof at ``level``), or None.  ``G``'s
    rows are the node's constraint rows as :func:`relu_gating.search.bnb._strong.lifted_parts` builds them:
    the decided rows, then ``y_i`` for the ``u`` undecided rows, then ``y_i - q_i^T v`` in the same order."""
    p, d = G.shape
    nd = p - 2 * u
    rows = _Rows(G, nd, u)
    R = level * B - A
    R = 0.5 * (R + R.T)
    scale = float(np.abs(R).sum(1).max()) or 1.0  # at least the spectral norm
    R = R / scale
    if not rows.ok or not np.all(np.isfinite(R)):
        return None
    T = np.linalg.qr(rows.s[:, None] * G, mode="r")  # Gh = s G = V T, V orthonormal
    if not np.all(np.abs(np.diag(T)) > 1e-12 * np.abs(T).max()):
        return None  # G not of full column rank: no facial reduction
    Ti = scipy.linalg.solve_triangular(T, np.eye(d))
    Tt = Ti.T  # V = Gh T^{-1}: V^T M V = T^{-T} (Gh^T M Gh) T^{-1}
    V = rows.times(Ti)
    Rw = V @ (Tt @ R @ Ti) @ V.T  # R = Gh^T Rw Gh
    yi, zi = nd + np.arange(u), nd + u + np.arange(u)
    free = np.ones((p, p), dtype=bool)
    free[yi, zi] = free[zi, yi] = False
    W, Z = np.zeros((p, p)), np.zeros((p, p))
    best, mark, k = -np.inf, np.inf, 4
    F = None
    for t in range(1, steps + 1):
        S = Tt @ rows.congruence(W + Z / beta) @ Ti
        warm = None
        if ADMM_WARM and F is not None and t % ADMM_CHECK and F.shape[1] < d // 4:
            warm = _spectraplex_warm(S, F / np.linalg.norm(F, axis=0))
        if warm is not None:
            F = warm
        else:
            F, got = _spectraplex(S, k)
            k = min(max(2 * F.shape[1], 4), got) if got == d else max(F.shape[1] + 2, 4)
        VF = rows.times(Ti @ F)
        VRV = VF @ VF.T
        W = np.where(free, np.maximum(VRV - (Rw + Z) / beta, 0.0), 0.0)
        Z += ADMM_GAMMA * beta * (W - VRV)
        if t % ADMM_CHECK:
            continue
        L = Rw + Z
        L = np.where(free, np.maximum(L, 0.0), L)
        L = 0.5 * (L + L.T)
        lam = _least(R - rows.congruence(L))
        if lam > 0:
            Ls = scale * L * np.outer(rows.s, rows.s)
            N, mu = np.where(free, Ls, 0.0), 2.0 * Ls[yi, zi]
            if accept(N, mu):
                return N, mu, t
        best = max(best, lam)
        if t % ADMM_STALL == 0:
            if -best > ADMM_SHRINK * mark:
                break
            mark = -best
    return None
