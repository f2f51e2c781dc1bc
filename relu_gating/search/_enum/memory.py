"""The in-memory enumerated search (private): list every chamber, bound them, solve the best exactly.

The driver of :class:`relu_gating.search.strategy.Enumeration` when no memory budget is given
(the streamed one is :mod:`relu_gating.search._stream.run`).  Both end in
:func:`~relu_gating.search._enum.finish.finish`.

A budget (``deadline``, a ``time.perf_counter()`` time) is checked between the bound chunks and
between the rounds of the exact phase (the listing of the chambers is not interrupted).  A stop
keeps a complete certificate: every chamber is listed with its witness; a chunk not yet bounded
claims the trivial bound 1 (both objectives are ratios of a projection, at most 1), the open
chambers their bounds; the result is then not certified, with the alpha reached.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from relu_gating._runtime.executors import executor_map as _executor_map
from relu_gating._runtime.interrupt import check_stop
from relu_gating._runtime.progress import Progress
from relu_gating.errors import InputError, ProblemTooLargeError
from relu_gating.search._config import CHECKPOINT_EVERY, EXACT_CANDIDATES
from relu_gating.search._enum.exact import Candidates, exact_phase, threshold
from relu_gating.search._enum.finish import finish
from relu_gating.search._enum.store import MemoryStore
from relu_gating.search._exact.pilot import pilot_value
from relu_gating.search._exact.tasks import chunk_bounds
from relu_gating.search._kernels.mirror import chunk_rows, take_rows
from relu_gating.search.objectives import Objective, with_rank
from relu_gating.search.result import NeuronResult
from relu_gating.search.state import PatternOutcome, SearchState, fingerprint

__all__ = ["enumerate_in_memory", "TRIVIAL_BOUND", "Deadline"]

#: The bound a chamber not bounded before the budget ran out claims: ``N_K(h)`` and ``G_H(h)`` are
#: ratios ``||P x||^2 / ||x||^2`` of an orthogonal projection ``P``, at most 1 (the checker proves it).
TRIVIAL_BOUND = 1.0


class Deadline:
    """A budget's end (``time.perf_counter()``; None: no limit) less what the ending needs
    (``reserve(N)`` seconds for ``N`` patterns: finishing and writing the certificate)."""

    def __init__(self, at: float | None, per_pattern: float = 0.0) -> None:
        self.at, self.per_pattern = at, float(per_pattern)

    def passed(self, N: int = 0) -> bool:
        return self.at is not None and time.perf_counter() >= self.at - self.per_pattern * N


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


def enumerate_in_memory(obj: Objective, options: Any, *, alpha: float, tol: float, method: str, executor: Any,
                        progress: bool | None, deadline: Deadline | None = None) -> NeuronResult:
    """The in-memory enumerated search of ``obj`` with ``options``
    (:class:`~relu_gating.search.options.EnumerateOptions`), within ``deadline`` if given."""
    t0 = time.perf_counter()
    deadline = deadline if deadline is not None else Deadline(None)
    chunk_size, batch_size, checkpoint = options.chunk_size, options.batch_size, options.checkpoint
    patterns = _patterns_for(obj, options.patterns, options.max_patterns, progress)
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
    stopped = None
    try:
        stopped = _bound_phase(run, state, saver, chunk_size, tol, deadline)
        t_bounds = time.perf_counter()
        if stopped is None:
            # the patterns above the pilot's value first: then the best reaches it, and the cut ones close
            cands = Candidates(EXACT_CANDIDATES, defer=run.incumbent)
            cands.rescan(store, threshold(state.best_value, alpha, tol))

            def absorb(out: PatternOutcome) -> None:
                state.absorb(out)
                saver.maybe_save()

            _, early = exact_phase(obj, store, cands, lambda: state.best_value, absorb, alpha=alpha, tol=tol,
                                   method=method, batch_size=batch_size, executor=executor, progress=progress,
                                   stop=lambda: deadline.passed(run.N))
            stopped = "the exact phase" if early else None
    except KeyboardInterrupt:
        saver.save()
        raise
    saver.save()
    t_solve = time.perf_counter()
    tail = [f"enumeration stopped by max_seconds in {stopped}: not certified; the bound is over the "
            f"chambers still open (alpha reached below)"] if stopped else []
    return finish(obj, store, state.best_theta, state.best_index, notes=state.notes, methods=state.methods,
                  evidence=state.evidence, exact_witnesses=getattr(patterns, "exact_witnesses", None) or {},
                  alpha=alpha, tol=tol, key=key, resumed=resumed, tail=tail, stop="time" if stopped else "settled",
                  seconds={"enumerate": t_enum - t0, "bounds": t_bounds - t_enum, "solve": t_solve - t_bounds,
                           "total": time.perf_counter() - t0})


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


def _bound_phase(run: _Run, state: SearchState, saver: _Saver, chunk_size: int, tol: float,
                 deadline: Deadline) -> str | None:
    """Cheap bounds for every chunk not yet bounded (all of them unless resuming); at the deadline the
    chunks left claim :data:`TRIVIAL_BOUND` and ``"the bound phase"`` is returned (None: all bounded)."""
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
            if deadline.passed(run.N):
                break
    left = ~np.isfinite(state.upper)
    if not left.any():
        return None
    state.upper[left] = TRIVIAL_BOUND  # valid for every chamber: the certificate stays complete
    return "the bound phase"
