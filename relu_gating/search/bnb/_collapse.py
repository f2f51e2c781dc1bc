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
    root as a lifted leaf, innermost first (an inner node collapsed to its lower claim may spare the node
    above it).  Returns how many were collapsed and the largest leaf claim before.  One iterative
    post-order pass (a tree may be as deep as ``Phi`` has rows)."""
    done = 0
    tops: dict[int, tuple[float, float]] = {}  # id -> (largest leaf claim below, the same after collapsing)
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, seen = stack.pop()
        if node.kind not in ("s", "i"):
            c = leaf_claim(node)
            tops[id(node)] = (c, c)
            continue
        if not seen:
            stack.append((node, True))
            stack.extend((kid, False) for kid in node.children)
            continue
        below = [tops.pop(id(kid)) for kid in node.children]
        raw, eff = max(b[0] for b in below), max(b[1] for b in below)
        ev = node.evidence
        if ev is not None and len(ev) == 3 and np.isfinite(node.claim) and eff > node.claim:
            node.kind, node.children = "d", []  # its claim and evidence as the search had them before the split
            eff = float(node.claim)
            done += 1
        tops[id(node)] = (raw, eff)
    return done, float(tops[id(root)][0])
