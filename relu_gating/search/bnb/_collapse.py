"""A split subtree that claims more than its root's lifted bound, written back as that root's leaf (private; issue 39).

A node whose claim the lifted bound lowered (:meth:`relu_gating.search.bnb._node_bounds.NodeBounds.try_lifted`,
``try_plain``: a claim ``c`` with its evidence) goes back on the heap; popped again, it is split, and each
child starts from its own node bound, computed from its signs alone.  That bound can exceed ``c``: at the
later steps of a greedy layer the node bound stays near the cap ``s_K(H)^2`` on nodes with many undecided
rows, while the lifted bound is well below it.  A search stopped by its time budget then writes those
children as leaves, and the tree claims more than the evidence it already held proves (iris greedy step 6:
the largest open bound rose from 0.0507 at 80 CPU s to 0.0547 at 120 CPU s, docs/branch-and-bound.md).

:func:`collapse` puts the evidence back: wherever the leaves below such a node claim more than ``c``, the
subtree is replaced by the node itself as a lifted leaf (``"d"``: ``c`` and its evidence, valid on the
node's whole cone).  Nothing new is claimed: the leaf is the one the search had before it split, checked by
the audit and :func:`relu_gating.verify` like every lifted leaf (a leaf whose evidence the checker does not
confirm is raised, as any other).  The search's own order and its proofs are unchanged; only the tree
returned at a stop is smaller and claims less.
"""

from __future__ import annotations

import numpy as np

from relu_gating.search.bnb._tree_build import Node

__all__ = ["collapse", "leaf_claim"]


def leaf_claim(node: Node) -> float:
    """What a leaf claims in the written tree (``_tree_build._json``): its lifted claim where it has lifted
    evidence, else its node bound (an open or ``"b"`` leaf; a chamber's claim); nothing (``-inf``) for a
    chamber without admissible neurons (``"x"``)."""
    if node.kind == "x":
        return -np.inf
    if node.evidence is not None and len(node.evidence) == 3:
        return float(node.claim)
    if node.kind in ("b", "open"):
        return float(node.bound)
    return float(node.claim)


def collapse(root: Node) -> tuple[int, float]:
    """Replace, in place, every split subtree whose leaves claim more than its root's lifted claim by that
    root as a lifted leaf (outermost first: a collapsed node's subtree is gone).  Returns how many were
    collapsed and the largest leaf claim before.  Iterative (a tree may be as deep as ``Phi`` has rows)."""
    order: list[Node] = []
    stack = [root]
    while stack:  # preorder; children after their parent
        node = stack.pop()
        order.append(node)
        if node.kind in ("s", "i"):
            stack.extend(node.children)
    top: dict[int, float] = {}
    for node in reversed(order):  # children before parents: the largest leaf claim below each node
        if node.kind in ("s", "i"):
            top[id(node)] = max(top[id(c)] for c in node.children)
        else:
            top[id(node)] = leaf_claim(node)
    done = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind not in ("s", "i"):
            continue
        if node.evidence is not None and len(node.evidence) == 3 and np.isfinite(node.claim) \
                and top[id(node)] > node.claim:
            node.kind, node.children = "d", []  # its claim and evidence as the search had them before the split
            done += 1
            continue
        stack.extend(node.children)
    return done, float(top[id(root)])
