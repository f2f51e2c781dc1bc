"""BLAS threads that fit the machine (private).

numpy's BLAS (OpenBLAS, MKL) starts one thread per core of the *machine*, not per core this
process may run on, and busy-waits in them. On a shared node (a cgroup or taskset of 2 cores
out of 64, or a 2-core machine with the other core busy) that oversubscribes: measured here, a
best-neuron query at n = 210, d = 3 took 19.4 s with two BLAS threads and the other core
loaded, against 6.0 s with one (``benchmarks/blas_threads.py``).

:func:`thread_budget` is the number of threads the process should use: the cores it may run on
(``os.sched_getaffinity``), never more than the user's own ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` or ``MKL_NUM_THREADS`` (the smallest one set wins). :func:`fit_blas`
applies it for the rest of the process (`best-neuron` and `demo` call it once the input is read);
the variables set before numpy loads are :mod:`relu_gating._runtime.blas_env`'s (re-exported here);
:func:`blas_threads` limits a block (the enumeration's bound pass: one thread, see
:data:`BOUND_PASS_THREADS`). Both go through threadpoolctl, a dependency already.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from relu_gating._runtime.blas_env import (THREAD_VARIABLES, blas_env, preset_blas_env, usable_cores,
                                           user_thread_setting)

__all__ = ["usable_cores", "thread_budget", "user_thread_setting", "fit_blas", "blas_threads", "preset_blas_env", "blas_env",
           "BOUND_PASS_THREADS", "THREAD_VARIABLES"]

#: BLAS threads of the enumeration's bound pass (per process; ``--workers`` adds processes).
#: Its products are skinny (inner dimension m = d + 1 <= 8): memory bound, where a second thread
#: gains little on an idle machine and loses 3-4x when the other core is busy (benchmarks/blas_threads.py).
BOUND_PASS_THREADS = 1

_LIMITERS: list = []  # the process-wide limit of fit_blas, kept alive


def thread_budget(environ: dict | None = None) -> int:
    """Threads this process should use: its usable cores, capped by the user's own setting."""
    user = user_thread_setting(environ)
    return max(1, min(usable_cores(), user) if user is not None else usable_cores())


def _controller():
    """A controller of every BLAS loaded now: numpy's and scipy's (which may be another OpenBLAS), so
    scipy.linalg is imported first. A fresh scan (about 2 ms): a kept controller misses libraries
    loaded after it was made."""
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS, so that the limit reaches it too
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def fit_blas(budget: int | None = None) -> int:
    """Limit BLAS to ``budget`` threads (default :func:`thread_budget`) for the rest of the process.

    Returns the limit applied (0 when no BLAS library was found). Never raises the user's own setting.
    """
    limit = thread_budget() if budget is None else max(1, min(int(budget), thread_budget()))
    try:
        ctl = _controller()
        libs = ctl.select(user_api="blas").lib_controllers
        if not libs:
            return 0
        # Nothing to lower: the pools are left untouched (a limit set here, then the bound pass's block
        # limit in the command's worker thread, made that pass 4x slower: docs/plan.md).
        if all(lib.num_threads <= limit for lib in libs):
            return limit
        _LIMITERS.append(ctl.limit(limits=limit, user_api="blas"))
    except Exception:  # noqa: BLE001 - a thread limit is an optimisation: never fail the work over it
        return 0
    return limit


@contextlib.contextmanager
def blas_threads(limit: int) -> Iterator[None]:
    """BLAS limited to ``min(limit, thread_budget())`` threads inside the block, restored after.

    The limit is process-wide (BLAS has one thread pool), so it also holds for the worker thread
    in which the command line runs a query.
    """
    try:
        ctl = _controller()
        active = bool(ctl.select(user_api="blas").lib_controllers)
    except Exception:  # noqa: BLE001 - no BLAS found: nothing to limit
        active = False
    if not active:
        yield
        return
    with ctl.limit(limits=max(1, min(int(limit), thread_budget())), user_api="blas"):
        yield
