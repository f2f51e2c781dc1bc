r"""Rigorous rank-one pricing of the variation norm, chamber by chamber, in exact integer arithmetic (private).

The column generation of :mod:`relu_gating.layers.variation` needs, for a dual vector ``y``, a
certified upper bound on ``max_d |<y, d>|`` over the normalized neurons ``d = relu(Phi theta) /
||relu(Phi theta)||``.  Every such ``theta`` lies in the closure of a chamber ``C_S = {theta :
A_S theta >= 0}`` (``A_S = diag(2 s - 1) Phi``, ``s`` the gating pattern), where
``relu(Phi theta) = S Phi theta``.  For every ``mu >= 0`` and ``theta`` in ``C_S``

.. math::  \langle y, S\Phi\theta\rangle = b^T\theta - \mu^T A_S\theta \le b^T\theta
           \le \sqrt{b^T G_S^{-1} b}\;\|S\Phi\theta\|,\qquad b = \Phi_S^T y_S + A_S^T\mu,\ G_S = \Phi_S^T\Phi_S

(Cauchy-Schwarz in the ``G_S`` inner product, ``G_S`` nonsingular), so ``sqrt(b^T G_S^{-1} b)``
bounds ``<y, d>`` on the chamber; the smallest over ``mu >= 0`` is the exact maximum (the dual of
projecting ``y`` onto the cone ``S Phi C_S``).  A float NNLS picks ``mu``; the bound is then
evaluated **exactly**: ``Phi`` must be a dyadic matrix (``Phi 2^e`` integral and small, as the
experiments' data on the grid of :func:`relu_gating.experiments._theory.dyadic`), ``y`` and ``mu``
are rounded to a dyadic grid first (any ``y`` and any ``mu >= 0`` give a valid bound), and
``b^T adj(G_S) b / det(G_S)`` is computed in Python integers.  A chamber with ``det G_S = 0`` (its
active rows span less than ``R^m``) uses ``||(y_S)_+||`` instead, valid on every chamber since
``d >= 0`` there.  Both signs of ``y`` are bounded (``|<y, d>|``).

Between rounds only ``y`` changes: the integer Gram matrices, their adjugates and determinants are
computed once per ``Phi`` (:class:`ConePricer`).  The chambers are processed in decreasing order of
their ``mu = 0`` bound and NNLS stops once no remaining chamber can raise the maximum.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["ConePricer", "integer_scale"]

#: Largest magnitude of the integer data (``Phi 2^e``, ``y 2^k``, ``mu 2^k``): products and sums of
#: up to 2^10 rows stay far below 2^63.
_MAX_BITS = 20
#: Bits of the rounded dual ``y 2^k``: ``Y P`` sums stay below 2^55, ``Y^2`` sums below 2^58.
_Y_BITS = 24
#: Multipliers kept per chamber (an NNLS solution of m rows has at most m nonzeros).
_KEEP = 4
#: Chambers tightened by NNLS per batch.
_BATCH = 32


def integer_scale(Phi: np.ndarray) -> int | None:
    """The exponent ``e`` with ``Phi 2^e`` integral and below ``2^_MAX_BITS`` in magnitude, or None."""
    top = float(np.abs(Phi).max()) if Phi.size else 0.0
    for e in range(0, 40):
        P = Phi * 2.0**e
        if top * 2.0**e >= 2.0**_MAX_BITS:
            return None
        if np.all(P == np.round(P)):
            return e
    return None


def _adj3(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Adjugates and determinants of a stack of integer m x m matrices (object arrays of Python ints)."""
    N, m, _ = G.shape
    Go = G.astype(object)
    if m == 1:
        return np.ones((N, 1, 1), dtype=object), Go[:, 0, 0]
    adj = np.empty((N, m, m), dtype=object)
    for i in range(m):
        for j in range(m):
            minor = np.delete(np.delete(Go, j, axis=1), i, axis=2)
            adj[:, i, j] = (-1) ** (i + j) * _det(minor)
    det = sum(Go[:, 0, j] * adj[:, j, 0] for j in range(m))
    return adj, det


