"""Where ADMM at the level pays: its own tally, by band of undecided rows (private).

ADMM (:func:`relu_gating.search.bnb._lifted_admm.admm_level`) settles many of the nodes the first-order
multipliers of :func:`relu_gating.search.bnb._strong.strong_bound` leave (iris greedy steps 5, 6, 8: 24 of
38, 25 of 40, 25 of 40 at 40-80 undecided rows), but at 71-87 ms a try against 10-19 ms.  Run on every such
node (``_strong.LEVEL_ADMM``), its seconds went into the first-order tries' tally, whose cost test
(:meth:`relu_gating.search.bnb._node_bounds.NodeBounds.lifted_pays`) then turned down cheap first-order
tries: a lower alpha at equal CPU in 5 of 5 pairs.

So ADMM keeps its own tally (:class:`AdmmGate`): per band of ``ADMM_BAND`` undecided counts, its tries,
the nodes it settled and its seconds.  The first-order tally is kept as without ADMM (the try's seconds less
ADMM's; a node ADMM settled counts there as not settled by the first-order steps).  ADMM runs on a node the
first-order steps left while its band's seconds per node settled are at most ``ADMM_COST_FACTOR`` times the
seconds a split of the band spends below a node (the same measure as the first-order cost test:
:meth:`relu_gating.search.bnb._subtree.SubtreeCost.split_seconds`), after ``ADMM_LEARN`` tries to learn
the band, every ``ADMM_RETRY``-th node of a band turned down tried anyway, and ADMM's seconds in all at most
``ADMM_SHARE`` of the search's.  Nothing here touches a bound or the evidence: it only decides which nodes
ADMM is tried on; its multipliers are proven and checked as every lifted leaf's.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["AdmmGate", "ENABLED", "ADMM_BAND", "ADMM_LEARN", "ADMM_COST_FACTOR", "ADMM_RETRY", "ADMM_SHARE"]

#: The search gates ADMM by this tally (True), or runs none (False, the default: not adopted, measured in
#: docs/branch-and-bound.md, "ADMM gated by its own tally").  ``_strong.LEVEL_ADMM`` True runs it on every
#: node the first-order steps leave, ungated (last round's measurement).
ENABLED = False
#: Bands of undecided counts (a multiple of ``_node_bounds.LIFTED_BAND``, whose split costs it averages).
ADMM_BAND = 16
#: Tries in a band before its cost test decides.
ADMM_LEARN = 4
#: ADMM runs while its seconds per node settled are at most this times a split's seconds in the band.
ADMM_COST_FACTOR = 1.0
#: In a band turned down, every this many-th node is tried anyway (the incumbent, hence the level, moves).
ADMM_RETRY = 10
#: ADMM's seconds in all at most this share of the search's seconds so far.
ADMM_SHARE = 0.25


class AdmmGate:
    """ADMM's tally by band (``bands[lo] = [tries, settled, seconds, turned down]``) and its test (:meth:`pays`).

    ``split_seconds(lo)``: a split's seconds below a node of the ``LIFTED_BAND``-wide band ``lo`` (None while
    unmeasured); ``elapsed()``: the search's seconds so far; ``sub``: the width of those bands."""

    def __init__(self, split_seconds: Callable[[int], float | None], elapsed: Callable[[], float], sub: int) -> None:
        self.split_seconds, self.elapsed, self.sub = split_seconds, elapsed, sub
        self.bands: dict[int, list] = {}
        self.spent = 0.0
        self.last: tuple[int, float] | None = None  # (band, seconds) of the try in progress, if ADMM ran

    def band(self, k: int) -> list:
        return self.bands.setdefault(k // ADMM_BAND * ADMM_BAND, [0, 0, 0.0, 0])

    def split_cost(self, k: int) -> float | None:
        """The mean measured split seconds over the ``sub``-wide bands of ``k``'s ADMM band, or None."""
        lo = k // ADMM_BAND * ADMM_BAND
        got = [s for s in (self.split_seconds(b) for b in range(lo, lo + ADMM_BAND, self.sub)) if s is not None]
        return sum(got) / len(got) if got else None

    def pays(self, k: int) -> bool:
        """Whether ADMM runs on a node of ``k`` undecided rows the first-order steps left."""
        b = self.band(k)
        if self.spent > ADMM_SHARE * max(self.elapsed(), 0.0):
            return False
        if b[0] < ADMM_LEARN:
            return True
        split = self.split_cost(k)
        if b[1] > 0 and (b[2] <= ADMM_COST_FACTOR * split * b[1] if split is not None else 2 * b[1] >= b[0]):
            return True  # a node settled costs less than a split's subtree (unmeasured: it settles half its tries)
        b[3] += 1
        return b[3] % ADMM_RETRY == 0

    def ran(self, k: int, seconds: float) -> None:
        """ADMM ran ``seconds`` on a node of ``k`` undecided rows (the search credits a settle by :meth:`take`)."""
        b = self.band(k)
        b[0] += 1
        b[2] += seconds
        self.spent += seconds
        self.last = (k // ADMM_BAND * ADMM_BAND, seconds)

    def take(self, settled: bool) -> float:
        """Close a lifted try: a node ``settled`` after ADMM ran on it was settled by ADMM (it runs last,
        after the first-order steps failed); the seconds ADMM spent on it (0 when it did not run)."""
        last, self.last = self.last, None
        if last is None:
            return 0.0
        if settled:
            self.bands[last[0]][1] += 1
        return last[1]

    def summary(self) -> dict:
        """Per band: tries, settled, seconds, turned down; and the seconds in all."""
        return {"spent": round(self.spent, 3), **{str(lo): [b[0], b[1], round(b[2], 3), b[3]] for lo, b in sorted(self.bands.items())}}
