"""The one exact phase of an enumerated search, in memory or streamed (private).

Exact solves go largest bound first (ties by pattern index) in rounds of ``batch_size`` (times
:data:`~relu_gating.search._config.PARALLEL_BATCHES` on an executor) until
``best >= alpha * (largest open bound)``.  The patterns that can still win are kept in
:class:`Candidates`, a bounded list in that order, filled as the bounds arrive (streamed) or by
one scan of the :class:`~relu_gating.search._enum.store.PatternStore` (in memory), and re-filled
by a scan only if the search needs a pattern it had no room for: a round costs its solves, not a
pass over every pattern.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from relu_gating._runtime.executors import executor_map
from relu_gating._runtime.interrupt import check_stop
from relu_gating._runtime.progress import Progress
from relu_gating.search._config import PARALLEL_BATCHES
from relu_gating.search._enum.store import SCAN, PatternStore
from relu_gating.search._exact.tasks import prune_target, solve_chunk
from relu_gating.search.state import EXACT, UNSETTLED, PatternOutcome

__all__ = ["Candidates", "exact_phase", "open_rows", "threshold"]

def threshold(best: float, alpha: float, tol: float) -> float:
    """The bound a pattern must exceed to be solved: ``best / alpha + tol`` (``-inf`` before any value)."""
    return best / alpha + tol if np.isfinite(best) else -np.inf


def open_rows(upper: np.ndarray, status: np.ndarray, threshold: float) -> np.ndarray:
    """Rows whose bound can still beat ``threshold`` (unsettled, bound above it)."""
    return np.flatnonzero((status == UNSETTLED) & (upper > threshold))


class Candidates:
    """The open patterns that can still win, at most ``capacity`` of them: indices ``idx`` and
    bounds ``upper``, largest bound first (ties by index).

    Invariant: every open pattern (unsettled, bound above the threshold) with a bound above
    ``floor`` is held here; ``floor`` is the largest bound ever dropped for lack of room (``-inf``
    while nothing was).  While some open pattern's bound is above ``defer`` (the pilot's attained
    value), only those are held: they are solved first, then the best reaches it and the others
    close; ``deferred`` is the largest bound held back, and :meth:`rescan` brings those in once the
    candidates run out.
    """

    def __init__(self, capacity: int, defer: float = -np.inf) -> None:
        self.idx = np.zeros(0, dtype=np.int64)
        self.neg = np.zeros(0)  # minus the bounds: ascending
        self.capacity, self.floor = int(capacity), -np.inf
        self.defer, self.deferred = float(defer), -np.inf
        self.sorted = True

    def __len__(self) -> int:
        return int(self.idx.size)

    @property
    def upper(self) -> np.ndarray:
        return -self.neg

    def add(self, idx: np.ndarray, upper: np.ndarray, threshold: float) -> None:
        """Hold the open ones of these patterns, within the capacity."""
        self._hold(idx, upper, threshold)
        self.prune(threshold)

    def _hold(self, idx: np.ndarray, upper: np.ndarray, threshold: float) -> None:
        held = upper > max(threshold, self.floor)
        keep = held & (upper > self.defer)
        back = upper[held & ~keep]
        if back.size:
            self.deferred = max(self.deferred, float(back.max()))
        if keep.any():  # appended out of order: sorted by the next prune
            self.idx = np.concatenate([self.idx, idx[keep]])
            self.neg = np.concatenate([self.neg, -upper[keep]])
            self.sorted = False

    def prune(self, threshold: float) -> None:
        """Drop the candidates at or below ``threshold``, and those beyond the capacity."""
        if not self.sorted:
            order = np.lexsort((self.idx, self.neg))
            self.idx, self.neg, self.sorted = self.idx[order], self.neg[order], True
        k = int(np.searchsorted(self.neg, -threshold, side="left"))  # bound above threshold: a prefix
        if k > self.capacity:
            self.floor = max(self.floor, float(-self.neg[self.capacity]))
            k = self.capacity
        self.idx, self.neg = self.idx[:k], self.neg[:k]

    def pop(self, k: int) -> np.ndarray:
        """The ``k`` first candidates, removed."""
        out = self.idx[:k].copy()
        self.idx, self.neg = self.idx[k:], self.neg[k:]
        return out

    def drop(self, idx: np.ndarray) -> None:
        keep = ~np.isin(self.idx, idx)
        self.idx, self.neg = self.idx[keep], self.neg[keep]

    def needs_rescan(self, need: int, threshold: float) -> bool:
        """Too few candidates while some were dropped for room, or none left while some were held
        back below ``defer``, above ``threshold``."""
        return ((len(self) < min(need, self.capacity) and self.floor > threshold)
                or (not len(self) and self.deferred > threshold))

    def rescan(self, store: PatternStore, threshold: float) -> None:
        """Refill from the store: the largest bounds of the open patterns above ``defer`` while there
        are any, else of every open pattern (``defer`` lifted for good)."""
        self.idx, self.neg = np.zeros(0, dtype=np.int64), np.zeros(0)
        self.floor, self.deferred = -np.inf, -np.inf
        pieces: list[tuple[np.ndarray, np.ndarray]] = []
        size = 0
        for s in range(0, store.N, SCAN):
            u = store.read("upper", s, s + SCAN)
            rows = open_rows(u, store.read("status", s, s + SCAN), threshold)
            pieces.append((rows + s, u[rows]))
            size += rows.size
            if size > 2 * self.capacity or s + SCAN >= store.N:  # held in pieces, sorted and cut now and then
                self._hold(np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces]), threshold)
                self.prune(threshold)
                pieces, size = [], len(self)
        if not len(self) and self.deferred > threshold:  # nothing above defer is open
            self.defer = -np.inf
            self.rescan(store, threshold)


def exact_phase(obj: Any, store: PatternStore, cands: Candidates, best: Callable[[], float],
                absorb: Callable[[PatternOutcome], None], *, alpha: float, tol: float, method: str, batch_size: int,
                executor: Any, progress: Any, stop: Callable[[], bool] | None = None) -> tuple[int, bool]:
    """Exact solves of the candidates, largest bound first, until none can beat ``best() / alpha``.

    Each outcome goes to ``absorb`` as it arrives (which merges it into the store and the
    incumbent ``best()``).  ``stop`` (a budget) is asked before each round: when it says so the
    phase ends early, the open patterns keeping their bounds.  Returns the number of re-scans of
    the store and whether ``stop`` ended the phase.
    """
    need = batch_size * (1 if executor is None else PARALLEL_BATCHES)
    cands.capacity = max(cands.capacity, need)  # a round takes ``need`` of them: full rounds, as many as asked
    rescans = 0
    with Progress(None, "exact phase", enabled=progress) as bar:  # patterns closed; the note: solved
        solved = 0  # exactly (the summary's count: the rest of those closed here are settled by bound)
        while True:
            thr = threshold(best(), alpha, tol)
            cands.prune(thr)
            if cands.needs_rescan(need, thr):  # refill (terminates: fills, and nothing is held back after)
                cands.rescan(store, thr)
                rescans += 1
                continue
            if not len(cands):
                return rescans, False
            if stop is not None and stop():
                return rescans, True
            take = cands.pop(need)
            target = prune_target(best(), alpha)
            tasks = []
            for s in range(0, take.size, batch_size):
                idx = take[s:s + batch_size]
                masks = np.unpackbits(store.take("packed", idx), axis=1, count=store.n).view(bool)
                tasks.append((obj, idx, masks, method, store.take("witnesses", idx), target))
            for out in executor_map(executor, solve_chunk, tasks):
                absorb(out)
                solved += int(np.count_nonzero(out.status == EXACT))
                bar.update(out.index.size, note=f"solved exactly {solved:,}  best {best():.6f}")
                check_stop()  # Ctrl-C from the command line (relu_gating._runtime.interrupt)
