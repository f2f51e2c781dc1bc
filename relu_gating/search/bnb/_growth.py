"""The branch and bound's tree growth: rows forced on a node, the row to split on, the expansion (private).

A mixin of :class:`relu_gating.search.bnb._search.Search`.  :meth:`TreeGrowth.expand` fixes the rows
whose sign is forced (an LP or NNLS finds no interior on one side, and the Farkas rows are checked
exactly), writes them as implied nodes (:meth:`TreeGrowth.apply_chain`), then splits on the undecided
row chosen by strong branching (:meth:`TreeGrowth._branch_row`), or settles the node.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from relu_gating.search.proofs import implied_exact, node_bound
from relu_gating.search.bnb import _pencil_branch
from relu_gating.search.bnb._blind import blind_row, expand_pointless, split
from relu_gating.search.bnb._cone_nnls import MIN_RANK as NNLS_MIN_RANK, DecidedCone
from relu_gating.search.bnb._forced import MAX_RANK, exhaustive_farkas, float_clear, forced_rows
from relu_gating.search.bnb._lp import WITNESS_MARGIN
from relu_gating.search.bnb._node_bounds import LIFTED_BAND
from relu_gating.search.bnb._rows import sample_interior
from relu_gating.search.bnb._score import child_bounds, split_scores
from relu_gating.search.bnb._tree_build import Node

__all__ = ["TreeGrowth", "FARKAS_DUAL_RTOL", "STRONG", "STRONG_FULL", "ASCEND_EVERY"]

#: LP duals below this fraction of the largest are left out of a Farkas combination.
FARKAS_DUAL_RTOL = 1e-9
#: Candidate rows scored by their children's bounds at each split (strong branching, rank-one updates).
STRONG = 64
#: Local ascent from the best interior sample at every this many expansions.
ASCEND_EVERY = 8
#: Candidates scored when the children's bounds must be computed in full.
STRONG_FULL = 8


class TreeGrowth:
    """The expansion of an open node (:meth:`expand`)."""

    obj: Any  # the search's (annotations only: a mixin defines no attribute another one provides)
    P: Any
    Gn: np.ndarray
    stats: dict
    cache: dict
    lp: Any
    rng: np.random.Generator
    thin: Any
    expansions: int
    settled: Callable[[float], bool]
    offer: Callable[..., None]
    best_value: float
    tol: float
    alpha: float
    ascend: Callable[..., None]
    chamber: Callable[[Node], None]
    try_lifted: Callable[[Node], bool]
    track: Callable[[int, int], None]
    replay: Callable[[Node], bool]
    _node: Callable[[np.ndarray, Any, int], Node]

    def expand(self, node: Node) -> None:
        """Fix forced rows, then split on a free row (children pushed), or settle the node."""
        assert node.signs is not None and node.v is not None  # an open node
        if node.guide is not None and self.replay(node):  # another tree's geometry on this Phi (bnb/_replay.py)
            return
        if node.v.shape[0] == 0:  # no known interior point: a side of a split made anyway
            expand_pointless(self, node)
            return
        if self.try_lifted(node):
            return
        k = int(np.sum((node.signs == 0) & ~self.P.zero_rows))
        self.track(k, k // LIFTED_BAND * LIFTED_BAND)  # split below: what that costs, measured (bnb/_subtree.py)
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

    def _fix_forced(self, node: Node, signs: np.ndarray, pts: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
        """Rows of ``node`` whose sign is forced (LP + exact Farkas), fixed in ``signs`` in place.

        Returns the chain ``[(row, sign, farkas rows)]``, the undecided rows seen on both sides
        by the interior points ``pts`` (free), and the points (LP witnesses appended).  A row the
        exhaustive search proves neither way is recorded in ``node.refuted`` with the decided rows
        searched: the nodes below check only the subsets with a row decided since."""
        und = np.flatnonzero((signs == 0) & ~self.P.zero_rows)
        Gu = self.Gn[und]  # the undecided rows, taken once: each witness is tested on all of them
        Z = Gu @ pts.T
        pos, neg = (Z > WITNESS_MARGIN).any(axis=1), (Z < -WITNESS_MARGIN).any(axis=1)
        free = pos & neg
        cand = np.flatnonzero(~free)
        cand = cand[np.argsort(-np.abs(self.obj.M[und[cand]] @ node.z))]
        chain = []
        refuted: dict = {}
        dec = np.flatnonzero((signs != 0) & ~self.P.zero_rows)
        Gd = signs[dec, None] * self.Gn[dec]
        t0 = time.perf_counter()
        cone = DecidedCone(Gd, dec, pts, self.obj.rank, self.Gn.shape[1] >= NNLS_MIN_RANK)  # below: as before
        self.stats["t_nnls"] += time.perf_counter() - t0
        loaded = False
        obs = cand[pos[cand] | neg[cand]]  # seen on one side only: maybe forced to it
        t0 = time.perf_counter()
        batch = forced_rows(self.Gn, signs, dec, und[obs], np.where(pos[obs], 1, -1), pts[0],
                            lambda i, s, rows: self._implied(signs, i, s, rows))
        self.stats["t_forced"] += time.perf_counter() - t0
        self.stats["forced_batch"] += len(batch)
        pre, wit = ({}, []) if self.Gn.shape[1] <= MAX_RANK else (  # ranks above the triangulation's (d >= 5)
            self._nnls_pass(cone, signs, und, Gu, cand[~np.isin(und[cand], list(batch))], pos, neg))
        if wit:
            pts = np.vstack([pts, *wit])
        free = pos & neg
        for c, k in enumerate(cand.tolist()):
            if free[k]:
                continue
            i = int(und[k])
            if i in batch:
                signs[i] = 1 if pos[k] else -1
                chain.append((i, int(signs[i]), batch[i]))
                continue
            if k in pre:  # from the NNLS pass
                kind, got, s_obs = pre[k]
                if kind == "witness":  # already in pts (and row k then seen on both sides)
                    continue
                if kind == "maybe":  # Farkas rows the float batch did not clear: the exact check
                    kind, got = ("empty", got) if self._implied(signs, i, s_obs, got) else ("lp", None)
            else:  # ranks 3-5: one row at a time (the triangulation found most forced rows already)
                s_obs = 1 if pos[k] else -1
                kind, got = self._nnls(cone, signs, i, s_obs)
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
                zz = Gu @ got
                pos |= zz > WITNESS_MARGIN
                neg |= zz < -WITNESS_MARGIN
                free = pos & neg
            elif kind == "empty":
                signs[i] = s_obs
                chain.append((i, s_obs, tuple(np.asarray(got).tolist())))
        keep = free & (signs[und] == 0)
        if refuted:
            node.refuted = {**node.refuted, **refuted}
        self.stats["nnls_hits"] += cone.hits
        return chain, und[keep], pts

    def _nnls_pass(self, cone: DecidedCone, signs: np.ndarray, und: np.ndarray, Gu: np.ndarray, cand: np.ndarray,
                   pos: np.ndarray, neg: np.ndarray) -> tuple[dict, list]:
        """NNLS (:meth:`_nnls`) on the candidates ``cand`` (indices into ``und``, whose rows ``Gn[und]`` are
        ``Gu``) in order, each unless the witnesses found so far saw it on both sides (they update ``pos`` and
        ``neg`` in place); then the Farkas claims found are cleared by one float batch (:func:`float_clear`, the test :meth:`_implied`
        makes on one claim).  Returns ``{k: (kind, got, side)}`` (kind ``"empty"``, ``"maybe"``: left to the
        exact check, ``"witness"`` or ``"lp"``) and the witnesses found (one row each)."""
        pre: dict = {}
        wit: list = []
        side0 = np.where(pos[cand], 1, -1)
        cone.watch(side0[:, None] * Gu[cand])  # kept simplices are tested on these rows at once
        for j, k in enumerate(cand.tolist()):
            if pos[k] and neg[k]:
                continue
            s_obs = 1 if pos[k] else -1
            kind, got = self._nnls(cone, signs, int(und[k]), s_obs, check=False, at=j if s_obs == side0[j] else None)
            if kind == "witness":
                wit.append(got[None])
                zz = Gu @ got
                pos |= zz > WITNESS_MARGIN
                neg |= zz < -WITNESS_MARGIN
            pre[k] = (kind, got, s_obs)
        r = self.Gn.shape[1]
        maybe = [k for k, (kind, got, _) in pre.items() if kind == "maybe" and got.size == r]
        if maybe:
            t0 = time.perf_counter()
            rows = np.array([pre[k][1] for k in maybe])
            side = np.array([pre[k][2] for k in maybe], dtype=float)
            clear = float_clear(self.Gn, signs, rows, und[maybe], side)
            for k, ok in zip(maybe, clear.tolist()):
                if ok:
                    pre[k] = ("empty", pre[k][1], pre[k][2])
            self.stats["t_nnls"] += time.perf_counter() - t0
        return pre, wit

    def _nnls(self, cone: DecidedCone, signs: np.ndarray, i: int, s: int, check: bool = True,
              at: int | None = None) -> Any:
        """Is ``s g_i`` in the cone of the decided rows?  NNLS (:meth:`DecidedCone.classify`, on a working
        set of them): Farkas rows (checked exactly; with ``check=False`` returned unchecked as
        ``("maybe", rows)``), or a point of the cone on the other side (``("witness", v)``, checked
        against every decided row).  ``("lp", None)`` when neither is conclusive.  ``at``: ``s g_i`` is the row
        ``at`` the cone was told of (:meth:`DecidedCone.watch`)."""
        t0 = time.perf_counter()
        solves = cone.solves
        try:
            kind, got = cone.classify(s * self.Gn[i], at)  # (at: the row registered by cone.watch)
        finally:
            self.stats["nnls"] += cone.solves - solves
            self.stats["nnls_rows"] += 1
            self.stats["t_nnls"] += time.perf_counter() - t0
        if kind != "farkas":
            return kind, got
        if got.size <= self.obj.rank and not check:
            return ("maybe", got)
        if got.size <= self.obj.rank and self._implied(signs, i, s, got):
            return ("empty", got)
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
        largest, the one whose children's bounds score best (strong branching, the product of the two
        children's gains: :func:`relu_gating.search.bnb._score.split_scores`), the gains counted from the
        node's own bound not capped (at the cap every child would gain nothing: clustered 100 x 5's
        largest open bound stayed at the cap 1 at 40 CPU s, main's fell to 0.99927)."""
        top = free[np.argsort(-np.abs(self.obj.M[free] @ cur.z))[:STRONG]]
        if top.size == 1:
            return int(top[0])
        level = (self.best_value + self.tol) / self.alpha if self.alpha > 0 else -np.inf  # settles a node
        top_u = cur.claim if cur.T is None else max(cur.claim, float(np.linalg.eigvalsh(cur.T)[-1]))  # not capped
        if top_u >= self.P.cap * _pencil_branch.AT_CAP:  # at the cap: the children's pencil bounds (issue 39)
            row = _pencil_branch.choose(self, signs, free, level)
            if row is not None:
                return row
        t0 = time.perf_counter()
        fast = child_bounds(self.P, signs, top, cur.T)
        self.stats["t_score"] += time.perf_counter() - t0
        if fast is not None and top_u >= self.P.cap:  # at the cap: the larger child's bound (uncapped) is the guide
            return int(top[int(np.argmin(np.maximum(fast[0], fast[1])))])
        if fast is not None:
            return int(top[int(np.argmax(split_scores(fast[0], fast[1], top_u, level)))])
        cand = top[:STRONG_FULL]
        kids = np.empty((2, cand.size))
        for j, i in enumerate(cand.tolist()):
            for side, s in enumerate((1, -1)):
                old = signs[i]
                signs[i] = s
                t0 = time.perf_counter()
                kids[side, j] = node_bound(self.P, signs)
                self.stats["t_bound"] += time.perf_counter() - t0
                self.stats["n_bound"] += 1
                signs[i] = old
        return int(cand[int(np.argmax(split_scores(kids[0], kids[1], top_u, level)))])
