"""Certified best-neuron search: global comparison across gating patterns.

Given a layer input ``Phi``, a low-frequency basis ``U_K`` and optionally the
features ``H`` already in the layer, find

.. math::

    \\max_{\\theta}\\; N_K(\\operatorname{relu}(\\Phi\\theta))
    \\quad\\text{or}\\quad
    \\max_{\\theta}\\; G_H(\\operatorname{relu}(\\Phi\\theta)),

with a proof.  The method (SPEC section 3): enumerate the realized gating
patterns exactly; bound every pattern cheaply (vectorised); solve the
cone-constrained generalized eigenvalue problem of a pattern exactly only while
its bound can still beat ``best / alpha``.  The result is certified
alpha-optimal; ``alpha = 1`` is exact (to ``tol``).

References
----------
Prop 4.3, Rem 4.4, Prop 4.5, Lemma 5.9 and Thm 5.10 of the paper.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from relu_gating.search._tasks import chunk_bounds, solve_chunk
from relu_gating._progress import Progress
from relu_gating.search._state import BOUND, EXACT, PRUNED, UNSETTLED, SearchState, fingerprint
from relu_gating.errors import InputError, SolverFailure
from relu_gating.search.objectives import make_objective, neuron_values, with_rank

__all__ = ["NeuronResult", "best_neuron", "best_neuron_from_samples"]


@dataclass(frozen=True)
class NeuronResult:
    """A certified best neuron.

    Attributes
    ----------
    theta : ndarray, shape (m,)
        The neuron's weights (bias last when ``Phi = [H, 1]``).
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
    masks, witnesses, bounds, lowers, settlement, methods
        The certificate data: every pattern with its strict witness, its upper
        bound, the best value found in it, how it was settled, and by what.
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
    masks: np.ndarray = field(repr=False)
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

    @property
    def gap(self) -> float:
        """``upper_bound - value`` (0 when exact)."""
        return max(0.0, self.upper_bound - self.value)

    def to_dict(self) -> dict:
        """JSON-ready certificate (see :func:`relu_gating.certificate.result_to_dict`)."""
        from relu_gating.certificate import result_to_dict

        return result_to_dict(self)


class _Saver:
    """Checkpoint writer: at most every ``every`` seconds, and on demand."""

    def __init__(self, path: str | None, key: str, state: SearchState, every: float = 10.0) -> None:
        self.path, self.key, self.state, self.every = path, key, state, every
        self.last = time.perf_counter()

    def save(self) -> None:
        if self.path:
            self.state.save(self.path, self.key)
            self.last = time.perf_counter()

    def maybe_save(self) -> None:
        if self.path and time.perf_counter() - self.last >= self.every:
            self.save()


def _executor_map(executor: Any, fn: Any, tasks: list[tuple]) -> Iterator:
    """Yield ``fn(*task)`` per task: in-process (lazily), on an Executor, or on Dask.

    In-process results come one at a time, so an interrupt keeps what was done.
    """
    if executor is None:
        for t in tasks:
            yield fn(*t)
    elif hasattr(executor, "gather"):  # dask.distributed.Client
        futures = [executor.submit(fn, *t, pure=False) for t in tasks]
        yield from executor.gather(futures)
    elif tasks:
        yield from executor.map(fn, *zip(*tasks))


