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
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from relu_gating.search._kernels.mirror import chunk_rows, take_rows
from relu_gating.search._exact.pilot import pilot_value
from relu_gating.search._exact.tasks import chunk_bounds
from relu_gating.search._enum.exact import Candidates, exact_phase, threshold
from relu_gating.search._enum.finish import finish
from relu_gating.search._enum.store import MemoryStore
from relu_gating._runtime.interrupt import check_stop
from relu_gating._runtime.progress import Progress
from relu_gating.search.state import PatternOutcome, SearchState, fingerprint
from relu_gating.errors import InputError, ProblemTooLargeError
from relu_gating.search.objectives import Objective, make_objective, with_rank
from relu_gating.search.result import NeuronResult
from relu_gating.search.options import LEGACY_DEFAULTS, resolve_options
from relu_gating.search._config import CHECKPOINT_EVERY, DEFAULT_TOL, EXACT_CANDIDATES, MAX_TOL, NEAR_TIE_TOL
from relu_gating._runtime.executors import executor_map as _executor_map

__all__ = ["NeuronResult", "best_neuron", "DEFAULT_TOL", "NEAR_TIE_TOL"]

class _Saver:
    """Checkpoint writer: at most every ``every`` seconds, and on demand."""

    def __init__(self, path: str | None, key: str, state: SearchState, every: float = CHECKPOINT_EVERY) -> None:
        self.path, self.key, self.state, self.every = path, key, state, every
        self.last = time.perf_counter()

    def save(self) -> None:
        if self.path:
            self.state.save(self.path, self.key)
            self.last = time.perf_counter()

    def maybe_save(self) -> None:
        if self.path and time.perf_counter() - self.last >= self.every:
            self.save()


