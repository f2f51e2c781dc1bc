"""The branch and bound's node bounds: a node's bound from its signs, and the lifted bounds tried on it (private).

A mixin of :class:`relu_gating.search.bnb._search.Search`: :meth:`NodeBounds._node` bounds a new node
(:func:`relu_gating.search.proofs.bound_parts`); :meth:`NodeBounds.try_lifted` tries the lifted bound
(:mod:`relu_gating.search.bnb._strong`), with or without multipliers, where its cheap tests say it pays.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from relu_gating.search.proofs import bound_parts
from relu_gating.search.bnb._tree_build import Node

__all__ = ["NodeBounds", "lifted_claim", "basis_epsilon", "LIFTED_MAX_UNDECIDED", "LIFTED_BAND", "LIFTED_HEADROOM",
           "PLAIN_MAX_UNDECIDED", "PLAIN_BAND", "PLAIN_SHARE", "LIFTED_RETRY", "LIFTED_HUGE", "LIFTED_HUGE_SHARE",
           "CHECK_FIRST", "CHECK_EVERY"]

#: Try the lifted bound (:mod:`relu_gating.search.bnb._strong`) once on each popped node with at most
#: ``LIFTED_MAX_UNDECIDED`` undecided rows (and some undecided: a chamber is solved exactly instead), unless
#: the run is asked not to (``branch_and_bound(lifted=False)``).  Its first-order multipliers settle most
#: such nodes in 1-50 ms (``benchmarks/bnb_lifted_effect.py``; docs/branch-and-bound.md).  Measured at 256 (with
#: ``_strong.MAX_UNDECIDED``; issue 39, breast cancer PCA 5 on 569 rows, whose first 100 CPU s split only nodes
#: of more than 128 undecided rows): 13 of 19 nodes of 184-256 rows tried were settled (0.1-0.3 s a try), but at
#: 60 CPU s alpha 0.97253 / 0.97259 against 0.97309 / 0.97309 at 128, 0.92x the expansions (two pairs, both arms
#: at once; ``python benchmarks/bnb_profile.py --ab 128,256``): kept at 128.
LIFTED_MAX_UNDECIDED = 128
#: Nodes with more undecided rows than this try the lifted bound only while the time spent on such nodes
#: is at most ``LIFTED_LARGE_SHARE`` of the search's time so far.  Measured (150-s runs, docs/real-data.md):
#: up to 128 rows without the share, clustered 1000 x 3 reached alpha 0.99568 against 0.99268 in 633 s at
#: 64, but wine PCA 5 spent 125 s on nodes of 80-128 rows (53-131 ms a try) and was not certified in 148 s,
#: against 103 s at 64.
LIFTED_LARGE = 64
LIFTED_LARGE_SHARE = 0.2
#: Nodes with more undecided rows than this (up to ``LIFTED_MAX_UNDECIDED``, where it is raised above 128:
#: not by default) have a share of their own: their tries' seconds (``t_lifted_huge``, not counted in
#: ``t_lifted_large``) at most ``LIFTED_HUGE_SHARE`` of the search's time, so that they never take the share of
#: the nodes of 65-128 rows (breast cancer PCA 5's 600-s run used all of its 20% there, settling 99% of the
#: nodes tried).
LIFTED_HUGE = 128
LIFTED_HUGE_SHARE = 0.1


def _large_share(k: int) -> tuple[float, str]:
    """The time share and the stats key that the lifted tries on a node of ``k`` (> ``LIFTED_LARGE``)
    undecided rows count against."""
    return (LIFTED_HUGE_SHARE, "t_lifted_huge") if k > LIFTED_HUGE else (LIFTED_LARGE_SHARE, "t_lifted_large")
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
#: The cost test (:meth:`NodeBounds.lifted_pays`), after this many tries in a band: try the lifted bound
#: while its seconds per node settled are at most ``LIFTED_COST_FACTOR`` times the seconds a split of
#: the band spends in its subtree, measured on the splits made (:mod:`relu_gating.search.bnb._subtree`).
LIFTED_COST_AFTER = 4
LIFTED_COST_FACTOR = 1.0
#: The delay (issue 39, "no slower on easy cases"): no lifted bound, with or without multipliers, is tried
#: before the search has bounded this many nodes (``stats["nodes"]``, a worker's task counting those of
#: the search that sent it: :attr:`NodeBounds.lifted_after`).  An easy query is settled by then on the
#: cheap subspace bound alone, where the lifted bound's 10-30 ms a try cost more than the splits they spare
#: (Gaussian 80 x 4: 4,465 nodes without it, 2,057 with it but 1.7x the seconds).  A hard one ends the
#: delay sooner through its probes (:meth:`relu_gating.search.bnb._subtree.SubtreeCost.probe_due`), and
#: the splits made during the delay are measured for the cost test (:meth:`NodeBounds.lifted_pays`).
LIFTED_DELAY_NODES = 6000
#: The search's own test of the lifted evidence it keeps (:meth:`NodeBounds.lifted_checks`) only filters: the
#: audit (:mod:`relu_gating.search.bnb._audit`) checks every leaf's evidence with the checker before anything
#: is claimed, and a leaf it does not confirm is raised (the result then says not certified, never more than
#: is proven).  On iris greedy step 6 the test took 13% of the search's CPU (15.8 of 120 s, 17,948 tests) and
#: failed on none: so after ``CHECK_FIRST`` tests have passed with none failed, only every ``CHECK_EVERY``-th
#: evidence is tested, and every one again once any has failed (a worker's task carries the counts).
CHECK_FIRST = 256
CHECK_EVERY = 8


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


class NodeBounds:
    """A node's bound (:meth:`_node`) and the lifted bounds that may lower it (:meth:`try_lifted`)."""

    obj: Any  # the search's (annotations only: a mixin defines no attribute another one provides)
    P: Any
    stats: dict
    alpha: float
    tol: float
    best_value: float
    lifted: bool
    lifted_costs: bool = True  # the cost test of :meth:`lifted_pays` (class-level: a switch for benchmarks)
    lifted_after: int = LIFTED_DELAY_NODES  # the lifted bound waits until stats["nodes"] reaches it (the delay)
    lifted_small: bool = False  # the probes ended the delay for nodes of at most LIFTED_LARGE undecided rows
    lifted_skipped: dict
    plain_bands: dict
    t_start: float
    settled: Callable[[float], bool]
    push: Callable[[Node], None]
    split_seconds: Callable[[int], float | None]
    explore: Callable[[int], bool]
    probe_due: Callable[[], bool]
    probe_done: Callable[[float, bool], None]
    probe_pays: Callable[[], bool]
    end_delay: Callable[[], None]

    def _node(self, signs: np.ndarray, v: np.ndarray | None, depth: int) -> Node:
        """A node with its bound (its interior points ``v`` are offered as neurons by the caller)."""
        t0 = time.perf_counter()
        u, z, T = bound_parts(self.P, signs)
        self.stats["t_bound"] += time.perf_counter() - t0
        self.stats["n_bound"] += 1
        self.stats["nodes"] += 1
        node = Node(signs, v, self.P.cap if getattr(self, "chamber_leaves", False) else min(u, self.P.cap), z, depth)
        node.T = T
        return node

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

    def lifted_delay_left(self) -> int:
        """Nodes the delay still holds the lifted bound back (:data:`LIFTED_DELAY_NODES`), 0 once the probes
        (this search's and those its workers' tasks reported) end it; a worker's task gets this, not a
        fresh delay."""
        if self.stats["nodes"] < self.lifted_after and not self.lifted_small and self.probe_pays():
            self.end_delay()
        return max(0, int(self.lifted_after) - int(self.stats["nodes"]))

    def lifted_pays(self, k: int) -> bool:
        """The cheap test: try the lifted bound on a node with ``k`` undecided rows while it settles at
        least ``LIFTED_MIN_RATE`` of the nodes tried in its band of ``LIFTED_BAND`` undecided counts (a
        prior of one in two; every ``LIFTED_RETRY``-th node of a band below the rate is tried anyway,
        as the incumbent may have risen since).  The counts by band are in the stats
        (``lifted_tried_<lo>``, ``lifted_settled_<lo>``, ``t_lifted_<lo>``, ``lo`` the band's least count).
        Then the cost test, after ``LIFTED_COST_AFTER`` tries in the band: its seconds per node settled at
        most ``LIFTED_COST_FACTOR`` times the seconds a split of the band spends below it, measured on the
        splits made (:meth:`relu_gating.search.bnb._subtree.SubtreeCost.split_seconds`; a band with none
        measured yet splits a few nodes to measure; ``lifted_cost_skips`` counts the nodes it turns down)."""
        lo = k // LIFTED_BAND * LIFTED_BAND
        share, spent = _large_share(k)
        if k > LIFTED_LARGE and self.stats.get(spent, 0.0) > share * (time.perf_counter() - self.t_start):
            return False
        tried, won = self.stats[f"lifted_tried_{lo}"], self.stats[f"lifted_settled_{lo}"]
        if won + 1 >= LIFTED_MIN_RATE * (tried + 2):
            if not self.lifted_costs or tried < LIFTED_COST_AFTER:
                return True
            split = self.split_seconds(lo)
            if split is None:  # no split of the band measured yet: split this one (a few times per band)
                return not self.explore(lo)
            if self.stats[f"t_lifted_{lo}"] <= LIFTED_COST_FACTOR * split * max(won, 1):
                return True  # a node settled costs less than the subtree its split grows
            self.stats["lifted_cost_skips"] = self.stats.get("lifted_cost_skips", 0) + 1
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
        delayed = self.stats["nodes"] < self.lifted_after  # the delay: still an easy query, perhaps
        if k > 0 and self.try_face(node):
            return True
        if k == 0 or (delayed and not (k <= LIFTED_LARGE and (self.lifted_small or self.probe_due()))):
            return False  # (a probe now and then; once the probes ended it, nodes of their sizes are tried)
        plus = self.obj.Psi[(node.signs > 0) & ~self.P.zero_rows]
        if plus.shape[0] < self.obj.rank or np.linalg.matrix_rank(plus) < self.obj.rank:
            return False  # then h = 0 for some x != 0: the lifted bound is never finite
        if delayed and not self.lifted_small:
            self.probe_lifted(node, k)
            return False
        if not delayed and self.plain_pays(node, k) and self.try_plain(node, k) and node.kind == "d":
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
        gate = self.admm_gate()
        got = _strong.strong_bound(self.obj.Psi, self.obj.M, self.obj.Q_H, node.signs, self.P.zero_rows, node.v,
                                   level=level, **({} if gate is None else {"admm": gate}))
        claim = np.inf if got is None else lifted_claim(got[0], self.best_value / self.alpha, self.lifted_room(got))
        ok = got is not None and claim < node.claim and self.lifted_checks(node, claim, got[1])
        dt = time.perf_counter() - t0
        won = bool(ok and self.settled(claim))
        admm = 0.0 if gate is None else gate.take(won)  # ADMM's seconds: its own tally
        if admm > 0.0:
            self.stats["admm"], self.stats["t_admm"] = self.stats.get("admm", 0) + 1, self.stats.get("t_admm", 0.0) + admm
            self.stats["admm_settled"] = self.stats.get("admm_settled", 0) + won
        self.stats["t_lifted"] += dt
        self.stats[f"t_lifted_{lo}"] += dt - admm
        if k > LIFTED_LARGE:
            spent = _large_share(k)[1]
            self.stats[spent] = self.stats.get(spent, 0.0) + dt - admm
        if not ok or got is None:
            node.evidence = plain if plain is not None else ()
            return self.pushed_back(node, plain)
        node.claim, node.evidence = claim, got[1]
        if self.settled(node.claim):
            self.stats["lifted_settled"] += 1
            self.stats[f"lifted_settled_{lo}"] += admm == 0.0  # not the first-order steps' when ADMM settled it
            node.settle("d")
        else:
            self.stats["lifted_lowered"] += 1
            self.push(node)
        return True

    def admm_gate(self) -> Any:
        """ADMM's own tally (:class:`relu_gating.search.bnb._lifted_gate.AdmmGate`, made once), or None where
        ``_lifted_gate.ENABLED`` is off."""
        from relu_gating.search.bnb import _lifted_gate

        if not _lifted_gate.ENABLED:
            return None
        if getattr(self, "_admm_gate", None) is None:
            self._admm_gate = _lifted_gate.AdmmGate(self.split_seconds, lambda: time.perf_counter() - self.t_start,
                                                    LIFTED_BAND)
        return self._admm_gate

    def try_face(self, node: Node) -> bool:
        """Face multipliers (:func:`relu_gating.search.bnb._face_leaf.face_leaf`) where a one-sample
        neuron of the node is the incumbent (the node's supremum may lie there, on its boundary):
        settles it as a ``"d"`` leaf (True), else False.  Checked by the checker's own float test there."""
        assert node.signs is not None  # an open node
        if self.alpha <= 0 or not np.isfinite(self.best_value):
            return False
        best, target = self.best_value, (self.best_value + self.tol) / self.alpha
        at = self.__dict__.get("_face_at")
        if at is None or at[0] != (best, target):  # samples whose one-sample neuron is the incumbent, per incumbent
            from relu_gating.search._exact.faces import one_sample_values

            v = np.nan_to_num(one_sample_values(self.obj), nan=-np.inf)
            at = self.__dict__["_face_at"] = ((best, target), np.flatnonzero(
                (v >= best - 2.0**-39 * max(1.0, abs(best))) & (v <= target)))
        if at[1].size == 0 or not np.any(node.signs[at[1]] >= 0):
            return False  # no one-sample neuron of the node at the incumbent (face_leaf's own filter, cheaper)
        from relu_gating.search._claims import stated
        from relu_gating.search.bnb._face_leaf import face_leaf

        got = face_leaf(self.obj, node.signs, self.P.zero_rows, self.best_value, (self.best_value + self.tol) / self.alpha,
                        lambda u, ev: self.lifted_room((u, ev)), lambda: stated(self.obj))
        if got is None or not self.settled(got[0]):
            return False
        node.claim, node.evidence = got
        self.stats["face_leaves"] = self.stats.get("face_leaves", 0) + 1
        node.settle("d")
        return True

    def probe_lifted(self, node: Node, k: int) -> None:
        """A probe during the delay (:meth:`relu_gating.search.bnb._subtree.SubtreeCost.probe_due` chose
        the node): the lifted bound computed on it, its answer not used; a node it would settle is split
        anyway, and the subtree it would have spared measured (:meth:`~relu_gating.search.bnb._subtree.
        SubtreeCost.probe_done`), which ends the delay, for nodes of the sizes probed (at most
        ``LIFTED_LARGE`` undecided rows; the others and the lifted bound without multipliers wait for the
        whole delay), once such subtrees cost more than the lifted bound."""
        from relu_gating.search.bnb import _strong

        assert node.signs is not None and node.v is not None  # an open node
        t0 = time.perf_counter()
        level = (self.best_value + self.tol) / self.alpha if self.alpha > 0 else np.inf
        got = _strong.strong_bound(self.obj.Psi, self.obj.M, self.obj.Q_H, node.signs, self.P.zero_rows, node.v,
                                   level=level)
        would = got is not None and self.settled(lifted_claim(got[0], self.best_value / self.alpha, self.lifted_room(got)))
        self.probe_done(time.perf_counter() - t0, would)

    def lifted_checks(self, node: Node, claim: float, evidence: tuple) -> bool:
        """The proofs' float test of lifted evidence at ``claim`` (:func:`relu_gating.search.proofs._lifted.
        lifted_leaf_bound`), a filter before the evidence is kept: after ``CHECK_FIRST`` passed with none
        failed, only every ``CHECK_EVERY``-th is run (the others pass unchecked: ``lifted_unchecked``), every
        one again from the first failure (``lifted_check_failed``).  The audit checks every leaf's evidence
        whatever this says.  Its time on evidence it accepts is ``t_lifted_check`` (``lifted_checked`` of them)."""
        from relu_gating.search.proofs import lifted_leaf_bound

        assert node.signs is not None
        st = self.stats
        seen = st["lifted_offered"] = st["lifted_offered"] + 1
        if not st["lifted_check_failed"] and seen > CHECK_FIRST and seen % CHECK_EVERY:
            st["lifted_unchecked"] += 1
            return True
        t0 = time.perf_counter()
        ok = bool(np.isfinite(lifted_leaf_bound(self.obj.Psi, self.obj.M, self.obj.Q_H, node.signs,
                                                self.P.zero_rows, claim, *evidence)))
        if ok:
            st["t_lifted_check"] += time.perf_counter() - t0
            st["lifted_checked"] += 1
        else:
            st["lifted_check_failed"] += 1
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
