"""Best-first branch and bound over the hyperplane arrangement of ``Phi`` (private).

A node is the closed cone of weights on which some rows have a fixed sign; its bound is
:func:`relu_gating.certificate._tree.node_bound` (valid for every neuron of the cone,
recomputable by the verifier from the signs alone).  The open node of largest bound is
expanded: rows whose sign is forced are fixed (an LP finds no interior on one side, and the
Farkas rows are checked exactly), then the node is split on the undecided row where the
bound's maximizer ``M z`` is largest.  A node with every row decided is a chamber, solved
exactly by the per-pattern machinery of the enumeration path.  The search stops when the
incumbent is at least ``alpha`` times the largest open bound (``- tol``), at the time budget,
or on Ctrl-C; every open node then becomes a leaf with its bound, so the tree is always a
valid certificate of the alpha reached.
"""

from __future__ import annotations

import gc
import heapq
import time
from typing import Any

import numpy as np

from relu_gating.certificate._tree import bound_parts, implied_exact, node_bound, node_problem
from relu_gating.search.bnb._blind import blind_row, expand_pointless, split
from relu_gating.search.bnb._chamber import Chambers
from relu_gating.search.bnb._forced import exhaustive_farkas, float_clear, forced_rows
from relu_gating.search.bnb._lp import WITNESS_MARGIN, ConeLP
from relu_gating.search.bnb._rows import sample_interior
from relu_gating.search.bnb._score import child_bounds
from relu_gating.search.bnb._thin import ExactChambers
from relu_gating.search.bnb._tree_build import Node
from relu_gating.search._exact.pilot import ascend
from relu_gating.search.objectives import Objective, neuron_values

__all__ = ["Search", "FARKAS_DUAL_RTOL"]

#: LP duals below this fraction of the largest are left out of a Farkas combination.
FARKAS_DUAL_RTOL = 1e-9
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
#: (0.07 s for 2,801, the machine at load 13), the binary form (the same JSON,
#: deflated) 40 us; kept: 15 and 25 us, times RESERVE_SAFETY.
WRITE_PER_NODE = {None: 0.0, "json": 1.5e-5, "npz": 2.5e-5}
#: The audit's and the writing's estimates are multiplied by this (a loaded machine slows the ending
#: more than the search it was estimated from: 600-s runs ended at 638-660 s beside other processes),
#: and ``RESERVE_SECONDS`` added (the result built, the incumbent polished, files closed).
RESERVE_SAFETY = 1.5
RESERVE_SECONDS = 0.5
#: Expansions between two ``gc.freeze()`` calls: the cyclic collector then skips the tree built so far
#: (its nodes form no cycles and are freed by reference counting); 36% more nodes measured at n = 819, d = 3.
FREEZE_EVERY = 1024
#: Candidate rows scored by their children's bounds at each split (strong branching, rank-one updates).
STRONG = 64
#: Local ascent from the best interior sample at every this many expansions.
ASCEND_EVERY = 8
#: Candidates scored when the children's bounds must be computed in full.
STRONG_FULL = 8
#: Try the lifted bound (:mod:`relu_gating.search.bnb._strong`) once on each popped node with at most
#: ``LIFTED_MAX_UNDECIDED`` undecided rows (and some undecided: a chamber is solved exactly instead), unless
#: the run is asked not to (``branch_and_bound(lifted=False)``).  Its first-order multipliers settle most
#: such nodes in 1-50 ms (``benchmarks/bnb_lifted_effect.py``; docs/branch-and-bound.md).
LIFTED_MAX_UNDECIDED = 128
#: Nodes with more undecided rows than this try the lifted bound only while the time spent on such nodes
#: is at most ``LIFTED_LARGE_SHARE`` of the search's time so far.  Measured (150-s runs, docs/real-data.md):
#: up to 128 rows without the share, clustered 1000 x 3 reached alpha 0.99568 against 0.99268 in 633 s at
#: 64, but wine PCA 5 spent 125 s on nodes of 80-128 rows (53-131 ms a try) and was not certified in 148 s,
#: against 103 s at 64.
LIFTED_LARGE = 64
LIFTED_LARGE_SHARE = 0.2
#: Above this :func:`basis_epsilon` of ``Phi`` the lifted bound is not tried: the checker, in its own basis of
#: ``col(Phi)``, may not prove its claims (fuzz seed 42, a basis 1e-6 from exact: leaves raised by the audit,
#: not certified).  Standardized real data: about 1e-11.
LIFTED_MAX_BASIS_EPS = 1e-9
#: The lifted bound without multipliers (:meth:`Search.try_plain`) is tried on nodes with at most
#: ``PLAIN_MAX_UNDECIDED`` undecided rows (one symmetric eigendecomposition of that size, and a little more),
#: while those tries took at most ``PLAIN_SHARE`` of the search's time, in bands of ``PLAIN_BAND`` undecided
#: counts where it settles or lowers by ``PLAIN_GAIN`` (relative) often enough (:meth:`Search.plain_pays`).
#: Measured on iris greedy step 4 (docs/branch-and-bound.md): 2.2 ms a try at 90-149 rows.
PLAIN_MAX_UNDECIDED = 256
PLAIN_SHARE = 0.2
PLAIN_BAND = 16
PLAIN_GAIN = 0.01
#: Relative headroom on a lifted claim that does not settle its node (:func:`lifted_claim`).
LIFTED_HEADROOM = 1e-6
#: Nodes are grouped by undecided count in bands this wide for the lifted bound's cheap test (:meth:`Search.lifted_pays`).
LIFTED_BAND = 8
#: A band keeps trying the lifted bound while it settles at least this fraction of its nodes.
LIFTED_MIN_RATE = 0.5
#: In a band below the rate, every this many-th node is tried anyway.
LIFTED_RETRY = 20


