"""Subsets of hyperplanes for the ray sweep, and the sign filter (private).

Rays of the arrangement come from (d-1)-subsets of the hyperplanes, generated
in lexicographic order in vectorised batches, grouped by their first element
(which is also how :func:`enumerate_patterns` splits the work into parts).
"""

from __future__ import annotations

from itertools import chain, combinations
from math import comb

import numpy as np

__all__ = ["subset_groups", "batches", "decide"]

BATCH_ENTRIES = 1_000_000  # subsets * q per vectorised batch
#: At most this many subsets per batch: a batch's arrays (rays, minors, steps) then stay in
#: cache (measured: 1.3x faster per chamber at m = 5, 6 than batches of 25,000-33,000).
BATCH_RAYS = 4096


def _combos(lo: int, q: int, s: int) -> np.ndarray:
    """All s-subsets of range(lo, q) in lexicographic order, shape (C, s)."""
    if s == 0:
        return np.zeros((1, 0), dtype=np.int64)
    if s == 1:
        return np.arange(lo, q, dtype=np.int64)[:, None]
    if s == 2:
        i, j = np.triu_indices(q - lo, 1)
        return np.stack([i + lo, j + lo], axis=1).astype(np.int64)
    flat = np.fromiter(chain.from_iterable(combinations(range(lo, q), s)), dtype=np.int64,
                       count=comb(max(q - lo, 0), s) * s)
    return flat.reshape(-1, s)


def subset_groups(q: int, t: int, part: tuple[int, int] | None) -> list[int]:
    """First indices of the t-subsets handled by ``part = (i, k)`` (contiguous by work)."""
    firsts = list(range(0, q - t + 1))
    if part is None or part[1] == 1:
        return firsts
    i, k = part
    w = np.array([comb(q - 1 - f, t - 1) for f in firsts], dtype=float)
    start = np.concatenate([[0.0], np.cumsum(w)[:-1]])
    total = w.sum()
    own = (start >= i * total / k) & (start < (i + 1) * total / k) if i < k - 1 else start >= i * total / k
    return [f for f, o in zip(firsts, own) if o]


def batches(q: int, t: int, firsts: list[int]):
    """Arrays (B, t) of the t-subsets whose first element is in ``firsts``, lexicographic, at
    most ``min(BATCH_ENTRIES // q, BATCH_RAYS)`` per array."""
    limit = max(1, min(BATCH_ENTRIES // max(q, 1), BATCH_RAYS))
    buf, size = [], 0
    for f in firsts:
        rest = _combos(f + 1, q, t - 1)
        block = np.concatenate([np.full((rest.shape[0], 1), f, dtype=np.int64), rest], axis=1)
        buf.append(block)
        size += block.shape[0]
        if size >= limit:
            whole = np.concatenate(buf)
            for s in range(0, whole.shape[0] - limit + 1, limit):
                yield whole[s:s + limit]
            tail = whole.shape[0] % limit
            buf, size = ([whole[-tail:]], tail) if tail else ([], 0)
    if buf:
        yield np.concatenate(buf)


def decide(val: np.ndarray, mag: np.ndarray, fac: float, exact_int: bool) -> np.ndarray:
    """Mask of entries whose float sign is certainly the exact sign."""
    dec = np.abs(val) > fac * mag
    if exact_int:
        dec |= mag < 2.0 ** 51  # integer computation below 2**52: computed exactly
    return dec
