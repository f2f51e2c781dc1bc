"""What a query will cost, known before any heavy work, and which strategy answers it.

The pattern count is Cover's bound on the distinct hyperplanes (instant and an
upper bound; exact in general position).  From it, :func:`estimate` predicts the
time and peak memory of each strategy (in-memory enumeration, streamed
enumeration, branch and bound, the ``patterns`` command), following the costs of
this implementation measured by ``benchmarks/calibrate_plan.py`` (docs/plan.md:
the table of predicted against measured).  :func:`choose` is the one decision of
which strategy runs (:mod:`relu_gating.search.strategy`): a strategy named, or under
``strategy="auto"`` the fastest option within the time limit and half the memory, the
anytime branch and bound when none is, and a refusal naming every option with its
estimate only when nothing can work.  They are estimates: the count is an upper bound
on degenerate data, the branch and bound's work depends on the data, and the
machine may be busy.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating.errors import InputError, ProblemTooLargeError

__all__ = ["QueryPlan", "Estimate", "Choice", "plan_query", "estimate", "choose", "default_max_patterns",
           "check_max_patterns", "check_plan", "PATTERN_LIMIT", "DEFAULT_MAX_SECONDS", "STREAM_MEMORY",
           "BYTES_PER_PATTERN", "parse_memory"]

#: Hard default ceiling on the patterns of one in-memory enumeration, whatever the memory.
PATTERN_LIMIT = 30_000_000
#: The time limit of ``strategy="auto"`` when none is given (``max_seconds``; ``--max-seconds``):
#: auto plans within it, and a branch and bound it runs stops there with the alpha reached.
DEFAULT_MAX_SECONDS = 600.0
#: Fraction of the machine's memory a default query may plan to use.
MEMORY_FRACTION = 0.5
#: The budget of the streamed enumeration auto chooses (``memory="2G"``), at most MEMORY_FRACTION.
STREAM_MEMORY = 2 * 2**30

# The cost model, fitted to measurements of benchmarks/calibrate_plan.py (docs/plan.md holds the
# table of predicted against measured, and how to refit).  Time of the in-memory enumeration
# (enumerate, bound, solve) on one core: ``T0_SECONDS + patterns * (a_m + b_m * n + c_m * n**2)``,
# with ``(a_m, b_m, c_m)`` per column count m in ``ENUM_SECONDS`` (beyond the table: x3 per column,
# where the exact solves come to dominate).  At d = 1 a pattern's bound costs more than O(n)
# (under 25 us at n = 2000, 225 us at n = 10,000, over 1 ms at n = 20,000); from d = 2 on, a pattern costs
# about the same at any n.
T0_SECONDS = 0.15
ENUM_SECONDS = {2: (2.0e-6, 0.0, 2.25e-12), 3: (2.2e-6, 0.0022e-6, 0.0), 4: (1.1e-6, 0.004e-6, 0.0),
                5: (1.1e-6, 0.004e-6, 0.0), 6: (9.0e-6, 0.0022e-6, 0.0), 7: (9.0e-6, 0.0022e-6, 0.0),
                8: (45.0e-6, 0.0022e-6, 0.0), 9: (150.0e-6, 0.0022e-6, 0.0)}
#: Peak bytes ``a + b * n + c * m`` per pattern of the in-memory enumeration (the pattern set and the
#: search state: packed masks, witnesses, bounds), plus ``CHUNK_BYTES`` per sample and pattern of the
#: bound chunk being worked on (``chunk_size`` patterns, 8192 by default: what dominates at d = 1;
#: measured 12.6 bytes when there are several chunks, 2.8 when one chunk holds every pattern).
BYTES_PER_PATTERN = (72.0, 0.1, 0.0)
CHUNK_BYTES = (12.6, 2.8)
CHUNK_PATTERNS = 8192
_BASE_BYTES = 100 * 2**20  # interpreter, numpy, scipy, the problem
#: Streamed enumeration: this factor times the in-memory time (files, smaller parts; issue 26: 245 s
#: streamed against 168 s in memory at n = 2000, d = 2, on the same machine; not recalibrated here).
STREAM_FACTOR = 1.5
#: ``relu-gating patterns``: peak bytes per pattern ``a + b * n + c * m`` (the completeness check
#: holds the masks unpacked) and seconds per pattern ``a + b * n`` (enumeration and check).
PATTERNS_BYTES = (72.0, 2.2, 0.0)
PATTERNS_SECONDS = (1.0e-6, 0.013e-6)
#: Branch and bound (a rough model: its work depends on the data, not only on the sizes), fitted
#: by ``benchmarks/calibrate_plan.py --fit`` to 22 runs: 14 on Gaussian X (K = 4 and 8, n = 30-2000,
#: d = 2-6) and the 8 certified real-data runs (real and clustered data, ``benchmarks/plan_real.py``;
#: issue 39: the fit on Gaussian X alone over-predicted these 1.6-39x); docs/plan.md:
#: ``BNB_T0_SECONDS + c * n**p * patterns**q * m**r * K**s`` seconds on one core.  The runs were
#: within 0.26-4.3x of it, so an estimate is shown with its range (``BNB_SPREAD``: the model's time
#: divided and multiplied by it held every calibration run).
#: Memory: ``BNB_BYTES = (a, b)``, ``a + b * n`` bytes over the base: the tree and the LPs are
#: small, the first incumbent's 10,000 random neurons are not (n x 10,000 values: 106 MB peak at
#: n = 30, 558 MB at n = 2000).
BNB_SECONDS = (3.6e-7, 1.218, 0.217, 4.492, 0.645)
BNB_T0_SECONDS = 1.0  # the first incumbent: 10,000 random neurons and a local search
BNB_SPREAD = 4.5
BNB_BYTES = (5e6, 0.22e6)
#: Verifying a certificate, in multiples of its search's time: the pattern lists of an enumeration
#: (binary certificate: 166 s against a 32 s search at n = 300, d = 3, issue 26; 14.3 s against 5 s
#: at n = 200, d = 3, README) and a tree (4.3 s against 39.9 s CPU at n = 300, d = 3, docs/plan.md).
#: With a certificate to write (``certificate=True``, ``--out``), auto compares search + verification.
VERIFY_FACTOR = {"enumerate": 4.0, "stream": 4.0, "branch-and-bound": 0.2}
#: Auto enumerates only when that is estimated this many times faster than the branch and bound,
#: whose peak memory is small and whose time suffers less on a busy machine (docs/plan.md).
TREE_PREFERENCE = 1.3
#: ... and this many times when the enumeration's peak exceeds ``LARGE_ENUMERATION`` bytes: its
#: memory-bound passes slow most on a busy machine (load 3, the default query: n = 2000, d = 2,
#: 1.4 GB: 90 s against 27 s idle, the tree 36 s; n = 300, d = 3, 1.0 GB: 35 s against 21 s).
LARGE_TREE_PREFERENCE = 2.0
LARGE_ENUMERATION = 2**30


@dataclass(frozen=True)
class Estimate:
    """The predicted cost of one way to answer a query.

    Attributes
    ----------
    strategy : str
        ``"enumerate"`` (in memory), ``"stream"`` (enumeration within ``STREAM_MEMORY``),
        ``"branch-and-bound"``, or ``"patterns"`` (the ``relu-gating patterns`` command).
    seconds : float
        Estimated wall time (one core, an idle machine).
    memory_bytes : int
        Estimated peak resident memory.
    """

    strategy: str
    seconds: float
    memory_bytes: int
    spread: float = 1.0

    def describe(self) -> str:
        """``12 s and 1.1 GB``; with a ``spread`` (the branch and bound's rough time) the range too:
        ``30 s (12 s to 1.2 min) and 550 MB``."""
        t = format_seconds(self.seconds)
        if self.spread > 1:
            t += f" ({format_seconds(self.seconds / self.spread)} to {format_seconds(self.seconds * self.spread)})"
        return f"{t} and {format_bytes(self.memory_bytes)}"


@dataclass(frozen=True)
class QueryPlan:
    """The predicted size of a best-neuron query on ``Phi`` (``n`` samples, ``m`` columns).

    Attributes
    ----------
    patterns : int
        Cover's bound on the realized gating patterns (exact in general position).
    seconds : float
        Estimated wall time of the in-memory enumeration (one core).
    memory_bytes : int
        Estimated peak memory of the in-memory enumeration.
    n, m, rank, n_hyperplanes : int
    K : int
        Columns of ``U_K`` (the branch and bound's time depends on it; 4 when not known).
    """

    n: int
    m: int
    rank: int
    n_hyperplanes: int
    patterns: int
    seconds: float
    memory_bytes: int
    K: int = 4

    def describe(self, estimate: bool = True) -> str:
        """One line: ``n = 200, m = 3: at most 2,626,398 patterns (Cover's bound); estimated 8.1 s and 1.1 GB``
        (the in-memory enumeration's estimate; left out with ``estimate=False``)."""
        size = f"n = {self.n}, m = {self.m}: at most {self.patterns:,} gating patterns (Cover's bound)"
        if not estimate:
            return size
        return f"{size}; estimated {format_seconds(self.seconds)} and {format_bytes(self.memory_bytes)}"

    def estimate(self, strategy: str) -> Estimate:
        """The cost of ``strategy`` on this input (see :func:`estimate`)."""
        return estimate(strategy, self.n, self.m, self.patterns, self.K)


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
    from relu_gating._inputs.scaling import pow2_column_scales
    from relu_gating.patterns import cover_count, reduce_rows

    red = reduce_rows(Phi * pow2_column_scales(Phi))
    return cover_count(red.q, red.rank), int(red.rank), int(red.q)


def seconds_per_pattern(n: int, m: int) -> float:
    """Estimated seconds per pattern of the in-memory enumeration (``ENUM_SECONDS``)."""
    top = max(ENUM_SECONDS)
    a, b, c = ENUM_SECONDS[min(max(m, 2), top)]
    return (a + b * n + c * n * n) * 3.0 ** max(0, m - top)


def _chunk_bytes(N: float, n: int) -> float:
    """Peak working memory of the bound chunk (see ``CHUNK_BYTES``)."""
    several, one = CHUNK_BYTES
    return (several * CHUNK_PATTERNS if N > CHUNK_PATTERNS else one * N) * n


def estimate(strategy: str, n: int, m: int, patterns: int, K: int = 4) -> Estimate:
    """Predicted time and peak memory of ``strategy`` for ``patterns`` chambers of ``n`` samples, ``m`` columns.

    Parameters
    ----------
    strategy : {"enumerate", "stream", "branch-and-bound", "patterns"}
        In-memory enumeration, streamed enumeration (budget ``STREAM_MEMORY``), branch
        and bound (a rough estimate: its work depends on the data), or the ``patterns``
        command (enumeration and completeness check).
    n, m, patterns : int
        Samples, columns of ``Phi``, and Cover's bound on the chambers.
    K : int
        Columns of ``U_K`` (the branch and bound's time only).

    Returns
    -------
    Estimate
    """
    N = float(patterns)
    if strategy in ("enumerate", "stream"):
        ba, bb, bc = BYTES_PER_PATTERN
        sec = T0_SECONDS + N * seconds_per_pattern(n, m)
        mem = _BASE_BYTES + N * (ba + bb * n + bc * m) + _chunk_bytes(N, n)
        if strategy == "stream":
            return Estimate("stream", STREAM_FACTOR * sec, int(min(mem, _stream_budget())))
        return Estimate("enumerate", sec, int(mem))
    if strategy == "patterns":
        a, b = PATTERNS_SECONDS
        ba, bb, bc = PATTERNS_BYTES
        return Estimate("patterns", T0_SECONDS + N * (a + b * n), int(_BASE_BYTES + N * (ba + bb * n + bc * m)))
    if strategy == "branch-and-bound":
        c, p, q, r, k = BNB_SECONDS
        return Estimate("branch-and-bound", BNB_T0_SECONDS + c * n ** p * max(N, 1.0) ** q * m ** r * max(K, 1) ** k,
                        int(_BASE_BYTES + BNB_BYTES[0] + BNB_BYTES[1] * n), BNB_SPREAD)
    raise ValueError(f"unknown strategy {strategy!r}")


def plan_query(Phi: Any, K: int | None = None) -> QueryPlan:
    """Predict the patterns, time and memory of ``best_neuron(Phi, ...)`` without enumerating
    (``K``: the columns of ``U_K``, which the branch and bound's time depends on; 4 when omitted)."""
    from relu_gating._inputs.validate import as_matrix

    Phi = as_matrix(Phi, "Phi")
    n, m = Phi.shape
    N, rank, q = _cover_bound(Phi)
    est = estimate("enumerate", n, m, N)
    return QueryPlan(n=n, m=m, rank=rank, n_hyperplanes=q, patterns=N, seconds=est.seconds,
                     memory_bytes=est.memory_bytes, K=4 if K is None else int(K))


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


def memory_budget() -> float:
    """Bytes a default query may plan to use: ``MEMORY_FRACTION`` of this machine's memory."""
    return MEMORY_FRACTION * _physical_memory()


def _stream_budget() -> int:
    return int(min(STREAM_MEMORY, memory_budget()))


def default_max_patterns(n: int, m: int) -> int:
    """The default ``max_patterns``: what fits in half this machine's memory, at most ``PATTERN_LIMIT``."""
    ba, bb, bc = BYTES_PER_PATTERN
    fits = (memory_budget() - _BASE_BYTES - _chunk_bytes(CHUNK_PATTERNS + 1, n)) / (ba + bb * n + bc * m)
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


#: What each strategy is called in the plan line, and how to ask for it (the command line's flag
#: and ``best_neuron``'s keyword argument share the name).
_NAMES = {"enumerate": "in-memory enumeration", "stream": "streamed enumeration",
          "branch-and-bound": "branch and bound"}


@dataclass(frozen=True)
class Choice:
    """What a best-neuron query runs, and why (one line): the plan's decision, the only one.

    Attributes
    ----------
    strategy : {"enumerate", "branch-and-bound"}
        The strategy that runs (:data:`relu_gating.search.strategy.STRATEGIES`).
    options : EnumerateOptions or BranchAndBoundOptions
        Its options, as it runs them (auto's streamed enumeration: ``memory`` set; the pattern cap
        the plan checked lifted).
    estimate : Estimate or None
        The predicted cost of the choice (None: a strategy named without a plan).
    max_seconds : float or None
        The budget of the run: the wall time of the whole call (None: no limit).
    reason : str
    """

    strategy: str
    options: Any
    estimate: Estimate | None
    max_seconds: float | None
    reason: str

    @property
    def memory(self) -> int | None:
        """The streamed enumeration's budget in bytes; None in memory or for the branch and bound."""
        return getattr(self.options, "memory", None) if self.strategy == "enumerate" else None

    def describe(self) -> str:
        """One line: the strategy chosen and why."""
        name = _NAMES[self.estimate.strategy] if self.estimate is not None else _NAMES[self.strategy]
        return f"{name}: {self.reason}"


def _size_flag(b: int) -> str:
    """``2G``, ``1536M``: a size ``--memory`` reads back."""
    return f"{b // 2**30}G" if b % 2**30 == 0 else f"{b // 2**20}M"


def _option(est: Estimate, flags: bool = True) -> str:
    """``branch and bound (--strategy branch-and-bound): 30 s (12 s to 75 s) and 500 MB``."""
    flag = {"enumerate": "--strategy enumerate --max-patterns none", "branch-and-bound": "--strategy branch-and-bound",
            "stream": f"--memory {_size_flag(_stream_budget())}"}[est.strategy]
    return f"{_NAMES[est.strategy]}{f' ({flag})' if flags else ''}: {est.describe()}"


def _rank(est: Estimate, certificate: bool, preference: float = TREE_PREFERENCE) -> float:
    """What auto minimises: estimated seconds (with the certificate's verification when one is written),
    the branch and bound's divided by ``preference``."""
    fixed = BNB_T0_SECONDS if est.strategy == "branch-and-bound" else T0_SECONDS  # not verified again
    sec = fixed + (est.seconds - fixed) * (1.0 + VERIFY_FACTOR[est.strategy] if certificate else 1.0)
    return sec / preference if est.strategy == "branch-and-bound" else sec


def choose(plan: QueryPlan | None, options: Any = None, *, max_seconds: Any = None,
           certificate: bool = False) -> Choice:
    """The strategy a best-neuron query runs, with its options and budget: the one decision.

    ``options`` is the call's :class:`~relu_gating.search.options.Resolved` (the default: auto, every
    option at its default).  A strategy named runs as named (``plan`` only adds its estimate to the
    reason; it may be None); so does auto when the enumeration's options pin it (a pattern set,
    checkpoint or memory budget).  Otherwise (``strategy="auto"``) the fastest predicted option
    within ``max_seconds`` (default ``DEFAULT_MAX_SECONDS``) and ``memory_budget()`` runs: in-memory
    enumeration (when its peak fits and its patterns ``max_patterns``), streamed enumeration
    (``STREAM_MEMORY``) or branch and bound.  When none is predicted within the limit, the branch
    and bound runs anyway (it is anytime: it stops at the limit with the alpha reached, exit 3 on the
    command line); a query is refused only when nothing can work (the branch and bound left out by
    ``EnumerateOptions`` or beyond the memory budget).  ``certificate=True`` (a certificate will be
    written, in any format: the format never changes the choice) ranks the options by search and
    verification (``VERIFY_FACTOR``).  The enumeration must be estimated ``TREE_PREFERENCE`` times
    faster than the branch and bound (``LARGE_TREE_PREFERENCE`` when its peak exceeds
    ``LARGE_ENUMERATION``).  Auto's limit is also the run's budget; a strategy named (or pinned)
    runs within ``max_seconds`` when one is given, else without limit.

    Raises
    ------
    InputError
        A bad ``max_seconds``.
    ProblemTooLargeError
        Nothing can answer; the message names each option with its estimate.
    """
    from relu_gating.search.options import check_max_seconds, resolve_options

    budget = check_max_seconds(max_seconds)
    opts = options if options is not None else resolve_options("auto", None, {})
    if opts.strategy == "branch-and-bound":
        est = plan.estimate("branch-and-bound") if plan is not None else None
        why = f"estimated {est.describe()}" if est is not None else "named"
        return Choice("branch-and-bound", opts.branch_and_bound, est, budget, why)
    eo = opts.enumerate
    if opts.strategy == "enumerate" or eo.pins_enumeration():
        kind = "stream" if eo.memory is not None else "enumerate"
        est = plan.estimate(kind) if plan is not None else None
        why = "named" if opts.strategy == "enumerate" else "kept by its options (a pattern set, checkpoint or memory)"
        why += f", estimated {est.describe()}" if est is not None else ""
        return Choice("enumerate", eo, est, budget, why)
    if plan is None:
        raise ValueError("strategy='auto' needs the query's plan (plan_query)")
    return _auto(plan, opts, DEFAULT_MAX_SECONDS if budget is None else budget, certificate)


def _auto(plan: QueryPlan, opts: Any, limit: float, certificate: bool) -> Choice:
    """``strategy="auto"``: see :func:`choose`."""
    import dataclasses

    eo = opts.enumerate
    cap = check_max_patterns(eo.max_patterns, plan.n, plan.m)
    enum, stream, bnb = (plan.estimate(s) for s in ("enumerate", "stream", "branch-and-bound"))
    within_cap = cap is None or plan.patterns <= cap
    fits = enum.memory_bytes <= memory_budget() and within_cap
    tree = opts.tree_allowed and bnb.memory_bytes <= memory_budget()
    allowed = (enum if fits else None, stream if within_cap or eo.max_patterns == "auto" else None,
               bnb if tree else None)
    options = [e for e in allowed if e is not None and e.seconds <= limit]
    if options:
        pref = LARGE_TREE_PREFERENCE if enum.memory_bytes > LARGE_ENUMERATION else TREE_PREFERENCE
        best = min(options, key=lambda e: _rank(e, certificate, pref))
        others = ", ".join(_option(e, flags=False) for e in (enum, stream, bnb) if e is not best)
        what = "with its certificate's verification, " if certificate else ""
        why = f"estimated {best.describe()}, {what}the fastest within {format_seconds(limit)} ({others})"
    elif tree:  # anytime: it answers within any budget, with the alpha reached
        best = bnb
        others = ", ".join(_option(e, flags=False) for e in (enum, stream))
        why = (f"estimated {bnb.describe()}, beyond the {format_seconds(limit)} limit: it stops there with "
               f"the alpha reached ({others})")
    else:
        left = "left out by EnumerateOptions" if not opts.tree_allowed else "beyond the memory budget"
        raise ProblemTooLargeError(
            f"{plan.describe()}: no enumeration is predicted to finish within {format_seconds(limit)} "
            f"(max_seconds) and the branch and bound is {left}: "
            + "; ".join(_option(e) for e in (enum, stream, bnb)) + "; options: a longer --max-seconds, "
            "--strategy branch-and-bound (anytime), or fewer samples or input dimensions")
    if best.strategy == "branch-and-bound":
        return Choice("branch-and-bound", opts.branch_and_bound, best, limit, why)
    memory = _stream_budget() if best.strategy == "stream" else None
    return Choice("enumerate", dataclasses.replace(eo, memory=memory, max_patterns=None), best, limit, why)


def check_plan(plan: QueryPlan, limit: int | None, what: str = "max_patterns") -> None:
    """Refuse (:class:`ProblemTooLargeError`) an enumeration whose Cover bound exceeds ``limit``, instantly.

    The message gives the in-memory enumeration's estimate and names the options that
    would answer the query (branch and bound, the streamed enumeration, no limit), each
    with its estimate.  A degenerate ``Phi`` may realize far fewer patterns than Cover's bound.
    """
    if limit is None or plan.patterns <= limit:
        return
    enum, stream, bnb = (plan.estimate(s) for s in ("enumerate", "stream", "branch-and-bound"))
    opts = [e for e in (bnb, stream) if e.seconds <= DEFAULT_MAX_SECONDS]
    if enum.memory_bytes <= memory_budget() and enum.seconds <= DEFAULT_MAX_SECONDS:
        opts.append(enum)
    advice = ("options: " + "; ".join(_option(e) for e in sorted(opts, key=lambda e: e.seconds)) if opts else
              f"no strategy is predicted within {format_seconds(DEFAULT_MAX_SECONDS)} ("
              + "; ".join(_option(e) for e in (bnb, stream)) + "): use fewer samples or input dimensions, "
              "or --alpha below 1 with --strategy branch-and-bound")
    raise ProblemTooLargeError(f"{plan.describe()}: more than {what} = {limit:,}; {advice}")
