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
active rows span less than ``R^m``) is bounded in the row space of ``Phi_S`` (two rows at ``m = 3``:
:meth:`ConePricer._two_rows`; two or three rows at ``m = 4``: :mod:`._singular_chambers`), else by
``||(y_S)_+||``, valid on every chamber since ``d >= 0`` there.  Both signs of ``y`` are bounded (``|<y, d>|``).

Between rounds only ``y`` changes: the integer Gram matrices, their adjugates and determinants are
computed once per ``Phi`` (:class:`ConePricer`).  The chambers are processed in decreasing order of
their ``mu = 0`` bound and NNLS stops once no remaining chamber can raise the maximum.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating.layers._packed_masks import PackedMasks

__all__ = ["ConePricer", "integer_scale"]

#: Largest magnitude of the integer data (``Phi 2^e``, ``y 2^k``, ``mu 2^k``): products and sums of
#: up to 2^10 rows stay far below 2^63.
_MAX_BITS = 20
#: Bits of the rounded dual ``y 2^k``: ``Y P`` sums stay below 2^55, ``Y^2`` sums below 2^58.
_Y_BITS = 24
#: Multipliers kept per chamber (an NNLS solution of m rows has at most m nonzeros).
_KEEP = 4
#: Integer multipliers at or above this are dropped (``mu = 0`` is valid): ``_KEEP`` terms of ``M P``
#: stay below ``4 * 2^39 * 2^_MAX_BITS = 2^61``, and ``c`` below ``2^54``.  Thin chambers (``d = 3``
#: data near a plane) need multipliers near ``2^31`` times the dual; the earlier cap ``2^30`` dropped
#: them and left such a chamber at ``||(y_S)_+||``, ten times its maximum.
_MU_CAP = 2.0**39
#: Mask entries per chunk of the Gram matrices' product (32 MB of int64 at a time).
_GRAM_CHUNK = 2**22
#: Chambers tightened by NNLS per batch.
_BATCH = 32
#: Chambers tightened at once by :meth:`ConePricer._tighten_batch` (the default).
_BATCH_VEC = 1024
#: The vectorized active set scans each chamber's facet rows (:mod:`._chamber_facets`) first (False: all
#: ``n`` rows, as before).
FACETS = True
#: A maximizer ``theta`` found on the facet rows is feasible for a row ``a`` when ``sg a . theta`` is at least
#: ``-_FEASIBLE ||a|| ||theta||`` (else the chamber is solved on all its rows).
_FEASIBLE = 1e-9
#: Chambers of largest bound per batch also tightened by NNLS.
_NNLS_TOP = 4
#: Singular chambers (m = 4) whose feasible best neuron is proposed as a column each round.
_SING_COLS = 16
#: Vectorized active-set steps of the first pricing of each sign (:meth:`ConePricer._cold_pass`): at d = 3,
#: n = 50 one step leaves 6,000 chambers a sign to the NNLS, two leave 900 (32,000 with none).
_COLD_STEPS = 2


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

    def __init__(self, Phi: np.ndarray, patterns: Any, batched: bool = True) -> None:
        e = integer_scale(Phi)
        n, m = Phi.shape
        if e is None or m > 4 or n > 2**10:
            raise ValueError("cone pricing needs a dyadic Phi with small entries, m <= 4 and n <= 1024")
        if tuple(getattr(patterns, "part", (0, 1))) != (0, 1) or len(getattr(patterns, "uncertified", ())):
            raise ValueError("cone pricing needs the complete pattern set")
        self.Phi, self.e, self.batched = Phi, e, batched
        self.P = np.round(Phi * 2.0**e).astype(np.int64)
        self.S = _packed(patterns)
        self.W = np.asarray(patterns.witnesses, dtype=float)
        self.G = _grams(self.S, self.P)
        self.n_active = self.S.sum(axis=1)  # rows active in each chamber (once: N x n bools to sum)
        self.adj, self.det = _adj3(self.G)
        self.full = np.array([d != 0 for d in self.det])
        self.Gf = self.G.astype(float) / 4.0**e
        self.Pf = self.P.astype(float)
        self._Li, self._Gi = _float_inverses(self.G, self.full)
        self.sing: dict | None = None  # m = 4: the chambers of fewer active rows (computed on first use)
        self.mu: dict = {}  # sign -> (row indices, multipliers in units of y) per chamber, kept across rounds
        self._key = 1
        self._adjf: np.ndarray | None = None  # float adjugates and determinants of the nonsingular chambers
        self._detf: np.ndarray | None = None
        self._neg: tuple | None = None  # (Y, c, ||(Y_S)_-||^2) of the last products: -Y's for free
        self._facets: Any = None  # each chamber's facet rows (:meth:`_facet_rows`, on first use)
        self._row_norms = np.linalg.norm(self.Pf, axis=1)

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

    def columns(self, y: np.ndarray, limit: float, n_columns: int = 32, probe: int = 512) -> np.ndarray:
        """Uncertified pricing: weights ``theta`` with ``|<y, d>| > limit``, most violating first (floats only).

        The early exit of the column generation: a round needs *any* column of negative reduced cost,
        not the certified maximum.  Candidates are each chamber's witness (explicit ``|<y, d>|``, in
        chunks: no dense matrix of all atoms is kept) and, for the ``probe`` chambers of largest
        unconstrained bound ``c^T G^-1 c``, the unconstrained maximizer ``±G^-1 c`` (the chamber's
        best neuron when it lies in the chamber).  Every candidate's score is recomputed from its own
        neuron ``relu(Phi theta)``, so a float error can only cost a column, never add a wrong one.
        Empty when no candidate violates: the caller then runs the certified :meth:`bound`.
        """
        n, m = self.Phi.shape
        N = self.S.shape[0]
        yP = y[:, None] * self.Phi
        step = max(1, 2**21 // max(n, 1))
        top_v, top_i = np.zeros(0), np.zeros(0, dtype=np.int64)
        cand_t, cand_s = [], []
        for lo in range(0, N, step):
            S = self.S[lo:lo + step]
            c = S @ yP  # float Phi_S^T y_S of each chamber
            full = self.full[lo:lo + step]
            th0 = np.einsum("hij,hj->hi", self._Gi_phi(lo, lo + step), c)
            val = np.where(full, np.einsum("hi,hi->h", c, th0), 0.0)
            keep = np.argsort(-val)[:probe]
            top_v, top_i = np.r_[top_v, val[keep]], np.r_[top_i, lo + keep]
            if top_v.size > 2 * probe:
                sel = np.argsort(-top_v)[:probe]
                top_v, top_i = top_v[sel], top_i[sel]
            Hw = np.maximum(self.W[lo:lo + step] @ self.Phi.T, 0.0)  # witness neurons, one chunk
            nw = np.linalg.norm(Hw, axis=1)
            sw = np.abs(Hw @ y) / np.where(nw > 0, nw, np.inf)
            hit = np.flatnonzero(sw > limit)
            hit = hit[np.argsort(-sw[hit])[:n_columns]]
            cand_t.extend(self.W[lo + hit])
            cand_s.extend(sw[hit])
        if top_i.size:
            sel = top_i[top_v > limit * limit]
            if sel.size:
                th = np.einsum("hij,hj->hi", self._Gi_phi_rows(sel), self.S[sel] @ yP)
                for T in (th, -th):
                    H = np.maximum(T @ self.Phi.T, 0.0)
                    nh = np.linalg.norm(H, axis=1)
                    s = np.abs(H @ y) / np.where(nh > 0, nh, np.inf)
                    ok = np.flatnonzero(s > limit)
                    cand_t.extend(T[ok])
                    cand_s.extend(s[ok])
        if not cand_t:
            return np.zeros((0, m))
        order = np.argsort(-np.asarray(cand_s), kind="stable")[:n_columns]
        return np.asarray(cand_t)[order].reshape(-1, m)

    def _Gi_phi(self, lo: int, hi: int) -> np.ndarray:
        """Float ``(Phi_S^T Phi_S)^-1`` of chambers ``lo:hi`` (identity where singular; candidates only)."""
        if self._Gi is not None:
            return self._Gi[lo:hi] * 4.0**self.e
        return self._Gi_phi_rows(np.arange(lo, min(hi, self.S.shape[0])))

    def _Gi_phi_rows(self, rows: np.ndarray) -> np.ndarray:
        """As :meth:`_Gi_phi` for the chambers ``rows``."""
        if self._Gi is not None:
            return self._Gi[rows] * 4.0**self.e
        G = self.G[rows].astype(float)
        G[~self.full[rows]] = np.eye(G.shape[1])
        return np.linalg.pinv(G) * 4.0**self.e

    def _one_sign(self, Y: np.ndarray, k: int, cols: list) -> tuple[Fraction, None]:
        """Exact max over chambers of the bound for ``Y``: warm multipliers first, NNLS where they fall short."""
        N = self.S.shape[0]
        key = self._key  # each sign of y keeps its own multipliers
        c, pos = self._products(Y)
        scale = 4 ** k
        cold = key not in self.mu
        if cold:
            self.mu[key] = (np.zeros((N, _KEEP), dtype=np.int64), np.zeros((N, _KEEP)))
        mi, mv = self.mu[key]
        est = self._estimate(c, k, mi, mv, pos)
        if cold and not self.batched:
            self._cold_pass(c, k, mi, mv, pos, est, cols)
        two = {}  # chambers on two rows: NNLS every round (few: O(n))
        for i in np.flatnonzero(~self.full & (self.n_active == 2)):
            t = self._two_rows(int(i), c, Y, cols, k)
            if t is not None:
                two[int(i)] = t
                est[i] = min(est[i], float(t))
        self._singular(c, k, two, est, cols)
        for i in np.flatnonzero(~self.full):  # chambers of rank < m: their witness is a candidate column too
            cols.append((float(est[i]) / scale, self.W[i]))
        order = np.argsort(-est)
        best, done = 0.0, 0
        size = _BATCH_VEC if self.batched else _BATCH
        while done < order.size:
            batch = order[done:done + size]
            if best > 0 and est[batch[0]] <= best * (1 + 1e-7):
                break  # the warm bounds of the rest are below the best tightened one (float decides only the order)
            if self.batched:
                self._tighten_batch(batch[self.full[batch]], c, k, mi, mv, cols, level=best)
                est[batch] = self._estimate(c, k, mi, mv, pos, batch)
                self._settle_top(batch, c, k, mi, mv, pos, two, est, cols)
            else:
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

    def _cold_pass(self, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray, pos: np.ndarray, est: np.ndarray,
                   cols: list) -> None:
        """First pricing of a sign: ``_COLD_STEPS`` vectorized active-set steps (:meth:`_tighten_batch`) on
        every nonsingular chamber.

        With no multipliers yet every chamber's bound is its ``mu = 0`` one, above the maximum on nearly
        all of them, and the per-chamber NNLS ran on nearly every chamber (32,000 of 39,300 a sign at
        d = 3, n = 50, in the first round; a few hundred in later ones).  Two vectorized steps bring
        most bounds below the maximum at a fraction of the cost; the NNLS then runs, as in later rounds,
        only where they stay near the top.  Floats choose the multipliers only (any ``mu >= 0`` is
        valid, and :meth:`_keep_better` keeps the smaller bound): every bound is evaluated exactly after.
        """
        full = np.flatnonzero(self.full)
        for lo in range(0, full.size, _BATCH_VEC):
            rows = full[lo:lo + _BATCH_VEC]
            self._tighten_batch(rows, c, k, mi, mv, cols, steps=_COLD_STEPS)
            est[rows] = self._estimate(c, k, mi, mv, pos, rows)

    def _singular(self, c: np.ndarray, k: int, two: dict, est: np.ndarray, cols: list) -> None:
        """Chambers of ``r < m`` active rows at ``m = 4`` (:mod:`._singular_chambers`): the exact bound in
        ``two``, and the feasible best neurons of the ``_SING_COLS`` largest as candidate columns.

        In decreasing order of ``||(Y_S)_+||`` (valid on every chamber), until that falls below the
        largest singular bound found: the rest keep it, and cannot be the maximum."""
        if self.sing is None:
            from relu_gating.layers._singular_chambers import singular_chambers

            self.sing = singular_chambers(self.P, self.S.unpacked(), self.G, self.full) if self.P.shape[1] == 4 else {}
        props, top = [], 0.0
        for i in sorted(self.sing, key=lambda j: -float(est[j])):  # est: ||(Y_S)_+||^2, itself a bound
            if float(est[i]) <= top * (1 - 1e-9):
                break  # the rest cannot exceed a bound already proved (float decides only the order)
            t, t0 = self.sing[i].bound(self.P, self.Pf, [int(x) for x in c[i]])
            top = max(top, float(est[i]) if t is None else min(float(est[i]), float(t)))
            if t is not None:
                two[i] = t
                est[i] = min(est[i], float(t))
            if t0 is not None:
                props.append((float(est[i]), i, t0))
        props.sort(key=lambda z: -z[0])
        for val, i, t0 in props[:_SING_COLS]:
            theta = self.sing[i].column(self.Pf, t0)
            if theta is not None:
                cols.append((val / 4.0**k, theta))

    def _settle_top(self, batch: np.ndarray, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray,
                    pos: np.ndarray, two: dict, est: np.ndarray, cols: list) -> None:
        """NNLS on the batch's largest bound until that chamber has had it (the batch's max is then as
        tight as per-chamber NNLS makes it; the vectorized multipliers may be loose on a few)."""
        done: set = set()
        while True:
            vals = est[batch].copy()
            for t, i in enumerate(batch.tolist()):
                if i in two:
                    vals[t] = min(vals[t], float(two[i]))
            i = int(batch[int(np.argmax(vals))])
            if i in done or not self.full[i]:
                return
            done.add(i)
            self._tighten(i, c, k, mi, mv, cols, keep_if_worse=False)
            est[i] = self._estimate(c, k, mi, mv, pos, np.array([i]))[0]

    def _products(self, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact integer ``Phi_S^T Y_S`` and ``||(Y_S)_+||^2`` of every chamber (in chunks: no N x n int matrix).

        One pass serves both signs of ``y``: ``-Y``'s products are ``-c`` and ``||(Y_S)_-||^2``, kept
        for the next call when that is ``-Y`` (:meth:`bound` prices ``Y`` then ``-Y``)."""
        last = self._neg
        self._neg = None
        if last is not None and np.array_equal(last[0], -Y):
            return -last[1], last[2]
        N, m = self.S.shape[0], self.P.shape[1]
        out = np.empty((N, m + 2), dtype=np.int64)
        step = max(1, 2**22 // max(self.S.shape[1], 1))
        split = _split_columns(Y, self.P)
        for lo in range(0, N, step):
            out[lo:lo + step] = _join_columns(self.S[lo:lo + step].astype(np.float64) @ split, m)
        c, pos = np.ascontiguousarray(out[:, :m]), out[:, m].copy()
        self._neg = (Y.copy(), c, out[:, m + 1].copy())
        return c, pos

    def _tighten_batch(self, rows: np.ndarray, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray,
                       cols: list, steps: int | None = None, level: float = 0.0) -> None:
        """Multipliers for the chambers ``rows`` at once: a vectorized active-set (Lawson-Hanson) method
        (:meth:`_active_set`) on each chamber's facet rows (:mod:`._chamber_facets`), then on all its rows
        where the maximizer found violates one of them (the facet rows missed one: coincident rows; or
        rounding, where the chamber's maximum is near zero) and the value found is above both ``level`` (a
        bound some chamber already has) and every value of the batch found feasible: a chamber below those
        cannot raise the maximum.

        The result replaces the stored multipliers where its value is smaller.  Any ``mu >= 0`` gives a
        valid bound, so floats choose only how tight it is; the bound is evaluated exactly later.
        ``steps`` caps the added rows (default ``4 m + 2``; :meth:`_cold_pass` takes two).
        """
        if rows.size == 0:
            return
        Gi = self._Gi[rows] if self._Gi is not None else np.linalg.inv(self.G[rows].astype(float))
        cf = c[rows].astype(float)
        cand = self._facet_rows().padded(rows) if FACETS else np.broadcast_to(np.arange(self.P.shape[0]),
                                                                                 (rows.size, self.P.shape[0]))
        supp, mu, theta = self._active_set(rows, cf, Gi, cand, steps)
        if FACETS:
            sg = np.where(self.S[rows], 1.0, -1.0)
            slack = sg * (theta @ self.Pf.T)  # every row of the chamber must hold at the maximizer found
            room = _FEASIBLE * np.linalg.norm(theta, axis=1)[:, None] * self._row_norms[None, :]
            bad = (slack < -room).any(axis=1)
            value = np.einsum("hi,hij,hj->h", theta, self.Gf[rows] * 4.0**self.e, theta)  # b^T G^-1 b
            out = np.flatnonzero(bad & (value > max(level, float(value[~bad].max(initial=0.0)))))
            if out.size:
                full = np.broadcast_to(np.arange(self.P.shape[0]), (out.size, self.P.shape[0]))
                supp[out], mu[out], _ = self._active_set(rows[out], cf[out], Gi[out], full, steps)
        self._keep_better(rows, c, k, mi, mv, np.maximum(supp, 0), np.where(supp >= 0, mu, 0.0), cols)

    def _facet_rows(self) -> Any:
        """The chambers' facet rows (:func:`._chamber_facets.facet_rows`), computed on first use."""
        if self._facets is None:
            from relu_gating.layers._chamber_facets import facet_rows

            self._facets = facet_rows(self.S)
        return self._facets

    def _active_set(self, rows: np.ndarray, cf: np.ndarray, Gi: np.ndarray, cand: np.ndarray,
                    steps: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``min_{mu >= 0} (c + A^T mu)^T G^-1 (c + A^T mu)`` over multipliers on the rows ``cand`` of each
        chamber (``(h, F)`` row indices, ``-1`` past a chamber's own): the support starts empty; each step
        adds the candidate most violated by ``theta = G^-1 (c + A^T mu)`` (``a_j . theta < 0``), solves the
        support's system ``Q_s mu_s = -r_s`` (``Q = A G^-1 A^T``, ``r = A G^-1 c``) and drops rows whose
        multiplier comes out negative (:meth:`_solve_dropping`).  At most ``m`` rows are kept (the
        maximizer lies on a face of at most ``m - 1`` active rows, generically); a chamber that adds no row
        is done and leaves the batch.  Returns the supports (row indices, ``-1`` for none), the
        multipliers and the thetas."""
        h, m = rows.size, self.P.shape[1]
        ar = np.arange(h)[:, None]
        live_c = cand >= 0
        ci = np.maximum(cand, 0)
        PC = self.Pf[ci]  # (h, F, m): each chamber's candidate rows
        sg = np.where(self.S[np.broadcast_to(rows[:, None], ci.shape), ci], 1.0, -1.0)
        th0 = (Gi @ cf[:, :, None])[:, :, 0]
        r0 = sg * (PC @ th0[:, :, None])[:, :, 0]
        qn = np.sqrt(np.maximum(((PC @ Gi) * PC).sum(axis=2), 1e-300))  # ||a_j|| in the G^-1 norm
        r0 = np.where(live_c, r0, 0.0)
        scale = np.abs(r0 / qn).max(axis=1, initial=0.0) + 1e-300
        supp = np.full((h, m), -1)
        mu = np.zeros((h, m))
        theta = th0.copy()
        live = np.arange(h)  # chambers still adding rows (one that adds none is done: its theta stays)
        for _ in range(4 * m + 2 if steps is None else steps):
            if live.size == 0 or cand.shape[1] == 0:
                break
            sl = supp[live]
            r = np.where(live_c[live], sg[live] * (PC[live] @ theta[live][:, :, None])[:, :, 0] / qn[live], 0.0)
            on = sl >= 0
            at, slot = np.nonzero(on)
            r[at, sl[at, slot]] = 0.0
            j = np.argmin(r, axis=1)
            act = (r[np.arange(live.size), j] < -1e-12 * scale[live]) & ~on.all(axis=1)
            if not act.any():
                break
            live, sl, j = live[act], sl[act], j[act]
            sl[np.arange(live.size), np.argmax(sl < 0, axis=1)] = j
            sl, mu_l = self._solve_dropping(sl, sg[live], PC[live], Gi[live], r0[live])
            supp[live], mu[live] = sl, mu_l
            la = np.arange(live.size)[:, None]
            sgs = np.where(sl >= 0, sg[live][la, np.maximum(sl, 0)], 0.0)
            b = cf[live] + ((sgs * mu_l)[:, None, :] @ PC[live][la, np.maximum(sl, 0)])[:, 0, :]
            theta[live] = (Gi[live] @ b[:, :, None])[:, :, 0]
        glob = np.where(supp >= 0, ci[ar, np.maximum(supp, 0)], -1)  # slots into cand -> rows of Phi
        return glob, mu, theta

    def _solve_dropping(self, supp: np.ndarray, sg: np.ndarray, PC: np.ndarray, Gi: np.ndarray,
                        r0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The support's multipliers (:meth:`_support_solve`), the most negative one dropped and the
        chamber solved again until none is negative (at most ``m`` times; only the chambers that dropped
        one are solved again).  Returns the supports (changed in place) and ``mu >= 0`` on them."""
        h, m = supp.shape
        mu = _support_solve(supp, sg, PC, Gi, r0)
        redo = np.arange(h)
        for _ in range(m):
            neg = (mu[redo] < 0) & (supp[redo] >= 0)
            bad = neg.any(axis=1)
            if not bad.any():
                break
            worst = np.argmin(np.where(neg, mu[redo], 0.0), axis=1)
            redo = redo[bad]
            supp[redo, worst[bad]] = -1
            mu[redo] = _support_solve(supp[redo], sg[redo], PC[redo], Gi[redo], r0[redo])
        return supp, np.where(supp >= 0, np.maximum(mu, 0.0), 0.0)

    def _keep_better(self, rows: np.ndarray, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray,
                     si: np.ndarray, sv: np.ndarray, cols: list) -> None:
        """Store the multipliers ``(si, sv)`` (integer units) of chambers ``rows`` where they bound lower."""
        inf = np.full(c.shape[0], np.inf)
        old = self._estimate(c, k, mi, mv, inf, rows)
        ti, tv = mi.copy(), mv.copy()
        mk = min(si.shape[1], _KEEP)
        ti[rows], tv[rows] = 0, 0.0
        ti[rows, :mk], tv[rows, :mk] = si[:, :mk], sv[:, :mk] / 2.0**k
        new = self._estimate(c, k, ti, tv, inf, rows)
        better = rows[new < old]
        mi[better], mv[better] = ti[better], tv[better]
        Gi = self._Gi[rows] if self._Gi is not None else np.linalg.inv(self.G[rows].astype(float))
        sgs = np.where(self.S[rows[:, None], mi[rows]], 1.0, -1.0)
        b = c[rows].astype(float) + np.einsum("ht,htj->hj", sgs * mv[rows] * 2.0**k, self.Pf[mi[rows]])
        theta = np.einsum("hij,hj->hi", Gi, b)
        val = np.einsum("hi,hi->h", b, theta) / 4.0**k
        for j in np.argsort(-val)[:_NNLS_TOP * 4]:
            cols.append((float(val[j]), theta[j]))

    def _b(self, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Integer ``b = c + sum_t M_t sg_t P_(row t)`` of chambers ``rows`` (multipliers rounded to 2^-k)."""
        M = np.maximum(np.round(mv * 2.0**k), 0.0)
        M[M >= _MU_CAP] = 0.0  # (mu = 0 is valid; keeps every sum below 2^63)
        b = c[rows].copy()
        nz = np.flatnonzero(M.any(axis=1))  # chambers with a multiplier (most keep mu = 0)
        if nz.size:
            Mi, rn = mi[nz], rows[nz]
            W = M[nz].astype(np.int64) * np.where(self.S[rn[:, None], Mi], 1, -1)
            for t in range(Mi.shape[1]):
                b[nz] += W[:, t:t + 1] * self.P[Mi[:, t]]
        return b

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
        """The exact max over chambers of ``min(b^T adj b / det, pos, two-row bound)`` (times 4^k).

        Every chamber gets a rigorous float enclosure ``[lo, hi]`` of its value (:meth:`_enclose`);
        only those with ``hi`` at or above the largest ``lo`` can be the maximum, and only they are
        evaluated in integers (the rest lie below a value some candidate attains).
        """
        full = np.flatnonzero(self.full)
        b = self._b(c, k, mi[full], mv[full], full) if full.size else np.zeros((0, self.P.shape[1]), dtype=np.int64)
        lo, hi = self._enclose(full, b, pos, two)
        out = Fraction(0)
        where = np.full(self.S.shape[0], -1)
        where[full] = np.arange(full.size)
        for i in np.flatnonzero(hi >= lo.max()).tolist():  # the candidates: exact comparison
            v = Fraction(int(pos[i]))
            if self.full[i]:
                bi = [int(x) for x in b[where[i]]]
                q = sum(bi[a] * int(self.adj[i, a, t]) * bi[t] for a in range(len(bi)) for t in range(len(bi)))
                v = min(v, Fraction(q, int(self.det[i])))
            if i in two:
                v = min(v, two[i])
            out = max(out, v)
        return out

    def _enclose(self, full: np.ndarray, b: np.ndarray, pos: np.ndarray, two: dict) -> tuple[np.ndarray, np.ndarray]:
        """Float ``lo <= min(b^T adj b / det, pos, two) <= hi`` per chamber, rigorously.

        ``q = b^T adj b`` is a sum of ``m^2 <= 16`` products of three integers, each rounded to float
        once (relative error ``u = 2^-53`` each) and multiplied twice: whatever the summation order,
        ``|fl(q) - q| <= gamma_20 T`` with ``T = sum |b_a adj_at b_t|`` (Higham, Thm 3.1 and (3.5)),
        and ``gamma_20 / (1 - gamma_20) < 2^-48``, so ``err = 2^-47 fl(T)`` covers it with room.
        The remaining roundings (``q +- 2 err``, the division by ``fl(det)``, ``fl(pos)``, ``fl(two)``)
        are relative, each below ``2^-52``, and covered by the factors ``1 +- 2^-40``.  Every value is
        at most ``2^300`` (``|b| < 2^63``, adjugate entries below ``2^160``): no overflow.
        """
        up, dn = 1.0 + 2.0**-40, 1.0 - 2.0**-40
        pf = pos.astype(float)
        hi, lo = pf * up, pf * dn
        if full.size:
            if self._adjf is None:  # once per Phi (correctly rounded from the integers)
                self._adjf = self.adj[self.full].astype(float)
                self._detf = self.det[self.full].astype(float)
            bf = b.astype(float)
            qf = np.einsum("ni,nij,nj->n", bf, self._adjf, bf)
            err = 2.0**-47 * np.einsum("ni,nij,nj->n", np.abs(bf), np.abs(self._adjf), np.abs(bf))
            hi[full] = np.minimum(hi[full], (qf + 2 * err) / self._detf * up)
            lo[full] = np.minimum(lo[full], np.maximum(qf - 2 * err, 0.0) / self._detf * dn)
        for i, t in two.items():
            hi[i], lo[i] = min(hi[i], float(t) * up), min(lo[i], float(t) * dn)
        return lo, hi

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

    def _tighten(self, i: int, c: np.ndarray, k: int, mi: np.ndarray, mv: np.ndarray, cols: list,
                 keep_if_worse: bool = True) -> None:
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
        if not keep_if_worse:  # keep the stored multipliers unless NNLS's are better (float comparison: tightness only)
            G = self.Gf[i] * 4.0**self.e
            now = ci + A_T[:, mi[i]] @ (mv[i] * 2.0**k)
            new = ci + A_T[:, top] @ mu[top]
            if float(new @ np.linalg.solve(G, new)) >= float(now @ np.linalg.solve(G, now)):
                return
        mi[i], mv[i] = top, mu[top] / 2.0**k
        b = ci + A_T[:, top] @ mu[top]
        Gi = self._Gi[i] if self._Gi is not None else np.linalg.inv(self.G[i].astype(float))
        theta = Gi @ b  # the projection's theta (any positive multiple)
        cols.append((float(b @ theta) / 4.0**k, theta))


def _support_solve(supp: np.ndarray, sg: np.ndarray, PC: np.ndarray, Gi: np.ndarray, r0: np.ndarray) -> np.ndarray:
    """``mu`` on each chamber's support (``Q_s mu_s = -r0_s``; empty slots held at 0 by identity rows);
    ``supp`` holds slots of the candidate rows ``PC`` (``(h, F, m)``) with signs ``sg``."""
    h, m = supp.shape
    ar = np.arange(h)[:, None]
    on = supp >= 0
    idx = np.maximum(supp, 0)
    A = sg[ar, idx][:, :, None] * PC[ar, idx]  # h x m x m: the support's rows a_j
    Q = A @ Gi @ A.transpose(0, 2, 1)
    both = on[:, :, None] & on[:, None, :]
    Q = np.where(both, Q, 0.0) + np.where(on, 0.0, 1.0)[:, :, None] * np.eye(m)
    rhs = np.where(on, -r0[ar, idx], 0.0)
    with np.errstate(all="ignore"):
        Q = Q + 1e-13 * np.abs(Q).max(axis=(1, 2))[:, None, None] * np.eye(m)
        out = np.linalg.solve(Q, rhs[:, :, None])[:, :, 0]
    return np.where(np.isfinite(out), out, -1.0)


#: :func:`_split_columns` writes each integer ``Y_i`` as ``hi 2^_SPLIT + lo`` (``0 <= lo < 2^_SPLIT``).
_SPLIT = 12


def _split_columns(Y: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Float columns whose products with a 0/1 mask are exact and give, by :func:`_join_columns`, the integers
    ``S Y P``, ``S (Y_+)^2`` and ``S (Y_-)^2`` (``Y_+ = max(Y, 0)``, ``Y_- = max(-Y, 0)``).

    Each integer is split in halves below ``2^_SPLIT``: with ``|Y| < 2^24``, ``|P| < 2^20`` and at most
    ``2^10`` rows every column's entries are below ``2^32`` in magnitude and every sum of them below
    ``2^42``, so a float64 product (BLAS) adds integers exactly, in any order; the int64 product it
    replaces ran without BLAS (half of a certified pricing's time at ``n = 700``).  The pricer's checks
    (``_MAX_BITS``, ``n <= 2^10``) and :meth:`ConePricer._quantize` (``_Y_BITS``) keep every input in range;
    the ranges are asserted here, since exactness rests on them."""
    if not (int(np.abs(Y).max(initial=0)) < 2**24 and int(np.abs(P).max(initial=0)) < 2**20 and Y.size <= 2**10):
        raise ValueError("the chambers' float products are exact only for |Y| < 2^24, |P| < 2^20 and n <= 1024")
    hi, lo = Y >> _SPLIT, Y & (2**_SPLIT - 1)  # Y = hi 2^_SPLIT + lo (arithmetic shift: floor)
    cols = [hi[:, None] * P, lo[:, None] * P]
    for part in (np.maximum(Y, 0), np.maximum(-Y, 0)):
        h, low = part >> _SPLIT, part & (2**_SPLIT - 1)
        cols += [(h * h)[:, None], (h * low)[:, None], (low * low)[:, None]]
    return np.hstack(cols).astype(np.float64)


def _join_columns(F: np.ndarray, m: int) -> np.ndarray:
    """The integers ``[S Y P, S (Y_+)^2, S (Y_-)^2]`` from the exact float products ``F`` of :func:`_split_columns`."""
    I = F.astype(np.int64)  # integers below 2^42: exact in float64
    sq = [I[:, 2 * m + 3 * t] * 2**(2 * _SPLIT) + I[:, 2 * m + 3 * t + 1] * 2**(_SPLIT + 1) + I[:, 2 * m + 3 * t + 2]
          for t in (0, 1)]
    return np.c_[I[:, :m] * 2**_SPLIT + I[:, m:2 * m], sq[0], sq[1]]


def _packed(patterns: Any) -> PackedMasks:
    """The pattern set's masks, packed (a :class:`PatternSet` stores them so; other sets are packed here)."""
    packed = getattr(patterns, "packed", None)
    if packed is None:
        masks = np.asarray(patterns.masks, dtype=bool)
        return PackedMasks(np.packbits(masks, axis=1), masks.shape[1])
    return PackedMasks(packed, int(patterns.n))


def _grams(S: "PackedMasks | np.ndarray", P: np.ndarray) -> np.ndarray:
    """Integer ``Phi_S^T Phi_S`` of every chamber (exact: entries below ``n 2^40``), in chunks of the masks:
    no ``N x n`` int64 copy of them (8 GB at ``n = 1,000``, a million chambers)."""
    n, m = P.shape
    outer = (P[:, :, None] * P[:, None, :]).reshape(n, m * m)
    G = np.empty((S.shape[0], m * m), dtype=np.int64)
    step = max(1, _GRAM_CHUNK // max(n, 1))
    for lo in range(0, S.shape[0], step):
        G[lo:lo + step] = S[lo:lo + step].astype(np.int64) @ outer
    return G.reshape(-1, m, m)


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
