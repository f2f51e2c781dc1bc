"""The best-neuron search as a stream in bounded memory (private; ``best_neuron(memory=...)``).

Enumeration and the bound pass run part by part: ``enumerate_patterns(Phi,
part=(i, k))`` lists a disjoint k-th of the chambers, :func:`part_bounds`
bounds it chunk by chunk (:func:`~relu_gating.search._exact.tasks.chunk_bounds`),
and the client appends each part's packed masks, witnesses, bounds and
settlements to a :class:`~relu_gating.search._enum.store.DiskStore`.
In memory stay only the parts in flight, one chunk's dense work, and the
candidates: the patterns whose bound can still beat the incumbent (a bounded
set; the largest bound ever dropped from it is kept, and the store is
re-scanned if the search ever needs a dropped one).  The exact phase then
solves candidates largest bound first, as the in-memory path does.

The number of parts depends only on the problem and the memory budget, never
on the executor, so a Dask cluster of any size (or none) produces the
identical certificate.  Parts run on the executor (``concurrent.futures`` or
``dask.distributed.Client``) at most a few at a time, and are absorbed in
part order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from relu_gating.search.objectives import Objective
from relu_gating.search._kernels.mirror import chunk_rows
from relu_gating.search._exact.pilot import pilot_value
from relu_gating.search._exact.tasks import chunk_bounds
from relu_gating.search.plan import MIN_MEMORY, parse_memory

__all__ = ["parse_memory", "plan", "Plan", "part_bounds", "PartResult", "stream_parts", "n_parts", "MIN_MEMORY"]

#: Resident size of the interpreter with numpy, scipy and the package loaded (bytes, measured ~150 MB).
BASE_BYTES = 220 * 2**20
#: Bytes of the bound pass's dense work per pattern of a chunk and sample (measured ~40).
CHUNK_BYTES_PER_ENTRY = 48
#: Fewest candidates kept (patterns that can still win; more if the budget allows).
MIN_CAPACITY = 4096
#: Largest part (patterns): parts are also the unit of parallel work.
PART_MAX = 1 << 17
#: Enumeration's peak per pattern of a part, beyond its packed mask and witness (sweep blocks, assembly copy).
ENUM_OVERHEAD = 96


@dataclass(frozen=True)
class Plan:
    """How a streamed query splits its work under a memory budget."""

    parts: int
    chunk_size: int
    capacity: int
    window: int
    bound: int
    rank: int


def plan(Phi: np.ndarray, memory: int, chunk_size: int, workers: int = 1) -> Plan:
    """Parts, chunk size and candidate capacity for ``Phi`` under ``memory`` bytes.

    A quarter of what the interpreter leaves goes to the chunk's dense work, a
    tenth to the candidates, the rest to two parts (one being enumerated and
    bounded, one being absorbed).  The part count depends on Cover's bound on
    the number of patterns and on ``memory`` only, never on the executor, so
    that any cluster writes the identical certificate.  On an executor
    ``window`` parts are in flight: in the workers' memory (a Dask cluster of
    processes), or in this process for a thread pool.
    """
    from relu_gating.patterns import count_patterns

    cnt = count_patterns(Phi, method="bound")
    n, m = Phi.shape
    nb = (n + 7) // 8
    free = max(memory - BASE_BYTES, memory // 4)
    chunk = max(64, min(int(chunk_size), free // 4 // (CHUNK_BYTES_PER_ENTRY * n)))
    capacity = max(MIN_CAPACITY, free // 10 // (nb + 8 * m + 24))
    window = 1 if workers <= 1 else min(2 * workers, 8)
    per_pattern = 2 * (nb + 8 * m) + 17 + ENUM_OVERHEAD + (nb + 8 * m + 17)
    part_max = max(1024, min(PART_MAX, int(free * 0.6) // (per_pattern * 2)))  # never from the executor
    parts = max(1, -(-int(cnt.count) // part_max))
    return Plan(parts, chunk, capacity, window, int(cnt.count), int(cnt.rank))


@dataclass
class PartResult:
    """One part of the pattern set, bounded: what the client appends to the store."""

    part: tuple
    packed: np.ndarray
    witnesses: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    status: np.ndarray
    best_value: float = -np.inf
    best_theta: np.ndarray | None = None
    best_local: int = -1
    notes: list = field(default_factory=list)
    exact_witnesses: dict = field(default_factory=dict)
    uncertified: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    seconds: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.packed.shape[0])


def bound_set(obj: Objective, ps: Any, chunk_size: int, tol: float, part: tuple = (0, 1),
              incumbent: float = -np.inf) -> PartResult:
    """Bounds of every pattern of a :class:`~relu_gating.patterns.PatternSet`, chunk by chunk
    (``incumbent``: an attained value, see :func:`~relu_gating.search._exact.tasks.chunk_bounds`)."""
    N, n = len(ps), ps.n
    upper, lower, status = np.empty(N), np.empty(N), np.empty(N, dtype=np.int8)
    out = PartResult(part, ps.packed, ps.witnesses, upper, lower, status, exact_witnesses=dict(ps.exact_witnesses),
                     uncertified=np.asarray(ps.uncertified, dtype=np.int64))
    for rows, pair in chunk_rows(N, getattr(ps, "n_mirrored", 0), chunk_size):
        masks = np.unpackbits(ps.packed[rows], axis=1, count=n).view(bool)
        o = chunk_bounds(obj, rows, masks, ps.witnesses[rows], tol, incumbent, pair)
        upper[rows], lower[rows], status[rows] = o.upper, o.lower, o.status
        out.notes.extend(o.notes)
        vals = np.where(np.isnan(o.lower), -np.inf, o.lower)
        j = int(np.argmax(vals)) if vals.size else 0
        if vals.size and vals[j] > out.best_value:
            out.best_value, out.best_theta, out.best_local = float(vals[j]), np.array(o.thetas[j], float), int(rows[j])
    return out


def part_bounds(obj: Objective, part: tuple, chunk_size: int, tol: float, incumbent: float = -np.inf) -> PartResult:
    """Enumerate part ``part = (i, k)`` of the chambers of ``obj.Phi`` and bound it (a worker's task)."""
    from relu_gating.patterns import enumerate_patterns

    t0 = time.perf_counter()
    ps = enumerate_patterns(obj.Phi, part=part)
    t1 = time.perf_counter()
    out = bound_set(obj, ps, chunk_size, tol, part, incumbent)
    out.seconds = {"enumerate": t1 - t0, "bounds": time.perf_counter() - t1}
    return out


def _ordered(executor: Any, fn: Any, tasks: list[tuple], window: int) -> Iterator:
    """``fn(*task)`` per task, in task order, at most ``window`` in flight on the executor."""
    if executor is None:
        for t in tasks:
            yield fn(*t)
        return
    pending: list = []
    dask = hasattr(executor, "gather")
    it = iter(tasks)
    for t in it:
        pending.append(executor.submit(fn, *t, pure=False) if dask else executor.submit(fn, *t))
        if len(pending) >= window:
            break
    while pending:
        fut = pending.pop(0)
        res = fut.result()
        fut.release() if dask else None
        nxt = next(it, None)
        if nxt is not None:
            pending.append(executor.submit(fn, *nxt, pure=False) if dask else executor.submit(fn, *nxt))
        yield res


def n_parts(pl: Plan, patterns: Any = None) -> int:
    """How many parts :func:`stream_parts` yields."""
    return pl.parts if patterns is None else -(-len(patterns) // PART_MAX)


def stream_parts(obj: Objective, pl: Plan, tol: float, executor: Any, patterns: Any = None,
                 only: list[int] | None = None, incumbent: float | None = None) -> Iterator[PartResult]:
    """The bounded parts in order (those in ``only``, or all): enumerated here or on the executor
    (or chunks of the caller's pattern set); ``incumbent``: the pilot's value (computed if None)."""
    keep = set(range(n_parts(pl, patterns))) if only is None else set(only)
    inc = pilot_value(obj) if incumbent is None else incumbent
    if patterns is not None:
        for k, ps in enumerate(patterns.iter_chunks(PART_MAX)):
            if k in keep:
                yield bound_set(obj, ps, pl.chunk_size, tol, (k, -1), inc)
        return
    tasks = [(obj, (i, pl.parts), pl.chunk_size, tol, inc) for i in range(pl.parts) if i in keep]
    yield from _ordered(executor, part_bounds, tasks, pl.window)
