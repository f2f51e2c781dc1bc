"""Which row to split where the node bound is at the cap (private; issue 39, Reach IV).

Strong branching (:meth:`relu_gating.search.bnb._growth.TreeGrowth._branch_row`) scores candidate rows by
their children's node bounds, rank-one updates of the parent's ``K x K`` matrix.  At the later steps of a
greedy layer that bound stays at the cap ``s_K(H)^2`` on most nodes (the former features leave the block
complements small), so every child scores the same and the split falls to the row where the bound's
maximizer is largest, while the node's claim comes from the lifted bound's pencil
(:func:`relu_gating.search.bnb._strong.plain`: ``x = (v, y)``, ``h = E x``, the undecided coordinates
``y`` free).  Here the candidates are the free rows where that pencil's top eigenvector is furthest from
a neuron (``|y_i - relu(q_i^T v)|``, the relaxation's violation at row ``i``), and each is scored by its two
children's pencil bounds: ``y_i = 0`` (row inactive: the coordinate dropped) and ``y_i = q_i^T v`` (active),
each ``lambda_max(T^T A T, T^T B T)`` for the ``d x (d - 1)`` map ``T`` of the child's coordinates.

A heuristic only: nothing is certified with it (the tree and every proof are as before; a split
partitions any node).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.linalg

from relu_gating.search.bnb._score import split_scores

__all__ = ["choose", "pencil_row", "AT_CAP", "CANDIDATES", "USE", "MIN_UNDECIDED"]

#: Candidate rows scored by their children's pencil bounds (two generalized eigenvalues each).
CANDIDATES = 6
#: Off switch (benchmarks): False keeps the rank-one scores everywhere.
USE = True
#: A node bound at least this fraction of the cap counts as at the cap (iris step 5: the median split's bound
#: is the cap less 2e-11 of it, and half the splits' rank-one scores are all equal).
AT_CAP = 1.0 - 1e-6
#: :func:`choose` stops asking after this many calls when under a quarter of them chose a row (the pencil at
#: the cap as well: Gaussian and clustered data with the bias alone), then asks every ``RETRY``-th time.
GATE_AFTER = 16
RETRY = 32
#: Nodes with fewer undecided rows keep the rank-one scores (their chambers are near).
MIN_UNDECIDED = 4


def _top(A: np.ndarray, B: np.ndarray, vectors: bool) -> tuple[float, np.ndarray | None]:
    """The top eigenpair of the pencil ``(A, B)`` (``B`` positive definite), or ``(inf, None)``."""
    d = A.shape[0]
    try:
        if vectors:
            w, V = scipy.linalg.eigh(A, B, subset_by_index=[d - 1, d - 1], check_finite=False)
            return float(w[-1]), V[:, -1]
        w = scipy.linalg.eigh(A, B, subset_by_index=[d - 1, d - 1], eigvals_only=True, check_finite=False)
        return float(w[-1]), None
    except (np.linalg.LinAlgError, ValueError):
        return float("inf"), None


def _children(A: np.ndarray, B: np.ndarray, q: np.ndarray, j: int, r: int) -> tuple[float, float]:
    """The pencil bounds of the children ``y_j = q^T v`` (``+``) and ``y_j = 0`` (``-``)."""
    d = A.shape[0]
    keep = np.r_[0:j, j + 1:d]
    minus = _top(A[np.ix_(keep, keep)], B[np.ix_(keep, keep)], False)[0]
    T = np.eye(d)[:, keep]
    T[j, :r] = q
    plus = _top(T.T @ A @ T, T.T @ B @ T, False)[0]
    return plus, minus


def pencil_row(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
               free: np.ndarray, level: float, cap: float = np.inf) -> int | None:
    """The free row to split on by the children's pencil bounds (the module's doc), or None (fewer than
    ``MIN_UNDECIDED`` undecided rows, a singular pencil, its bound at ``cap`` too, a free row not undecided)."""
    from relu_gating.search.bnb._strong import _pencil

    r = Q.shape[1]
    A, B, U = _pencil(Q, M, QH, signs, zero)
    if U.size < MIN_UNDECIDED:
        return None
    lam, x = _top(A, B, True)
    if x is None or not np.isfinite(lam) or lam >= cap - 1e-6 * abs(cap):  # the pencil at the cap too
        return None
    pos = np.searchsorted(U, free)
    if np.any(pos >= U.size) or np.any(U[np.minimum(pos, U.size - 1)] != free):
        return None
    v, y = x[:r], x[r:]
    viol = np.abs(y[pos] - np.maximum(Q[free] @ v, 0.0))
    order = np.argsort(-viol)[:CANDIDATES]
    kids = np.array([_children(A, B, Q[free[o]], r + int(pos[o]), r) for o in order]).T
    return int(free[order[int(np.argmax(split_scores(kids[0], kids[1], lam, level)))]])


def choose(search: Any, signs: np.ndarray, free: np.ndarray, level: float) -> int | None:
    """:func:`pencil_row` for a node of ``search`` whose node bound is at the cap, or None (then the rank-one
    scores choose); its CPU in ``stats["t_pencil_branch"]``, its calls and rows chosen in ``pencil_calls`` and
    ``pencil_rows``.  Where it seldom chooses (the pencil at the cap too) it is asked only now and then."""
    st = search.stats
    calls, rows = st.get("pencil_calls", 0), st.get("pencil_rows", 0)
    if not USE or (calls >= GATE_AFTER and 4 * rows < calls and (calls + st.get("pencil_skips", 0)) % RETRY):
        st["pencil_skips"] = st.get("pencil_skips", 0) + 1
        return None
    t0 = time.perf_counter()
    obj = search.obj
    row = pencil_row(obj.Psi, obj.M, obj.Q_H, signs, search.P.zero_rows, free, level, search.P.cap)
    st["t_pencil_branch"] = st.get("t_pencil_branch", 0.0) + time.perf_counter() - t0
    st["pencil_calls"], st["pencil_rows"] = calls + 1, rows + (row is not None)
    return row
