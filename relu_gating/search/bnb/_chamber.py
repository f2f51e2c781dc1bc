"""Chambers of the branch and bound: the exact solve of a leaf and the claim its check proves (private).

A node with every row decided is a chamber.  It is settled by the per-pattern machinery of the
enumeration (:func:`relu_gating.search._exact.tasks._solve_one`: two-row or SDP evidence first, else
the exact solve with dual evidence), and its leaf claims what the verifier proves for it, as for a
pattern of the enumeration certificate (:func:`relu_gating.certificate._tree.chamber_bound`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from relu_gating.search._exact.evidence import CLAIM_SLACK
from relu_gating.search.bnb._tree_build import Node
from relu_gating.search.objectives import neuron_values

__all__ = ["Chambers"]


class Chambers:
    """The chamber leaves of :class:`relu_gating.search.bnb._search.Search` (a mixin: it uses the
    search's ``obj``, ``P``, ``stats``, ``alpha``, ``method``, ``best_value``, ``offer``, ``tol``)."""

    obj: Any
    P: Any
    stats: dict
    alpha: float
    tol: float
    method: str
    best_value: float

    def offer(self, theta: np.ndarray) -> None:  # pragma: no cover - provided by the search
        raise NotImplementedError

    def chamber(self, node: Node) -> None:
        """Solve a chamber exactly; its leaf claims the node bound or, if lower, what the verifier's
        check proves for the solve (:meth:`_proven`)."""
        from relu_gating.search.state import PRUNED
        from relu_gating.search._exact.tasks import _solve_one, prune_target

        t0 = time.perf_counter()
        self.stats["chambers"] += 1
        assert node.signs is not None and node.v is not None  # an open node
        mask = (node.signs > 0) & ~self.P.zero_rows
        theta0 = self.obj.to_theta @ node.v[0]
        z = self.obj.Phi @ theta0
        nz = ~self.P.zero_rows
        strict = bool(np.all(np.where(mask, z, -z)[nz] > 0))
        if self._attained(node, mask):  # the node bound is reached inside the cone: nothing to solve
            node.settle("c")
            self.stats["attained"] += 1
            self.stats["t_chamber"] += time.perf_counter() - t0
            return
        target = prune_target(self.best_value, self.alpha)
        out = _solve_one(self.obj, mask, self.method, theta0 if strict else None, target)
        d = self._proven(mask, out, target)
        if out.method == "dual-first" and not d <= target:  # the check here does not confirm it: solve
            out = _solve_one(self.obj, mask, self.method, theta0 if strict else None)
            d = self._proven(mask, out, target)
        if out.status == PRUNED and self._excluded(mask):
            node.settle("x")
        else:
            if np.isfinite(out.lower):
                self.offer(out.theta)
            if d < node.claim:  # only a settled "c" node shows its evidence (none: the claim alone)
                node.claim = max(d, float(out.upper))
                node.evidence = out.evidence if out.evidence is not None else (np.zeros(0, int), np.zeros((0, 0)))
            node.settle("c")
        self.stats["t_chamber"] += time.perf_counter() - t0

    def _proven(self, mask: np.ndarray, out: Any, target: float) -> float:
        """The bound the verifier's check proves for a solve's claim (its dual evidence, the pencil
        inequality at the claim, the support bound: as for a pattern of the enumeration); inf if
        the solve claims nothing.  First at the claim ``target`` (floats alone suffice there when it
        settles the chamber), then at the solver's value and a little above it (exact checks)."""
        from relu_gating.certificate._tree import chamber_bound

        if not np.isfinite(out.upper):
            return np.inf
        rows, N = out.evidence if out.evidence is not None else (np.zeros(0, dtype=np.int64), np.zeros((0, 0)))
        rows, N, u = np.asarray(rows), np.asarray(N), float(out.upper)
        if u < target < np.inf:
            d = chamber_bound(self._stated_problem(), mask, target, rows, N)
            if d <= target:
                return d
        d = chamber_bound(self._stated_problem(), mask, u, rows, N)
        for rel in CLAIM_SLACK:  # a claim at the solver's value can fail the exact check by rounding
            if d <= u * (1 + rel) + rel:
                break
            d = min(d, chamber_bound(self._stated_problem(), mask, u * (1 + rel) + rel, rows, N))
        return d

    def _attained(self, node: Node, mask: np.ndarray) -> bool:
        """Rem 4.4 without a solver: a top eigenvector of the chamber's pencil (either sign) in its
        closed cone gives a neuron whose recomputed value reaches the node bound (to ``tol / 2``)."""
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
        return inside and vals[k] >= node.claim - 0.5 * self.tol

    def _excluded(self, mask: np.ndarray) -> bool:
        """The verifier's own test that a chamber has no admissible neuron."""
        from relu_gating.certificate._verify import _excluded

        return _excluded(self._stated_problem(), mask)

    def _stated_problem(self) -> Any:
        """The problem as the verifier states it (built once)."""
        from relu_gating.certificate._problem import state_problem

        if not hasattr(self, "_stated"):
            features = self.obj.stated_features
            self._stated = state_problem(self.obj.Phi, self.obj.U_K, features)
        return self._stated

