"""Nodes of the branch and bound and their preorder JSON form (private).

The JSON layout is the tree certificate of :mod:`relu_gating.search.proofs._node`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating._runtime.collector import paused_gc
from relu_gating.certificate import multipliers_json, packed_multipliers

__all__ = ["Node", "to_nodes", "count_kinds"]


class Node:
    """A cone of weights with some row signs fixed.

    ``kind``: ``"open"`` (not yet settled), ``"s"`` split on ``row``, ``"i"`` ``row`` implied
    with ``sign`` (Farkas ``rows``), ``"b"`` leaf bounded by ``claim``, ``"c"`` chamber leaf
    (``claim``, dual ``evidence``), ``"x"`` chamber with no admissible neuron (``evidence``: ``(rows, y)``,
    an exact positive dependency of its signed rows covering the active ones, or None when the
    exclusion is decided from its mask).  ``evidence`` of length 3
    is lifted evidence ``(dec, N, mu)`` (written as a ``"d"`` leaf, whatever the kind of leaf);
    ``()`` marks a node whose lifted bound was tried without gain.  ``refuted``: undecided rows the
    exhaustive Farkas search proved neither way at this node or above, with the decided rows it searched.
    """

    __slots__ = ("kind", "row", "sign", "rows", "children", "claim", "bound", "evidence", "signs", "v", "z", "T", "depth",
                 "refuted", "trk", "guide", "no_point")

    def __init__(self, signs: np.ndarray | None, v: np.ndarray | None, claim: float, z: np.ndarray | None,
                 depth: int = 0) -> None:
        self.kind = "open"
        self.signs: np.ndarray | None = signs
        self.v: np.ndarray | None = v
        self.z: np.ndarray | None = z
        self.T: np.ndarray | None = None  # the node bound's K x K matrix, for strong branching
        self.claim, self.depth = claim, depth
        self.bound = claim  # from the signs alone: what an unsettled node claims, never lowered
        self.row, self.sign = -1, 0
        self.rows: tuple[int, ...] = ()
        self.children: list[Node] = []
        self.evidence: tuple | None = None
        self.refuted: dict = {}  # row -> {side: decided rows} an exhaustive search here or above found nothing in
        self.trk: tuple = ()  # the split subtrees measured around it (bnb/_subtree.py; the search's policy only)
        self.guide: tuple | None = None  # another tree's expansion of these signs (bnb/_replay.py)
        self.no_point = False  # a subcone of one the interior LP found no point in (bnb/_blind.py): not asked again

    def settle(self, kind: str) -> None:
        """Make this node a leaf (or internal node): its signs are no longer needed."""
        self.kind = kind
        if kind not in ("open",):
            self.signs, self.v, self.z, self.T, self.refuted, self.trk, self.guide = None, None, None, None, {}, (), None


def _multipliers_json(N: Any) -> Any:
    """Lifted multipliers as written in the tree: packed (``{"p", "kl", "v"}``, from the sparse form the search
    keeps) or, from older callers, dense."""
    if isinstance(N, dict):
        return packed_multipliers(N)
    return np.asarray(N, dtype=float).tolist()


def _json(node: Node) -> list:
    if node.kind == "s":
        return ["s", int(node.row)]
    if node.kind == "i":
        return ["i", int(node.row), int(node.sign), list(map(int, node.rows))]
    if node.kind == "x":  # evidence: (rows, y), the exact positive dependency of a zero chamber, or none
        if node.evidence is None:
            return ["x"]
        rows, y = node.evidence
        return ["x", [int(k) for k in rows], [f"{v.numerator}/{v.denominator}" for v in y]]
    if node.kind in ("b", "c", "d", "open") and node.evidence is not None and len(node.evidence) == 3:
        dec, N, mu = node.evidence  # lifted evidence (a claim lowered by it is never written without it)
        return ["d", float(node.claim), [int(j) for j in dec], _multipliers_json(N), [float(x) for x in mu]]
    if node.kind == "c" and node.evidence is not None and len(node.evidence) == 2:
        rows, N = node.evidence
        return ["c", float(node.claim), [int(j) for j in rows], multipliers_json(N)]
    return ["b", float(node.bound)]  # "b", an unsettled "open" node, or a chamber without evidence


def to_nodes(root: Node) -> list:
    """The tree in preorder (``+`` subtree before ``-``); implied and split nodes, most of a large
    tree, written inline."""
    out: list = []
    stack: list[Node] = [root]
    with paused_gc():  # millions of small lists, no cycles: the collector would rescan the tree often
        _preorder(out, stack, out.append, stack.pop, stack.append)
    return out


def _preorder(out: list, stack: list, append: Any, pop: Any, push: Any) -> None:
    while stack:
        node = pop()
        kind = node.kind
        if kind == "i":
            append(["i", int(node.row), int(node.sign), list(map(int, node.rows))])
            push(node.children[0])
        elif kind == "s":
            append(["s", int(node.row)])
            push(node.children[1])
            push(node.children[0])
        else:
            append(_json(node))


def count_kinds(nodes: list) -> dict[str, Any]:
    kinds = [n[0] for n in nodes]
    return {k: kinds.count(k) for k in ("s", "i", "b", "c", "d", "x")}
