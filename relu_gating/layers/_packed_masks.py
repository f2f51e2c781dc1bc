r"""The chambers' gating masks kept packed, unpacked only where read (private).

:class:`~relu_gating.layers._cone_pricing.ConePricer` reads its ``N x n`` masks by rows (a chamber, a
batch of chambers, a chunk) and by single entries (a multiplier's row in a chamber); it never needs
all of them unpacked at once.  A bool matrix costs ``N n`` bytes -- about a million chambers of a
thousand rows at ``n = 1,000``, ``d = 2`` (1 GB) -- against ``N n / 8`` packed, as
:class:`~relu_gating.patterns.PatternSet` already stores them (``np.packbits``, big-endian bits).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["PackedMasks"]

#: Set bits of each byte value.
_POPCOUNT = np.array([bin(b).count("1") for b in range(256)], dtype=np.int64)
#: Packed rows per chunk when counting (about 4 MB of counts at a time).
_CHUNK_BYTES = 2**22
#: Masks of at most this many entries are also kept unpacked (bytes): single-row reads of the per-chamber
#: NNLS then cost nothing (d = 3, n = 100: 32 MB; d = 2, n = 400: 64 MB; n = 700 and up stay packed).
DENSE_MAX = 2**27


class PackedMasks:
    """Read-only bool ``N x n`` masks over their packed bytes (``np.packbits(masks, axis=1)``).

    ``masks[k]``, ``masks[lo:hi]``, ``masks[rows]`` (integer or bool index arrays) unpack those rows;
    ``masks[rows, cols]`` (broadcast integer arrays) reads single bits; ``sum(axis=1)`` counts each
    row's set bits.  Each agrees with the same indexing of the unpacked bool matrix, which is kept as
    well (``dense``) when it has at most ``DENSE_MAX`` entries.
    """

    def __init__(self, packed: np.ndarray, n: int) -> None:
        packed = np.asarray(packed, dtype=np.uint8)
        if packed.ndim != 2 or packed.shape[1] != (n + 7) // 8:
            raise ValueError(f"packed masks of {n} rows need {(n + 7) // 8} bytes a chamber, got shape {packed.shape}")
        self.packed, self.n = packed, int(n)
        self.shape = (packed.shape[0], self.n)
        self.ndim = 2
        small = self.shape[0] * self.n <= DENSE_MAX
        self.dense = np.unpackbits(packed, axis=1, count=self.n).view(bool) if small else None

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: Any) -> np.ndarray:
        if self.dense is not None:
            return self.dense[key]
        if isinstance(key, tuple):
            rows, cols = np.broadcast_arrays(np.asarray(key[0]), np.asarray(key[1]))
            if np.any((cols < 0) | (cols >= self.n)):
                raise IndexError(f"mask column out of range 0..{self.n - 1}")
            return ((self.packed[rows, cols >> 3] >> (7 - (cols & 7)).astype(np.uint8)) & 1).astype(bool)
        sel = self.packed[key]
        return np.unpackbits(sel, axis=-1, count=self.n).view(bool)

    def sum(self, axis: int) -> np.ndarray:
        """Active rows per chamber (``axis=1`` only); the padding bits of ``packbits`` are zero."""
        if axis != 1:
            raise ValueError("PackedMasks.sum counts per chamber only (axis=1)")
        if self.dense is not None:
            return self.dense.sum(axis=1)
        out = np.empty(self.shape[0], dtype=np.int64)
        step = max(1, _CHUNK_BYTES // max(self.packed.shape[1], 1))
        for lo in range(0, self.shape[0], step):
            out[lo:lo + step] = _POPCOUNT[self.packed[lo:lo + step]].sum(axis=1)
        return out

    def unpacked(self) -> np.ndarray:
        """Every mask as one bool matrix (``N x n`` bytes)."""
        return self[:]
