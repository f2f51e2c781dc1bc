"""The branch and bound's time budget: what to keep before a deadline, and the progress note (private).

A mixin of :class:`relu_gating.search.bnb._search.Search`: it uses ``stats``, ``heap`` and
``best_value``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

__all__ = ["Budget", "FINISH_PER_NODE", "AUDIT_SCALE", "AUDIT_PER_BOUND_SECOND", "AUDIT_PER_IMPLIED", "AUDIT_PER_LIFTED_LEAF",
           "AUDIT_PER_CHECK_SECOND", "AUDIT_PARALLEL_EFFICIENCY", "SLOWDOWN_MIN_WALL", "SLOWDOWN_MAX", "slowdown",
           "WRITE_PER_NODE", "RESERVE_SAFETY", "RESERVE_SECONDS", "check_seconds"]

#: Seconds per node kept before a time budget ends, for the tree's JSON form (``t_finish`` in the tree's
#: stats).  Measured 1 us a node on Gaussian data; 9.5 us a node (2.6 s, 275,000 nodes with the implied
#: rows) on iris greedy step 4 in 150 s, the other core busy, where 1.5 us let the query overrun its budget.
#: CPU seconds (scaled by :func:`slowdown` in :meth:`Budget.reserve`): 4.1 us a node-entry quiet (breast cancer
#: PCA 5, 600 s: 13.2 s for 3.23M entries, where 1e-5 kept 33 s), 5.7 us a CPU-second under load (breast cancer
#: PCA 5 on 200 rows, 9.7 s for 504k entries at slowdown 3.4): 6e-6 (issue 39).
FINISH_PER_NODE = 6e-6
#: Seconds kept before a time budget ends for the checker's audit of the tree, per second the search
#: spent on node bounds: the audit bounds every node again, from ``Phi``'s columns.  Measured on the six
#: 600-s real-data runs (docs/real-data.md): audit (= verify) time / ``t_bound`` 0.63-1.43; 0.36-0.85 in
#: 120-s runs (``benchmarks/real.py --cases gauss-60x8,wine-pca5 --budget 120``).  With the implied rows and the
#: lifted checks counted apart (below), the audit's own node bounds (its leaves only, a ``"d"`` leaf's when its
#: lifted evidence fails) took 0.23x ``t_bound``: 2.6 s of CPU against 11.4 s (breast cancer PCA 5 on 200 rows),
#: 0.41 s against 1.8 s (clustered 400 x 3), where 1.0 kept 1.7-3.3x the ending's time: 0.6 (issue 39).
#: The checker's walk has since got cheaper (ea0162f: node bounds with kept bases, batched Farkas checks): on the
#: 15 runs recorded since (the 120-s table, breast cancer PCA 5 at 120, 600 and 1,500 s, clustered 1000 x 3), the
#: four audit terms below estimated 1.34-2.5x the audit's seconds (median 2.1) and the reserve kept 1.64-3.2x the
#: ending (median 2.35), up to 50 s of a 600-s call left unused.  All four are scaled by 0.75 (AUDIT_SCALE): the
#: reserve then keeps 1.33-2.4x those endings (median 1.89), and 1.03x the slowest measured (an audit walked forked,
#: 22 us an implied row against 14-16, docs/branch-and-bound.md); ``RESERVE_SAFETY`` and :func:`slowdown` unchanged.
AUDIT_SCALE = 0.75
AUDIT_PER_BOUND_SECOND = 0.6 * AUDIT_SCALE
#: Seconds kept for the audit per implied row (its Farkas check) and per lifted leaf (its PSD check). A
#: least-squares fit of the verify times of those six runs and gauss-60x8 to ``t_bound``, implied rows and
#: lifted leaves gave 0.89, 21 us and 0.44 ms (``benchmarks/results/real_20261204_600s_final.json``); without
#: these terms breast cancer PCA 5 (2.0M implied rows) overran its 600 s by 67 s.  Both are CPU seconds, scaled
#: by :func:`slowdown` in :meth:`Budget.reserve`: the audit, now with one BLAS thread, took 13-16 us of CPU per
#: implied row on a clustered 400 x 3 tree of 86,816 nodes (83,879 implied; every node's walk included), so
#: 1.5e-5 (3e-5 before the slowdown and the one thread; with both, a 60-s run kept 16.0 s for a 5.1-s audit).
#: Since the checker's Farkas check and walk got cheaper (issue 39: 5.7-6.7 us of CPU per implied row, walk
#: included, on trees of 161k and 453k implied rows, under load): 1e-5.
AUDIT_PER_IMPLIED = 1e-5 * AUDIT_SCALE
AUDIT_PER_LIFTED_LEAF = 5e-4 * AUDIT_SCALE
#: ... or, if more, this many seconds per second the search spent in the checker's test of the lifted
#: evidence it kept (``t_lifted_check``, scaled up by the evidence kept untested: :func:`check_seconds`; the
#: audit repeats that test, its node bounds are counted above): a
#: leaf of 130 undecided rows costs 5-10 ms, not 0.5 ms (iris greedy step 4, 150 s: a query ended at 250 s
#: with the per-leaf reserve alone; 2.0 here kept 22 s too many on clustered 1000 x 3).
AUDIT_PER_CHECK_SECOND = 1.0 * AUDIT_SCALE
#: Seconds per node (and implied row) kept when the caller writes the certificate after the run
#: (``Search.writes``): JSON dumped and written about 24 us a node-entry at n = 300, d = 3 under load
#: (0.07 s for 2,801, the machine at load 13), the binary form (the same JSON, deflated) 40 us; kept:
#: 15 and 25 us, times ``RESERVE_SAFETY``.
WRITE_PER_NODE = {None: 0.0, "json": 1.5e-5, "npz": 2.5e-5}
#: The audit's and the writing's estimates are multiplied by this, and ``RESERVE_SECONDS`` added (the
#: result built, the incumbent polished, files closed).  A loaded machine slows the ending more than the
#: search it was estimated from (600-s runs ended at 638-660 s beside other processes): :func:`slowdown`
#: now scales the per-item terms by the load it measures, so this factor covers only the spread of the
#: fitted constants (the fit gave 0.89 where 1.0 is kept); 1.5 on top of the slowdown kept 3-4x the
#: audit's time at load 13-15 (``benchmarks/results/bnb_cores_20261205.txt``).
RESERVE_SAFETY = 1.2
RESERVE_SECONDS = 0.5
#: The audit's speed-up on ``W`` workers over ``W`` (its subtrees in parallel: :mod:`relu_gating.search.bnb._audit`).
AUDIT_PARALLEL_EFFICIENCY = 0.7
#: :func:`slowdown` is measured after this many seconds of wall time, and is at most ``SLOWDOWN_MAX``.
SLOWDOWN_MIN_WALL = 1.0
SLOWDOWN_MAX = 20.0


def slowdown(search: Any) -> float:
    """How many wall seconds a CPU second of this process takes now: wall over CPU time since the first
    call on ``search`` (1 before ``SLOWDOWN_MIN_WALL`` seconds; between 1 and ``SLOWDOWN_MAX``), or
    ``search.slowdown_fixed`` when set (by the parallel driver, whose main process mostly waits: its
    serial phase's value, then the workers' wall over CPU seconds of their tasks).  A loaded machine (12
    runnable processes on 2 cores) runs the audit's per-node Python work several times slower than the
    constants above were measured at; the search's own measured seconds (``t_bound``) are slowed alike,
    these constants are not."""
    fixed = getattr(search, "slowdown_fixed", None)
    if fixed is not None:
        return float(fixed)
    now, cpu = time.perf_counter(), time.process_time()
    if getattr(search, "_clocks", None) is None:
        search._clocks = (now, cpu)
    wall, used = now - search._clocks[0], cpu - search._clocks[1]
    if wall < SLOWDOWN_MIN_WALL or used <= 0:
        return 1.0
    return min(SLOWDOWN_MAX, max(1.0, wall / used))


def check_seconds(stats: dict) -> float:
    """The seconds the search's test of lifted evidence would have taken on all the evidence it kept: its
    seconds on the evidence it tested (``t_lifted_check``), scaled up by the evidence it kept untested
    (``_node_bounds.CHECK_EVERY``: the audit tests every leaf's)."""
    tested = stats.get("lifted_checked", 0)
    if tested <= 0:
        return float(stats["t_lifted_check"])
    return float(stats["t_lifted_check"]) * (tested + stats.get("lifted_unchecked", 0)) / tested


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
        ``RESERVE_SECONDS``: the deadline is the end of the whole call.  The counts are the work of every
        worker; the audit runs on ``audit_workers`` of them (set by the parallel driver; 1 serial), at
        ``AUDIT_PARALLEL_EFFICIENCY``.  The per-item terms (CPU seconds) are scaled by :func:`slowdown`;
        the measured ones (``t_bound``, ``t_lifted_check``) already are."""
        st = self.stats
        slow = slowdown(self)
        entries = st["nodes"] + st["implied"]
        audit = (AUDIT_PER_BOUND_SECOND * st["t_bound"] + slow * AUDIT_PER_IMPLIED * st["implied"]
                 + max(slow * AUDIT_PER_LIFTED_LEAF * st["lifted_settled"], AUDIT_PER_CHECK_SECOND * check_seconds(st)))
        workers = getattr(self, "audit_workers", 1)
        if workers > 1:
            audit /= workers * AUDIT_PARALLEL_EFFICIENCY
        est = slow * (FINISH_PER_NODE + WRITE_PER_NODE.get(getattr(self, "writes", None), 0.0)) * entries + audit
        return RESERVE_SAFETY * est + RESERVE_SECONDS

    def progress_note(self, u: float) -> str:
        """The progress bar's note in the search's units: chambers visited, open nodes, gap, alpha reached."""
        best = self.best_value if np.isfinite(self.best_value) else 0.0
        bound = max(u, best)
        alpha = best / bound if bound > 0 else 1.0
        return (f"chambers visited {self.stats['chambers']:,}  open {len(self.heap):,}  "
                f"gap {bound - best:.3g}  alpha reached {alpha:.6f}")
