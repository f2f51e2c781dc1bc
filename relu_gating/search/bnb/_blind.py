"""Nodes the float tests cannot split, split anyway (private).

On real data (iris is measured to 0.1 cm: many of its points are collinear before standardization
and only to within rounding after it) a node can keep undecided rows that no interior point shows
on both sides and whose forced sign no exact Farkas check proves: the other side is a sliver too
thin for float64 (it exists exactly), or the LP's duals picked the wrong rows.  Such a node used to
stay a leaf with its bound (``"unproven_empty"``), which kept the gap open for good.

A split on any row is valid (the two children partition the node), so such a node is split on its
undecided row of largest ``|M z|`` anyway (:func:`split`).  A child the node's interior points do
not reach has no known interior point ("pointless", ``v`` of zero rows); its expansion
(:func:`expand_pointless`) first asks an LP for one (then it is an ordinary node; not asked again below a
node where it found none: a child's cone lies in its parent's, issue 39: on iris greedy step 5 that LP was 12%
of the search, most of it on such children), else decides its
undecided rows one at a time exactly: a row proven forced (NNLS support or the screened exhaustive
search, each combination checked exactly) is implied, the first row proven neither way is split
on again.  With every row decided the node is a chamber, solved as any other (its closed cone:
an empty one gives a valid claim too).  The depth is at most the number of rows, and node bounds
prune as everywhere else.  Nothing here needs the whole arrangement's chambers, so it works
beyond the ``_thin.MAX_CHAMBERS`` that the exact chamber list (:mod:`relu_gating.search.bnb._thin`,
tried first) is limited to.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.search.bnb._forced import exhaustive_farkas
from relu_gating.search.bnb._lp import WITNESS_MARGIN
from relu_gating.search.bnb._tree_build import Node

__all__ = ["split", "expand_pointless", "blind_row"]

#: An NNLS residual below this (unit rows) makes its support a Farkas candidate (checked exactly).
NNLS_RESIDUAL = 1e-10


def blind_row(search: Any, signs: np.ndarray, z: np.ndarray) -> int:
    """The undecided row where the node bound's maximizer ``M z`` is largest."""
    und = np.flatnonzero((signs == 0) & ~search.P.zero_rows)
    return int(und[int(np.argmax(np.abs(search.obj.M[und] @ z)))])


def split(search: Any, cur: Node, signs: np.ndarray, pts: np.ndarray, i: int) -> None:
    """Split ``cur`` on row ``i`` (children pushed); a child gets the points of ``pts`` strictly
    on its side (none: a pointless child)."""
    zi = pts @ search.Gn[i] if pts.shape[0] else np.zeros(0)
    kids = []
    for s in (1, -1):
        sg = signs.copy()
        sg[i] = s
        kids.append(search._node(sg, pts[s * zi > WITNESS_MARGIN][-8:], cur.depth + 1))
    for kid in kids:
        kid.refuted = cur.refuted
    cur.row, cur.children = i, kids
    cur.settle("s")
    for kid in kids:
        search.push(kid)


def interior_point(search: Any, G: np.ndarray) -> np.ndarray | None:
    """A point ``v`` with ``G v > WITNESS_MARGIN`` (unit rows, ``|v| <= 1``) found by the LP, or None."""
    r = search.Gn.shape[1]
    if G.shape[0] == 0:
        return np.eye(r)[0]
    search.lp.begin(G, np.zeros((0, r)))
    v = search.lp.interior()
    return v


def _forced(search: Any, signs: np.ndarray, i: int) -> tuple | None:
    """``(s, farkas rows)`` proving row ``i`` forced to ``s`` (checked exactly), or None."""
    from scipy.optimize import nnls

    dec = np.flatnonzero((signs != 0) & ~search.P.zero_rows)
    if dec.size == 0:
        return None
    Gd = signs[dec, None] * search.Gn[dec]
    for s in (1, -1):
        try:
            y, res = nnls(Gd.T, s * search.Gn[i])
        except (RuntimeError, ValueError):
            continue
        if res <= NNLS_RESIDUAL:
            rows = dec[y > 1e-12 * max(float(y.max(initial=0.0)), 1e-300)]
            if 0 < rows.size <= search.obj.rank and search._implied(signs, i, s, rows):
                return s, tuple(int(j) for j in rows)
    got = exhaustive_farkas(dec, i, (1, -1), search.obj.rank,
                            lambda i_, s_, rows: search._implied(signs, i_, s_, rows), (search.Gn, signs))
    return got


def expand_pointless(search: Any, node: Node) -> None:
    """Expand a node without a known interior point (see the module docstring)."""
    assert node.signs is not None and node.z is not None
    search.stats["pointless"] += 1
    signs = node.signs.copy()
    dec = np.flatnonzero((signs != 0) & ~search.P.zero_rows)
    v = None if node.no_point else interior_point(search, signs[dec, None] * search.Gn[dec])
    if v is not None:  # an ordinary node after all
        node.v = v[None, :]
        search.offer(node.v @ search.obj.to_theta.T)
        search.expand(node)
        return
    und = np.flatnonzero((signs == 0) & ~search.P.zero_rows)
    und = und[np.argsort(-np.abs(search.obj.M[und] @ node.z))]
    chain, row = [], -1
    for i in und.tolist():
        got = _forced(search, signs, i)
        if got is None:
            row = i
            break
        signs[i] = got[0]
        chain.append((i, got[0], got[1]))
    cur = search.apply_chain(node, chain, signs, np.zeros((0, search.Gn.shape[1])))
    if cur is None:
        return
    if row < 0:  # every row decided: a chamber (its closed cone; no interior point to start from)
        cur.v = np.zeros((1, search.Gn.shape[1]))
        search.chamber(cur)
        return
    search.stats["blind"] += 1
    split(search, cur, signs, np.zeros((0, search.Gn.shape[1])), row)
    for kid in cur.children:  # subcones of this one: the LP that found no point here finds none there
        kid.no_point = True
