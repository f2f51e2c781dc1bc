"""The strategies of a best-neuron query: one protocol, two implementations, one choice.

As ``scipy.optimize.linprog`` has one dispatcher, one function per method and one result, a
best-neuron query is answered by one :class:`Strategy`:

* :class:`Enumeration` (``"enumerate"``, :class:`~relu_gating.search.options.EnumerateOptions`):
  every chamber listed, bounded and the best solved exactly, in memory or, with a memory budget,
  streamed (:mod:`relu_gating.search._enum.memory`, :mod:`relu_gating.search._stream.run`);
* :class:`BranchAndBound` (``"branch-and-bound"``,
  :class:`~relu_gating.search.options.BranchAndBoundOptions`): the tree search
  (:mod:`relu_gating.search.bnb`).

Which one runs is decided once, by :func:`relu_gating.search.plan.choose`; :func:`run` runs its
:class:`~relu_gating.search.plan.Choice` on a :class:`Query`.  :func:`relu_gating.best_neuron`,
the command line's ``best-neuron`` and :func:`relu_gating.greedy_layer` all go through here.
"""

from __future__ import annotations


from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from relu_gating.errors import InputError
from relu_gating.search.options import BranchAndBoundOptions, EnumerateOptions
from relu_gating.search.result import NeuronResult

__all__ = ["Query", "Strategy", "Enumeration", "BranchAndBound", "STRATEGIES", "run", "deadline_of"]


@dataclass(frozen=True)
class Query:
    """What every strategy accepts: the problem and the options every strategy shares.

    Attributes
    ----------
    Phi, U_K, features
        The problem (see :func:`relu_gating.best_neuron`).
    alpha, tol, method, executor, progress
        The options of :func:`relu_gating.best_neuron` that every strategy takes.
    deadline : float or None
        ``time.perf_counter()`` time by which the whole call must return (its ``max_seconds``
        counted from the call's start); None: no limit.
    writes : {None, "json", "npz"}
        The certificate the caller writes after the run (its writing is kept within the budget).
    """

    Phi: Any
    U_K: Any
    features: Any = "bias"
    alpha: float = 1.0
    tol: float = 1e-9
    method: str = "auto"
    executor: Any = None
    progress: bool | None = False
    deadline: float | None = None
    writes: str | None = None

    def __post_init__(self) -> None:
        """Reject a bad ``alpha`` or ``tol`` before any work, naming the argument."""
        from relu_gating.search._config import MAX_TOL

        alpha, tol = self.alpha, self.tol
        if isinstance(alpha, bool) or not (isinstance(alpha, (int, float, np.floating)) and 0 < alpha <= 1):
            raise InputError(f"alpha must be a number in (0, 1], got {alpha!r}")
        if isinstance(tol, bool) or not (isinstance(tol, (int, float, np.floating)) and 0 <= tol < MAX_TOL):
            raise InputError(f"tol must be a number in [0, {MAX_TOL:g}), got {tol!r}")


class Strategy(Protocol):
    """One way to answer a :class:`Query`: its ``name`` (``strategy=``), the type of its options,
    and ``run``, which returns a :class:`~relu_gating.search.result.NeuronResult` whose
    ``strategy`` is ``name``."""

    name: str
    options_type: type

    def run(self, query: Query, options: Any) -> NeuronResult: ...


#: Seconds per pattern kept before the enumeration's deadline for its ending (claims, final scan)
#: and, when the caller writes one, its certificate: JSON about 4 us a pattern, binary 0.5 us.
ENUM_FINISH_PER_PATTERN = 1e-6
ENUM_WRITE_PER_PATTERN = {None: 0.0, "json": 4e-6, "npz": 5e-7}


class Enumeration:
    """Every chamber listed, bounded, the best solved exactly: in memory, or streamed within
    ``options.memory``.  A budget ends it with a valid, complete certificate of the alpha reached."""

    name: str = "enumerate"
    options_type: type = EnumerateOptions

    def run(self, query: Query, options: EnumerateOptions) -> NeuronResult:
        from relu_gating.search._enum.memory import Deadline, enumerate_in_memory
        from relu_gating.search.objectives import make_objective

        obj = make_objective(query.Phi, query.U_K, query.features)  # validates before the expensive part
        deadline = Deadline(query.deadline, ENUM_FINISH_PER_PATTERN + ENUM_WRITE_PER_PATTERN.get(query.writes, 0.0))
        if options.memory is not None:  # the streamed search, in bounded memory
            from relu_gating.search._stream.run import stream_search

            return stream_search(obj, alpha=query.alpha, method=query.method, max_patterns=options.max_patterns,
                                 chunk_size=options.chunk_size, batch_size=options.batch_size, tol=query.tol,
                                 executor=query.executor, checkpoint=options.checkpoint, progress=query.progress,
                                 patterns=options.patterns, memory=options.memory, deadline=deadline)
        return enumerate_in_memory(obj, options, alpha=query.alpha, tol=query.tol, method=query.method,
                                   executor=query.executor, progress=query.progress, deadline=deadline)


class BranchAndBound:
    """Branch and bound over the arrangement, certified by its tree; anytime: a budget ends it
    with the incumbent and a valid certificate of the alpha reached."""

    name: str = "branch-and-bound"
    options_type: type = BranchAndBoundOptions

    def run(self, query: Query, options: BranchAndBoundOptions) -> NeuronResult:
        from relu_gating.search.bnb import branch_and_bound

        return branch_and_bound(query.Phi, query.U_K, features=query.features, alpha=query.alpha,
                                method=query.method, tol=query.tol, progress=query.progress, seed=options.seed,
                                executor=query.executor, lifted=options.lifted, deadline=query.deadline,
                                writes=query.writes, workers=options.workers, starts=options.starts,
                                guide=options.guide)


#: The strategies by name (what :attr:`relu_gating.search.plan.Choice.strategy` holds).
STRATEGIES: dict[str, Strategy] = {s.name: s for s in (Enumeration(), BranchAndBound())}


def run(choice: Any, query: Query) -> NeuronResult:
    """Run the plan's :class:`~relu_gating.search.plan.Choice` on ``query``."""
    strategy = STRATEGIES[choice.strategy]
    if not isinstance(choice.options, strategy.options_type):
        raise TypeError(f"{strategy.name} runs {strategy.options_type.__name__}, got {type(choice.options).__name__}")
    return strategy.run(query, choice.options)


def deadline_of(start: float, max_seconds: float | None) -> float | None:
    """The deadline of a call begun at ``start`` (``time.perf_counter()``) with budget ``max_seconds``."""
    return None if max_seconds is None else start + float(max_seconds)



