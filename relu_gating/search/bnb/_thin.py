"""Nodes the float tests cannot split, settled from the exact list of chambers (private).

On degenerate data (rows dependent only to within rounding) a node can keep undecided rows
that no interior point shows on both sides and whose forced sign no LP proves: the other side
is a chamber too thin for float64, or nothing.  The exact enumeration
(:func:`relu_gating.patterns.enumerate_patterns`, exact integer witnesses for thin chambers)
says which: a row on which every chamber of the node has the same sign is forced (its Farkas
rows found by :func:`relu_gating.search.bnb._forced.exhaustive_farkas`, checked exactly), any
other row splits the node into two parts that both hold chambers.  The node's subtree is built
that way down to its chambers, each solved as any chamber of the search.  Used only when the
whole arrangement has at most ``MAX_CHAMBERS`` chambers (Cover's bound); otherwise such a node
stays a leaf with its bound, as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.search.bnb._forced import exhaustive_farkas
from relu_gating.search.bnb._tree_build import Node

__all__ = ["ExactChambers", "MAX_CHAMBERS"]

#: Cover's bound on the chamber count above which no exact enumeration is attempted.
MAX_CHAMBERS = 20_000


class ExactChambers:
    """The exact chambers of a search's ``Phi`` (enumerated on first use) and the subtrees built
    from them."""

    def __init__(self, search: Any) -> None:
        self.search = search
        self._ps: Any = None
        self._tried = False

    def chambers(self) -> Any:
        if not self._tried:
            self._tried = True
            from relu_gating.patterns import cover_count, enumerate_patterns

            Phi = self.search.obj.Phi
            if cover_count(Phi.shape[0], self.search.obj.rank) <= MAX_CHAMBERS:
                self._ps = enumerate_patterns(Phi)
        return self._ps

    def settle(self, node: Node, signs: np.ndarray) -> bool:
        """Build ``node``'s subtree from the exact chambers consistent with ``signs`` (its signs
        after the forced rows): True when done, False when the enumeration is out of reach or
        a forced row's Farkas rows are not found (the node is left as it was)."""
        ps = self.chambers()
        if ps is None:
            return False
        zero = self.search.P.zero_rows
        dec = np.flatnonzero((signs != 0) & ~zero)
        cons = np.all(ps.masks[:, dec] == (signs[dec] > 0)[None, :], axis=1)
        plan: list = []
        if not self._plan(signs.copy(), np.flatnonzero(cons), plan):
            return False
        self._build(node, signs.copy(), iter(plan))
        return True

    def _plan(self, signs: np.ndarray, rows: np.ndarray, plan: list) -> bool:
        """Preorder steps ``("i", row, sign, farkas) | ("s", row) | ("c", chamber index)``."""
        und = np.flatnonzero((signs == 0) & ~self.search.P.zero_rows)
        if und.size == 0 or rows.size == 0:
            if rows.size != 1:
                return False  # a decided node must be one chamber; an empty one is never split off
            plan.append(("c", int(rows[0])))
            return True
        masks = self.chambers().masks[rows][:, und]
        mixed = np.flatnonzero(masks.any(axis=0) & ~masks.all(axis=0))
        if mixed.size < und.size:  # a row on which every chamber agrees: forced
            k = int(np.setdiff1d(np.arange(und.size), mixed)[0])
            i, s = int(und[k]), 1 if masks[0, k] else -1
            dec = np.flatnonzero((signs != 0) & ~self.search.P.zero_rows)
            got = exhaustive_farkas(dec, i, (s,), self.search.obj.rank,
                                    lambda i_, s_, r: self.search._implied(signs, i_, s_, r))
            if got is None:
                return False
            plan.append(("i", i, s, got[1]))
            signs = signs.copy()
            signs[i] = s
            return self._plan(signs, rows, plan)
        i = int(und[mixed[0]])
        plan.append(("s", i))
        for s in (1, -1):
            child = signs.copy()  # the forced rows fixed below stay in that subtree
            child[i] = s
            if not self._plan(child, rows[self.chambers().masks[rows, i] == (s > 0)], plan):
                return False
        return True

    def _build(self, node: Node, signs: np.ndarray, steps: Any) -> None:
        """Turn ``node`` into the planned subtree (children in the search's ``+`` first order)."""
        step = next(steps)
        if step[0] == "c":  # a chamber: its own bound, then solved as any chamber of the search
            theta = self.chambers().witnesses[step[1]]
            fresh = self.search._node(signs.copy(), (self.search.obj.to_coords @ theta)[None, :], node.depth)
            self.search.offer(theta)
            node.signs, node.v, node.z, node.T = fresh.signs, fresh.v, fresh.z, fresh.T
            node.claim = node.bound = fresh.claim
            self.search.chamber(node)
            return
        if step[0] == "i":
            _, i, s, farkas = step
            child = Node(None, None, node.claim, None, node.depth)
            node.row, node.sign, node.rows, node.children = i, s, farkas, [child]
            node.settle("i")
            signs = signs.copy()
            signs[i] = s
            self._build(child, signs, steps)
            return
        i = step[1]
        kids = [Node(None, None, node.claim, None, node.depth + 1) for _ in (1, -1)]
        node.row, node.children = i, kids
        node.settle("s")
        for s, kid in zip((1, -1), kids):
            child = signs.copy()
            child[i] = s
            self._build(kid, child, steps)
