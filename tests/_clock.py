"""Clocks for tests on a shared machine (tests' helper): CPU seconds, and how much slower than a quiet
machine this process runs now.

Speed is measured in ``benchmarks/``, not here.  A test that must say "before any heavy work" says it in
CPU seconds (:func:`cpu_seconds`: heavy work costs CPU whatever the load); a test whose subject is a
wall-time budget (``max_seconds``, a Ctrl-C answered at once) keeps its wall bound, with the margin
that covers what the code cannot foresee scaled by :func:`slowdown` (about 1 on a quiet machine).
"""

from __future__ import annotations

import resource
import time

__all__ = ["cpu_seconds", "slowdown"]


def cpu_seconds() -> float:
    """CPU seconds used so far by this process (every thread) and by the child processes it has reaped."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def slowdown(work: float = 0.05, most: float = 20.0) -> float:
    """Wall seconds a CPU second of this process takes now, between 1 and ``most``: a loop of pure Python
    run until it has used ``work`` CPU seconds, timed on both clocks (``work`` wall seconds when quiet)."""
    w0, c0 = time.perf_counter(), time.process_time()
    x = 0
    while time.process_time() - c0 < work:
        for i in range(1000):
            x ^= i
    return min(most, max(1.0, (time.perf_counter() - w0) / (time.process_time() - c0)))
