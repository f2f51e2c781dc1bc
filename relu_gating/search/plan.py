"""What a query will cost, known before any heavy work: patterns, time, memory, and the default limit.

The pattern count is Cover's bound on the distinct hyperplanes (instant and an
upper bound; exact in general position).  Time and memory follow the measured
per-pattern costs of this implementation (``benchmarks/sizes.py`` measures them
and prints the README's table of practical sizes, with these predictions side
by side).  They are estimates: the count is an upper bound on degenerate data,
and the machine may be busy.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating.errors import InputError, ProblemTooLargeError

__all__ = ["QueryPlan", "plan_query", "default_max_patterns", "check_max_patterns", "check_plan",
           "PATTERN_LIMIT", "SECONDS_PER_PATTERN", "BYTES_PER_PATTERN", "parse_memory"]

#: Hard default ceiling on the patterns of one query (about 10 minutes here), whatever the memory.
PATTERN_LIMIT = 30_000_000
#: Measured seconds per pattern ``a + b * n`` (enumeration, bounds and exact solves; features bias),
#: times ``WIDE_FACTOR`` for ``m >= 5``, where exact per-pattern solves dominate (benchmarks/sizes.py;
#: refitted in release 0.3: 1.4 / 1.7 / 4.5 us per pattern at n = 120 / 200 / 1000, m <= 4).
SECONDS_PER_PATTERN = (1.2e-6, 0.004e-6)
WIDE_FACTOR = 5.0
#: Bytes per pattern alive at the peak ``a + b * n + c * m`` (masks unpacked, witnesses, bounds).
BYTES_PER_PATTERN = (150, 2.125, 24)
#: Fraction of the machine's memory a default query may plan to use.
MEMORY_FRACTION = 0.5
_BASE_BYTES = 200 * 2**20  # interpreter, numpy, scipy, cvxpy


@dataclass(frozen=True)
class QueryPlan:
    """The predicted size of a best-neuron query on ``Phi`` (``n`` samples, ``m`` columns).

    Attributes
    ----------
    patterns : int
        Cover's bound on the realized gating patterns (exact in general position).
    seconds : float
        Estimated wall time on this implementation (one core).
    memory_bytes : int
        Estimated peak memory.
    n, m, rank, n_hyperplanes : int
    """

    n: int
    m: int
    rank: int
    n_hyperplanes: int
    patterns: int
    seconds: float
    memory_bytes: int

    def describe(self) -> str:
        """One line: ``n = 200, m = 3: at most 2,626,398 patterns (Cover's bound); about 1 min, 1.1 GB``."""
        return (f"n = {self.n}, m = {self.m}: at most {self.patterns:,} gating patterns (Cover's bound); "
                f"estimated {format_seconds(self.seconds)} and {format_bytes(self.memory_bytes)}")


def format_seconds(s: float) -> str:
    """``0.4 s``, ``12 s``, ``3.5 min``, ``2.1 h``, ``9.3 days``."""
    if s < 10:
        return f"{s:.1f} s"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.3g} days"


def format_bytes(b: float) -> str:
    """``850 MB``, ``1.2 GB``, ``98 TB``."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b / 1e3:.3g} kB"


def _cover_bound(Phi: np.ndarray) -> tuple[int, int, int]:
    """``(Cover's bound, rank, distinct hyperplanes)`` of ``Phi`` (exact rank and merging; fast)."""
    from relu_gating._scaling import pow2_column_scales
    from relu_gating.patterns import cover_count, reduce_rows

    red = reduce_rows(Phi * pow2_column_scales(Phi))
    return cover_count(red.q, red.rank), int(red.rank), int(red.q)


def plan_query(Phi: Any) -> QueryPlan:
    """Predict the patterns, time and memory of ``best_neuron(Phi, ...)`` without enumerating."""
    from relu_gating._validate import as_matrix

    Phi = as_matrix(Phi, "Phi")
    n, m = Phi.shape
    N, rank, q = _cover_bound(Phi)
    a, b = SECONDS_PER_PATTERN
    ba, bb, bc = BYTES_PER_PATTERN
    return QueryPlan(n=n, m=m, rank=rank, n_hyperplanes=q, patterns=N,
                     seconds=N * (a + b * n) * (WIDE_FACTOR if m >= 5 else 1.0),
                     memory_bytes=int(_BASE_BYTES + N * (ba + bb * n + bc * m)))


#: Smallest memory budget accepted (``memory=``, ``--memory``: the streamed search's floor).
MIN_MEMORY = 384 * 2**20
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30, "t": 2**40,
          "tb": 2**40}


def parse_memory(value: Any, name: str = "memory") -> int:
    """Bytes of a memory budget (``memory=``, ``--memory``): a number of bytes or a size such as ``"2G"``,
    ``"512MB"``; :class:`~relu_gating.errors.InputError` naming ``name`` otherwise, or below :data:`MIN_MEMORY`."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be a number of bytes or a size such as '2G', got {value!r}")
    if isinstance(value, (int, np.integer, float, np.floating)):
        out = float(value)
    else:
        mt = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgt]?b?)\s*", str(value).lower())
        if mt is None:
            raise InputError(f"{name} must be a number of bytes or a size such as '2G', got {value!r}")
        out = float(mt.group(1)) * _UNITS[mt.group(2)]
    if not math.isfinite(out) or out < MIN_MEMORY:
        raise InputError(f"{name} must be at least {MIN_MEMORY // 2**20} MB, got {value!r}")
    return int(out)


def _physical_memory() -> float:
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 8e9


def default_max_patterns(n: int, m: int) -> int:
    """The default ``max_patterns``: what fits in half this machine's memory, at most ``PATTERN_LIMIT``."""
    ba, bb, bc = BYTES_PER_PATTERN
    fits = (MEMORY_FRACTION * _physical_memory() - _BASE_BYTES) / (ba + bb * n + bc * m)
    return int(max(1000, min(PATTERN_LIMIT, fits)))


def check_max_patterns(max_patterns: Any, n: int, m: int) -> int | None:
    """Resolve ``max_patterns``: ``"auto"`` -> :func:`default_max_patterns`, None -> no limit, else a positive int."""
    if isinstance(max_patterns, str) and max_patterns == "auto":
        return default_max_patterns(n, m)
    if max_patterns is None:
        return None
    if isinstance(max_patterns, bool) or not isinstance(max_patterns, (int, np.integer)) or max_patterns < 1:
        raise InputError(f"max_patterns must be a positive integer, 'auto' or None, got {max_patterns!r}")
    return int(max_patterns)


def check_plan(plan: QueryPlan, limit: int | None, what: str = "max_patterns") -> None:
    """Refuse (:class:`ProblemTooLargeError`) a query whose Cover bound exceeds ``limit``, instantly.

    A degenerate ``Phi`` may realize far fewer patterns than Cover's bound; the
    message says so and how to raise the limit.
    """
    if limit is None or plan.patterns <= limit:
        return
    raise ProblemTooLargeError(
        f"{plan.describe()}: more than {what} = {limit:,}; raise it (--max-patterns on the command line) "
        f"if this machine can afford it, or use fewer samples or input dimensions")
