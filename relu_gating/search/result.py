"""The result of a best-neuron query (:class:`NeuronResult`).

A user reads the small core first, as SciPy's ``OptimizeResult``: ``theta``, ``value``,
``upper_bound``, ``alpha``, ``certified`` and :attr:`NeuronResult.status`, ``notes`` (``remarks``)
and ``seconds`` (``timings``).  The rest is grouped, each group its own type:

* :attr:`NeuronResult.certificate`, the proof, one of two types, each complete (no half-empty
  fields): a :class:`PatternCertificate` (the enumeration: every chamber with its witness, bound and
  settlement) or a :class:`TreeCertificate` (the branch and bound: its tree);
* :attr:`NeuronResult.problem`, a :class:`ProblemId`: which problem it answers (objective, ``K``,
  rank, features, fingerprint), what the certificate records and the checker compares;
* :attr:`NeuronResult.stats`, a :class:`SearchStats`: how the run went (the strategy, its counts,
  and why it stopped, :data:`STOP_REASONS`).

The flat attributes of release 0.3 (``packed``, ``witnesses``, ``bounds``, ``lowers``,
``settlement``, ``methods``, ``evidence``, ``exact_witnesses``, ``store``, ``tree``; ``objective``,
``K``, ``rank``, ``features``, ``features_sha256``, ``fingerprint``; ``strategy``, ``n_patterns``,
``n_exact``, ``n_bound``, ``n_pruned``, ``n_nodes``) stay for one release, as read-only properties
over the groups (a tree result's per-pattern arrays read as empty).

Names shared by every result of the package (``NeuronResult``, ``VariationNorm``,
``ConeEigResult``): ``lower`` and ``upper`` for the bounds, ``remarks`` for the notes, reasons or
message, ``timings`` (seconds per phase, with ``"total"``).  The older names (``value``,
``upper_bound``, ``notes``, ``seconds``) stay.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

__all__ = ["NeuronResult", "Status", "PatternCertificate", "TreeCertificate", "SearchStats", "ProblemId",
           "STOP_REASONS"]

#: Why a search ended (:attr:`SearchStats.stop`): every chamber or node settled (``"settled"``), the time
#: budget ``max_seconds`` ran out (``"time"``), or Ctrl-C (``"interrupted"``, the branch and bound's;
#: an interrupted enumeration raises).  Human remarks stay in ``notes``.
STOP_REASONS = ("settled", "time", "interrupted")


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
class PatternCertificate:
    """The enumeration's certificate: every chamber (realized gating pattern) and how it was settled.

    Attributes
    ----------
    packed : ndarray of uint8, shape (N, ceil(n / 8))
        ``np.packbits`` of each chamber's mask.
    witnesses : ndarray, shape (N, m)
        A strict witness of each chamber (``exact_witnesses`` where float64 is too coarse).
    bounds, lowers : ndarray, shape (N,)
        Each chamber's upper bound and the best value found in it.
    settlement : ndarray of int8, shape (N,)
        How each was settled (0 U, 1 B, 2 E, 3 P).
    methods : dict
        Chamber index -> the exact method that settled it.
    evidence : dict
        Chamber index -> ``(rows, N)``, the dual evidence of a bound below the cone-free one.
    exact_witnesses : dict
        Chamber index -> exact integer witness, for chambers too thin for float64.
    store : object
        The streamed search's files, kept alive while the (memory-mapped) arrays are used.
    """

    packed: np.ndarray = field(repr=False)
    witnesses: np.ndarray = field(repr=False)
    bounds: np.ndarray = field(repr=False)
    lowers: np.ndarray = field(repr=False)
    settlement: np.ndarray = field(repr=False)
    methods: dict = field(default_factory=dict, repr=False)
    evidence: dict = field(default_factory=dict, repr=False)
    exact_witnesses: dict = field(default_factory=dict, repr=False)
    store: Any = field(default=None, repr=False, compare=False)

    kind = "patterns"

    def __len__(self) -> int:
        return int(np.shape(self.bounds)[0])


@dataclass(frozen=True)
class TreeCertificate:
    """The branch and bound's certificate: its tree.

    Attributes
    ----------
    tree : dict
        ``nodes`` in preorder (``certificate/FORMAT.md``) and the run's statistics ``stats``.
    candidates : ndarray, shape (k, m), or None
        The best neurons of distinct patterns the search met, best first (not part of the
        certificate and not written: a greedy layer's next step starts from them, issue 39).
    """

    tree: dict = field(repr=False)
    candidates: Any = field(default=None, repr=False, compare=False)

    kind = "tree"

    @property
    def nodes(self) -> list:
        return self.tree["nodes"]

    @property
    def stats(self) -> dict:
        return self.tree.get("stats", {})


Certificate = Union[PatternCertificate, TreeCertificate]


@dataclass(frozen=True)
class SearchStats:
    """How a best-neuron query ran: the strategy, what was settled and how, and why it stopped.

    Attributes
    ----------
    strategy : {"enumerate", "branch-and-bound"}
        How the query was answered.
    n_patterns : int
        Chambers listed (the enumeration) or solved and found empty (the branch and bound).
    n_exact, n_bound, n_pruned : int
        Patterns settled by an exact per-pattern solve (or an attained unconstrained bound), by an
        upper bound below ``value / alpha`` (branch and bound: leaves), and excluded outright.
    n_nodes : int
        Branch and bound only: nodes created.
    stop : {"settled", "time", "interrupted"}
        Why the search ended (:data:`STOP_REASONS`); ``notes`` say it in words.
    """

    strategy: str
    n_patterns: int
    n_exact: int
    n_bound: int
    n_pruned: int
    n_nodes: int = 0
    stop: str = "settled"

    def __post_init__(self) -> None:
        if self.stop not in STOP_REASONS:
            raise ValueError(f"stop must be one of {STOP_REASONS}, got {self.stop!r}")


@dataclass(frozen=True)
class ProblemId:
    """Which problem a result answers: what its certificate records and the checker compares.

    Attributes
    ----------
    objective : {"captured", "marginal"}
        ``N_K`` (no features) or the marginal gain ``G_H``.
    K : int
        Number of columns of ``U_K``.
    rank : int
        Rank of ``Phi``.
    features : {"none", "bias", "array"}
        The features the objective was computed with.
    features_sha256 : str or None
        SHA-256 of a features array (``features == "array"``).
    fingerprint : str
        SHA-256 of the inputs (Phi, U_K, features); empty where the strategy records none.
    """

    objective: str
    K: int = 0
    rank: int = 0
    features: str = "none"
    features_sha256: str | None = None
    fingerprint: str = ""


def _empty(n: int, m: int) -> dict:
    """The per-pattern arrays of a result with no pattern list (a tree), as release 0.3 read them."""
    return {"packed": np.zeros((0, (n + 7) // 8), dtype=np.uint8), "witnesses": np.zeros((0, m)),
            "bounds": np.zeros(0), "lowers": np.zeros(0), "settlement": np.zeros(0, dtype=np.int8)}


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
    seconds : dict
        Wall time per phase (:attr:`timings` adds ``"total"``).
    tol : float
        Absolute tolerance of the certificate.
    certificate : PatternCertificate or TreeCertificate
        The proof, complete in its own type: every chamber (the enumeration; a
        streamed query's arrays are read-only memory maps of files kept alive by
        ``certificate.store``) or the tree (the branch and bound).
    problem : ProblemId
        Which problem it answers: objective, ``K``, rank, features, fingerprint.
    stats : SearchStats
        How the run went: strategy, counts, and why it stopped (``stats.stop``).
    notes : tuple of str
        Near-ties, solver failures and other remarks (:attr:`remarks`).

    The release 0.3 names (``packed``, ``witnesses``, ``bounds``, ``lowers``, ``settlement``,
    ``methods``, ``evidence``, ``exact_witnesses``, ``store``, ``tree``; ``objective``, ``K``, ``rank``,
    ``features``, ``features_sha256``, ``fingerprint``; ``strategy``, ``n_patterns``, ``n_exact``,
    ``n_bound``, ``n_pruned``, ``n_nodes``) are read-only properties over these, for one release.
    """

    theta: np.ndarray
    value: float
    upper_bound: float
    alpha: float
    certified: bool
    pattern: np.ndarray
    seconds: dict
    tol: float
    certificate: Certificate = field(repr=False)
    problem: ProblemId = field(repr=False)
    stats: SearchStats = field(repr=False)
    notes: tuple = ()

    # release 0.3's flat names, read-only over the groups (one release)
    objective = property(lambda self: self.problem.objective, doc="``problem.objective``.")
    K = property(lambda self: self.problem.K, doc="``problem.K``.")
    rank = property(lambda self: self.problem.rank, doc="``problem.rank``.")
    features = property(lambda self: self.problem.features, doc="``problem.features``.")
    features_sha256 = property(lambda self: self.problem.features_sha256, doc="``problem.features_sha256``.")
    fingerprint = property(lambda self: self.problem.fingerprint, doc="``problem.fingerprint``.")
    strategy = property(lambda self: self.stats.strategy, doc="``stats.strategy``.")
    n_patterns = property(lambda self: self.stats.n_patterns, doc="``stats.n_patterns``.")
    n_exact = property(lambda self: self.stats.n_exact, doc="``stats.n_exact``.")
    n_bound = property(lambda self: self.stats.n_bound, doc="``stats.n_bound``.")
    n_pruned = property(lambda self: self.stats.n_pruned, doc="``stats.n_pruned``.")
    n_nodes = property(lambda self: self.stats.n_nodes, doc="``stats.n_nodes``.")

    def _listed(self, name: str) -> Any:
        """A field of the pattern certificate; for a tree, what release 0.3 held there (empty)."""
        if isinstance(self.certificate, PatternCertificate):
            return getattr(self.certificate, name)
        if name in ("methods", "evidence", "exact_witnesses"):
            return {}
        if name == "store":
            return None
        return _empty(self.pattern.size, self.theta.size)[name]

    packed = property(lambda self: self._listed("packed"), doc="``PatternCertificate.packed`` (empty for a tree).")
    witnesses = property(lambda self: self._listed("witnesses"), doc="``PatternCertificate.witnesses``.")
    bounds = property(lambda self: self._listed("bounds"), doc="``PatternCertificate.bounds``.")
    lowers = property(lambda self: self._listed("lowers"), doc="``PatternCertificate.lowers``.")
    settlement = property(lambda self: self._listed("settlement"), doc="``PatternCertificate.settlement``.")
    methods = property(lambda self: self._listed("methods"), doc="``PatternCertificate.methods``.")
    evidence = property(lambda self: self._listed("evidence"), doc="``PatternCertificate.evidence``.")
    exact_witnesses = property(lambda self: self._listed("exact_witnesses"),
                               doc="``PatternCertificate.exact_witnesses``.")
    store = property(lambda self: self._listed("store"), doc="``PatternCertificate.store``.")

    @property
    def tree(self) -> dict | None:
        """The tree certificate (``nodes``, ``stats``) of a branch and bound; None for an enumeration."""
        return self.certificate.tree if isinstance(self.certificate, TreeCertificate) else None

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
