"""What a search has learnt about where its lifted bounds pay, carried to and from a worker's tasks (private).

The cheap tests of :class:`relu_gating.search.bnb._node_bounds.NodeBounds` decide from tallies kept by band
of undecided counts (tries, nodes settled, seconds, nodes skipped) and from the share of the search's time
the tries took.  A worker's task (:func:`relu_gating.search.bnb._parallel.subtree_task`) is a fresh search of
about a second: started from empty tallies, it learnt every band again in every task (the prior of one in
two tries each band's first nodes, and a share of a fresh clock is soon exceeded, then soon free again).  On
breast cancer PCA 5 (569 rows, 600 s, 2 workers) the lifted bound without multipliers was tried 10,270
times in 886 tasks, 76 s of 828 s of the tasks' CPU, and settled or lowered no node.

So the sender's tallies go with each task (:func:`tallies`), the task starts from them (:func:`seed`), and
what it adds comes back (:func:`learnt`) to be summed into the sender's (:func:`merge`): the tests then
decide as one serial search of all the tasks would.  The search's clock for the shares is the seconds of
search summed over the tasks (and the serial phase), as the tries' seconds are.  Nothing here touches a
bound, a claim or the tree: it only decides which nodes the lifted bounds are tried on.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["tallies", "seed", "learnt", "merge", "carried_stats"]

#: Stats keys the cheap tests read (besides the per-band ``lifted_tried_``, ``lifted_settled_``, ``t_lifted_``), and
#: the counts that decide whether the lifted evidence is tested (``_node_bounds.CHECK_FIRST``).
_SHARES = ("t_lifted_large", "t_lifted_huge", "t_lifted_plain", "lifted_offered", "lifted_check_failed")
_BANDS = ("lifted_tried_", "lifted_settled_", "t_lifted_")


def carried_stats(stats: dict) -> dict:
    """The entries of ``stats`` the cheap tests read: per band and the shares' seconds."""
    return {k: v for k, v in stats.items() if k in _SHARES or (k.startswith(_BANDS) and k[k.rfind("_") + 1:].isdigit())}


def tallies(search: Any, elapsed: float) -> dict:
    """A snapshot of ``search``'s tallies to send with a task; ``elapsed``: the seconds of search so far
    (the serial phase and every task's, summed: the clock the shares' seconds are on)."""
    return {"stats": carried_stats(search.stats), "plain": {b: list(v) for b, v in search.plain_bands.items()},
            "skipped": dict(search.lifted_skipped), "elapsed": float(elapsed)}


def seed(search: Any, sent: dict | None, t0: float | None = None) -> None:
    """Start the fresh ``search`` (a task's, before it counts anything) from the tallies ``sent``; its
    clock for the shares goes back by their ``elapsed`` seconds from ``t0`` (its start)."""
    if not sent:
        return
    search.stats.update(sent["stats"])
    search.plain_bands = {b: list(v) for b, v in sent["plain"].items()}
    search.lifted_skipped = dict(sent["skipped"])
    search.t_start = (time.perf_counter() if t0 is None else t0) - sent["elapsed"]


def learnt(search: Any, sent: dict | None) -> dict:
    """What the task's ``search`` added to the band tallies it was ``sent`` (plain bands, nodes skipped);
    its stats come back as differences anyway."""
    sent = sent or {"plain": {}, "skipped": {}}
    plain = {}
    for b, v in search.plain_bands.items():
        old = sent["plain"].get(b, [0, 0, 0])
        if v != old:
            plain[b] = [x - y for x, y in zip(v, old)]
    skipped = {b: c - sent["skipped"].get(b, 0) for b, c in search.lifted_skipped.items()
               if c != sent["skipped"].get(b, 0)}
    return {"plain": plain, "skipped": skipped}


def merge(search: Any, got: dict | None) -> None:
    """Add a task's :func:`learnt` tallies to the sender's ``search``."""
    if not got:
        return
    for b, v in got["plain"].items():
        mine = search.plain_bands.setdefault(b, [0, 0, 0])
        for j, x in enumerate(v):
            mine[j] += x
    for b, c in got["skipped"].items():
        search.lifted_skipped[b] = search.lifted_skipped.get(b, 0) + c
