"""Replaying another tree's geometry on the same ``Phi`` (private; issue 39, greedy layers).

A greedy layer's steps share ``Phi`` and differ only in the features ``H``.  The geometry of a tree
does not depend on ``H``: a split on row ``i`` partitions any node, and a row implied by its Farkas
rows (checked in exact rationals from ``Phi`` and the decided signs) is implied on every node with
those signs, whatever the objective.  So the previous step's tree, read from its certificate
(:func:`tree_guide`), can be replayed: a node that the guide knows is expanded by the guide's
implied rows and split (or chamber) without the LPs, NNLS, forced-row batches and strong branching
of an ordinary expansion; only the node bounds are computed, for this query's ``H`` (and interior
points sampled and ascended for the incumbent, as an expansion does).  Below the guide's leaves the search expands as usual.  Nothing is trusted: the tree
is checked as any other (the audit and :func:`relu_gating.verify` re-prove every implied row and
every leaf for this query); a guide from another ``Phi`` (its digest differs) is not used.

The guide is a nested tuple per node the previous tree expanded: ``(chain, row, plus, minus)``,
``chain`` the implied rows ``((i, s, rows), ...)`` written below the node, ``row`` the split row
below them (``-1``: a chamber, every row decided), ``plus``/``minus`` the guides of the split's
children (None where the previous tree ended in a leaf).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from relu_gating.search.bnb._tree_build import Node

__all__ = ["TreeGuide", "tree_guide", "merge_guides", "Replay", "phi_digest"]


def phi_digest(Phi: np.ndarray) -> str:
    """SHA-256 of ``Phi``'s float64 bytes and shape (a guide is used only on the ``Phi`` it was made on)."""
    A = np.ascontiguousarray(Phi, dtype=float)
    return hashlib.sha256(repr(A.shape).encode() + A.tobytes()).hexdigest()


class TreeGuide:
    """A tree's geometry for :class:`Replay`: ``root`` (nested tuples, see the module docstring) and the
    digest of the ``Phi`` it was made on; ``entries`` counts its expansions."""

    def __init__(self, root: tuple | None, digest: str, entries: int) -> None:
        self.root, self.digest, self.entries = root, digest, entries


def tree_guide(nodes: list, Phi: np.ndarray) -> TreeGuide:
    """The guide of a tree certificate's preorder ``nodes`` (``result.tree["nodes"]``) on ``Phi``.

    Implied rows and splits are kept; a chain of implied rows that ends in a leaf other than a chamber
    (``"c"``, ``"x"``) is dropped (the node is expanded as usual there)."""
    pos = 0
    count = 0

    def chain_start() -> tuple | None:
        nonlocal pos, count
        chain = []
        while nodes[pos][0] == "i":
            _, i, s, rows = nodes[pos][:4]
            chain.append((int(i), int(s), tuple(int(j) for j in rows)))
            pos += 1
        kind = nodes[pos][0]
        if kind == "s":
            row = int(nodes[pos][1])
            pos += 1
            plus = chain_start()
            minus = chain_start()
            count += 1
            return (tuple(chain), row, plus, minus)
        pos += 1  # a leaf
        if kind in ("c", "x") and chain:
            count += 1
            return (tuple(chain), -1, None, None)
        return None

    import sys

    depth = sys.getrecursionlimit()
    sys.setrecursionlimit(max(depth, 4 * len(Phi) + 1000))  # one frame per split on a path (at most n)
    try:
        root = chain_start() if nodes else None
    finally:
        sys.setrecursionlimit(depth)
    return TreeGuide(root, phi_digest(Phi), count)


def merge_guides(new: TreeGuide | None, old: TreeGuide | None) -> TreeGuide | None:
    """``new`` with ``old``'s expansions grafted where ``new`` ends (a guide carried over several greedy
    steps; measured, not adopted by :func:`relu_gating.greedy_layer`: ``benchmarks/greedy_late.py merge``).

    Where ``new`` has no expansion of a node (its tree ended there in a leaf: a bound that settled it,
    or an open node when its query ran out of time) and ``old`` has one at the same place (the same
    path of implied rows and splits from the root, so the same signs), ``old``'s subtree is kept; where
    both expand a node alike (the same implied rows and split) their children are merged; where they
    differ, ``new``'s is kept.  Both must be made on the same ``Phi`` (else ``new`` is returned).  Like
    any guide, the merged one is only replayed where it fits a node's signs, and the tree it gives is
    checked as any other."""
    if new is None or old is None or new.digest != old.digest:
        return new if new is not None else old
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 2 * max(_depth(new.root), _depth(old.root)) + 1000))
    try:
        root, count = _merge(new.root, old.root)
    finally:
        sys.setrecursionlimit(limit)
    return TreeGuide(root, new.digest, count)