def lifted_claim(u: float, target: float, room: float) -> float:
    """What a node claims from lifted multipliers proving ``u``: the settling ``target`` (the incumbent
    over alpha) when ``u`` plus the rounding ``room`` the checker may need is below it, else ``u`` plus that
    room (at least ``LIFTED_HEADROOM`` relative).  The checker proves the claim in its own basis of
    ``col(Phi)``, with more rounding allowed than the search on ill-conditioned data (fuzz seeds 39 and
    42 failed there with 8e-11 and 1e-2 of room)."""
    need = u + max(room, LIFTED_HEADROOM * max(abs(u), 1.0))
    return float(target) if need <= target else float(need)


def basis_epsilon(Phi: np.ndarray, rank: int) -> float:
    """An estimate (not a bound) of how far a computed orthonormal basis of ``col(Phi)`` (columns scaled
    by powers of two) may be from an exact one: ``64 n eps cond`` (the checker's proven distance was 47
    times ``n eps cond`` on fuzz seed 42).  It only sets the room a lifted claim keeps
    (:func:`lifted_claim`); the checker's audit decides."""
    top = np.abs(Phi).max(axis=0)
    scale = np.where(top > 0, 2.0 ** -np.round(np.log2(np.where(top > 0, top, 1.0))), 1.0)
    sv = np.linalg.svd(Phi * scale, compute_uv=False)
    if rank < 1 or sv[rank - 1] <= 0:
        return np.inf
    return float(64 * Phi.shape[0] * np.finfo(float).eps * sv[0] / sv[rank - 1])