def best_neuron(
    Phi: Any,
    U_K: Any,
    *,
    features: Any = "bias",
    alpha: float = 1.0,
    method: str = "auto",
    max_patterns: int | None = None,
    chunk_size: int = 8192,
    batch_size: int = 64,
    tol: float = 1e-9,
    executor: Any = None,
    checkpoint: str | None = None,
    progress: bool | None = False,
    patterns: Any = None,
) -> NeuronResult:
    """Find the certified best single ReLU neuron.

    Parameters
    ----------
    Phi : array_like, shape (n, m)
        Layer input with the ones column (``[H_{l-1}, 1]``), samples as rows.
    U_K : array_like, shape (n, K)
        Orthonormal low-frequency eigenvectors.
    features : "bias" (default), None or array_like, shape (n, q)
        Features already in the layer: the marginal gain ``G_H(h)`` over them
        is maximised (Prop 4.5; ``"bias"`` is the ones column, the interesting
        default).  None maximises ``N_K(h)`` (Prop 4.3), which a constant
        neuron maximises whenever ``u_1`` is constant.
    alpha : float in (0, 1]
        Stop as soon as ``value >= alpha * (largest remaining bound)``.
    method : str
        Per-pattern exact method of :mod:`solvers` (``"auto"``, ``"faces"``,
        ``"dnn"``); failures fall back to the others.
    max_patterns : int, optional
        Refuse (:class:`~relu_gating.errors.ProblemTooLargeError`) before
        enumerating more patterns than this.
    chunk_size, batch_size : int
        Patterns per bound chunk / per exact-solve task.
    tol : float
        Absolute tolerance of the comparison ``value >= alpha * bound``.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the chunks run; in-process by default.
    checkpoint : path, optional
        ``.npz`` file written at most every 10 s, at the end and on an
        interrupt (Ctrl-C); a run called again with the same inputs resumes
        from it, in either phase, without redoing finished work.
    progress : bool or None
        Progress bar on stderr (None: only on a terminal).
    patterns : PatternSet, optional
        The output of :func:`relu_gating.enumerate_patterns` for this ``Phi``,
        to reuse across queries on the same layer (a greedy layer asks one
        query per neuron); enumerated here when omitted.

    Returns
    -------
    NeuronResult

    Examples
    --------
    >>> import numpy as np
    >>> from relu_gating import best_neuron
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(12, 2)); Phi = np.c_[X, np.ones(12)]
    >>> U_K = np.linalg.qr(rng.normal(size=(12, 3)))[0]
    >>> res = best_neuron(Phi, U_K)
    >>> res.certified and res.value <= res.upper_bound + 1e-9
    True
    """
    from relu_gating.patterns import enumerate_patterns

    t0 = time.perf_counter()
    if not (isinstance(alpha, (int, float, np.floating)) and 0 < alpha <= 1):
        raise InputError(f"alpha must be a number in (0, 1], got {alpha!r}")
    if not (isinstance(tol, (int, float, np.floating)) and 0 <= tol < 1e-3):
        raise InputError(f"tol must be a number in [0, 1e-3), got {tol!r}")
    for name, val in (("chunk_size", chunk_size), ("batch_size", batch_size)):
        if not isinstance(val, (int, np.integer)) or val < 1:
            raise InputError(f"{name} must be a positive integer, got {val!r}")
    obj = make_objective(Phi, U_K, features)  # validates before the expensive part
    if patterns is None:
        patterns = enumerate_patterns(obj.Phi, max_patterns=max_patterns, progress=progress is not False)
    elif not hasattr(patterns, "check_belongs_to"):
        raise InputError(f"patterns must be the PatternSet of this Phi, got {type(patterns).__name__}")
    else:
        patterns.check_belongs_to(obj.Phi)
    t_enum = time.perf_counter()
    obj = with_rank(obj, patterns.rank)  # the exact rank decided by the enumerator
    masks, witnesses = patterns.masks, patterns.witnesses
    N = masks.shape[0]
    key = fingerprint(obj.Phi, obj.U_K, obj.Q_H, extra=f"{obj.kind}|{N}")

    state = SearchState.load(checkpoint, key, N, obj=obj, masks=masks) if checkpoint else None
    resumed = state is not None
    state = state if state is not None else SearchState.empty(N)
    saver = _Saver(checkpoint, key, state)
    try:
        # phase 1: cheap bounds for every chunk not yet bounded (all of them unless resuming)
        todo = [s for s in range(0, N, chunk_size) if not np.all(np.isfinite(state.upper[s:s + chunk_size]))]
        tasks = [(obj, np.arange(s, min(s + chunk_size, N)), masks[s:s + chunk_size], witnesses[s:s + chunk_size], tol)
                 for s in todo]
        with Progress(len(todo) * chunk_size, "bounds", enabled=progress) as bar:
            for out in _executor_map(executor, chunk_bounds, tasks):
                state.absorb(out)
                bar.update(out.index.size)
                saver.maybe_save()
        t_bounds = time.perf_counter()
        # phase 2: exact solves, largest bound first, until best >= alpha * (largest open bound)
        with Progress(None, "exact solves", enabled=progress) as bar:
            while True:
                open_idx = state.open_patterns(alpha, tol)
                if open_idx.size == 0:
                    break
                n_workers = 1 if executor is None else 4
                take = open_idx[: batch_size * n_workers]
                tasks = [(obj, part, masks[part], method, witnesses[part])
                         for part in (take[s:s + batch_size] for s in range(0, take.size, batch_size))]
                for out in _executor_map(executor, solve_chunk, tasks):
                    state.absorb(out)
                    bar.update(out.index.size, note=f"best {state.best_value:.6f}")
                saver.maybe_save()
    except KeyboardInterrupt:
        saver.save()
        raise
    saver.save()
    t_solve = time.perf_counter()
    return _finish(obj, patterns, masks, state, alpha, tol, key, resumed,
                   {"enumerate": t_enum - t0, "bounds": t_bounds - t_enum, "solve": t_solve - t_bounds,
                    "total": time.perf_counter() - t0})


