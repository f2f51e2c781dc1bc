"""Best-first branch and bound over the hyperplane arrangement of ``Phi`` (private).

A node is the closed cone of weights on which some rows have a fixed sign; its bound is
:func:`relu_gating.search.proofs._node.node_bound` (valid for every neuron of the cone,
recomputable by the verifier from the signs alone).  The open node of largest bound is
expanded: rows whose sign is forced are fixed (an LP finds no interior on one side, and the
Farkas rows are checked exactly), then the node is split on the undecided row where the
bound's maximizer ``M z`` is largest.  A node with every row decided is a chamber, solved
exactly by the per-pattern machinery of the enumeration path.  The search stops when the
incumbent is at least ``alpha`` times the largest open bound (``- tol``), at the time budget,
or on Ctrl-C; every open node then becomes a leaf with its bound, so the tree is always a
valid certificate of the alpha reached.

The search is one class composed of one mixin per idea: :class:`._node_bounds.NodeBounds` (a node's
bound and the lifted bounds), :class:`._incumbent.Incumbent` (the best neuron so far),
:class:`._growth.TreeGrowth` (forced rows, branching, expansion), :class:`._budget.Budget` (the reserve
kept before a deadline), :class:`._chamber.Chambers` (chamber leaves) and :class:`._subtree.SubtreeCost`
(what a split costs below a node, which decides where the lifted bound is tried); this module holds the
state and the loop (:meth:`Search.run`).
"""

from __future__ import annotations

import gc
import heapq
import time
from typing import Any

import numpy as np

from relu_gating._inputs.scaling import unit_rows
from relu_gating.search.proofs import node_problem
from relu_gating.search.bnb._budget import Budget
from relu_gating.search.bnb._chamber import Chambers
from relu_gating.search.bnb._growth import TreeGrowth
from relu_gating.search.bnb._incumbent import Incumbent
from relu_gating.search.bnb._lp import ConeLP
from relu_gating.search.bnb._node_bounds import LIFTED_BAND, LIFTED_MAX_UNDECIDED, NodeBounds
from relu_gating.search.bnb._replay import Replay
from relu_gating.search.bnb._subtree import SubtreeCost
from relu_gating.search.bnb._thin import ExactChambers
from relu_gating.search.bnb._tree_build import Node
from relu_gating.search.objectives import Objective

__all__ = ["Search", "FREEZE_EVERY", "CHAMBER_LEAVES_ETA", "CHAMBER_LEAVES_MAX", "chamber_leaves_only"]

#: With features on which the checker's float proofs of node bounds widen past usefulness (its proven
#: ``eta_H`` above this: features of condition about 1e7 and more), the tree ends in chamber leaves only
#: (no ``b`` or ``d`` leaf closes a node by its float bound), whose claims are decided exactly...
CHAMBER_LEAVES_ETA = 1e-9
#: ... when the query has at most this many chambers (Cover's count).
CHAMBER_LEAVES_MAX = 4096

#: Expansions between two ``gc.freeze()`` calls: the cyclic collector then skips the tree built so far
#: (its nodes form no cycles and are freed by reference counting); 36% more nodes measured at n = 819, d = 3.
FREEZE_EVERY = 1024


def chamber_leaves_only(obj: Objective) -> bool:
    """Whether the tree ends in chamber leaves only (:data:`CHAMBER_LEAVES_ETA`, :data:`CHAMBER_LEAVES_MAX`)."""
    from math import comb

    from relu_gating.search.proofs import checker_eta

    if obj.Q_H is None:
        return False
    q = int(np.count_nonzero(np.any(obj.Phi != 0, axis=1)))
    if 2 * sum(comb(max(q - 1, 0), k) for k in range(obj.rank)) > CHAMBER_LEAVES_MAX:
        return False
    features = {"bias": "bias"}.get(obj.features, obj.H)
    return not checker_eta(obj.Phi, obj.U_K, features) <= CHAMBER_LEAVES_ETA


