"""Leaves the checker raised that are chambers, claimed again as chamber leaves (private).

A ``"b"`` leaf claims its node bound, which the checker proves in floats from ``Phi``'s own columns.
At the ends of the float range that proof can fail where the search's own bound held (seed 7 of
``benchmarks/float_range_sweep.py``: rows spanning ``2^925``, a leaf of 0.73 raised by the audit to the
cap 1.0, the tree not certified).  Where such a leaf has every row decided it is a chamber, and a chamber
leaf's claim is decided as a pattern's (``settle_claims``: exact where floats cannot accept), so
:func:`rechamber` solves it (:meth:`relu_gating.search.bnb._chamber.Chambers._proven`) and writes a
``"c"`` leaf in its place; the caller walks the tree with the checker again.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from relu_gating.certificate import multipliers_json

__all__ = ["leaf_signs", "rechamber", "RECHAMBER_MAX"]

#: At most this many raised leaves are solved again per tree (each is one chamber's solve and claim).
RECHAMBER_MAX = 64


def leaf_signs(nodes: list, zero_rows: np.ndarray) -> dict[int, np.ndarray]:
    """The decided signs at each leaf of the preorder tree ``nodes`` (``+`` subtree first), by index:
    ``-1`` on zero rows, each split's and implied row's sign on the path, 0 elsewhere."""
    out: dict[int, np.ndarray] = {}
    cur = np.where(zero_rows, -1, 0).astype(np.int8)
    pending: list[np.ndarray] = []
    for k, nd in enumerate(nodes):
        if nd[0] == "s":
            other = cur.copy()
            other[int(nd[1])] = -1
            pending.append(other)
            cur = cur.copy()
            cur[int(nd[1])] = 1
        elif nd[0] == "i":
            cur = cur.copy()
            cur[int(nd[1])] = int(nd[2])
        else:
            out[k] = cur
            if not pending:
                break
            cur = pending.pop()
    return out


def rechamber(search: Any, nodes: list, raised: list[int]) -> int:
    """Replace, in place, the raised ``"b"`` leaves at ``raised`` (indices into ``nodes``) that are
    chambers by ``"c"`` leaves claiming what the chamber's solve proves, where that is below the raised
    claim, while the search's budget lasts (none is started past ``search.chamber_until``: the budget is
    the whole call's).  Returns how many were replaced."""
    from relu_gating.search._exact.tasks import solve_one

    P, obj = search.P, search.obj
    signs = leaf_signs(nodes, P.zero_rows)
    done = 0
    until = getattr(search, "chamber_until", None)
    for k in raised[:RECHAMBER_MAX]:
        if until is not None and time.perf_counter() >= until:
            break
        s = signs.get(k)
        if s is None or nodes[k][0] != "b" or np.any((s == 0) & ~P.zero_rows):
            continue
        mask = (s > 0) & ~P.zero_rows
        if not mask.any():
            continue
        out = solve_one(obj, mask, search.method, None, max_seconds=search.chamber_seconds())
        claim, proof = search._proven(mask, out, np.inf)
        if not (np.isfinite(claim) and claim < nodes[k][1]):
            continue
        rows, N = proof if proof is not None else (np.zeros(0, dtype=np.int64), np.zeros((0, 0)))
        nodes[k] = ["c", float(claim), [int(j) for j in rows], multipliers_json(N)]
        done += 1
    return done
