"""What a split costs, learnt from the splits the search makes: the lifted bound's cost test (private).

A mixin of :class:`relu_gating.search.bnb._search.Search`.  The lifted bound settling a node spares the
subtree a split would grow below it; whether a try pays depends on that subtree's cost, which is known
only after the split (issue 39: per band, the lifted bound's seconds per node settled were 30-70 ms on a
Gaussian cloud, where a split spends about 21 ms below a node, and 22-91 ms on iris, where it spends far
more).  So the search measures it: some nodes of each band of ``LIFTED_BAND`` undecided counts that are
split (the lifted bound skipped or tried without settling them) carry a :class:`Tracker`, which sums the
seconds of every expansion in their subtree (the split itself included) until no node of it is open.
:meth:`SubtreeCost.split_seconds` is a band's mean over its trackers, those still open counted with
their seconds so far (a lower bound).  Nothing here touches a bound or the tree's form: it only decides
where the lifted bound is tried (:meth:`relu_gating.search.bnb._node_bounds.NodeBounds.lifted_pays`).

The same trackers measure the lifted bound's delay (``_node_bounds.LIFTED_DELAY_NODES``): while it holds,
a few probes (:meth:`SubtreeCost.probe_due`) compute the lifted bound on a node without using it, and a
node it would have settled carries a tracker of the subtree its split grows instead, which is exactly what
the lifted bound would have spared; the delay ends, for nodes of the sizes probed, when those subtrees
cost more than the probes (:meth:`SubtreeCost.probe_pays`).  Measured serially on the CPU clock: on iris with its duplicate row
4 probes (0.05 s) ended it at 1,216 nodes; on Gaussian 80 x 4 the subtrees came to a tenth of the probes'
seconds, and the query settled within the delay.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from relu_gating.search.bnb._tree_build import Node

__all__ = ["SubtreeCost", "Tracker", "TRACK_PER_BAND", "TRACK_DEPTH", "TRACK_MIN", "EXPLORE_PER_BAND", "PROBE_EVERY",
           "PROBE_MAX", "PROBE_MIN", "PROBE_FACTOR"]

#: Trackers started per band (the first split nodes of the band, then every ``TRACK_EVERY``-th).
TRACK_PER_BAND = 24
TRACK_EVERY = 8
#: A node carries at most this many trackers (its nearest tracked ancestors': nested subtrees).
TRACK_DEPTH = 4
#: A band's split cost is used once it has this many trackers.
TRACK_MIN = 3
#: Nodes of a band whose lifted bound settles them (so that no split is measured) are split anyway,
#: to measure the band, at most this many times.
EXPLORE_PER_BAND = 3
#: The delay's probes (:meth:`SubtreeCost.probe_due`): while the lifted bound is held back
#: (``_node_bounds.LIFTED_DELAY_NODES``), every ``PROBE_EVERY``-th node it could be tried on is probed, at
#: most ``PROBE_MAX`` of them; once ``PROBE_MIN`` nodes it would have settled are split and their subtrees
#: cost, on average (those still open: their seconds so far), at least ``PROBE_FACTOR`` times the lifted
#: bound's seconds per node it would settle, the delay ends.
PROBE_EVERY = 8
PROBE_MAX = 8
PROBE_MIN = 3
PROBE_FACTOR = 1.0


class Tracker:
    """The open nodes and the seconds spent so far in the subtree of one split node."""

    __slots__ = ("open", "seconds", "band")

    def __init__(self, band: int) -> None:
        self.open, self.seconds, self.band = 0, 0.0, band


class SubtreeCost:
    """Trackers of split subtrees (:meth:`expand_timed`, :meth:`track`) and a band's cost (:meth:`split_seconds`)."""

    stats: dict
    expand: Callable[[Node], None]
    cur_trk: tuple = ()
    lifted_after: int
    lifted_small: bool
    probe_max: int = PROBE_MAX  # the delay's probes this search may make (a worker's task: what the sender leaves)

    def _bands(self) -> dict:
        if not hasattr(self, "_split_bands"):
            self._split_bands: dict[int, list] = {}  # band -> [trackers started, nodes split, [trackers]]
        return self._split_bands

    def expand_timed(self, node: Node) -> None:
        """:meth:`expand` with the seconds charged to the node's trackers (and any it starts)."""
        trk = node.trk
        for t in trk:
            t.open -= 1
        self.cur_trk = trk
        t0 = time.perf_counter()
        try:
            self.expand(node)
        finally:
            dt = time.perf_counter() - t0
            for t in self.cur_trk:
                t.seconds += dt
            self.cur_trk = ()

    def adopt(self, node: Node) -> None:
        """A node pushed on the heap joins the subtrees being measured around the expansion that made it."""
        node.trk = self.cur_trk
        for t in self.cur_trk:
            t.open += 1

    def track(self, k: int, band: int) -> None:
        """The node being expanded (``k`` undecided rows, band ``band``) is split: measure its subtree now and then."""
        b = self._bands().setdefault(band, [0, 0, []])
        b[1] += 1
        if len(self.cur_trk) >= TRACK_DEPTH or b[0] >= TRACK_PER_BAND or (b[0] >= TRACK_MIN and b[1] % TRACK_EVERY):
            return
        t = Tracker(band)
        b[0] += 1
        b[2].append(t)
        self.cur_trk = self.cur_trk + (t,)

    def explore(self, band: int) -> bool:
        """Split this node (band ``band``) without the lifted bound, to measure the band's splits: while the
        band has fewer than ``TRACK_MIN`` trackers, at most ``EXPLORE_PER_BAND`` times."""
        b = self._bands().setdefault(band, [0, 0, []])
        if b[0] >= TRACK_MIN or self.stats.get(f"explored_{band}", 0) >= EXPLORE_PER_BAND:
            return False
        self.stats[f"explored_{band}"] = self.stats.get(f"explored_{band}", 0) + 1
        return True

    def split_seconds(self, band: int) -> float | None:
        """Mean seconds of a split subtree in ``band`` (open ones: their seconds so far), or None while
        it has fewer than ``TRACK_MIN`` trackers."""
        b = self._bands().get(band)
        if b is None or b[0] < TRACK_MIN:
            return None
        return sum(t.seconds for t in b[2]) / len(b[2])

    def split_summary(self) -> dict[str, Any]:
        """Per band: trackers, of them finished, mean seconds (for the stats)."""
        return {f"split_{lo}": [len(b[2]), sum(t.open == 0 for t in b[2]), round(sum(t.seconds for t in b[2]) / max(len(b[2]), 1), 5)]
                for lo, b in sorted(self._bands().items())}

    def probe_due(self) -> bool:
        """Whether this node, during the delay, is probed: every ``PROBE_EVERY``-th node of at most
        ``_node_bounds.LIFTED_LARGE`` undecided rows (where the lifted bound does most of its work, in
        10-50 ms a try), at most ``PROBE_MAX``; True also when the probes so far end the delay
        (:meth:`probe_pays`)."""
        if self.probe_pays():
            self.end_delay()
            return True
        seen = self.stats["probe_seen"] = self.stats.get("probe_seen", 0) + 1
        return seen % PROBE_EVERY == 1 and self.stats.get("probe", 0) < self.probe_max

    def end_delay(self) -> None:
        """The probes found that the lifted bound pays: the delay ends for nodes of the sizes probed."""
        self.lifted_small = True
        self.stats["lifted_delay_ended"] = self.stats["nodes"]

    def probe_done(self, seconds: float, would: bool) -> None:
        """A probe took ``seconds``; when it ``would`` have settled the node, the split made instead is
        measured (a tracker of its subtree, the probe's own seconds not counted)."""
        self.stats["probe"] = self.stats.get("probe", 0) + 1
        self.stats["t_probe"] = self.stats.get("t_probe", 0.0) + seconds
        if would:
            t = Tracker(-1)
            t.seconds = -seconds
            self._probe_trackers().append(t)
            self.cur_trk = self.cur_trk + (t,)

    def _probe_trackers(self) -> list:
        if not hasattr(self, "_probes"):
            self._probes: list[Tracker] = []
        return self._probes

    def probe_spared(self) -> tuple[int, float]:
        """The probed subtrees and their seconds (open ones: so far), this search's own and, in the stats,
        those its workers' tasks reported (``probe_would``, ``probe_spared``: :func:`_parallel.subtree_task`)."""
        trk = self._probe_trackers()
        return (len(trk) + int(self.stats.get("probe_would", 0)),
                sum(max(t.seconds, 0.0) for t in trk) + float(self.stats.get("probe_spared", 0.0)))

    def probe_pays(self) -> bool:
        """At least ``PROBE_MIN`` probed subtrees, costing on average at least ``PROBE_FACTOR`` times the
        probes' seconds per node they would settle."""
        count, spared = self.probe_spared()
        return count >= PROBE_MIN and spared >= PROBE_FACTOR * self.stats.get("t_probe", 0.0)
