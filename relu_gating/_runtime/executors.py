"""Tasks on an executor: in-process, ``concurrent.futures`` or ``dask.distributed`` (private)."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

__all__ = ["executor_map", "workers_of"]


def executor_map(executor: Any, fn: Any, tasks: Iterable[tuple]) -> Iterator:
    """Yield ``fn(*task)`` per task: in-process (lazily), on an Executor, or on Dask.

    In-process results come one at a time, so an interrupt keeps what was done.
    """
    if executor is None:
        for t in tasks:
            yield fn(*t)
    elif hasattr(executor, "gather"):  # dask.distributed.Client
        futures = [executor.submit(fn, *t, pure=False) for t in tasks]
        yield from executor.gather(futures)
    else:
        todo = list(tasks)
        if todo:
            yield from executor.map(fn, *zip(*todo))


def workers_of(executor: Any) -> int:
    """How many tasks the executor runs at once (1 in-process)."""
    if executor is None:
        return 1
    if hasattr(executor, "nthreads"):  # dask.distributed.Client
        try:
            return max(1, sum(executor.nthreads().values()))
        except Exception:  # noqa: BLE001 - a cluster that cannot answer: assume one worker
            return 1
    return max(1, int(getattr(executor, "_max_workers", 1) or 1))
