r"""Each chamber's facet rows, read off the pattern set: its neighbours across one hyperplane (private).

The chambers of the arrangement ``{theta : phi_j . theta = 0}`` are listed by their gating patterns
(a complete :class:`~relu_gating.patterns.PatternSet`).  Two chambers whose patterns differ in the
single row ``j`` lie on either side of a facet in the hyperplane of row ``j``; conversely, a facet of a
chamber in the hyperplane of row ``j`` alone has the chamber with pattern bit ``j`` flipped on its
other side.  So the facet rows of chamber ``i`` are the rows ``j`` with ``s_i xor e_j`` in the set.

The chamber is the cone cut out by its facet rows alone; the other rows are redundant.  The cone
pricing (:mod:`relu_gating.layers._cone_pricing`) minimizes over multipliers ``mu >= 0`` of the
chamber's rows, and the minimum needs multipliers on facet rows only: its active-set steps then scan
a handful of rows a chamber instead of all ``n``.  Nothing here is trusted: any multipliers give a
valid bound, evaluated exactly later, and a chamber whose optimum on its facet rows is infeasible for
some other row (a facet shared by coincident rows, which no single flip reaches; a hash collision)
is solved on all its rows by the caller.

The membership test hashes the patterns: ``h(s) = sum_j s_j w_j`` (mod ``2^64``) with seeded random
words ``w_j``, so that flipping row ``j`` adds or subtracts ``w_j``; every flip of every chamber is
looked up in the sorted hashes at once, in chunks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FacetRows", "facet_rows"]

#: (chamber, row) pairs looked up at a time (about 64 MB of hashes).
_CHUNK = 2**23


class FacetRows:
    """Chamber ``i``'s facet rows ``indices[indptr[i]:indptr[i + 1]]`` (increasing)."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray) -> None:
        self.indptr, self.indices = indptr, indices
        self.counts = np.diff(indptr)

    def padded(self, chambers: np.ndarray) -> np.ndarray:
        """The facet rows of ``chambers`` as rows of a ``(len, F)`` array, ``-1`` past each one's count."""
        cnt = self.counts[chambers]
        F = int(cnt.max(initial=0))
        out = np.full((chambers.size, F), -1, dtype=np.int64)
        slot = np.arange(F)
        on = slot[None, :] < cnt[:, None]
        out[on] = self.indices[(self.indptr[chambers][:, None] + slot[None, :])[on]]
        return out


class _Table:
    """Membership in a set of 64-bit hashes: sorted, with the start of each bucket of their top ``B``
    bits (about one hash a bucket), so that a lookup reads a few neighbouring words instead of a binary
    search's ``log N`` scattered ones."""

    def __init__(self, h: np.ndarray) -> None:
        self.sorted = np.sort(h)
        self.bits = max(1, int(np.ceil(np.log2(max(h.size, 2)))))
        self.shift = np.uint64(64 - self.bits)
        edges = np.arange(2**self.bits + 1, dtype=np.uint64)
        self.start = np.searchsorted(self.sorted >> self.shift, edges)  # bucket b: start[b]:start[b + 1]
        self.width = int(np.diff(self.start).max(initial=0))

    def holds(self, q: np.ndarray) -> np.ndarray:
        """Elementwise: is ``q`` one of the hashes?"""
        q = q.ravel()
        b = (q >> self.shift).astype(np.int64)
        lo, hi = self.start[b], self.start[b + 1]
        out = np.zeros(q.shape, dtype=bool)
        idx = np.flatnonzero(hi > lo)  # the queries whose bucket holds a hash at slot t (most buckets: one)
        for t in range(self.width):
            idx = idx[lo[idx] + t < hi[idx]]
            out[idx] |= self.sorted[lo[idx] + t] == q[idx]
        return out


def _hashes(S: Any, w: np.ndarray) -> np.ndarray:
    """``sum_j s_ij w_j`` (mod ``2^64``) of every pattern, in chunks of unpacked rows."""
    n = S.shape[1]
    out = np.empty(S.shape[0], dtype=np.uint64)
    step = max(1, _CHUNK // max(n, 1))
    with np.errstate(over="ignore"):
        for lo in range(0, S.shape[0], step):
            out[lo:lo + step] = np.where(S[lo:lo + step], w[None, :], np.uint64(0)).sum(axis=1, dtype=np.uint64)
    return out


def facet_rows(S: Any, seed: int = 0) -> FacetRows:
    """The facet rows of every chamber of the complete pattern set whose ``N x n`` masks are ``S``
    (a bool array or :class:`~relu_gating.layers._packed_masks.PackedMasks`)."""
    N, n = S.shape
    w = np.random.default_rng(seed).integers(0, 2**63, size=n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    h = _hashes(S, w)
    table = _Table(h)
    rows_of: list[np.ndarray] = []
    cols_of: list[np.ndarray] = []
    step = max(1, _CHUNK // max(n, 1))
    with np.errstate(over="ignore"):
        for lo in range(0, N, step):
            s = S[lo:lo + step]
            flip = np.where(s, h[lo:lo + step, None] - w[None, :], h[lo:lo + step, None] + w[None, :])
            i, j = np.nonzero(table.holds(flip).reshape(flip.shape))
            rows_of.append(lo + i)
            cols_of.append(j)
    ci = np.concatenate(rows_of) if rows_of else np.zeros(0, dtype=np.int64)
    cj = np.concatenate(cols_of) if cols_of else np.zeros(0, dtype=np.int64)
    indptr = np.zeros(N + 1, dtype=np.int64)
    np.cumsum(np.bincount(ci, minlength=N), out=indptr[1:])
    return FacetRows(indptr, cj.astype(np.int64))  # np.nonzero lists (chamber, row) pairs in row-major order
