"""The result of a best-neuron query (:class:`NeuronResult`).

A user reads the small core first, as SciPy's ``OptimizeResult``: ``theta``, ``value``,
``upper_bound``, ``certified``, ``alpha`` and :attr:`NeuronResult.status`; the certificate's data
are grouped in :attr:`NeuronResult.certificate` and the run's counts and timings in
:attr:`NeuronResult.stats`.

Names shared by every result of the package (``NeuronResult``, ``VariationNorm``,
``ConeEigResult``): ``lower`` and ``upper`` for the bounds, ``remarks`` for the notes, reasons or
message, ``timings`` (seconds per phase, with ``"total"``).  The older names (``value``,
``upper_bound``, ``notes``, ``seconds``) stay.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["NeuronResult", "Status", "CertificateData", "SearchStats"]


class Status(str, enum.Enum):
    """What a best-neuron result proves.

    OPTIMAL: certified at ``alpha = 1``: ``value`` is the optimum over all neurons (to ``tol``).
    CERTIFIED: certified at the requested ``alpha < 1``: ``value >= alpha * upper_bound - tol``.
    NOT_CERTIFIED: the run stopped (time budget, interrupt) before the requested ``alpha``;
    ``value`` and ``upper_bound`` are still valid bounds on the optimum.
    """

    OPTIMAL = "optimal"
    CERTIFIED = "certified"
    NOT_CERTIFIED = "not-certified"


@dataclass(frozen=True)
class CertificateData:
    """The certificate's data of a :class:`NeuronResult` (the same arrays, not copies).

    Enumeration: every pattern (``packed`` masks, ``witnesses``, ``bounds``, ``lowers``,
    ``settlement``, ``methods``), the ``evidence`` of the exactly solved ones and the
    ``exact_witnesses`` of thin chambers; branch and bound: the ``tree``.  The stated problem it
    answers: ``K``, ``features``, ``features_sha256``, ``fingerprint``; ``rank`` and ``tol``.
    """

    packed: np.ndarray = field(repr=False)
    witnesses: np.ndarray = field(repr=False)
    bounds: np.ndarray = field(repr=False)
    lowers: np.ndarray = field(repr=False)
    settlement: np.ndarray = field(repr=False)
    methods: dict = field(repr=False)
    evidence: dict = field(repr=False)
    exact_witnesses: dict = field(repr=False)
    tree: dict | None = field(repr=False)
    K: int
    features: str
    features_sha256: str | None
    fingerprint: str
    rank: int
    tol: float


@dataclass(frozen=True)
class SearchStats:
    """How a best-neuron query ran: the strategy, what was settled and how, and the time per phase."""

    strategy: str
    n_patterns: int
    n_exact: int
    n_bound: int
    n_pruned: int
    n_nodes: int
    timings: dict


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
    def status(self) -> Status:
        """:class:`Status`: optimal, certified at ``alpha < 1``, or not certified."""
        if not self.certified:
            return Status.NOT_CERTIFIED
        return Status.OPTIMAL if self.alpha >= 1 else Status.CERTIFIED

    @property
    def certificate(self) -> CertificateData:
        """The certificate's data, grouped (the same arrays as the flat attributes)."""
        return CertificateData(
            packed=self.packed, witnesses=self.witnesses, bounds=self.bounds, lowers=self.lowers,
            settlement=self.settlement, methods=self.methods, evidence=self.evidence,
            exact_witnesses=self.exact_witnesses, tree=self.tree, K=self.K, features=self.features,
            features_sha256=self.features_sha256, fingerprint=self.fingerprint, rank=self.rank, tol=self.tol)

    @property
    def stats(self) -> SearchStats:
        """The run's strategy, counts and timings, grouped."""
        return SearchStats(strategy=self.strategy, n_patterns=self.n_patterns, n_exact=self.n_exact,
                           n_bound=self.n_bound, n_pruned=self.n_pruned, n_nodes=self.n_nodes,
                           timings=self.timings)

    @property
    def lower(self) -> float:
        """The shared name of the lower bound on the optimum: :attr:`value`."""
        return self.value

    @property
    def upper(self) -> float:
        """The shared name of the upper bound on the optimum: :attr:`upper_bound`."""
        return self.upper_bound

    @property
    def remarks(self) -> tuple:
        """The shared name of the remarks: :attr:`notes`."""
        return tuple(self.notes)

    @property
    def timings(self) -> dict:
        """Seconds per phase, with ``"total"`` (the shared name of :attr:`seconds`)."""
        out = {k: float(v) for k, v in self.seconds.items()}
        out.setdefault("total", float(sum(out.values())))
        return out

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