def best_neuron(
    Phi: Any,
    U_K: Any,
    *,
    features: Any = "bias",
    alpha: float = 1.0,
    tol: float = DEFAULT_TOL,
    method: str = "auto",
    strategy: str = "auto",
    options: Any = None,
    max_seconds: float | None = None,
    executor: Any = None,
    progress: bool | None = False,
    **legacy: Any,
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
    tol : float
        Absolute tolerance of the comparison ``value >= alpha * bound``.
    method : str
        Per-pattern exact method of :mod:`solvers` (``"auto"``, ``"faces"``,
        ``"dnn"``); failures fall back to the others.
    strategy : {"auto", "enumerate", "branch-and-bound"}
        ``"auto"`` (default) runs what :func:`relu_gating.search.plan.choose` predicts
        fastest within ``max_seconds`` and half this machine's memory: in-memory
        enumeration, streamed enumeration or branch and bound; it refuses
        (:class:`~relu_gating.errors.ProblemTooLargeError`, naming the options with their
        estimates) only when no strategy is predicted within the limit.  ``"enumerate"``
        lists every chamber; ``"branch-and-bound"`` (:mod:`relu_gating.search.bnb`) discards
        whole cones of weights at once and returns a tree certificate (``result.tree``; the
        per-pattern arrays are empty).
    options : EnumerateOptions, BranchAndBoundOptions or dict, optional
        The options of the strategy (:mod:`relu_gating.search.options`): the enumeration's
        pattern cap, memory budget, chunk sizes, checkpoint and reusable pattern set; the
        branch and bound's seed and lifted bound.  A dict needs ``strategy`` named; with
        ``"auto"``, ``EnumerateOptions`` leave auto the enumerations to choose from and
        ``BranchAndBoundOptions`` choose the branch and bound.
    max_seconds : float, optional
        Time limit of ``"auto"`` (default 600 s, ``plan.DEFAULT_MAX_SECONDS``) and budget
        of the branch and bound, which then ends with the incumbent and a valid
        certificate of the alpha reached; not accepted with ``"enumerate"``.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the chunks (or the branch and bound's subtrees) run; in-process by default.
    progress : bool or None
        Progress on stderr: False none (the default), True a bar, None a bar on a terminal and a plain
        line every 30 s elsewhere (a pipe, a log file).
    **legacy
        Release 0.3's keywords ``max_patterns``, ``chunk_size``, ``batch_size``,
        ``checkpoint``, ``patterns`` and ``memory``: the fields of ``EnumerateOptions``,
        accepted for this release with a :class:`DeprecationWarning`.

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
    t0 = time.perf_counter()
    from relu_gating.search.bnb import check_strategy

    check_strategy(strategy, max_seconds)
    unknown = sorted(set(legacy) - set(LEGACY_DEFAULTS))
    if unknown:
        raise TypeError(f"best_neuron() got an unexpected keyword argument {unknown[0]!r}")
    opts = resolve_options(strategy, options, legacy)
    eo = opts.enumerate
    chunk_size, batch_size, checkpoint, patterns = eo.chunk_size, eo.batch_size, eo.checkpoint, eo.patterns
    memory, max_patterns, strategy = eo.memory, eo.max_patterns, opts.strategy
    _check_options(alpha, tol, chunk_size, batch_size)
    if strategy == "auto":  # resolved by the plan (relu_gating.search.plan.choose)
        strategy, memory, max_seconds, max_patterns = resolve_auto(
            Phi, max_seconds=max_seconds, max_patterns=max_patterns, memory=memory,
            enumerate_only=patterns is not None or checkpoint is not None, tree=opts.tree_allowed,
            K=np.shape(U_K)[1] if np.ndim(U_K) == 2 else None)
    if strategy != "enumerate" or max_seconds is not None:  # the branch and bound (relu_gating.search.bnb)
        from relu_gating.search.bnb import dispatch

        res = dispatch(Phi, U_K, features=features, alpha=alpha, method=method, tol=tol, progress=progress,
                       strategy=strategy, max_seconds=max_seconds, options=opts.branch_and_bound,
                       enumerate_only=(patterns, checkpoint, memory, executor))
        if res is not None:
            return res
    obj = make_objective(Phi, U_K, features)  # validates before the expensive part
    if memory is not None:  # the streamed search, in bounded memory (relu_gating.search._stream.parts)
        from relu_gating.search._stream.run import stream_search

        return stream_search(obj, alpha=alpha, method=method, max_patterns=max_patterns, chunk_size=chunk_size,
                             batch_size=batch_size, tol=tol, executor=executor, checkpoint=checkpoint,
                             progress=progress, patterns=patterns, memory=memory)
    patterns = _patterns_for(obj, patterns, max_patterns, progress)
    t_enum = time.perf_counter()
    obj = with_rank(obj, patterns.rank)  # the exact rank decided by the enumerator
    run = _Run(obj, _Masks(patterns.packed, obj.n), patterns.witnesses, executor, progress,
               mirrored=int(getattr(patterns, "n_mirrored", 0)))
    key = fingerprint(obj.Phi, obj.U_K, obj.Q_H, extra=f"{obj.kind}|{run.N}")
    state = SearchState.load(checkpoint, key, run.N, obj=obj, masks=run.masks) if checkpoint else None
    resumed = state is not None
    state = state if state is not None else SearchState.empty(run.N)
    saver = _Saver(checkpoint, key, state)
    store = MemoryStore(obj.n, patterns.packed, patterns.witnesses, state.upper, state.lower, state.status)
    try:
        _bound_phase(run, state, saver, chunk_size, tol)
        t_bounds = time.perf_counter()
        # the patterns above the pilot's value first: then the best reaches it, and the cut ones close
        cands = Candidates(EXACT_CANDIDATES, defer=run.incumbent)
        cands.rescan(store, threshold(state.best_value, alpha, tol))

        def absorb(out: PatternOutcome) -> None:
            state.absorb(out)
            saver.maybe_save()

        exact_phase(obj, store, cands, lambda: state.best_value, absorb, alpha=alpha, tol=tol, method=method,
                    batch_size=batch_size, executor=executor, progress=progress)
    except KeyboardInterrupt:
        saver.save()
        raise
    saver.save()
    t_solve = time.perf_counter()
    return finish(obj, store, state.best_theta, state.best_index, notes=state.notes, methods=state.methods,
                  evidence=state.evidence, exact_witnesses=getattr(patterns, "exact_witnesses", None) or {},
                  alpha=alpha, tol=tol, key=key, resumed=resumed,
                  seconds={"enumerate": t_enum - t0, "bounds": t_bounds - t_enum, "solve": t_solve - t_bounds,
                           "total": time.perf_counter() - t0})


def resolve_auto(Phi: Any, *, max_seconds: Any, max_patterns: Any, memory: Any, enumerate_only: bool = False,
                 tree: bool = True, plan: Any = None, certificate: bool = False,
                 K: int | None = None) -> tuple[str, Any, float | None, Any]:
    """``strategy="auto"`` resolved: ``(strategy, memory, max_seconds, max_patterns)`` to run.

    ``memory`` or ``enumerate_only`` (a pattern set or checkpoint was given) keep the
    enumeration; otherwise the plan chooses (:func:`relu_gating.search.plan.choose`; ``tree=False``:
    not the branch and bound, whose certificate is a tree, not pattern lists; ``certificate``: one
    will be written, rank by search and verification; ``plan``: the
    :func:`~relu_gating.search.plan.plan_query` of ``Phi`` when the caller has it) and
    the limits it checked are lifted for the run (the enumeration's pattern cap, an auto
    time limit the enumeration has no use for).
    """
    from relu_gating.search.bnb import check_strategy
    from relu_gating.search.plan import choose, plan_query

    check_strategy("auto", max_seconds)
    if memory is not None or enumerate_only:
        return "enumerate", memory, None, max_patterns
    plan = plan if plan is not None else plan_query(Phi, K)
    choice = choose(plan, max_seconds=max_seconds, max_patterns=max_patterns, tree=tree, certificate=certificate)
    if choice.strategy == "branch-and-bound":
        return "branch-and-bound", None, choice.max_seconds, max_patterns
    return "enumerate", choice.memory, None, None


def _check_options(alpha: Any, tol: Any, chunk_size: Any, batch_size: Any) -> None:
    """Reject bad options before any work, naming the argument."""
    if not (isinstance(alpha, (int, float, np.floating)) and 0 < alpha <= 1):
        raise InputError(f"alpha must be a number in (0, 1], got {alpha!r}")
    if not (isinstance(tol, (int, float, np.floating)) and 0 <= tol < MAX_TOL):
        raise InputError(f"tol must be a number in [0, {MAX_TOL:g}), got {tol!r}")
    for name, val in (("chunk_size", chunk_size), ("batch_size", batch_size)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
            raise InputError(f"{name} must be a positive integer, got {val!r}")


def _patterns_for(obj: Objective, patterns: Any, max_patterns: Any, progress: bool | None) -> Any:
    """The pattern set of ``obj.Phi``: the caller's (checked to belong to it) or enumerated here."""
    from relu_gating.patterns import enumerate_patterns
    from relu_gating.search.plan import check_max_patterns, check_plan, plan_query

    limit = check_max_patterns(max_patterns, *obj.Phi.shape)
    if patterns is None:
        try:  # Cover's bound instantly; on degenerate data an exact count (at most 1 s) may still admit it
            return enumerate_patterns(obj.Phi, max_patterns=limit, progress=progress is not False)
        except ProblemTooLargeError:
            check_plan(plan_query(obj.Phi), limit)  # the refusal with the predicted time and memory
            raise
    if not hasattr(patterns, "check_belongs_to"):
        raise InputError(f"patterns must be the PatternSet of this Phi, got {type(patterns).__name__}")
    patterns.check_belongs_to(obj.Phi)
    return patterns


class _Masks:
    """The masks of a pattern set as rows of bools, unpacked only where read (no N x n array)."""

    def __init__(self, packed: np.ndarray, n: int) -> None:
        self.packed, self.n = packed, int(n)

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.packed.shape[0]), self.n)

    def __getitem__(self, idx: Any) -> np.ndarray:
        return np.unpackbits(self.packed[idx], axis=-1, count=self.n).astype(bool)


@dataclass
class _Run:
    """What both phases of one query share (``incumbent`` is set by the bound phase)."""

    obj: Objective
    masks: _Masks
    witnesses: np.ndarray
    executor: Any
    progress: bool | None
    incumbent: float = -np.inf  # the pilot's attained value, when the bound pass used one
    mirrored: int = 0  # PatternSet.n_mirrored: complementary pairs, bounded together

    @property
    def N(self) -> int:
        return self.masks.shape[0]


def _bound_phase(run: _Run, state: SearchState, saver: _Saver, chunk_size: int, tol: float) -> None:
    """Cheap bounds for every chunk not yet bounded (all of them unless resuming)."""
    masks, witnesses = run.masks, run.witnesses
    todo = chunk_rows(run.N, run.mirrored, chunk_size)
    if np.isfinite(state.upper).any():  # resuming: only the chunks not yet bounded
        todo = [(rows, pair) for rows, pair in todo if not np.all(np.isfinite(state.upper[rows]))]
    inc = pilot_value(run.obj) if len(todo) > 1 else -np.inf  # an attained value: fewer patterns to tighten
    run.incumbent = inc
    tasks: Iterable[tuple] = ((run.obj, rows, take_rows(masks.packed, rows), take_rows(witnesses, rows), tol, inc, pair)
                              for rows, pair in todo)  # in-process: each chunk's copy made as it is bounded
    from relu_gating._runtime import threads as _threads

    with Progress(sum(rows.size for rows, _ in todo), "bounds", enabled=run.progress) as bar, \
            _threads.blas_threads(_threads.BOUND_PASS_THREADS):  # skinny GEMMs: see relu_gating._runtime.threads
        for out in _executor_map(run.executor, chunk_bounds, tasks):
            state.absorb(out)
            bar.update(out.index.size)
            saver.maybe_save()
            check_stop()
