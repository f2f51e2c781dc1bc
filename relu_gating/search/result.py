"""The result of a best-neuron query (:class:`NeuronResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["NeuronResult"]


@dataclass(frozen=True)
class NeuronResult:
    """A certified best neuron.

    Attributes
    ----------
    theta : ndarray, shape (m,)
        The neuron's weights (bias last when ``Phi = [H, 1]``), in the caller's
        coordinates, scaled so that ``||(I - Pi_H) relu(Phi theta)|| = 1``
        (``||relu(Phi theta)|| = 1`` without features): any positive multiple
        is the same neuron up to scale, with the same value.
    value : float
        Objective of ``relu(Phi theta)``, recomputed from the neuron.
    upper_bound : float
        Upper bound on the objective over *all* neurons.
    alpha : float
        Requested optimality factor.
    certified : bool
        ``value >= alpha * upper_bound - tol``.
    pattern : ndarray of bool, shape (n,)
        The gating pattern (chamber) in whose closed cone ``theta`` lies.
    objective : {"captured", "marginal"}
        ``N_K`` (no features) or the marginal gain ``G_H``.
    n_patterns : int
    n_exact, n_bound, n_pruned : int
        Patterns settled by an exact per-pattern solve (or an attained
        unconstrained bound), by an upper bound below ``value / alpha``, and
        excluded outright (only ``h = 0``).
    seconds : dict
        Wall time per phase.
    tol : float
        Absolute tolerance of the certificate.
    packed, witnesses, bounds, lowers, settlement, methods
        The certificate data: every pattern (``packed``: ``np.packbits`` of its
        mask, ``ceil(n / 8)`` bytes; :attr:`masks` unpacks them) with its
        strict witness, its upper bound, the best value found in it, how it
        was settled, and by what.  A streamed query (``memory=``) returns
        read-only memory maps of files it keeps in ``store`` (kept alive by
        this result).
    rank : int
    exact_witnesses : dict
        Pattern index -> exact integer witness, for chambers too thin for a
        float64 witness (rows dependent to within rounding).
    fingerprint : str
        SHA-256 of the inputs (Phi, U_K, features).
    evidence : dict
        Pattern index -> ``(rows, N)``: for each pattern solved exactly below
        its cone-free bound, nonnegative multipliers ``N`` on its facet rows
        with ``bound * B_S - A_S - G_T^T N G_T`` positive semidefinite (the
        dual of the doubly nonnegative relaxation), re-checked by
        :func:`relu_gating.verify`.
    K : int
        Number of columns of ``U_K``.
    features : {"none", "bias", "array"}
        The features the objective was computed with.
    notes : tuple of str
        Near-ties, solver failures and other remarks.
    strategy : {"enumerate", "branch-and-bound"}
        How the query was answered.
    tree : dict or None
        Branch and bound only: the tree certificate (``nodes`` in preorder, see
        ``certificate/FORMAT.md``) and run statistics (``stats``); the per-pattern
        arrays are then empty and ``n_patterns`` counts the chambers solved.
    n_nodes : int
        Branch and bound only: nodes created.
    """

    theta: np.ndarray
    value: float
    upper_bound: float
    alpha: float
    certified: bool
    pattern: np.ndarray
    objective: str
    n_patterns: int
    n_exact: int
    n_bound: int
    n_pruned: int
    seconds: dict
    tol: float
    packed: np.ndarray = field(repr=False)
    witnesses: np.ndarray = field(repr=False)
    bounds: np.ndarray = field(repr=False)
    lowers: np.ndarray = field(repr=False)
    settlement: np.ndarray = field(repr=False)
    methods: dict = field(repr=False)
    rank: int = 0
    fingerprint: str = ""
    notes: tuple = ()
    exact_witnesses: dict = field(default_factory=dict, repr=False)
    evidence: dict = field(default_factory=dict, repr=False)
    K: int = 0
    features: str = "none"
    features_sha256: str | None = None
    store: Any = field(default=None, repr=False, compare=False)
    strategy: str = "enumerate"
    tree: dict | None = field(default=None, repr=False)
    n_nodes: int = 0

    @property
    def masks(self) -> np.ndarray:
        """Bool array, shape (N, n), unpacked from :attr:`packed` on each access (keep a reference)."""
        return np.unpackbits(np.asarray(self.packed), axis=1, count=self.pattern.size).astype(bool)

    @property
    def gap(self) -> float:
        """``upper_bound - value`` (0 when exact)."""
        return max(0.0, self.upper_bound - self.value)

    def to_dict(self) -> dict:
        """JSON-ready certificate (see :func:`relu_gating.certificate.result_to_dict`)."""
        from relu_gating.certificate import result_to_dict

        return result_to_dict(self)

    def __repr__(self) -> str:
        state = "certified" if self.certified else "NOT certified"
        return (f"NeuronResult(value={self.value:.12g}, upper_bound={self.upper_bound:.12g}, alpha={self.alpha:g}, "
                f"{state}, objective={self.objective!r}, theta={np.array2string(self.theta, precision=6)}, "
                f"active={int(self.pattern.sum())}/{self.pattern.size}, patterns={self.n_patterns} "
                f"(exact {self.n_exact}, bound {self.n_bound}, pruned {self.n_pruned}))")