def _det(M: np.ndarray) -> np.ndarray:
    """Determinants of a stack of object-integer matrices (cofactor expansion; m <= 4 here)."""
    k = M.shape[1]
    if k == 1:
        return M[:, 0, 0]
    if k == 2:
        return M[:, 0, 0] * M[:, 1, 1] - M[:, 0, 1] * M[:, 1, 0]
    return sum((-1) ** j * M[:, 0, j] * _det(np.delete(M[:, 1:], j, axis=2)) for j in range(k))


class ConePricer:
    """Exact per-chamber pricing bounds for one ``Phi`` and its complete :class:`PatternSet`.

    Raises ``ValueError`` when ``Phi`` is not dyadic with small entries, when ``m > 4``, or when the
    pattern set is not complete (a split part, or uncertified patterns).
    """

    def __init__(self, Phi: np.ndarray, patterns: Any) -> None:
        e = integer_scale(Phi)
        n, m = Phi.shape
        if e is None or m > 4 or n > 2**10:
            raise ValueError("cone pricing needs a dyadic Phi with small entries, m <= 4 and n <= 1024")
        if tuple(getattr(patterns, "part", (0, 1))) != (0, 1) or len(getattr(patterns, "uncertified", ())):
            raise ValueError("cone pricing needs the complete pattern set")
        self.Phi, self.e = Phi, e
        self.P = np.round(Phi * 2.0**e).astype(np.int64)
        self.S = np.asarray(patterns.masks, dtype=bool)
        self.W = np.asarray(patterns.witnesses, dtype=float)
        Sm = self.S.astype(np.int64)
        outer = (self.P[:, :, None] * self.P[:, None, :]).reshape(n, m * m)
        self.G = (Sm @ outer).reshape(-1, m, m)  # exact: entries below n 2^40
        self.adj, self.det = _adj3(self.G)
        self.full = np.array([d != 0 for d in self.det])
        self.Gf = self.G.astype(float) / 4.0**e
        self.Pf = self.P.astype(float)
        self._Li, self._Gi = _float_inverses(self.G, self.full)
        self.mu: dict = {}  # sign -> (row indices, multipliers in units of y) per chamber, kept across rounds
        self._key = 1

    def _quantize(self, y: np.ndarray) -> tuple[np.ndarray, int]:
        top = float(np.abs(y).max())
        k = _Y_BITS - 1 - math.frexp(top)[1] if top > 0 else 0
        return np.round(y * 2.0**k).astype(np.int64), k

    def _exact(self, idx: np.ndarray, c: np.ndarray, Y: np.ndarray, M: np.ndarray | None) -> list[Fraction]:
        """Exact ``b^T adj b / det`` (times ``2^-2k`` later) for chambers ``idx``; ``M`` the integer mu rows."""
        b = c[idx].astype(object)
        if M is not None:
            sg = np.where(self.S[idx], 1, -1).astype(np.int64)
            b = b + ((M * sg) @ self.P).astype(object)
        q = np.einsum("ni,nij,nj->n", b, self.adj[idx], b)
        return [Fraction(int(qq), int(dd)) for qq, dd in zip(q, self.det[idx])]

    def bound(self, y: np.ndarray, n_columns: int = 16) -> tuple[float, np.ndarray, np.ndarray, Any]:
        """``(B, y_q, thetas, ...)``: ``B >= max_d |<y_q, d>|`` certified, for ``y_q`` the dyadic rounding of ``y``.

        Also returns up to ``n_columns`` weights ``theta`` of the most violating chambers' best
        neurons (the float projections; any theta is a valid atom) and the exact ``B^2`` (Fraction).
        """
        Y, k = self._quantize(y)
        yq = Y / 2.0**k
        best = Fraction(0)
        cols: list[tuple[float, np.ndarray]] = []
        for sign in (1, -1):
            self._key = sign
            b2, th = self._one_sign(sign * Y, k, cols)
            best = max(best, b2)
        cols.sort(key=lambda t: -t[0])
        thetas = np.array([t for _, t in cols[:n_columns]]).reshape(-1, self.Phi.shape[1])
        B = _sqrt_up(best)
        return B, yq, thetas, best

    def _one_sign(self, Y: np.ndarray, k: int, cols: list) -> tuple[Fraction, None]:
        """Exact max over chambers of the bound for ``Y``: warm multipliers first, NNLS where they fall short."""
        N = self.S.shape[0]
        key = self._key  # each sign of y keeps its own multipliers
        c = self.S.astype(np.int64) @ (Y[:, None] * self.P)  # exact integer Phi_S^T Y_S
        pos = self.S.astype(np.int64) @ (np.maximum(Y, 0).astype(np.int64) ** 2)
        scale = 4 ** k
        if key not in self.mu:
            self.mu[key] = (np.zeros((N, _KEEP), dtype=np.int64), np.zeros((N, _KEEP)))
        mi, mv = self.mu[key]
        est = self._estimate(c, k, mi, mv, pos)
        two = {}  # chambers on two rows: NNLS every round (few: O(n))
        for i in np.flatnonzero(~self.full & (self.S.sum(axis=1) == 2)):
            t = self._two_rows(int(i), c, Y, cols, k)
            if t is not None:
                two[int(i)] = t
                est[i] = min(est[i], float(t))
        for i in np.flatnonzero(~self.full):  # chambers of rank < m: their witness is a candidate column too
            cols.append((float(est[i]) / scale, self.W[i]))
        order = np.argsort(-est)
        best, done = 0.0, 0
        while done < order.size:
            batch = order[done:done + _BATCH]
            if best > 0 and est[batch[0]] <= best * (1 + 1e-7):
                break  # the warm bounds of the rest are below the best tightened one (float decides only the order)
            for i in batch:
                if self.full[i]:
                    self._tighten(int(i), c, k, mi, mv, cols)
            est[batch] = self._estimate(c, k, mi, mv, pos, batch)
            for i in batch:
                if int(i) in two:
                    est[i] = min(est[i], float(two[int(i)]))
            best = max(best, float(est[batch].max()))
            done += batch.size
        return self._exact_max(c, k, mi, mv, pos, two, est) / scale, None

    def _b(self, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Integer ``b = c + sum_t M_t sg_t P_(row t)`` of chambers ``rows`` (multipliers rounded to 2^-k)."""
        M = np.maximum(np.round(mv * 2.0**k), 0.0)
        M[M >= 2.0**30] = 0.0  # (mu = 0 is valid; keeps every sum far below 2^63)
        sg = np.where(self.S[rows[:, None], mi], 1, -1)
        return c[rows] + np.einsum("nt,ntj->nj", M.astype(np.int64) * sg, self.P[mi])

    def _estimate(self, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray, pos: np.ndarray,
                  rows: np.ndarray | None = None) -> np.ndarray:
        """Float ``min(b^T G^-1 b, pos)`` per chamber (in units of 4^k; inf where ``G`` is singular but for pos)."""
        rows = np.arange(self.S.shape[0]) if rows is None else np.asarray(rows)
        out = pos[rows].astype(float)
        f = self.full[rows]
        if f.any():
            bf = self._b(c, k, mi[rows[f]], mv[rows[f]], rows[f]).astype(float)
            sol = np.linalg.solve(self.Gf[rows[f]] * 4.0**self.e, bf[:, :, None])[:, :, 0]
            out[f] = np.minimum(out[f], np.einsum("ni,ni->n", bf, sol))
        return out

    def _exact_max(self, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray, pos: np.ndarray, two: dict,
                   est: np.ndarray) -> Fraction:
        """The exact max over chambers of ``min(b^T adj b / det, pos, two-row bound)`` (times 4^k)."""
        N = self.S.shape[0]
        full = np.flatnonzero(self.full)
        q = np.zeros(N, dtype=object)
        if full.size:
            b = self._b(c, k, mi[full], mv[full], full).astype(object)
            q[full] = np.einsum("ni,nij,nj->n", b, self.adj[full], b)
        approx = pos.astype(float)
        vals: dict[int, Fraction] = {}
        for i in full.tolist():
            approx[i] = min(approx[i], float(q[i]) / float(self.det[i]))
        for i, t in two.items():
            approx[i] = min(approx[i], float(t))
        top = float(approx.max())
        out = Fraction(0)
        for i in np.flatnonzero(approx >= top * (1 - 1e-9)).tolist():  # exact comparison among the near-max
            v = Fraction(int(pos[i]))
            if self.full[i]:
                v = min(v, Fraction(int(q[i]), int(self.det[i])))
            if i in two:
                v = min(v, two[i])
            vals[i] = v
            out = max(out, v)
        return out

    def _two_rows(self, i: int, c: np.ndarray, Y: np.ndarray, cols: list, k: int) -> Fraction | None:
        """Chamber ``i`` active on two rows: NNLS for mu with the row-space condition weighted, then exact."""
        from scipy.optimize import nnls

        if self.P.shape[1] != 3:
            return None
        ia, ib = np.flatnonzero(self.S[i])
        sg = np.where(self.S[i], 1.0, -1.0)
        PS = self.P[[ia, ib]].astype(float)
        H = PS @ PS.T
        A_T = (self.P * sg[:, None]).T.astype(float)
        nu = np.cross(PS[0], PS[1])
        weight = 1e3 / max(float(np.linalg.norm(nu)), 1e-300)
        top = np.linalg.solve(H, PS @ A_T)  # w = H^-1 P_S b (b in the row space: b = P_S^T w)
        Mf = np.vstack([top, weight * (nu @ A_T)[None, :]])
        rhs = -np.r_[np.linalg.solve(H, PS @ c[i].astype(float)), 0.0]
        mu, _ = nnls(Mf, rhs, maxiter=50 * Mf.shape[1])
        if not np.all(np.isfinite(mu)) or float(np.abs(mu).max(initial=0.0)) >= 2.0**30:
            return None
        w = np.linalg.solve(H, PS @ (c[i].astype(float) + A_T @ mu))  # the best values on the two rows
        theta = _on_two_rows(self.P.astype(float), self.S[i], PS, H, w, nu)
        if theta is not None:
            cols.append((float(np.linalg.norm(w)) / 2.0**k, theta))
        return _two_row_bound(self.P.tolist(), [int(x) for x in sg], int(ia), int(ib), [int(x) for x in c[i]], mu)

    def _tighten(self, i: int, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray, cols: list) -> None:
        """Chamber ``i``: the NNLS multipliers stored (in units of ``y``), the float best theta proposed.

        Floats only choose ``mu`` and the proposed column; the bound is evaluated exactly later.  The
        Cholesky factors' inverses and ``G^-1`` are computed once per ``Phi`` (:func:`_float_inverses`).
        """
        from scipy.optimize import nnls

        A_T = (self.Pf * np.where(self.S[i], 1.0, -1.0)[:, None]).T  # m x n, the constraints a_j = sg_j P_j
        ci = c[i].astype(float)
        Li = self._Li[i] if self._Li is not None else np.linalg.inv(np.linalg.cholesky(self.G[i].astype(float)))
        mu, _ = nnls(Li @ A_T, -(Li @ ci), maxiter=50 * A_T.shape[1])
        if not np.all(np.isfinite(mu)):
            mu = np.zeros_like(mu)
        top = np.argsort(-mu)[:_KEEP]
        mi[i], mv[i] = top, mu[top] / 2.0**k
        b = ci + A_T[:, top] @ mu[top]
        Gi = self._Gi[i] if self._Gi is not None else np.linalg.inv(self.G[i].astype(float))
        theta = Gi @ b  # the projection's theta (any positive multiple)
        cols.append((float(b @ theta) / 4.0**k, theta))


def _float_inverses(G: np.ndarray, full: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Float ``L^-1`` (``G = L L^T``) and ``G^-1`` of the nonsingular chambers (identity elsewhere), or Nones.

    Used only to choose multipliers and candidate columns; None (then per chamber) if a factorization fails.
    """
    Gf = G.astype(float)
    Gf[~full] = np.eye(G.shape[1])
    try:
        return np.linalg.inv(np.linalg.cholesky(Gf)), np.linalg.inv(Gf)
    except np.linalg.LinAlgError:
        return None, None


def _on_two_rows(P: np.ndarray, s: np.ndarray, PS: np.ndarray, H: np.ndarray, w: np.ndarray,
                 nu: np.ndarray) -> np.ndarray | None:
    """A ``theta`` with ``P_S theta = w`` and every other row ``<= 0`` (float; a candidate column), or None."""
    t0 = PS.T @ np.linalg.solve(H, w)
    a, b = P[~s] @ t0, P[~s] @ nu
    lo = max([-x / y for x, y in zip(a, b) if y < 0], default=-np.inf)
    hi = min([-x / y for x, y in zip(a, b) if y > 0], default=np.inf)
    if lo > hi or np.any(a[b == 0] > 0):
        return None
    g = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else (lo if np.isfinite(lo) else hi)
    return t0 + (0.0 if not np.isfinite(g) else g) * nu


def _two_row_bound(Pl: list, sg: list, ia: int, ib: int, c: list, mu: np.ndarray) -> Fraction | None:
    """Exact bound for a chamber active on two rows ``ia, ib`` only (``G_S`` singular), or None.

    ``b = c + sum_l mu_l sg_l P_l`` must lie in the row space of ``P_S``: with ``nu = P_a x P_b`` the
    condition is ``sum_l mu_l (nu . sg_l P_l) = 0``, met exactly by moving one multiplier (all scaled
    by an integer ``f``).  Then ``b = P_S^T w`` and ``<y, d> <= ||w||`` on the chamber.
    """
    pa, pb = Pl[ia], Pl[ib]
    nu = [pa[1] * pb[2] - pa[2] * pb[1], pa[2] * pb[0] - pa[0] * pb[2], pa[0] * pb[1] - pa[1] * pb[0]]
    sl = [sg[j] * sum(nu[t] * Pl[j][t] for t in range(3)) for j in range(len(Pl))]
    M = [max(int(round(x)), 0) for x in mu]
    rho = sum(a * b for a, b in zip(M, sl))
    f = 1
    if rho:
        cand = [j for j in range(len(Pl)) if sl[j] * rho < 0]
        if not cand:
            return None
        j = max(cand, key=lambda q: abs(sl[q]))
        f = abs(sl[j])
        M = [f * x for x in M]
        M[j] += abs(rho)
    b = [f * c[t] + sum(M[j] * sg[j] * Pl[j][t] for j in range(len(Pl)) if M[j]) for t in range(3)]
    h11 = sum(x * x for x in pa)
    h22 = sum(x * x for x in pb)
    h12 = sum(x * y for x, y in zip(pa, pb))
    det = h11 * h22 - h12 * h12
    if det == 0:
        return None
    g = [sum(x * y for x, y in zip(pa, b)), sum(x * y for x, y in zip(pb, b))]  # P_S b
    w = [h22 * g[0] - h12 * g[1], -h12 * g[0] + h11 * g[1]]  # det * (P_S P_S^T)^{-1} P_S b
    if any(w[0] * pa[t] + w[1] * pb[t] != det * b[t] for t in range(3)):
        return None  # b not in the row space exactly
    return Fraction(w[0] * w[0] + w[1] * w[1], det * det * f * f)


def _sqrt_up(x: Fraction) -> float:
    """A float ``s`` with ``s^2 >= x`` exactly (and close to sqrt(x))."""
    if x <= 0:
        return 0.0
    s = math.sqrt(float(x))
    while Fraction(s) ** 2 < x:
        s = math.nextafter(s, math.inf)
    return s
