"""Rows whose sign a node forces, found for many rows at once (private).

A row ``i`` is forced to the side ``s`` on the node's cone ``C = {v : G v >= 0}`` exactly when
``s g_i`` lies in the dual cone ``C* = cone(rows of G)`` (Farkas).  With an interior point ``c``
of ``C`` every generator has ``g . c > 0``, so ``C*`` is the cone over the convex polytope of the
generators scaled onto the slice ``{x : c . x = 1}``.  One Delaunay triangulation of that polytope
(qhull, joggled: any simplex will do, since each claim is checked) gives, for every candidate at
once, a simplex of ``r`` generators (``r`` the rank) containing it: the Farkas rows, with nonnegative barycentric
weights as multipliers.

Every claim is then checked: a float solve of its square system in the node's well-conditioned
coordinates (multipliers all clearly positive, moderate condition), otherwise the caller's exact
Farkas check (:func:`relu_gating.search.proofs._farkas.implied_exact` on ``Phi``); the verifier checks
every claim again on its own.  Candidates outside the polytope, or any failure of qhull, are left
to the per-row tests (NNLS, LP).  Used for ranks 3 to 5 (slices of
dimension 2 to 4); the per-row tests cost about 0.2 ms a row, and at n = 1000 a node has hundreds
of forced rows.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from relu_gating._inputs.scaling import unit_rows

__all__ = ["forced_rows", "float_clear", "exhaustive_farkas", "float_rules_out", "MIN_RANK", "MAX_RANK", "MIN_CANDIDATES"]

MIN_RANK, MAX_RANK = 3, 5
#: Below this many candidate rows the per-row tests are as cheap.
MIN_CANDIDATES = 8


def _slice_basis(c: np.ndarray) -> np.ndarray:
    """An orthonormal basis (m, m - 1) of the complement of the unit vector ``c``: the last
    columns of the Householder reflection sending ``c`` to a multiple of ``e_1``."""
    w = c.astype(float)  # a copy
    w[0] += 1.0 if c[0] >= 0 else -1.0
    H = np.eye(c.size) - (2.0 / (w @ w)) * np.outer(w, w)
    return H[:, 1:]


class _Simplex:
    """The triangulation of a simplex (qhull's Delaunay needs one point more)."""

    def __init__(self, P: np.ndarray) -> None:
        self.simplices = np.arange(P.shape[0])[None, :]
        self.T = np.r_[P.T, np.ones((1, P.shape[0]))]

    def find_simplex(self, X: np.ndarray, bruteforce: bool = True) -> np.ndarray:
        try:
            lam = np.linalg.solve(self.T, np.r_[X.T, np.ones((1, X.shape[0]))])
        except np.linalg.LinAlgError:
            return np.full(X.shape[0], -1)
        return np.where(lam.min(axis=0) >= -1e-12, 0, -1)


def _triangulate(P: np.ndarray):
    """A triangulation of the hull vertices of ``P`` (None when qhull cannot)."""
    from scipy.spatial import ConvexHull, Delaunay, QhullError

    try:
        verts = ConvexHull(P, qhull_options="QJ").vertices if P.shape[0] > P.shape[1] + 1 else np.arange(P.shape[0])
        if verts.size == P.shape[1] + 1:
            return verts, _Simplex(P[verts])
        return verts, Delaunay(P[verts], qhull_options="QJ")
    except (QhullError, ValueError):
        return None


def float_clear(Gn: np.ndarray, signs: np.ndarray, rows: np.ndarray, targets: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Per candidate: the square system ``A y = s g_i`` (columns ``signs_j g_j``, ``j`` in its row
    of ``rows``; unit rows in the node's well-conditioned coordinates, so translated or rescaled
    data do not matter) is well conditioned and its float solution clearly positive."""
    A = np.transpose(signs[rows][:, :, None] * Gn[rows], (0, 2, 1))  # (c, r, r): columns are rows
    b = s[:, None] * Gn[targets]
    sv = np.linalg.svd(A, compute_uv=False)
    good = sv[:, -1] > 1e-6 * sv[:, 0]
    y = np.zeros(b.shape)
    if good.any():
        y[good] = np.linalg.solve(A[good], b[good][:, :, None])[:, :, 0]
    return good & (y.min(axis=1) > 1e-6 * np.abs(y).max(axis=1))


def forced_rows(Gn: np.ndarray, signs: np.ndarray, dec: np.ndarray, cand: np.ndarray,
                side: np.ndarray, inner: np.ndarray, exact: Callable[[int, int, np.ndarray], bool]) -> dict:
    """``{row: farkas rows}`` for the candidate rows ``cand`` proven forced to ``side`` (+1 / -1).

    ``Gn`` holds the unit rows in the node's coordinates, ``dec`` the decided rows (their signed
    unit rows generate ``C*``), ``inner`` an interior point of the cone, ``exact(i, s, rows)`` the
    caller's check of a claim the float test cannot clear."""
    r = Gn.shape[1]
    if not (MIN_RANK <= r <= MAX_RANK) or cand.size < MIN_CANDIDATES or dec.size < r:
        return {}
    G = signs[dec, None] * Gn[dec]
    h = G @ inner
    if not np.all(h > 0):
        return {}
    Q = _slice_basis(unit_rows(inner[None, :])[0])
    got = _triangulate((G / h[:, None]) @ Q)
    if got is None:
        return {}
    verts, tri = got
    T = side[:, None] * Gn[cand]
    ht = T @ inner
    pos = np.flatnonzero(ht > 0)
    simp = tri.find_simplex((T[pos] / ht[pos, None]) @ Q, bruteforce=True)  # the walk can stall on joggled input
    inside = pos[simp >= 0]
    if inside.size == 0:
        return {}
    rows = dec[verts[tri.simplices[simp[simp >= 0]]]]  # (c, r) decided rows
    ok = float_clear(Gn, signs, rows, cand[inside], side[inside].astype(float))
    out = {}
    for i, s, rk, clear in zip(cand[inside].tolist(), side[inside].tolist(), rows.tolist(), ok.tolist()):
        if clear or exact(i, s, np.asarray(rk)):
            out[i] = tuple(rk)
    return out


#: :func:`exhaustive_farkas` gives up on nodes with more subsets of ``rank`` decided rows than this.
EXHAUSTIVE_SUBSETS = 3000


def exhaustive_farkas(dec: np.ndarray, i: int, sides: tuple, rank: int,
                      exact: Callable[[int, int, np.ndarray], bool],
                      screen: tuple[np.ndarray, np.ndarray] | None = None,
                      tried: dict | None = None) -> tuple | None:
    """``(s, rows)``: a Farkas combination proving row ``i`` forced to ``s``, found by trying
    every subset of at most ``rank`` decided rows (Caratheodory: one exists whenever the row is
    forced) with the exact check ``exact(i, s, rows)``; None if there is none or the node has
    too many decided rows.  For the rows the float tests leave unproven on degenerate data
    (rows dependent only to within rounding), where an LP's duals pick the wrong rows.

    ``screen = (Gn, signs)`` (unit rows in well-conditioned coordinates, the node's signs): the
    subsets a float least-squares solve clearly rules out (:func:`float_rules_out`) are not
    checked exactly.  A subset skipped only loses a proof (the answer may become None), never
    makes one: on real data the exact checks of the subsets that cannot work were 90% of the time.

    ``tried``: ``{s: rows}``, the decided rows of an ancestor node where this search found nothing
    for side ``s`` (the signs of decided rows never change below a node): only the subsets with a
    row outside ``rows`` are checked, so the first combination found is the one a full search
    finds.  On iris greedy step 4 the repeated subsets were most of 16.7 of 47 s."""
    from itertools import combinations
    from math import comb

    top = min(rank, dec.size)
    if top < 1 or comb(dec.size, top) > EXHAUSTIVE_SUBSETS:
        return None
    for k in range(1, top + 1):
        subs = np.array(list(combinations(dec.tolist(), k)), dtype=np.int64).reshape(-1, k)
        for s in sides:
            keep = np.ones(subs.shape[0], dtype=bool)
            if tried is not None and s in tried:
                keep &= ~np.isin(subs, np.asarray(tried[s], dtype=np.int64)).all(axis=1)
            if screen is not None and keep.any():
                keep[keep] = ~float_rules_out(screen[0], screen[1], subs[keep], i, s)
            for sub in subs[keep]:
                if exact(i, s, sub):
                    return s, tuple(int(j) for j in sub)
    return None


#: :func:`float_rules_out`: a residual above this (relative to ``1 + |y|``; unit rows) is no rounding.
SCREEN_RESIDUAL = 1e-6
#: :func:`float_rules_out`: multipliers below ``-SCREEN_NEGATIVE * max |y|`` of a well-conditioned
#: system (smallest singular value above ``SCREEN_COND`` times the largest) are no rounding either.
SCREEN_NEGATIVE, SCREEN_COND = 1e-6, 1e-6


def float_rules_out(Gn: np.ndarray, signs: np.ndarray, subs: np.ndarray, i: int, s: int) -> np.ndarray:
    """Per subset (rows of ``subs``): ``s g_i`` is clearly not a nonnegative combination of the
    signed unit rows ``signs_j g_j`` (a least-squares residual far above rounding, or clearly
    negative multipliers of a well-conditioned system).  A heuristic filter: False keeps the
    subset for the exact check."""
    A = np.transpose(signs[subs][:, :, None] * Gn[subs], (0, 2, 1))  # (c, r, k): columns are rows
    b = s * Gn[i]
    y = np.linalg.pinv(A) @ b  # (c, k)
    res = np.linalg.norm(np.einsum("crk,ck->cr", A, y) - b[None, :], axis=1)
    big = np.abs(y).max(axis=1)
    sv = np.linalg.svd(A, compute_uv=False)
    well = sv[:, -1] > SCREEN_COND * sv[:, 0]
    return (res > SCREEN_RESIDUAL * (1.0 + big)) | (well & (y.min(axis=1) < -SCREEN_NEGATIVE * big))
