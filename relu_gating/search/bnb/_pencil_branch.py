"""Which row to split where the node bound is at the cap (private; issue 39, Reach IV).

Strong branching (:meth:`relu_gating.search.bnb._growth.TreeGrowth._branch_row`) scores candidate rows by
their children's node bounds, rank-one updates of the parent's ``K x K`` matrix.  At the later steps of a
greedy layer that bound stays at the cap ``s_K(H)^2`` on most nodes (the former features leave the block
complements small), so every child scores the same and the split falls to the row where the bound's
maximizer is largest, while the node's claim comes from the lifted bound's pencil
(:func:`relu_gating.search.bnb._strong.plain`: ``x = (v, y)``, ``h = E x``, the undecided coordinates
``y`` free).  Here every free row is scored by its two children's pencil bounds, ``y_i = 0`` (row inactive)
and ``y_i = q_i^T v`` (active), each a rank-one downdate of a ``K x K`` matrix (:func:`child_pencils`), and
the split is the best by the product rule of :func:`relu_gating.search.bnb._score.split_scores`.

A heuristic only: nothing is certified with it (the tree and every proof are as before; a split
partitions any node).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.linalg

from relu_gating.search.bnb._score import split_scores

__all__ = ["child_pencils", "choose", "pencil_row", "AT_CAP", "USE", "MIN_UNDECIDED", "MAX_UNDECIDED"]

#: Off switch (benchmarks): False keeps the rank-one scores everywhere.
USE = True
#: A node bound at least this fraction of the cap counts as at the cap (iris step 5: the median split's bound
#: is the cap less 2e-11 of it, and half the splits' rank-one scores are all equal).
AT_CAP = 1.0 - 1e-6
#: :func:`choose` stops asking after this many calls when over three quarters of them found the node's pencil at
#: the cap as well (expected with the bias alone, where the node bound is the same quantity, better computed),
#: then asks every ``RETRY``-th time.
GATE_AFTER = 16
RETRY = 32
#: Nodes with more undecided rows keep the rank-one scores (a Cholesky factor of size ``r + |U|`` a split:
#: on breast cancer PCA 5's first nodes, up to 560 rows, 22 calls took 4.5 wall seconds at load 12).
MAX_UNDECIDED = 160
#: Nodes with fewer undecided rows keep the rank-one scores (their chambers are near).
MIN_UNDECIDED = 4


def child_pencils(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
                  free: np.ndarray) -> tuple[float, np.ndarray, np.ndarray] | None:
    """``(parent, plus, minus)``: the top eigenvalue of the node's pencil and of each free row's two children's
    (``y_i = q_i^T v`` and ``y_i = 0``), or None (fewer than ``MIN_UNDECIDED`` undecided rows, ``B`` not
    positive definite, a free row not undecided).

    Both children restrict the parent's coordinates to a hyperplane ``c^T x = 0`` (``c = e_{y_i} - (q_i, 0)``
    or ``e_{y_i}``), and ``A = F^T F`` has rank at most ``K``: with ``B = L L^T``, ``W = L^{-1} F^T`` and
    ``w = L^{-1} c / ||L^{-1} c||``, the child's bound is the top eigenvalue of the ``K x K`` matrix
    ``W^T W - (W^T w)(W^T w)^T``.  So one Cholesky factor and one triangular solve score every free row."""
    from relu_gating.search.bnb._strong import _pencil

    r = Q.shape[1]
    _, B, U = _pencil(Q, M, QH, signs, zero)
    if U.size < MIN_UNDECIDED:
        return None
    pos = np.searchsorted(U, free)
    if np.any(pos >= U.size) or np.any(U[np.minimum(pos, U.size - 1)] != free):
        return None
    P = np.flatnonzero((signs > 0) & ~zero)
    F = np.hstack([M[P].T @ Q[P], M[U].T])  # A = F^T F
    try:
        L = np.linalg.cholesky(B)
    except np.linalg.LinAlgError:
        return None
    W = scipy.linalg.solve_triangular(L, F.T, lower=True, check_finite=False)
    S = W.T @ W
    m, d = free.size, B.shape[0]
    Cs = np.zeros((d, 2 * m))
    Cs[r + pos, np.arange(m)] = 1.0  # + child: y_i = q_i^T v
    Cs[:r, :m] = -Q[free].T
    Cs[r + pos, m + np.arange(m)] = 1.0  # - child: y_i = 0
    Wc = scipy.linalg.solve_triangular(L, Cs, lower=True, check_finite=False)
    g = (W.T @ Wc) / np.maximum(np.linalg.norm(Wc, axis=0), 1e-300)
    kids = np.linalg.eigvalsh(S[None] - np.einsum("kc,lc->ckl", g, g))[:, -1]
    return float(np.linalg.eigvalsh(S)[-1]), kids[:m], kids[m:]


def _pick(got: tuple | None, free: np.ndarray, level: float, cap: float) -> tuple[int | None, bool]:
    """``(row, at_cap)`` from :func:`child_pencils`' answer: the best-scored free row or None, and whether the
    node's pencil bound is at ``cap`` (then the rank-one scores are as good a guide)."""
    if got is None or not np.isfinite(got[0]):
        return None, False
    if got[0] >= cap - 1e-6 * abs(cap):
        return None, True
    if not (np.all(np.isfinite(got[1])) and np.all(np.isfinite(got[2]))):
        return None, False
    return int(free[int(np.argmax(split_scores(got[1], got[2], got[0], level)))]), False


def pencil_row(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
               free: np.ndarray, level: float, cap: float = np.inf) -> int | None:
    """The free row whose children's pencil bounds (:func:`child_pencils`) score best
    (:func:`relu_gating.search.bnb._score.split_scores`, gains from the node's pencil bound), or None (no
    scores, or the node's pencil bound at ``cap`` too: no better guide than the rank-one scores)."""
    return _pick(child_pencils(Q, M, QH, signs, zero, free), free, level, cap)[0]


def choose(search: Any, signs: np.ndarray, free: np.ndarray, level: float) -> int | None:
    """:func:`pencil_row` for a node of ``search`` whose node bound is at the cap, or None (then the rank-one
    scores choose): at most ``MAX_UNDECIDED`` undecided rows, and where the node's pencil is mostly at the cap
    too (more than three quarters of ``GATE_AFTER`` calls or more: Gaussian and clustered data with the bias
    alone) only every ``RETRY``-th time.  Counted in ``stats``: ``t_pencil_branch`` (seconds),
    ``pencil_calls``, ``pencil_rows`` (rows chosen), ``pencil_at_cap``, ``pencil_skips``."""
    st = search.stats
    calls, at = st.get("pencil_calls", 0), st.get("pencil_at_cap", 0)
    k = int(np.sum((signs == 0) & ~search.P.zero_rows))
    if not USE or k > MAX_UNDECIDED or (calls >= GATE_AFTER and 4 * at > 3 * calls
                                        and (calls + st.get("pencil_skips", 0)) % RETRY):
        st["pencil_skips"] = st.get("pencil_skips", 0) + 1
        return None
    t0 = time.perf_counter()
    obj = search.obj
    row, at_cap = _pick(child_pencils(obj.Psi, obj.M, obj.Q_H, signs, search.P.zero_rows, free), free, level,
                        search.P.cap)
    st["t_pencil_branch"] = st.get("t_pencil_branch", 0.0) + time.perf_counter() - t0
    st["pencil_calls"], st["pencil_at_cap"] = calls + 1, at + at_cap
    st["pencil_rows"] = st.get("pencil_rows", 0) + (row is not None)
    return row
