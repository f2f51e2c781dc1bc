"""Per-strategy options of :func:`relu_gating.best_neuron` (``options=``).

As ``scipy.optimize.linprog`` takes ``method=`` and per-method ``options=``, a best-neuron query
takes ``strategy=`` and the options of that strategy: :class:`EnumerateOptions` (in-memory or
streamed enumeration of every chamber) or :class:`BranchAndBoundOptions` (the tree search).
What every strategy shares stays a keyword of ``best_neuron`` (``features``, ``alpha``, ``tol``,
``method``, ``strategy``, ``max_seconds``, ``executor``, ``progress``).

``options`` may also be a dict of the fields of the strategy's class when ``strategy`` names
one.  With ``strategy="auto"``, options of one strategy's class choose that strategy.

The enumeration's options were keywords of ``best_neuron`` in release 0.3 (``max_patterns``,
``chunk_size``, ``batch_size``, ``checkpoint``, ``patterns``, ``memory``); they are still
accepted there for this release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating.errors import InputError

__all__ = ["EnumerateOptions", "BranchAndBoundOptions", "Resolved", "resolve_options", "check_max_seconds",
           "LEGACY_DEFAULTS", "STRATEGY_NAMES"]

#: What ``strategy=`` (``--strategy``) accepts: the plan's choice, or one strategy named.
STRATEGY_NAMES = ("auto", "enumerate", "branch-and-bound")


@dataclass(frozen=True)
class EnumerateOptions:
    """Options of the enumeration (``strategy="enumerate"``).

    Attributes
    ----------
    max_patterns : int, "auto" (default) or None
        Refuse, before any heavy work, a ``Phi`` with more chambers than this (Cover's bound);
        ``"auto"``: what fits in half this machine's memory; None: no limit.
    memory : int or str, optional
        Stream the search within this budget (bytes, or a size such as ``"2G"``); None: in memory,
        or what the plan chooses under ``strategy="auto"``.
    chunk_size, batch_size : int
        Patterns per bound chunk / per exact-solve task.
    checkpoint : path, optional
        ``.npz`` written at most every 10 s, at the end and on an interrupt; a run with the same
        inputs resumes from it.
    patterns : PatternSet, optional
        The output of :func:`relu_gating.enumerate_patterns` for this ``Phi``, reused across queries.
    """

    max_patterns: int | str | None = "auto"
    memory: int | str | None = None
    chunk_size: int = 8192
    batch_size: int = 64
    checkpoint: str | None = None
    patterns: Any = None

    def __post_init__(self) -> None:
        for name in ("chunk_size", "batch_size"):
            val = getattr(self, name)
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
                raise InputError(f"{name} must be a positive integer, got {val!r}")

    def pins_enumeration(self) -> bool:
        """Whether these options only make sense for the enumeration (a pattern set, checkpoint or budget)."""
        return self.patterns is not None or self.checkpoint is not None or self.memory is not None


@dataclass(frozen=True)
class BranchAndBoundOptions:
    """Options of the branch and bound (``strategy="branch-and-bound"``).

    Attributes
    ----------
    seed : int
        Seed of the first incumbent's random neurons and local search.
    lifted : bool
        Also try the lifted doubly nonnegative bound on nodes with at most 128 undecided rows (on by
        default, after the search's first 6,000 nodes unless its probes find sooner that it pays;
        ``False`` keeps the subspace bound alone; see :func:`relu_gating.search.bnb.branch_and_bound`).
    workers : int or None
        Local processes searching subtrees (and auditing the tree) when no ``executor`` is given:
        None (default) every core this process may use (``os.sched_getaffinity``), 1 serial.  The
        processes start only when 2 s of serial search have not settled the query, and end with
        the call; the answer is the same whatever the count.  An ``executor`` takes precedence.
    starts : array_like, shape (k, m), or None
        Neurons tried first for the incumbent, each ascended and its value recomputed under the
        query's own objective (a greedy layer passes its previous step's candidates, issue 39).
        They only help pruning; the certificate is proven as without them.
    guide : TreeGuide or None
        Another tree's geometry on the same ``Phi`` (:func:`relu_gating.search.bnb.tree_guide`), replayed
        before the search's own expansions (a greedy layer passes its previous step's tree, issue 39).
        The tree is checked as any other; a guide made on another ``Phi`` is ignored.
    """

    seed: int = 0
    lifted: bool = True
    workers: int | None = None
    starts: Any = dataclasses.field(default=None, compare=False, repr=False)
    guide: Any = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"BranchAndBoundOptions: seed must be a nonnegative integer, got {self.seed!r}")
        if not isinstance(self.lifted, bool):
            raise InputError(f"BranchAndBoundOptions: lifted must be True or False, got {self.lifted!r}")
        if self.workers is not None and (isinstance(self.workers, bool) or not isinstance(self.workers, int)
                                         or self.workers < 1):
            raise InputError(f"BranchAndBoundOptions: workers must be a positive integer or None (every usable "
                             f"core), got {self.workers!r}")


#: The release-0.3 keywords of ``best_neuron`` that belong to :class:`EnumerateOptions`, with their defaults.
LEGACY_DEFAULTS = {f.name: f.default for f in dataclasses.fields(EnumerateOptions)}
_CLASSES = {"enumerate": EnumerateOptions, "branch-and-bound": BranchAndBoundOptions}


def _from_dict(strategy: str, options: dict) -> Any:
    """A dict of options as the dataclass of ``strategy``, naming an unknown key."""
    if strategy not in _CLASSES:
        raise InputError("options as a dict needs strategy='enumerate' or 'branch-and-bound'; "
                         "with strategy='auto' pass EnumerateOptions(...) or BranchAndBoundOptions(...)")
    cls = _CLASSES[strategy]
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(options) - names)
    if unknown:
        raise InputError(f"options: {unknown[0]!r} is not an option of strategy={strategy!r} "
                         f"(its options: {', '.join(sorted(names))})")
    return cls(**options)


def _legacy(given: dict) -> EnumerateOptions | None:
    """The release-0.3 keywords given, as EnumerateOptions (with a DeprecationWarning), or None."""
    if not given:
        return None
    warnings.warn(f"best_neuron({', '.join(f'{k}=' for k in given)}...) is deprecated; pass "
                  f"options=EnumerateOptions({', '.join(f'{k}=...' for k in given)})",
                  DeprecationWarning, stacklevel=4)
    return EnumerateOptions(**given)


@dataclass(frozen=True)
class Resolved:
    """The options of a ``best_neuron`` call, resolved: ``strategy`` ("auto", "enumerate" or
    "branch-and-bound"), the options of each strategy, and whether auto may choose the tree search."""

    strategy: str
    enumerate: EnumerateOptions
    branch_and_bound: BranchAndBoundOptions
    tree_allowed: bool


def check_max_seconds(max_seconds: Any, name: str = "max_seconds") -> float | None:
    """``max_seconds`` as a float (None: no limit), or :class:`InputError` naming ``name``."""
    if max_seconds is None:
        return None
    if isinstance(max_seconds, bool) or not isinstance(max_seconds, (int, float, np.integer, np.floating)) \
            or not max_seconds > 0 or not np.isfinite(max_seconds):
        raise InputError(f"{name} must be a positive number or None, got {max_seconds!r}")
    return float(max_seconds)


def resolve_options(strategy: str, options: Any, legacy: dict) -> Resolved:
    """The options of a ``best_neuron`` call; ``legacy`` holds the release-0.3 keywords as given.

    With ``strategy="auto"``, :class:`EnumerateOptions` leave auto the in-memory and the streamed
    enumeration to choose from, :class:`BranchAndBoundOptions` choose the branch and bound; the old
    keywords keep their release-0.3 meaning (a pattern set, checkpoint or memory budget pins the
    enumeration).  Options of the other strategy's class, or options and old keywords together, are
    refused naming the argument, as is an unknown ``strategy``.
    """
    if not isinstance(strategy, str) or strategy not in STRATEGY_NAMES:
        raise InputError(f"strategy must be one of {', '.join(map(repr, STRATEGY_NAMES))}, got {strategy!r}")
    old = _legacy(legacy)
    if isinstance(options, dict):
        options = _from_dict(strategy, options)
    if options is not None and old is not None:
        raise InputError("give the enumeration's options in options=EnumerateOptions(...), not also as keywords")
    if options is None:
        enum = old if old is not None else EnumerateOptions()
        if strategy == "branch-and-bound" and enum.pins_enumeration():
            raise InputError("patterns, checkpoint and memory apply to strategy='enumerate' only")
        return Resolved(strategy, enum, BranchAndBoundOptions(), not enum.pins_enumeration())
    if isinstance(options, EnumerateOptions):
        if strategy == "branch-and-bound":
            raise InputError("options=EnumerateOptions(...) applies to strategy='enumerate' or 'auto', "
                             "not 'branch-and-bound'")
        return Resolved(strategy, options, BranchAndBoundOptions(), False)
    if isinstance(options, BranchAndBoundOptions):
        if strategy == "enumerate":
            raise InputError("options=BranchAndBoundOptions(...) applies to strategy='branch-and-bound' or "
                             "'auto', not 'enumerate'")
        return Resolved("branch-and-bound", EnumerateOptions(), options, True)
    raise InputError(f"options must be EnumerateOptions, BranchAndBoundOptions, a dict or None, "
                     f"got {type(options).__name__}")
