"""Tasks on an executor: in-process, ``concurrent.futures`` or ``dask.distributed`` (private).

:class:`LocalPool` is the pool a query makes for itself when the caller names none (the branch and
bound on every usable core): its processes start on the first task, not before (a query settled
without one pays nothing), ignore Ctrl-C (the main process ends the run with its certificate) and
are ended by :meth:`LocalPool.close`, which leaves no process behind.
"""

from __future__ import annotations

import multiprocessing
import sys
from typing import Any, Iterable, Iterator

__all__ = ["executor_map", "workers_of", "submit", "LocalPool", "ignore_sigint", "local_context", "end_pool"]

#: Seconds :func:`end_pool` waits for each ended worker process to exit.
JOIN_SECONDS = 5.0


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


def submit(executor: Any, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` as a future of ``executor`` (a Dask client runs it whatever its key: ``pure=False``)."""
    if hasattr(executor, "gather") and hasattr(executor, "scatter"):  # dask.distributed.Client
        return executor.submit(fn, *args, pure=False)
    return executor.submit(fn, *args)


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


def ignore_sigint() -> None:
    """Worker processes leave Ctrl-C to the main process, which ends the run with its certificate, and
    die on SIGTERM: a forked worker would otherwise inherit the command line's SIGTERM handler (which
    raises KeyboardInterrupt, and a busy worker catches that as its task's error and lives on)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def local_context() -> Any:
    """The start method of a pool a query makes for itself: ``fork`` where the platform has it safely
    (Linux: the workers start in milliseconds and a caller's script needs no ``if __name__ ==
    "__main__"`` guard), else None (the platform's own, which re-imports the caller's script)."""
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return None


class LocalPool:
    """``workers`` local processes (a ``ProcessPoolExecutor``) started on the first :meth:`submit`.

    ``started`` says whether they were; :meth:`close` ends them (idempotent).  Also a context manager.
    """

    lazy = True

    def __init__(self, workers: int) -> None:
        self._max_workers = max(1, int(workers))  # read by workers_of
        self._ex: Any = None

    @property
    def started(self) -> bool:
        return self._ex is not None

    def executor(self) -> Any:
        """The process pool, made now if not yet."""
        if self._ex is None:
            from concurrent.futures import ProcessPoolExecutor

            self._ex = ProcessPoolExecutor(self._max_workers, mp_context=local_context(), initializer=ignore_sigint)
        return self._ex

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return self.executor().submit(fn, *args, **kwargs)

    def map(self, fn: Any, *iterables: Any) -> Iterator:
        return self.executor().map(fn, *iterables)

    def renew(self) -> None:
        """End the worker processes now (a task still running is abandoned) and start fresh ones on the next
        :meth:`submit` (``started`` stays True): a task running past its time slice would hold a core
        through what the caller runs next (the audit of the tree, within the same budget)."""
        if self._ex is not None:
            self.close()
            self.executor()

    def close(self) -> None:
        """End the worker processes (tasks still running are abandoned) and wait for them to exit."""
        ex, self._ex = self._ex, None
        if ex is not None:
            end_pool(ex)

    def __enter__(self) -> "LocalPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def end_pool(ex: Any) -> None:
    """Shut a ``ProcessPoolExecutor`` down now: queued tasks cancelled, its processes terminated and
    joined (what Python 3.14's ``terminate_workers`` does, and the join); one still alive
    :data:`JOIN_SECONDS` after SIGTERM is killed (SIGKILL) and joined again.  Then the pool's management
    thread, which marks the abandoned tasks' futures broken, is waited for (at most :data:`JOIN_SECONDS`):
    when this returns, every future of the pool is done or cancelled."""
    procs = list((getattr(ex, "_processes", None) or {}).values())  # shutdown() forgets them
    manager = getattr(ex, "_executor_manager_thread", None)
    ex.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        try:
            if proc.is_alive():
                proc.terminate()
        except (ValueError, ProcessLookupError):  # closed or gone already
            continue
    for proc in procs:
        _join_or_kill(proc)
    if manager is not None:
        manager.join(JOIN_SECONDS)


def _join_or_kill(proc: Any) -> None:
    """Wait for an ended worker; SIGKILL it if SIGTERM did not end it in :data:`JOIN_SECONDS`."""
    try:
        proc.join(JOIN_SECONDS)
        if proc.is_alive():
            proc.kill()
            proc.join(JOIN_SECONDS)
    except (ValueError, AssertionError, ProcessLookupError):  # closed or gone already
        return