def _depth(g: tuple | None) -> int:
    """The nesting depth of a guide (iteratively)."""
    deepest, stack = 0, [(g, 1)]
    while stack:
        x, d = stack.pop()
        if x is not None:
            deepest = max(deepest, d)
            stack.extend(((x[2], d + 1), (x[3], d + 1)))
    return deepest


def _merge(a: tuple | None, b: tuple | None) -> tuple[tuple | None, int]:
    """The merged guide of two nested tuples (:func:`merge_guides`) and its number of expansions."""
    if a is None or b is None:
        g = a if a is not None else b
        return g, _count(g)
    chain, row, plus, minus = a
    if chain != b[0] or row != b[1]:
        return a, _count(a)
    p, cp = _merge(plus, b[2])
    m, cm = _merge(minus, b[3])
    return (chain, row, p, m), 1 + cp + cm


def _count(g: tuple | None) -> int:
    """Expansions in a nested guide (iteratively: a guide may nest as deep as a tree's paths)."""
    n, stack = 0, [g]
    while stack:
        x = stack.pop()
        if x is not None:
            n += 1
            stack.extend((x[2], x[3]))
    return n


class Replay:
    """:meth:`replay`: expand a node by its guide (a mixin of :class:`relu_gating.search.bnb._search.Search`)."""

    P: Any
    Gn: np.ndarray
    obj: Any
    rng: np.random.Generator
    expansions: int
    stats: dict
    ascend: Any
    apply_chain: Any
    chamber: Any
    push: Any
    _node: Any

    def replay_points(self, node: Node) -> np.ndarray:
        """Interior points of ``node`` for its children, as an expansion samples them (hit-and-run from
        its own), each a neuron offered to the incumbent and some ascended (the incumbent improves while
        the guide is replayed as it does in an ordinary expansion); none when the node has none."""
        from relu_gating.search.bnb._growth import ASCEND_EVERY
        from relu_gating.search.bnb._rows import sample_interior

        if node.v is None or node.v.shape[0] == 0 or node.signs is None:
            return np.zeros((0, self.Gn.shape[1]))
        dec = np.flatnonzero((node.signs != 0) & ~self.P.zero_rows)
        pts = sample_interior(node.signs[dec, None] * self.Gn[dec], node.v, self.rng)
        self.expansions += 1
        self.ascend(pts @ self.obj.to_theta.T, steps=3 if self.expansions % ASCEND_EVERY == 1 else 0)
        return pts

    def replay(self, node: Node) -> bool:
        """Expand ``node`` by its guide (True), or leave it to the usual expansion (False: no guide,
        or one that does not fit its signs)."""
        g = node.guide
        if g is None or node.signs is None:
            return False
        node.guide = None
        chain, row, plus, minus = g
        signs = node.signs.copy()
        for i, s, _ in chain:
            if signs[i] != 0:
                return False
            signs[i] = s
        free = (signs == 0) & ~self.P.zero_rows
        if (row < 0 and free.any()) or (row >= 0 and not free[row]):
            return False
        self.stats["replayed"] = self.stats.get("replayed", 0) + 1
        pts = self.replay_points(node)
        cur = self.apply_chain(node, list(chain), signs, pts)
        if cur is None:
            return True
        if row < 0:
            if cur.v is None or cur.v.shape[0] == 0:
                cur.v = np.zeros((1, self.Gn.shape[1]))  # no interior point to start from (as expand_pointless)
            self.chamber(cur)
            return True
        from relu_gating.search.bnb._lp import WITNESS_MARGIN

        zi = pts @ self.Gn[row] if pts.shape[0] else np.zeros(0)
        kids = []
        for s, sub in ((1, plus), (-1, minus)):
            sg = signs.copy()
            sg[row] = s
            kid = self._node(sg, pts[s * zi > WITNESS_MARGIN][-8:], cur.depth + 1)
            kid.refuted, kid.guide = cur.refuted, sub
            kids.append(kid)
        cur.row, cur.children = row, kids
        cur.settle("s")
        for kid in kids:
            self.push(kid)
        return True
