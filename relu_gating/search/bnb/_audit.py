"""The checker's view of a finished tree (private): the search claims what the checker proves.

The branch and bound bounds its nodes in its own orthonormal basis of ``col(Phi)``; the checker
bounds them from ``Phi``'s own columns with proven projector gaps.  Before the tree is returned,
it is walked by the checker (:func:`relu_gating.checker.walk_tree`, float mode: what ``verify``
runs).  A leaf whose claim the checker does not confirm (beyond ``BOUND_SLACK``) is raised to the
bound the checker proves; a ``b`` leaf whose node bound the checker proves lower is lowered to it
(that bound does not depend on the claim, so the checker proves the same value again); a tree the
checker refuses outright is reported, not certified.  So the search's ``certified`` and
``verify``'s agree by construction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["audit_tree"]


def audit_tree(obj: Any, nodes: list) -> tuple[int, str | None]:
    """Raise, in place, the leaf claims of ``nodes`` (preorder JSON) the checker does not confirm.
    Returns ``(number raised, the checker's first refusal or None)``."""
    from relu_gating.checker import BOUND_SLACK, state_problem, walk_tree
    from relu_gating.search._claims import _features

    P = state_problem(obj.Phi, obj.U_K, _features(obj))
    leaves, reasons, _ = walk_tree(nodes, P)
    if reasons:
        return 0, reasons[0]
    raised = 0
    for idx, claim, proven in leaves:
        if nodes[idx][0] not in ("b", "c", "d"):
            continue
        if proven > claim + BOUND_SLACK:
            nodes[idx][1] = float(np.nextafter(proven, np.inf)) if np.isfinite(proven) else float(P.M.shape[1])
            raised += 1
        elif proven < claim and nodes[idx][0] == "b":  # the checker's node bound is lower: claim it
            nodes[idx][1] = float(proven)  # (claim-free: the checker's walk proves the same value again)
    return raised, None