def _finish(obj, patterns, masks: np.ndarray, state: SearchState, alpha: float, tol: float, key: str, resumed: bool, seconds: dict) -> NeuronResult:
    status = state.status.copy()
    status[status == UNSETTLED] = BOUND
    notes = list(dict.fromkeys(state.notes))
    if state.best_theta is None:  # every pattern was excluded: nothing to choose
        theta, value, z = np.zeros(obj.Phi.shape[1]), 0.0, np.zeros(obj.n)
        pattern = np.zeros(obj.n, dtype=bool)
        notes.append("no admissible neuron: every relu(Phi theta) is 0 or lies in col(features); value 0")
        return _result(obj, patterns, masks, state, status, theta, value, pattern, alpha, tol, key, notes, seconds)
    theta = state.best_theta
    value = float(neuron_values(obj, theta[None, :])[0])  # recomputed from relu(Phi theta)
    if np.isnan(value):
        raise SolverFailure("the incumbent neuron is excluded on recomputation; please report this input")
    z = obj.Phi @ theta
    pattern = masks[state.best_index].copy()
    # the optimum may lie on a wall: report the chamber it was found in, which
    # agrees with the signs of Phi theta wherever they are nonzero
    if not np.all(np.where(z > 0, pattern, True) & np.where(z < 0, ~pattern, True)):
        pattern = z > 0
    if resumed:
        notes.append("resumed from checkpoint")
    notes.extend(_near_ties(masks, state, z, value))
    return _result(obj, patterns, masks, state, status, theta, value, pattern, alpha, tol, key, notes, seconds)


def _result(obj, patterns, masks, state, status, theta, value, pattern, alpha, tol, key, notes, seconds):
    bounds = np.where(status == PRUNED, 0.0, state.upper)
    upper = float(max(bounds.max(initial=-np.inf), value))
    return NeuronResult(
        theta=theta, value=float(value), upper_bound=upper, alpha=float(alpha),
        certified=bool(value >= alpha * upper - tol), pattern=pattern, objective=obj.kind,
        n_patterns=int(status.size), n_exact=int(np.sum(status == EXACT)), n_bound=int(np.sum(status == BOUND)),
        n_pruned=int(np.sum(status == PRUNED)), seconds=seconds, tol=float(tol), masks=masks,
        witnesses=patterns.witnesses, bounds=bounds, lowers=state.lower.copy(), settlement=status,
        methods=dict(state.methods), rank=int(patterns.rank), fingerprint=key, notes=tuple(notes),
        exact_witnesses=dict(getattr(patterns, "exact_witnesses", None) or {}),
        evidence=dict(state.evidence), K=int(obj.U_K.shape[1]), features=obj.features,
        features_sha256=obj.features_sha256,
    )


def _near_ties(masks: np.ndarray, state: SearchState, z: np.ndarray, value: float) -> list[str]:
    """Patterns reaching ``value`` within 1e-9 whose closed cone does not hold ``theta``.

    Chambers sharing the wall on which the optimum lies hold the same neuron
    and are not reported; any other is a genuine near-tie (a second optimum).
    """
    lowers = np.nan_to_num(state.lower, nan=-np.inf)
    close = np.flatnonzero(lowers >= value - 1e-9)
    if close.size < 2:
        return []
    eps = 1e-9 * (np.abs(z).max() + 1e-300)
    holds = np.all(np.where(z > eps, masks[close], True) & np.where(z < -eps, ~masks[close], True), axis=1)
    others = close[~holds]
    if others.size == 0:
        return []
    return [f"near-tie: {others.size} other pattern(s) reach {value:.12f} within 1e-9 with a different "
            f"neuron (e.g. pattern {int(others[0])}): the optimum may not be unique"]


def best_neuron_from_samples(
    X: Any,
    *,
    K: int = 4,
    graph: str = "knn",
    laplacian: str = "combinatorial",
    features: Any = "bias",
    graph_options: dict | None = None,
    **search_options: Any,
) -> NeuronResult:
    """Build ``Phi = [X, 1]`` and ``U_K`` from samples, then :func:`best_neuron`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Samples as rows (the paper's ``X`` is ``d x n``).
    K : int
        Number of low-frequency eigenvectors.
    graph, laplacian : str
        Graph kind for :func:`relu_gating.sample_graph` and Laplacian
        (``"combinatorial"`` or ``"sym"``).
    features : None, "bias" or array_like
        As in :func:`best_neuron`.
    graph_options : dict, optional
        Extra keyword arguments of :func:`relu_gating.sample_graph`.
    **search_options
        Passed to :func:`best_neuron`.
    """
    from relu_gating.spectral.graphs import laplacian as make_laplacian
    from relu_gating.spectral.graphs import sample_graph
    from relu_gating.layers.networks import layer_input
    from relu_gating.spectral.spectra import low_frequency_basis
    from relu_gating._validate import as_matrix, check_K

    X = as_matrix(X, "X")
    K = check_K(K, X.shape[0])
    if laplacian not in ("combinatorial", "sym"):
        raise InputError(f"laplacian must be 'combinatorial' or 'sym', got {laplacian!r}")
    W = sample_graph(X, kind=graph, **(graph_options or {}))
    L = make_laplacian(W, normalized=(laplacian == "sym"))
    basis = low_frequency_basis(L, K)
    return best_neuron(layer_input(X), basis.U_K, features=features, **search_options)
