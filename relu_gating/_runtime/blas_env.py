"""BLAS threads set before numpy loads (private): the thread variables of the command line.

The command line calls :func:`preset_blas_env` first, so that BLAS starts with the right pool: the
usable cores (``os.sched_getaffinity``), or fewer when the command asks (``verify``: one thread, see
``relu_gating.cli``), never over the user's own ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` or
``MKL_NUM_THREADS`` (a user who set one keeps it).  Once numpy is loaded, :mod:`.blas_limit` limits a
block (``relu_gating.verify``) and :mod:`.threads` the search's work.
"""

from __future__ import annotations

import os
import sys

__all__ = ["THREAD_VARIABLES", "user_thread_setting", "usable_cores", "blas_env", "preset_blas_env"]

#: The environment variables through which a user sets the BLAS / OpenMP threads.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def user_thread_setting(environ: dict | None = None) -> int | None:
    """The smallest positive integer among the user's thread variables, or None when none is set."""
    environ = os.environ if environ is None else environ
    values = []
    for name in THREAD_VARIABLES:
        text = str(environ.get(name, "")).split(",")[0].strip()  # OMP allows "4,2" (nested levels)
        if text.isdigit() and int(text) > 0:
            values.append(int(text))
    return min(values) if values else None


def usable_cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity``; ``os.cpu_count`` where that is missing)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def blas_env(environ: dict, usable: int, total: int) -> dict:
    """The thread variables to set before numpy loads: ``usable`` threads when the user set none and
    that is fewer than the machine's ``total`` cores; empty otherwise."""
    if user_thread_setting(environ) is not None or usable >= total:
        return {}
    return {name: str(usable) for name in THREAD_VARIABLES}


def preset_blas_env(environ: dict | None = None, limit: int | None = None) -> int | None:
    """Before numpy is imported, set :func:`blas_env` in ``environ`` for the usable cores, or ``limit``
    threads if fewer (the command line calls it first).  Returns the count set, or None (nothing set:
    numpy already loaded, the user's own setting, or no fewer threads than cores)."""
    environ = os.environ if environ is None else environ
    if "numpy" in sys.modules:  # too late: the pools exist (threads.fit_blas / limited_blas limit them instead)
        return None
    user = user_thread_setting(environ)
    budget = max(1, min(usable_cores(), user if user is not None else usable_cores(), limit or usable_cores()))
    env = blas_env(environ, budget, os.cpu_count() or budget)
    environ.update(env)
    return budget if env else None