class Search(NodeBounds, TreeGrowth, Incumbent, Budget, Chambers, SubtreeCost, Replay):
    """One branch-and-bound run; :meth:`run` returns when settled, out of time or interrupted."""

    def __init__(self, obj: Objective, alpha: float, tol: float, method: str, seed: int = 0,
                 lifted: bool = True) -> None:
        self.obj, self.alpha, self.tol, self.method = obj, alpha, tol, method
        self.writes: str | None = None  # the certificate the caller writes after the run (its time is reserved)
        self.audit_workers = 1  # the audit's workers (set by the parallel driver: the reserve divides by them)
        self.chamber_until: float | None = None  # a chamber's solve ends by then (the deadline less the reserve)
        self.slowdown_fixed: float | None = None  # wall over CPU seconds fixed by the parallel driver (_budget.slowdown)
        self.P = node_problem(obj.Phi, obj.Psi, obj.M, obj.Q_H, obj.feature_matrix, obj.cap + 1e-12)
        self.Gn = unit_rows(obj.Psi)  # also rows below 2^-537 (their squares underflow)
        self.lp = ConeLP()
        self.cache: dict = {}
        self.best_value, self.best_theta = -np.inf, None
        self.heap: list = []
        self.counter = 0
        self.expansions = 0
        self.stats = {"nodes": 0, "lp": 0, "chambers": 0, "implied": 0, "unproven_empty": 0,
                      "t_bound": 0.0, "t_lp": 0.0, "t_chamber": 0.0, "n_bound": 0,
                      "nnls": 0, "nnls_rows": 0, "nnls_hits": 0, "t_nnls": 0.0, "exact_farkas": 0,
                      "attained": 0, "t_score": 0.0, "lifted": 0, "t_lifted": 0.0, "lifted_settled": 0,
                      "lifted_lowered": 0, "forced_batch": 0, "t_forced": 0.0, "exhaustive": 0, "thin_exact": 0,
                      "blind": 0, "pointless": 0, "lifted_plain": 0, "lifted_plain_settled": 0, "lifted_plain_lowered": 0,
                      "t_lifted_plain": 0.0, "t_lifted_check": 0.0, "zero_tried": 0, "zero_chambers": 0, "t_zero": 0.0,
                      "lifted_offered": 0, "lifted_checked": 0, "lifted_unchecked": 0, "lifted_check_failed": 0}
        self.lifted = bool(lifted)
        self.t_start = time.perf_counter()
        self.stats["t_lifted_large"] = self.stats["t_lifted_huge"] = 0.0
        self.lifted_skipped: dict[int, int] = {}  # band -> nodes skipped by the cheap test (lifted_pays)
        self.plain_bands: dict[int, list[int]] = {}  # band -> [tried, won, skipped] of try_plain (plain_pays)
        for lo in range(0, LIFTED_MAX_UNDECIDED + 1, LIFTED_BAND):  # the lifted bound's cost and gain by band
            self.stats.update({f"lifted_tried_{lo}": 0, f"lifted_settled_{lo}": 0, f"t_lifted_{lo}": 0.0})
        self.thin = ExactChambers(self)
        self.notes: list[str] = []
        self.rng = np.random.default_rng(seed)
        self.chamber_leaves = chamber_leaves_only(obj)
        if self.chamber_leaves:
            self.lifted = False
            self.notes.append("features nearly dependent (the checker's float node bounds would not hold): the "
                              "tree ends in chamber leaves, decided exactly")
        signs = np.where(self.P.zero_rows, -1, 0).astype(np.int8)
        v0 = self.rng.standard_normal((1, obj.rank))
        self.root = self._node(signs, v0, 0)
        self.offer(v0[-1] @ obj.to_theta.T)

    # ------------------------------------------------------------------ the heap
    def push(self, node: Node) -> None:
        if self.settled(node.claim):
            node.settle("b")
            return
        self.adopt(node)
        self.counter += 1
        heapq.heappush(self.heap, (-node.claim, -node.depth, self.counter, node))

    def global_bound(self) -> float:
        return -self.heap[0][0] if self.heap else -np.inf

    # ------------------------------------------------------------------ loop
    def run(self, deadline: float | None, bar: Any = None) -> str:
        """Expand until settled; returns ``"settled"``, ``"time"`` or ``"interrupted"``."""
        try:
            from relu_gating._runtime.interrupt import check_stop
        except ImportError:  # pragma: no cover - older trees
            def check_stop() -> None:
                return None
        self.push(self.root)
        own = gc.get_freeze_count() == 0  # a caller's own frozen objects are left as they are
        try:
            while self.heap:
                if own and self.expansions % FREEZE_EVERY == 0:  # the tree is acyclic: keep the collector off it
                    gc.freeze()
                check_stop()
                if deadline is not None:
                    self.chamber_until = deadline - (keep := self.reserve())
                    if time.perf_counter() >= self.chamber_until:
                        self.stats["t_reserve"] = keep  # kept for the ending (benchmarks/budget.py: against what it took)
                        return "time"
                u = self.global_bound()
                if self.settled(u):
                    return "settled"
                node = heapq.heappop(self.heap)[-1]
                self.expand_timed(node)
                if bar is not None:
                    bar.update(1, note=self.progress_note(u))
        except KeyboardInterrupt:
            return "interrupted"
        finally:
            if own:
                gc.unfreeze()
        return "settled"
