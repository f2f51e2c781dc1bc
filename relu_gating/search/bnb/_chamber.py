"""Chambers of the branch and bound: the exact solve of a leaf and the claim its check proves (private).

A node with every row decided is a chamber.  It is settled by the per-pattern machinery of the
enumeration (:func:`relu_gating.search._exact.tasks.solve_one`: two-row or SDP evidence first, else
the exact solve with dual evidence), and its leaf claims what the verifier proves for it, as for a
pattern of the enumeration certificate (:func:`relu_gating.search.proofs._node.chamber_bound`).

A chamber without a strict interior point (a sliver thinner than floats resolve, met below the blind splits of
:mod:`relu_gating.search.bnb._blind`) is tried by dual evidence before its exact solve too, its rows chosen at
the float LP's deepest point of the chamber (:meth:`Chambers._near`): such chambers used to go straight to the
solvers' verified path (exact rationals, about 0.1 s each): iris greedy step 5 solved some 6,140 of them in 593 of
its 720 CPU s, and the evidence now settles 6,137 (issue 39, docs/branch-and-bound.md).

Such a chamber, unless that dual evidence settles it (the usual case: its LP is then spared), is tested
for a zero proof (:meth:`Chambers._zero`):
when an exact positive dependency of its signed rows covers every active row, ``relu(Phi theta) = 0``
on its closed cone and it is an excluded leaf ``["x", rows, y]``.  Iris greedy step 4 had one: its
float LP margin is 0, every solver returned the pencil's top with no neuron, and that claim held the
run at alpha 0.9922.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from relu_gating.search.bnb._tree_build import Node
from relu_gating.search.objectives import neuron_values

__all__ = ["Chambers", "CHAMBER_SECONDS", "CHAMBER_MIN_SECONDS"]


#: Seconds one chamber's solver methods may take (:func:`relu_gating.search._exact.tasks.solve_one`); past
#: them the chamber claims its dual bound with evidence, or its node bound (valid, weaker; the run is then
#: not certified unless that bound settles it).  Measured: 3 ms a chamber on average in the real-data runs
#: (docs/real-data.md), 10 s for the slowest exact solves at n = 300, d = 3.
CHAMBER_SECONDS = 20.0
#: ... or less: what is left before the search must stop (``Search.chamber_until``: the deadline less the
#: reserve; a task's, sent with it), at least this.  Iris greedy step 6 (75 s) ended at 91 s: chambers of
#: its thin cones took 8 s and more each (docs/branch-and-bound.md), past a budget they did not look at.
CHAMBER_MIN_SECONDS = 0.25

#: The note of a chamber whose solved bound is not proven (the result adds why, once: ``_api``).
UNPROVEN_NOTE = "a chamber's solved bound is not proven: it claims a weaker valid bound (not settled)"


class Chambers:
    """The chamber leaves of :class:`relu_gating.search.bnb._search.Search` (a mixin: it uses the
    search's ``obj``, ``P``, ``Gn``, ``lp``, ``stats``, ``alpha``, ``method``, ``best_value``, ``offer``, ``tol``)."""

    obj: Any
    P: Any
    Gn: np.ndarray
    lp: Any
    stats: dict
    alpha: float
    tol: float
    method: str
    best_value: float
    notes: list
    _face_proof: bool = False  # the last ``_proven`` claim lies below the solver's bound, by replaced evidence

    def offer(self, theta: np.ndarray, proven: float | None = None) -> None:  # pragma: no cover - the search's
        raise NotImplementedError

    def chamber(self, node: Node) -> None:
        """Solve a chamber exactly; its leaf claims the node bound or, if lower, what the verifier's
        check proves for the solve (:meth:`_proven`)."""
        from relu_gating.search.state import PRUNED
        from relu_gating.search._exact.tasks import prune_target

        t0 = time.perf_counter()
        self.stats["chambers"] += 1
        assert node.signs is not None and node.v is not None  # an open node
        mask = (node.signs > 0) & ~self.P.zero_rows
        theta0 = self.obj.to_theta @ node.v[0]
        z = self.obj.Phi @ theta0
        nz = ~self.P.zero_rows
        strict = bool(np.all(np.where(mask, z, -z)[nz] > 0))
        target = prune_target(self.best_value, self.alpha)
        got = None if strict or not np.isfinite(target) else self._sliver_dual(node.signs, mask, target)
        if got is None:
            got = self._settle(node, mask, theta0 if strict else None, target)
            if got is None:
                self.stats["t_chamber"] += time.perf_counter() - t0
                return
        out, d, proof = got
        if out.status == PRUNED and self._excluded(mask):  # decided exactly
            node.evidence = None  # (any lifted evidence tried here is not the leaf's)
            node.settle("x")
        else:
            if np.isfinite(out.lower):  # a neuron from the chamber's own coordinates: its value proven
                self.offer(out.theta, float(out.lower) if out.method.endswith("-local") else None)
            if d < node.claim:  # only a settled "c" node shows its evidence (none: the claim alone)
                # a supremum on the chamber's boundary proven by exact face multipliers lies below the
                # solver's dual bound (``_exact/faces.py``): the proven claim, not the solver's
                node.claim = d if self._face_proof else max(d, float(out.upper))
                node.evidence = proof if proof is not None else (np.zeros(0, int), np.zeros((0, 0)))
            node.settle("c")
        self.stats["t_chamber"] += time.perf_counter() - t0

    def _sliver_dual(self, signs: np.ndarray, mask: np.ndarray, target: float) -> tuple | None:
        """A chamber without a strict interior point settled by dual evidence alone, its rows chosen at the
        float LP's deepest point (:meth:`_near`): ``(solve, claim, evidence)`` when the check here proves
        at most ``target``, else None.  Tried before the zero proof, whose LP it spares where it settles
        (issue 39: iris greedy step 5 tried 6,138 zero proofs, 16.6 s, and found none)."""
        from relu_gating.search._exact.tasks import dual_settle

        near = self._near(signs)
        out = None if near is None else dual_settle(self.obj, mask, near, target)
        if out is None:
            return None
        d, proof = self._proven(mask, out, target)
        if not d <= target:  # the check here does not confirm it: the rest of the path decides
            return None
        self.stats["sliver_dual"] = self.stats.get("sliver_dual", 0) + 1
        return out, d, proof

    def _settle(self, node: Node, mask: np.ndarray, witness: np.ndarray | None, target: float) -> tuple | None:
        """The chamber's other ways, in order: the zero proof (without a ``witness``; the node then an
        ``"x"`` leaf), the node bound attained (a ``"c"`` leaf), both settling it here (None); else its
        solve, ``(solve, claim, evidence)``: dual evidence first where it has a strict ``witness``, then the
        solvers (:func:`relu_gating.search._exact.tasks.solve_one`)."""
        from relu_gating.search._exact.tasks import solve_one

        assert node.signs is not None  # an open node
        if witness is None and (proof := self._zero(node.signs)) is not None:  # relu(Phi theta) = 0 on the cone
            node.evidence = proof
            node.settle("x")
            self.stats["zero_chambers"] += 1
            return None
        if self._attained(node, mask):  # the node bound is reached inside the cone: nothing to solve
            node.settle("c")
            self.stats["attained"] += 1
            return None
        out = solve_one(self.obj, mask, self.method, witness, target, max_seconds=self.chamber_seconds())
        d, proof = self._proven(mask, out, target)
        if out.method == "dual-first" and not d <= target:  # the check here does not confirm it: solve
            out = solve_one(self.obj, mask, self.method, witness, max_seconds=self.chamber_seconds())
            d, proof = self._proven(mask, out, target)
        return out, d, proof

    def _near(self, signs: np.ndarray) -> np.ndarray | None:
        """A neuron at the deepest point the float LP finds in a chamber without a strict interior point
        (a sliver thinner than floats resolve, below a blind split: ``bnb/_blind.py``), or None.  It is no
        witness (it may lie just outside): it only chooses the rows of the dual evidence tried before the
        exact solve (``solve_one``'s ``near``), whose claim is proven as any other (:meth:`_proven`)."""
        dec = np.flatnonzero((signs != 0) & ~self.P.zero_rows)
        self.lp.begin(signs[dec, None] * self.Gn[dec], np.zeros((0, self.Gn.shape[1])))
        v = self.lp.deepest()
        return None if v is None or not np.all(np.isfinite(v)) else self.obj.to_theta @ v

    def chamber_seconds(self) -> float:
        """The seconds a chamber's solver methods may take: ``CHAMBER_SECONDS``, or what is left before
        ``chamber_until`` (a ``time.perf_counter()`` time; None: no budget) if less, at least
        ``CHAMBER_MIN_SECONDS``.  Past them the chamber claims a weaker valid bound (``solve_one``)."""
        until = getattr(self, "chamber_until", None)
        if until is None:
            return CHAMBER_SECONDS
        return min(CHAMBER_SECONDS, max(CHAMBER_MIN_SECONDS, until - time.perf_counter()))

    def _zero(self, signs: np.ndarray) -> tuple | None:
        """The zero proof of a chamber (:func:`relu_gating.search.bnb._zero.positive_dependency`):
        ``(rows, y)``, exact ``y > 0`` with ``sum y_k s_k phi_k = 0`` over rows including every active
        one, or None."""
        from relu_gating.search.bnb._zero import positive_dependency

        t0 = time.perf_counter()
        got = positive_dependency(self.obj.Phi, self.obj.Psi, signs, self.P.zero_rows, self.obj.rank)
        self.stats["zero_tried"] += 1
        self.stats["t_zero"] += time.perf_counter() - t0
        return got

    def _proven(self, mask: np.ndarray, out: Any, target: float) -> tuple[float, tuple | None]:
        """The claim proven for a solve (:func:`relu_gating.search._claims.settle_claims`, as for a
        pattern of the enumeration): first at the claim ``target`` (when it settles the chamber),
        then at the solver's value; inf if the solve claims nothing.  Returns ``(claim, the evidence
        that proves it)``; evidence None: the claim is a claim-free bound."""
        from relu_gating.search._claims import settle_claims

        self._face_proof = False
        if not np.isfinite(out.upper):
            return np.inf, None
        rows, N = out.evidence if out.evidence is not None else (np.zeros(0, dtype=np.int64), np.zeros((0, 0)))
        ev = [(np.asarray(rows, dtype=np.int64), np.asarray(N, dtype=float))]
        u = float(out.upper)
        if u < target < np.inf:
            got = settle_claims(self.obj, mask[None], np.array([target]), ev, near=self.best_value)
            self._offer_found(got)
            if got.keep_evidence[0] and got.bounds[0] <= target:
                self._face_proof = got.bounds[0] < u and 0 in got.replaced
                return float(got.bounds[0]), got.replaced.get(0, ev[0])
        got = settle_claims(self.obj, mask[None], np.array([u]), ev, near=self.best_value)
        self._offer_found(got)
        if not got.keep_evidence[0]:
            self.stats["unproven"] = self.stats.get("unproven", 0) + 1
            self.notes.append(UNPROVEN_NOTE)
            return float(got.bounds[0]), None
        self._face_proof = got.bounds[0] < u and 0 in got.replaced
        return float(got.bounds[0]), got.replaced.get(0, ev[0])

    def _offer_found(self, got: Any) -> None:
        """Offer the neurons the claims' rescue found (strictly inside the chamber, their values proven):
        the solve whose claim it refuted had missed them (seed 7 of ``benchmarks/float_range_sweep.py``)."""
        for theta, value in got.neurons.values():
            self.offer(theta, value)

    def _attained(self, node: Node, mask: np.ndarray) -> bool:
        """Rem 4.4 without a solver: a top eigenvector of the chamber's pencil (either sign) in its
        closed cone gives a neuron whose recomputed value reaches the node bound (to ``tol / 2``): the
        incumbent's, proven to 1e-10 when taken (a float value that cancels, a thin chamber's, is not
        taken as reaching it)."""
        from solvers import top_generalized_eig

        from relu_gating.search.objectives import pattern_matrices

        A, B = pattern_matrices(self.obj, mask[None])
        eig = top_generalized_eig(A, B)
        if not eig.reliable[0]:
            return False
        cands = np.array([1.0, -1.0])[:, None] * (self.obj.to_theta @ eig.vectors[0])[None, :]
        vals = np.nan_to_num(neuron_values(self.obj, cands), nan=-np.inf)
        k = int(np.argmax(vals))
        z = self.obj.Phi @ cands[k]
        inside = bool(np.all(np.where(mask, z, -z) >= -1e-12 * (np.abs(z).max() + 1e-300)))
        self.offer(cands[k])
        return inside and vals[k] >= node.claim - 0.5 * self.tol and self.best_value >= node.claim - 0.5 * self.tol

    def _excluded(self, mask: np.ndarray) -> bool:
        """No admissible neuron in the chamber, decided exactly (and confirmed by the verifier's own
        test, which the leaf ``["x"]`` must pass)."""
        from relu_gating.search.proofs import checker_excluded
        from relu_gating.search._claims import exactly_excluded

        return exactly_excluded(self.obj, mask) and checker_excluded(self._stated_problem(), mask)

    def _stated_problem(self) -> Any:
        """The problem as the verifier states it (built once)."""
        from relu_gating.search.proofs import state_problem

        if not hasattr(self, "_stated"):
            features = self.obj.stated_features
            self._stated = state_problem(self.obj.Phi, self.obj.U_K, features)
        return self._stated

