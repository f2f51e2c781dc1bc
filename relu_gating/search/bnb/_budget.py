"""The branch and bound's time budget: what to keep before a deadline, and the progress note (private).

A mixin of :class:`relu_gating.search.bnb._search.Search`: it uses ``stats``, ``heap`` and
``best_value``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Budget", "FINISH_PER_NODE", "AUDIT_PER_BOUND_SECOND", "AUDIT_PER_IMPLIED", "AUDIT_PER_LIFTED_LEAF",
           "AUDIT_PER_CHECK_SECOND", "WRITE_PER_NODE", "RESERVE_SAFETY", "RESERVE_SECONDS"]

#: Seconds per node kept before a time budget ends, for the tree's JSON form (``t_finish`` in the tree's
#: stats).  Measured 1 us a node on Gaussian data; 9.5 us a node (2.6 s, 275,000 nodes with the implied
#: rows) on iris greedy step 4 in 150 s, the other core busy, where 1.5 us let the query overrun its budget.
FINISH_PER_NODE = 1e-5
#: Seconds kept before a time budget ends for the checker's audit of the tree, per second the search
#: spent on node bounds: the audit bounds every node again, from ``Phi``'s columns.  Measured on the six
#: 600-s real-data runs (docs/real-data.md): audit (= verify) time / ``t_bound`` 0.63-1.43; 0.36-0.85 in
#: 120-s runs (``benchmarks/real.py --cases gauss-60x8,wine-pca5 --budget 120``).
AUDIT_PER_BOUND_SECOND = 1.0
#: Seconds kept for the audit per implied row (its Farkas check) and per lifted leaf (its PSD check). A
#: least-squares fit of the verify times of those six runs and gauss-60x8 to ``t_bound``, implied rows and
#: lifted leaves gave 0.89, 21 us and 0.44 ms (``benchmarks/results/real_20261204_600s_final.json``); without
#: these terms breast cancer PCA 5 (2.0M implied rows) overran its 600 s by 67 s.
AUDIT_PER_IMPLIED = 3e-5
AUDIT_PER_LIFTED_LEAF = 5e-4
#: ... or, if more, this many seconds per second the search spent in the checker's test of the lifted
#: evidence it kept (``t_lifted_check``; the audit repeats that test, its node bounds are counted above): a
#: leaf of 130 undecided rows costs 5-10 ms, not 0.5 ms (iris greedy step 4, 150 s: a query ended at 250 s
#: with the per-leaf reserve alone; 2.0 here kept 22 s too many on clustered 1000 x 3).
AUDIT_PER_CHECK_SECOND = 1.0
#: Seconds per node (and implied row) kept when the caller writes the certificate after the run
#: (``Search.writes``): JSON dumped and written about 24 us a node-entry at n = 300, d = 3 under load
#: (0.07 s for 2,801, the machine at load 13), the binary form (the same JSON, deflated) 40 us; kept:
#: 15 and 25 us, times ``RESERVE_SAFETY``.
WRITE_PER_NODE = {None: 0.0, "json": 1.5e-5, "npz": 2.5e-5}
#: The audit's and the writing's estimates are multiplied by this (a loaded machine slows the ending
#: more than the search it was estimated from: 600-s runs ended at 638-660 s beside other processes),
#: and ``RESERVE_SECONDS`` added (the result built, the incumbent polished, files closed).
RESERVE_SAFETY = 1.5
RESERVE_SECONDS = 0.5


class Budget:
    """The reserve kept before a deadline (:meth:`reserve`) and the progress bar's note."""

    stats: dict  # the search's (annotations only: a mixin defines no attribute another one provides)
    writes: str | None  # the certificate the caller writes after the run ("json", "npz"; None)
    heap: list
    best_value: float

    def reserve(self) -> float:
        """Seconds to keep before a deadline for writing the tree out (``FINISH_PER_NODE`` a node, and
        ``WRITE_PER_NODE`` when the caller writes the certificate) and for the checker's audit of it
        (``AUDIT_PER_BOUND_SECOND`` per second of node bounds so far, ``AUDIT_PER_IMPLIED`` an implied
        row, ``AUDIT_PER_LIFTED_LEAF`` a lifted leaf or ``AUDIT_PER_CHECK_SECOND`` per second of the
        checker's test of lifted evidence, whichever is more), times ``RESERVE_SAFETY``, plus
        ``RESERVE_SECONDS``: the deadline is the end of the whole call."""
        st = self.stats
        entries = st["nodes"] + st["implied"]
        est = ((FINISH_PER_NODE + WRITE_PER_NODE.get(getattr(self, "writes", None), 0.0)) * entries
               + AUDIT_PER_BOUND_SECOND * st["t_bound"] + AUDIT_PER_IMPLIED * st["implied"]
               + max(AUDIT_PER_LIFTED_LEAF * st["lifted_settled"], AUDIT_PER_CHECK_SECOND * st["t_lifted_check"]))
        return RESERVE_SAFETY * est + RESERVE_SECONDS

    def progress_note(self, u: float) -> str:
        """The progress bar's note in the search's units: chambers visited, open nodes, gap, alpha reached."""
        best = self.best_value if np.isfinite(self.best_value) else 0.0
        bound = max(u, best)
        alpha = best / bound if bound > 0 else 1.0
        return (f"chambers visited {self.stats['chambers']:,}  open {len(self.heap):,}  "
                f"gap {bound - best:.3g}  alpha reached {alpha:.6f}")