class Search(Chambers):
    """One branch-and-bound run; :meth:`run` returns when settled, out of time or interrupted."""

    def __init__(self, obj: Objective, alpha: float, tol: float, method: str, seed: int = 0,
                 lifted: bool = True) -> None:
        self.obj, self.alpha, self.tol, self.method = obj, alpha, tol, method
        self.writes: str | None = None  # the certificate the caller writes after the run (its time is reserved)
        self.P = node_problem(obj.Phi, obj.Psi, obj.M, obj.Q_H, obj.feature_matrix, obj.cap + 1e-12)
        self.Gn = obj.Psi / np.maximum(np.linalg.norm(obj.Psi, axis=1), 1e-300)[:, None]
        self.lp = ConeLP()
        self.cache: dict = {}
        self.best_value, self.best_theta = -np.inf, None
        self.heap: list = []
        self.counter = 0
        self.expansions = 0
        self.stats = {"nodes": 0, "lp": 0, "chambers": 0, "implied": 0, "unproven_empty": 0,
                      "t_bound": 0.0, "t_lp": 0.0, "t_chamber": 0.0, "n_bound": 0,
                      "nnls": 0, "t_nnls": 0.0, "exact_farkas": 0,
                      "attained": 0, "t_score": 0.0, "lifted": 0, "t_lifted": 0.0, "lifted_settled": 0,
                      "lifted_lowered": 0, "forced_batch": 0, "t_forced": 0.0, "exhaustive": 0, "thin_exact": 0,
                      "blind": 0, "pointless": 0, "lifted_plain": 0, "lifted_plain_settled": 0, "lifted_plain_lowered": 0,
                      "t_lifted_plain": 0.0, "t_lifted_check": 0.0, "zero_tried": 0, "zero_chambers": 0, "t_zero": 0.0}
        self.lifted = bool(lifted)
        self.t_start = time.perf_counter()
        self.stats["t_lifted_large"] = 0.0
        self.lifted_skipped: dict[int, int] = {}  # band -> nodes skipped by the cheap test (lifted_pays)
        self.plain_bands: dict[int, list[int]] = {}  # band -> [tried, won, skipped] of try_plain (plain_pays)
        for lo in range(0, LIFTED_MAX_UNDECIDED + 1, LIFTED_BAND):  # the lifted bound's cost and gain by band
            self.stats.update({f"lifted_tried_{lo}": 0, f"lifted_settled_{lo}": 0, f"t_lifted_{lo}": 0.0})
        self.thin = ExactChambers(self)
        self.notes: list[str] = []
        self.rng = np.random.default_rng(seed)
        signs = np.where(self.P.zero_rows, -1, 0).astype(np.int8)
        v0 = self.rng.standard_normal((1, obj.rank))
        self.root = self._node(signs, v0, 0)
        self.offer(v0[-1] @ obj.to_theta.T)

    # ------------------------------------------------------------------ pieces
    def _node(self, signs: np.ndarray, v: np.ndarray | None, depth: int) -> Node:
        """A node with its bound (its interior points ``v`` are offered as neurons by the caller)."""
        t0 = time.perf_counter()
        u, z, T = bound_parts(self.P, signs)
        self.stats["t_bound"] += time.perf_counter() - t0
        self.stats["n_bound"] += 1
        self.stats["nodes"] += 1
        node = Node(signs, v, min(u, self.P.cap), z, depth)
        node.T = T
        return node

    def offer(self, theta: np.ndarray) -> None:
        """Take the best row of ``theta`` (one or several neurons) as the incumbent if its
        recomputed value is better."""
        thetas = np.atleast_2d(theta)
        vals = np.nan_to_num(neuron_values(self.obj, thetas), nan=-np.inf)
        k = int(np.argmax(vals))
        self._take(thetas[k], float(vals[k]))

    def _take(self, theta: np.ndarray, value: float) -> None:
        """``theta`` becomes the incumbent if its value (recomputed from ``relu(Phi theta)`` by the
        caller) is better."""
        if value > self.best_value:
            self.best_value, self.best_theta = float(value), np.asarray(theta, dtype=float).copy()

    def ascend(self, thetas: np.ndarray, steps: int = 3) -> None:
        """Offer the best of ``thetas`` after a few fixed-gating ascent steps from it
        (:func:`relu_gating.search._exact.pilot.ascend`, whose values are recomputed)."""
        vals = np.nan_to_num(neuron_values(self.obj, thetas), nan=-np.inf)
        k = int(np.argmax(vals))
        self._take(*ascend(self.obj, thetas[k], float(vals[k]), steps))

    def settled(self, u: float) -> bool:
        return self.best_value >= self.alpha * u - self.tol

    def push(self, node: Node) -> None:
        if self.settled(node.claim):
            node.settle("b")
            return
        self.counter += 1
        heapq.heappush(self.heap, (-node.claim, -node.depth, self.counter, node))

    def global_bound(self) -> float:
        return -self.heap[0][0] if self.heap else -np.inf

    # ------------------------------------------------------------------ expansion
    def _nnls(self, Gd: np.ndarray, dec: np.ndarray, signs: np.ndarray, i: int, s: int, inner: np.ndarray) -> Any:
        """Is ``s g_i`` in the cone of the decided rows?  NNLS: a zero residual gives Farkas rows
        (checked exactly); a nonzero one a point of the cone on the other side (``-residual``,
        pushed inside).  ``("lp", None)`` when neither is conclusive."""
        from scipy.optimize import nnls

        t0 = time.perf_counter()
        self.stats["nnls"] += 1
        g = s * self.Gn[i]
        try:
            y, res = nnls(Gd.T, g) if dec.size else (np.zeros(0), float(np.linalg.norm(g)))
        except (RuntimeError, ValueError):
            return ("lp", None)
        finally:
            self.stats["t_nnls"] += time.perf_counter() - t0
        if res <= 1e-10:
            rows = dec[y > 1e-12 * max(float(y.max(initial=0.0)), 1e-300)]
            if rows.size <= self.obj.rank and self._implied(signs, i, s, rows):
                return ("empty", rows)
            return ("lp", None)
        w = Gd.T @ y - g  # in the closed cone, with g . w = -res^2 < 0
        w = w / np.linalg.norm(w)
        for eps in (1e-3, 1e-6):
            v = w + eps * inner
            if (Gd @ v).min(initial=np.inf) > WITNESS_MARGIN and g @ v < -WITNESS_MARGIN:
                return ("witness", v / np.abs(v).max())
        return ("lp", None)

    def _implied(self, signs: np.ndarray, i: int, s: int, rows: np.ndarray) -> bool:
        """The verifier's exact Farkas check, skipped when a float solve of a square, well
        conditioned system leaves every multiplier clearly positive (the exact signs agree).  The
        float system is in the unit rows of the well-conditioned basis (``Phi = Psi R`` keeps the
        multipliers): translated or rescaled data do not send it to the exact check."""
        if rows.size == self.Gn.shape[1] and float_clear(self.Gn, signs, rows[None], np.array([i]), np.array([s * 1.0]))[0]:
            return True  # the batch's float filter (bnb/_forced.py), on one claim
        self.stats["exact_farkas"] += 1
        return implied_exact(self.obj.Phi, signs, i, s, rows.tolist(), self.cache)

    def _test(self, dec: np.ndarray, signs: np.ndarray, c: int, i: int, s: int) -> Any:
        """Witness of the side ``s`` of candidate ``c`` (row ``i``) of the loaded LP, or the Farkas
        rows proving that side has no interior (``("empty", rows)``), or ``("unproven", None)``."""
        t0 = time.perf_counter()
        ans = self.lp.test(c, s)
        self.stats["t_lp"] += time.perf_counter() - t0
        self.stats["lp"] += 1
        if ans.v is not None:
            return ("witness", ans.v)
        if ans.duals is not None and ans.duals[-1] > 0:
            d = ans.duals[:-1]
            rows = dec[d > FARKAS_DUAL_RTOL * max(float(d.max(initial=0.0)), 1e-300)]
            if rows.size <= self.obj.rank and implied_exact(self.obj.Phi, signs, i, -s, rows.tolist(), self.cache):
                return ("empty", rows)
        return ("unproven", None)

    def _fix_forced(self, node: Node, signs: np.ndarray, pts: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
        """Rows of ``node`` whose sign is forced (LP + exact Farkas), fixed in ``signs`` in place.

        Returns the chain ``[(row, sign, farkas rows)]``, the undecided rows seen on both sides
        by the interior points ``pts`` (free), and the points (LP witnesses appended).  A row the
        exhaustive search proves neither way is recorded in ``node.refuted`` with the decided rows
        searched: the nodes below check only the subsets with a row decided since."""
        und = np.flatnonzero((signs == 0) & ~self.P.zero_rows)
        Z = self.Gn[und] @ pts.T
        pos, neg = (Z > WITNESS_MARGIN).any(axis=1), (Z < -WITNESS_MARGIN).any(axis=1)
        free = pos & neg
        cand = np.flatnonzero(~free)
        cand = cand[np.argsort(-np.abs(self.obj.M[und[cand]] @ node.z))]
        chain = []
        refuted: dict = {}
        dec = np.flatnonzero((signs != 0) & ~self.P.zero_rows)
        Gd = signs[dec, None] * self.Gn[dec]
        loaded = False
        obs = cand[pos[cand] | neg[cand]]  # seen on one side only: maybe forced to it
        t0 = time.perf_counter()
        batch = forced_rows(self.Gn, signs, dec, und[obs], np.where(pos[obs], 1, -1), pts[0],
                            lambda i, s, rows: self._implied(signs, i, s, rows))
        self.stats["t_forced"] += time.perf_counter() - t0
        self.stats["forced_batch"] += len(batch)
        for c, k in enumerate(cand.tolist()):
            if free[k]:
                continue
            i = int(und[k])
            if i in batch:
                signs[i] = 1 if pos[k] else -1
                chain.append((i, int(signs[i]), batch[i]))
                continue
            s_obs = 1 if pos[k] else -1
            kind, got = self._nnls(Gd, dec, signs, i, s_obs, pts[0])
            if kind == "lp":
                if not loaded:
                    self.lp.begin(Gd, self.Gn[und[cand]])
                    loaded = True
                kind, got = self._test(dec, signs, c, i, -s_obs)
            if kind == "unproven":  # "empty" is already proven (exact Farkas), seen or not
                seen = bool(pos[k] or neg[k])
                kind, got, s_obs = self._exhaustive(dec, signs, i, seen, s_obs, node.refuted.get(i))
                if kind == "unproven":
                    refuted[i] = {s: dec for s in ((s_obs,) if seen else (1, -1))}
            if kind == "witness":
                pts = np.vstack([pts, got])
                zz = self.Gn[und] @ got
                pos |= zz > WITNESS_MARGIN
                neg |= zz < -WITNESS_MARGIN
                free = pos & neg
            elif kind == "empty":
                signs[i] = s_obs
                chain.append((i, s_obs, tuple(int(j) for j in got)))
        keep = free & (signs[und] == 0)
        if refuted:
            node.refuted = {**node.refuted, **refuted}
        return chain, und[keep], pts

    def _exhaustive(self, dec: np.ndarray, signs: np.ndarray, i: int, seen: bool, s_obs: int,
                    tried: dict | None = None) -> tuple:
        """``("empty", rows, s)`` when an exhaustive exact search proves row ``i`` forced to ``s``
        (the side seen, or either side when neither was), else ``("unproven", None, s_obs)``; ``tried``:
        what an ancestor's search found nothing in (:func:`exhaustive_farkas`)."""
        got = exhaustive_farkas(dec, i, (s_obs,) if seen else (1, -1), self.obj.rank,
                                lambda i_, s_, rows: self._implied(signs, i_, s_, rows), (self.Gn, signs), tried)
        self.stats["exhaustive"] += 1
        return ("unproven", None, s_obs) if got is None else ("empty", got[1], got[0])

    def _branch_row(self, signs: np.ndarray, free: np.ndarray, cur: Node) -> int:
        """The free row to split on: among the ``STRONG`` rows where the bound's maximizer is
        largest, the one whose children's larger bound is smallest (strong branching)."""
        top = free[np.argsort(-np.abs(self.obj.M[free] @ cur.z))[:STRONG]]
        if top.size == 1:
            return int(top[0])
        t0 = time.perf_counter()
        fast = child_bounds(self.P, signs, top, cur.T)
        self.stats["t_score"] += time.perf_counter() - t0
        if fast is not None:
            return int(top[int(np.argmin(np.maximum(fast[0], fast[1])))])
        best, arg = np.inf, int(top[0])
        for i in top[:STRONG_FULL].tolist():
            worst = -np.inf
            for s in (1, -1):
                old = signs[i]
                signs[i] = s
                t0 = time.perf_counter()
                worst = max(worst, node_bound(self.P, signs))
                self.stats["t_bound"] += time.perf_counter() - t0
                self.stats["n_bound"] += 1
                signs[i] = old
            if worst < best:
                best, arg = worst, i
        return arg

    def basis_eps(self) -> float:
        """:func:`basis_epsilon` of ``Phi`` (computed once)."""
        if not hasattr(self, "_basis_eps"):
            self._basis_eps = basis_epsilon(self.obj.Phi, self.obj.rank)
        return self._basis_eps

    def lifted_room(self, got: tuple) -> float:
        """The rounding room a lifted claim keeps above the bound ``got[0]`` its evidence ``got[1]`` proves:
        ``8 basis_epsilon (|u| + ||M||_F^2 + sum N + sum |mu|)``, as the checker's basis allowance grows."""
        _, N, mu = got[1]
        total = float(np.abs(np.asarray(N["entries"])[:, 2]).sum() * 2 if isinstance(N, dict) else np.abs(N).sum())
        return 8.0 * self.basis_eps() * (abs(got[0]) + float(np.sum(self.obj.M ** 2)) + total + float(np.abs(mu).sum()))

    def lifted_pays(self, k: int) -> bool:
        """The cheap test: try the lifted bound on a node with ``k`` undecided rows while it settles at
        least ``LIFTED_MIN_RATE`` of the nodes tried in its band of ``LIFTED_BAND`` undecided counts (a
        prior of one in two; every ``LIFTED_RETRY``-th node of a band below the rate is tried anyway,
        as the incumbent may have risen since).  The counts by band are in the stats
        (``lifted_tried_<lo>``, ``lifted_settled_<lo>``, ``t_lifted_<lo>``, ``lo`` the band's least count)."""
        lo = k // LIFTED_BAND * LIFTED_BAND
        if k > LIFTED_LARGE and self.stats["t_lifted_large"] > LIFTED_LARGE_SHARE * (time.perf_counter() - self.t_start):
            return False
        if self.stats[f"lifted_settled_{lo}"] + 1 >= LIFTED_MIN_RATE * (self.stats[f"lifted_tried_{lo}"] + 2):
            return True
        self.lifted_skipped[lo] = self.lifted_skipped.get(lo, 0) + 1
        return self.lifted_skipped[lo] % LIFTED_RETRY == 0

    def try_lifted(self, node: Node) -> bool:
        """The lifted bound, once per node: settles it as a ``"d"`` leaf, or lowers its claim
        (with the evidence) and pushes it back (True); False when it does not help."""
        from relu_gating.search.bnb import _strong

        assert node.signs is not None and node.v is not None  # an open node
        if not self.lifted or node.evidence is not None or self.basis_eps() > LIFTED_MAX_BASIS_EPS:
            return False
        k = int(np.sum((node.signs == 0) & ~self.P.zero_rows))
        if k == 0:
            return False
        plus = self.obj.Psi[(node.signs > 0) & ~self.P.zero_rows]
        if plus.shape[0] < self.obj.rank or np.linalg.matrix_rank(plus) < self.obj.rank:
            return False  # then h = 0 for some x != 0: the lifted bound is never finite
        if self.plain_pays(node, k) and self.try_plain(node, k) and node.kind == "d":
            return True
        plain = node.evidence  # lifted evidence of a claim plain lowered, or None
        if k > min(LIFTED_MAX_UNDECIDED, _strong.MAX_UNDECIDED) or not self.lifted_pays(k):
            return self.pushed_back(node, plain)
        node.evidence = ()  # tried
        lo = k // LIFTED_BAND * LIFTED_BAND
        self.stats[f"lifted_tried_{lo}"] += 1
        t0 = time.perf_counter()
        self.stats["lifted"] += 1
        level = (self.best_value + self.tol) / self.alpha if self.alpha > 0 else np.inf  # settles the node
        got = _strong.strong_bound(self.obj.Psi, self.obj.M, self.obj.Q_H, node.signs, self.P.zero_rows, node.v,
                                   level=level)
        claim = np.inf if got is None else lifted_claim(got[0], self.best_value / self.alpha, self.lifted_room(got))
        ok = got is not None and claim < node.claim and self.lifted_checks(node, claim, got[1])
        dt = time.perf_counter() - t0
        self.stats["t_lifted"] += dt
        self.stats[f"t_lifted_{lo}"] += dt
        if k > LIFTED_LARGE:
            self.stats["t_lifted_large"] += dt
        if not ok or got is None:
            node.evidence = plain if plain is not None else ()
            return self.pushed_back(node, plain)
        node.claim, node.evidence = claim, got[1]
        if self.settled(node.claim):
            self.stats["lifted_settled"] += 1
            self.stats[f"lifted_settled_{lo}"] += 1
            node.settle("d")
        else:
            self.stats["lifted_lowered"] += 1
            self.push(node)
        return True

    def lifted_checks(self, node: Node, claim: float, evidence: tuple) -> bool:
        """The checker's own test of lifted evidence at ``claim`` (:func:`relu_gating.certificate._tree_strong.
        lifted_leaf_bound`); its time on evidence it accepts is ``t_lifted_check`` (the audit repeats it)."""
        from relu_gating.certificate._tree_strong import lifted_leaf_bound

        assert node.signs is not None
        t0 = time.perf_counter()
        ok = bool(np.isfinite(lifted_leaf_bound(self.obj.Psi, self.obj.M, self.obj.Q_H, node.signs,
                                                self.P.zero_rows, claim, *evidence)))
        if ok:
            self.stats["t_lifted_check"] += time.perf_counter() - t0
        return ok

    def pushed_back(self, node: Node, plain: tuple | None) -> bool:
        """A node whose claim :meth:`try_plain` lowered goes back on the heap (True: other nodes may now
        claim more); else False (the caller splits it)."""
        if plain is None:
            return False
        self.push(node)
        return True

    def plain_pays(self, node: Node, k: int) -> bool:
        """The cheap test of :meth:`try_plain`: at most ``PLAIN_MAX_UNDECIDED`` undecided rows, such tries
        took at most ``PLAIN_SHARE`` of the search's time, and in the node's band of ``PLAIN_BAND`` undecided
        counts they settled the node or lowered its claim by ``PLAIN_GAIN`` (relative) at least
        ``LIFTED_MIN_RATE`` of the time (a prior of one in two; every ``LIFTED_RETRY``-th node of a band
        below the rate is tried anyway).  Where the cheap node bound is good (Gaussian and clustered data
        with the bias) the tries stop after a few; at greedy steps, where it stays near the cap, they go on."""
        if k > PLAIN_MAX_UNDECIDED or self.stats["t_lifted_plain"] > PLAIN_SHARE * (time.perf_counter() - self.t_start):
            return False
        band = self.plain_bands.setdefault(k // PLAIN_BAND, [0, 0, 0])  # tried, won, skipped
        if band[1] + 1 >= LIFTED_MIN_RATE * (band[0] + 2):
            return True
        band[2] += 1
        return band[2] % LIFTED_RETRY == 0

    def try_plain(self, node: Node, k: int) -> bool:
        """The lifted bound without multipliers (:func:`relu_gating.search.bnb._strong.plain`), beyond the
        sizes the full lifted bound is tried on (:meth:`plain_pays` decides): settles the node as a ``"d"``
        leaf, or lowers its claim (with the evidence; the caller pushes it back) (True), or False."""
        from relu_gating.search.bnb import _strong

        assert node.signs is not None
        t0 = time.perf_counter()
        level = (self.best_value + self.tol) / self.alpha if self.alpha > 0 else np.inf
        got = _strong.plain(self.obj.Psi, self.obj.M, self.obj.Q_H, node.signs, self.P.zero_rows, level)
        claim = np.inf if got is None else lifted_claim(got[0], self.best_value / self.alpha, self.lifted_room(got))
        ok = got is not None and claim < node.claim and self.lifted_checks(node, claim, got[1])
        self.stats["lifted_plain"] += 1
        self.stats["t_lifted_plain"] += time.perf_counter() - t0
        band = self.plain_bands.setdefault(k // PLAIN_BAND, [0, 0, 0])  # k undecided rows
        band[0] += 1
        if not ok or got is None:
            return False
        if self.settled(claim) or claim <= node.claim * (1.0 - PLAIN_GAIN):
            band[1] += 1
        node.claim, node.evidence = claim, got[1]
        if self.settled(claim):
            self.stats["lifted_plain_settled"] += 1
            self.stats["lifted_settled"] += 1
            node.settle("d")
        else:
            self.stats["lifted_plain_lowered"] += 1
        return True

    def expand(self, node: Node) -> None:
        """Fix forced rows, then split on a free row (children pushed), or settle the node."""
        assert node.signs is not None and node.v is not None  # an open node
        if node.v.shape[0] == 0:  # no known interior point: a side of a split made anyway
            expand_pointless(self, node)
            return
        if self.try_lifted(node):
            return
        signs = node.signs.copy()
        dec = np.flatnonzero((signs != 0) & ~self.P.zero_rows)
        G = signs[dec, None] * self.Gn[dec]
        pts = sample_interior(G, node.v, self.rng)
        self.expansions += 1  # every interior point is a neuron of the node; ascend from some
        self.ascend(pts @ self.obj.to_theta.T, steps=3 if self.expansions % ASCEND_EVERY == 1 else 0)
        seen = pts.shape[0]
        chain, free, pts = self._fix_forced(node, signs, pts)
        if pts.shape[0] > seen:  # the witnesses found: offered once here, not again by the nodes below
            self.offer(pts[seen:] @ self.obj.to_theta.T)
        refuted = node.refuted
        cur = self.apply_chain(node, chain, signs, pts)
        if cur is None:
            return
        cur.refuted = refuted  # its children search these rows' new subsets only
        if not np.any((signs == 0) & ~self.P.zero_rows):
            self.chamber(cur)
            return
        if free.size == 0:  # no undecided row is seen on both sides, none provably forced
            if self.thin.settle(cur, signs):  # settled from the exact chambers (small degenerate data)
                self.stats["thin_exact"] += 1
                return
            self.stats["blind"] += 1  # split anyway: a side without points is decided exactly below
            assert cur.z is not None
            split(self, cur, signs, pts, blind_row(self, signs, cur.z))
            return
        split(self, cur, signs, pts, self._branch_row(signs, free, cur))

    def apply_chain(self, node: Node, chain: list, signs: np.ndarray, pts: np.ndarray) -> Node | None:
        """Write the implied rows ``chain`` below ``node`` (``signs`` already holds them); the
        node below them with its fresh bound, or None when that bound settles it."""
        cur = node
        if chain:
            for i, s, rows in chain:
                child = Node(None, None, node.claim, None, node.depth)
                cur.row, cur.sign, cur.rows, cur.children = i, s, rows, [child]
                cur.settle("i")
                cur = child
            self.stats["implied"] += len(chain)
            fresh = self._node(signs, pts, node.depth)
            cur.signs, cur.v, cur.z, cur.T = fresh.signs, fresh.v, fresh.z, fresh.T
            cur.claim = cur.bound = fresh.claim
            if self.settled(cur.claim):
                cur.settle("b")
                return None
        return cur

    def reserve(self) -> float:
        """Seconds to keep before a deadline for writing the tree out (``FINISH_PER_NODE`` a node, and
        ``WRITE_PER_NODE`` when the caller writes the certificate) and for the checker's audit of it
        (``AUDIT_PER_BOUND_SECOND`` per second of node bounds so far, ``AUDIT_PER_IMPLIED`` an implied
        row, ``AUDIT_PER_LIFTED_LEAF`` a lifted leaf or ``AUDIT_PER_CHECK_SECOND`` per second of the
        checker's test of lifted evidence, whichever is more), times ``RESERVE_SAFETY``, plus
        ``RESERVE_SECONDS``: the deadline is the end of the whole call."""
        st = self.stats
        entries = st["nodes"] + st["implied"]
        est = ((FINISH_PER_NODE + WRITE_PER_NODE.get(self.writes, 0.0)) * entries
               + AUDIT_PER_BOUND_SECOND * st["t_bound"] + AUDIT_PER_IMPLIED * st["implied"]
               + max(AUDIT_PER_LIFTED_LEAF * st["lifted_settled"], AUDIT_PER_CHECK_SECOND * st["t_lifted_check"]))
        return RESERVE_SAFETY * est + RESERVE_SECONDS

    # ------------------------------------------------------------------ loop
    def progress_note(self, u: float) -> str:
        """The progress bar's note in the search's units: chambers visited, open nodes, gap, alpha reached."""
        best = self.best_value if np.isfinite(self.best_value) else 0.0
        bound = max(u, best)
        alpha = best / bound if bound > 0 else 1.0
        return (f"chambers visited {self.stats['chambers']:,}  open {len(self.heap):,}  "
                f"gap {bound - best:.3g}  alpha reached {alpha:.6f}")

    def run(self, deadline: float | None, bar: Any = None) -> str:
        """Expand until settled; returns ``"settled"``, ``"time"`` or ``"interrupted"``."""
        try:
            from relu_gating._interrupt import check_stop
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
                if deadline is not None and time.perf_counter() >= deadline - self.reserve():
                    return "time"
                u = self.global_bound()
                if self.settled(u):
                    return "settled"
                node = heapq.heappop(self.heap)[-1]
                self.expand(node)
                if bar is not None:
                    bar.update(1, note=self.progress_note(u))
        except KeyboardInterrupt:
            return "interrupted"
        finally:
            if own:
                gc.unfreeze()
        return "settled"
