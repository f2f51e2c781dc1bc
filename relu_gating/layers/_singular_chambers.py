r"""Exact pricing bounds on the chambers whose active rows span less than ``R^m`` (private).

:mod:`relu_gating.layers._cone_pricing` bounds ``max <y, d>`` over a chamber ``C_S`` by
``sqrt(b^T G_S^-1 b)``, which needs ``G_S = Phi_S^T Phi_S`` nonsingular.  A chamber of ``r < m``
active rows (independent) has a null space ``N`` of ``Phi_S`` (``m x k``, ``k = m - r``); there the
same Cauchy-Schwarz argument holds whenever ``b = Phi_S^T y_S + A_S^T mu`` lies in the row space
of ``Phi_S`` (``N^T b = 0``): ``b = G_S x`` with ``x = G_S^+ b``, so for ``theta`` in ``C_S``

.. math::  \langle y, S\Phi\theta\rangle \le b^T\theta = (\Phi_S x)^T\Phi_S\theta
           \le \sqrt{b^T G_S^+ b}\;\|\Phi_S\theta\|,

and ``b^T G_S^+ b = b^T (G_S + N N^T)^{-1} b`` (the two ranges are orthogonal complements), an
integer matrix's inverse.  Since ``N^T Phi_S^T y_S = 0``, the condition is ``sum_l mu_l q_l = 0``
over the inactive rows, ``q_l = -N^T P_l``.  A float NNLS (the condition weighted) picks ``mu``;
the rounded multipliers are repaired **exactly**: all are scaled by ``|det Q_J|`` and the ``k``
multipliers ``J`` get ``- sign(det) adj(Q_J) rho`` (``rho`` the rounded condition's residual,
``Q_J = [q_j]``), which zeroes the condition in integers when the result stays ``>= 0``.  The
bound is then ``b^T adj(G') b / (det(G') f^2)`` in Python integers.  ``None`` (the caller keeps
``||(y_S)_+||``, valid on every chamber) where no repair is found.

At ``d = 2`` (``m = 3``) the two-row chambers have their own code in ``_cone_pricing``; this module
is used for ``m = 4`` (``d = 3``), where every chamber of two or three active rows is singular and
``||(y_S)_+||`` was the whole bound: loose enough that the column generation stalled.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np

__all__ = ["SingularChamber", "singular_chambers"]

#: Multipliers tried as the repaired set ``J`` (the largest of the NNLS solution, then the largest ``|q|``).
_TRY = 8


def _int_det(M: list) -> int:
    """Determinant of a small square matrix of Python integers (cofactor expansion)."""
    k = len(M)
    if k == 1:
        return M[0][0]
    return sum((-1) ** j * M[0][j] * _int_det([row[:j] + row[j + 1:] for row in M[1:]]) for j in range(k))


def _int_adj(M: list) -> list:
    """Adjugate of a small square matrix of Python integers (``adj M @ M = det M I``)."""
    k = len(M)
    if k == 1:
        return [[1]]
    return [[(-1) ** (i + j) * _int_det([r[:i] + r[i + 1:] for t, r in enumerate(M) if t != j]) for j in range(k)]
            for i in range(k)]


def _null_basis(rows: list, m: int) -> list | None:
    """An integer basis (``k`` vectors) of the null space of independent integer ``rows`` (``r x m``), or None.

    Each vector is a generalized cross product of the rows and ``m - 1 - r`` unit vectors (the
    cofactors of a square matrix with a free last row); independent ones are kept.
    """
    r, k = len(rows), m - len(rows)
    cands = []
    for units in combinations(range(m), k - 1):
        ext = [list(x) for x in rows] + [[int(t == u) for t in range(m)] for u in units]
        v = [(-1) ** (m - 1 + j) * _int_det([row[:j] + row[j + 1:] for row in ext]) for j in range(m)]
        if any(v):
            cands.append(v)
    for pick in combinations(cands, k):
        gram = [[sum(a * b for a, b in zip(u, w)) for w in pick] for u in pick]
        if _int_det(gram) != 0:
            return [list(v) for v in pick]
    return None if r < m else []


class SingularChamber:
    """One chamber of ``r < m`` independent active rows: its null basis and the integer ``G_S + N N^T``."""

    def __init__(self, P: np.ndarray, mask: np.ndarray, G: np.ndarray) -> None:
        self.mask = np.asarray(mask, dtype=bool)
        m = P.shape[1]
        rows = [[int(x) for x in P[i]] for i in np.flatnonzero(self.mask)]
        N = _null_basis(rows, m)
        self.ok = bool(N) and len(rows) + len(N) == m
        if not self.ok:
            return
        self.N = N  # k vectors of length m
        Gp = [[int(G[a, b]) + sum(v[a] * v[b] for v in N) for b in range(m)] for a in range(m)]
        self.adj, self.det = _int_adj(Gp), _int_det(Gp)
        self.ok = self.det != 0
        sg = np.where(self.mask, 1, -1)
        self.sg = [int(s) for s in sg]
        self.q = [[-sum(v[t] * int(P[l, t]) for t in range(m)) if not self.mask[l] else 0 for v in N]
                  for l in range(P.shape[0])]  # q_l = sg_l N^T P_l (0 on the active rows)
        Nf = np.array(N, dtype=float)
        Nf /= np.linalg.norm(Nf, axis=1, keepdims=True)
        self.Nf = Nf
        Gf = G.astype(float) + (Nf.T @ Nf) * max(float(np.trace(G)), 1.0)
        self.Gfi = np.linalg.inv(Gf)
        self.Li = np.linalg.inv(np.linalg.cholesky(Gf))

    def column(self, Pf: np.ndarray, t0: np.ndarray) -> np.ndarray | None:
        """A ``theta`` in the chamber with ``Phi_S theta = Phi_S t0`` (float; a candidate column), or None."""
        return _feasible_theta(Pf, self.mask, t0, self.Nf)

    def bound(self, P: np.ndarray, Pf: np.ndarray, c: list) -> tuple[Fraction | None, np.ndarray | None]:
        """``(B^2, t0)``: exact ``B^2 >= max <Y, d>^2`` over the chamber (units of ``Y``; None: no repair),
        and the float maximizer's row-space part ``t0`` (:meth:`column` makes it a chamber point).
        ``c`` is the integer ``Phi_S^T Y_S``."""
        from scipy.optimize import nnls

        A_T = (Pf * np.array(self.sg, dtype=float)[:, None]).T  # m x n
        cf = np.array(c, dtype=float)
        cond = self.Nf @ A_T
        w = 1e3 * max(float(np.linalg.norm(self.Li @ A_T, axis=0).max()), 1e-300) / max(
            float(np.linalg.norm(cond, axis=0).max()), 1e-300)
        Mf = np.vstack([self.Li @ A_T, w * cond])
        rhs = np.r_[-(self.Li @ cf), np.zeros(cond.shape[0])]
        try:
            mu, _ = nnls(Mf, rhs, maxiter=50 * Mf.shape[1])
        except RuntimeError:
            return None, None
        if not np.all(np.isfinite(mu)) or float(np.abs(mu).max(initial=0.0)) >= 2.0**40:
            return None, None
        theta = self.Gfi @ (cf + A_T @ mu)
        best = None
        for cand in (mu, self._polish(mu, A_T, cf, cond)):
            t = self._exact(P, c, cand)
            if t is not None and (best is None or t < best):
                best = t
        return best, theta

    def _polish(self, mu: np.ndarray, A_T: np.ndarray, cf: np.ndarray, cond: np.ndarray) -> np.ndarray:
        """The penalized NNLS's support re-solved with the row-space condition as an equality (KKT; floats).

        The penalty leaves a small violation whose exact repair costs tightness; this removes it where
        the re-solved multipliers stay ``>= 0`` (else the NNLS's are returned)."""
        s = np.flatnonzero(mu > 0)
        k = cond.shape[0]
        if s.size <= k:
            return mu
        As, Cs = A_T[:, s], cond[:, s]
        H = As.T @ self.Gfi @ As
        K = np.block([[H, Cs.T], [Cs, np.zeros((k, k))]])
        rhs = np.r_[-(As.T @ self.Gfi @ cf), np.zeros(k)]
        sol = np.linalg.lstsq(K, rhs, rcond=None)[0][:s.size]
        if not np.all(np.isfinite(sol)) or np.any(sol < 0):
            return mu
        out = np.zeros_like(mu)
        out[s] = sol
        return out

    def _exact(self, P: np.ndarray, c: list, mu: np.ndarray) -> Fraction | None:
        """The exact bound of the multipliers ``mu`` (rounded, repaired into the row space), or None."""
        M = [max(int(round(x)), 0) for x in mu]
        rep = self._repair(M, mu)
        if rep is None:
            return None
        M, f = rep
        m = len(c)
        b = [f * c[t] + sum(M[j] * self.sg[j] * int(P[j, t]) for j in range(len(M)) if M[j]) for t in range(m)]
        if any(sum(v[t] * b[t] for t in range(m)) for v in self.N):
            return None  # not in the row space exactly (cannot happen after a repair; kept as a guard)
        quad = sum(b[a] * self.adj[a][t] * b[t] for a in range(m) for t in range(m))
        return Fraction(quad, self.det * f * f)

    def _repair(self, M: list, mu: np.ndarray) -> tuple[list, int] | None:
        """Integer multipliers ``M' >= 0`` with ``sum M'_l q_l = 0`` and the scale ``f`` (``M' ~ f M``), or None."""
        k = len(self.N)
        rho = [sum(M[l] * self.q[l][i] for l in range(len(M)) if M[l]) for i in range(k)]
        if not any(rho):
            return M, 1
        live = [l for l in range(len(M)) if any(self.q[l])]
        cand = sorted(live, key=lambda l: -float(mu[l]))[:_TRY]
        cand += [l for l in sorted(live, key=lambda l: -max(abs(x) for x in self.q[l])) if l not in cand][:_TRY]
        for J in combinations(cand, k):
            Q = [[self.q[j][i] for j in J] for i in range(k)]  # columns q_j
            det = _int_det(Q)
            if det == 0:
                continue
            adj = _int_adj(Q)
            s = 1 if det > 0 else -1
            delta = [-s * sum(adj[a][i] * rho[i] for i in range(k)) for a in range(k)]
            Mn = [abs(det) * x for x in M]
            for a, j in enumerate(J):
                Mn[j] += delta[a]
            if all(Mn[j] >= 0 for j in J):
                return Mn, abs(det)
        return None


def _feasible_theta(Pf: np.ndarray, mask: np.ndarray, t0: np.ndarray, Nf: np.ndarray) -> np.ndarray | None:
    """``theta = t0 + N^T z`` with every inactive row ``<= 0`` (a small LP; a candidate column only), or None."""
    from scipy.optimize import linprog

    off = Pf[~mask]
    if off.size == 0:
        return t0
    k = Nf.shape[0]
    scale = max(float(np.abs(off @ t0).max()), 1e-300)
    A = np.c_[off @ Nf.T, -np.ones(off.shape[0])]  # off (t0 + N^T z) <= t
    res = linprog(np.r_[np.zeros(k), 1.0], A_ub=A, b_ub=-(off @ t0),
                  bounds=[(None, None)] * k + [(-scale, None)], method="highs")
    if res.status != 0 or res.x[-1] > 0:
        return None
    return t0 + Nf.T @ res.x[:k]


def singular_chambers(P: np.ndarray, S: np.ndarray, G: np.ndarray, full: np.ndarray) -> dict:
    """``{chamber: SingularChamber}`` for the singular chambers of two or more active rows that admit one."""
    out = {}
    m = P.shape[1]
    for i in np.flatnonzero(~full & (S.sum(axis=1) >= 2) & (S.sum(axis=1) < m)):
        ch = SingularChamber(P, S[i], G[i])
        if ch.ok:
            out[int(i)] = ch
    return out
