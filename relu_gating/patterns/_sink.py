"""Where the sweep's certified blocks land: one growing pair of arrays (private).

The sweep emits a few hundred blocks; keeping them and concatenating at the end
wrote every pattern twice (at n = 200, d = 3 about 10% of the enumeration).  The
:class:`Sink` reserves room for Cover's bound (virtual memory: pages are only
resident once written) and each block is copied in once, as it is emitted.
:func:`assemble` then writes the complements of the mirrored half in place.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["Sink", "assemble"]

#: Largest first reservation, bytes; beyond it the arrays grow by doubling.
RESERVE_BYTES = 1 << 32
#: The smallest first reservation tried when a larger one is refused.
MIN_ROWS = 4096


class Sink:
    """Rows ``[0, n)`` of ``packed`` (uint8, (cap, nbytes)) and ``W`` (float64, (cap, m)) are written;
    ``flip`` (uint8, nbytes): the packed nonzero rows, which a complement flips.

    With ``mirror_at`` (the expected size ``L`` of the mirrored half, exact for an arrangement
    in general position) the complement of each mirrored block is written at once at
    ``mirror_at + start``, while its pages are being touched anyway (writing the half at the
    end, in one burst, cost twice as long here: fresh pages); :meth:`complements` moves or
    completes them if ``L`` turns out different.
    """

    def __init__(self, hint: int, flip: np.ndarray, m: int, mirror_at: int | None = None) -> None:
        nbytes = flip.size
        cap = int(max(1, min(hint, RESERVE_BYTES // max(nbytes + 8 * m, 1))))
        while True:  # a reservation the system refuses (address-space limits): ask for less, grow later
            try:
                self.packed = np.empty((cap, nbytes), dtype=np.uint8)
                self.W = np.empty((cap, m))
                break
            except MemoryError:
                if cap <= MIN_ROWS:
                    raise
                cap = max(cap // 4, MIN_ROWS)
        self.n = 0
        self.flip = flip
        self.mirror_at = mirror_at if mirror_at is not None and 2 * mirror_at <= cap else None
        self.mirrored = 0  # complements of rows [0, mirrored) are at [mirror_at, mirror_at + mirrored)

    def _reserve(self, rows: int) -> None:
        cap = self.packed.shape[0]
        if rows <= cap:
            return
        cap = max(rows, 2 * cap)
        g, k = self.mirror_at, self.mirrored
        for name in ("packed", "W"):
            old = getattr(self, name)
            new = np.empty((cap,) + old.shape[1:], dtype=old.dtype)
            new[:self.n] = old[:self.n]
            if g is not None and k:
                new[g:g + k] = old[g:g + k]
            setattr(self, name, new)

    def put(self, pk: np.ndarray, W: np.ndarray, mirror: bool = False) -> tuple[int, int]:
        """Append a block (``mirror``: one of the mirrored half); returns ``(start, count)``."""
        k = pk.shape[0]
        self._reserve(self.n + k)
        s = self.n
        self.packed[s:s + k], self.W[s:s + k] = pk, W
        self.n = s + k
        g = self.mirror_at
        if g is not None and mirror and self.mirrored == s and s + k <= g:
            self._complement(s, s + k, g + s)
            self.mirrored = s + k
        elif g is not None and self.n > g:  # the half is longer than expected: complements later
            self.mirror_at, self.mirrored = None, 0
        return s, k

    def skip_to(self, rows: int) -> None:
        """Leave rows ``[n, rows)`` to be written later (the mirrored half)."""
        self._reserve(rows)
        self.n = max(self.n, rows)

    def complements(self, L: int) -> None:
        """Rows ``[L, 2L)``: the complements of rows ``[0, L)`` (moved from ``mirror_at``, or
        computed now for those not written yet)."""
        done = self.mirrored if self.mirror_at is not None else 0
        if done and self.mirror_at != L:  # numpy copies overlapping ranges correctly
            g = self.mirror_at
            self.packed[L:L + done], self.W[L:L + done] = self.packed[g:g + done], self.W[g:g + done]
        if done < L:
            self._complement(done, L, L + done)
        self.mirror_at, self.mirrored = None, 0

    def _complement(self, a: int, b: int, to: int) -> None:
        """Rows ``[to, to + b - a)``: the complements of rows ``[a, b)`` (flipped bits, ``-W``)."""
        np.bitwise_xor(self.packed[a:b], self.flip[None, :], out=self.packed[to:to + b - a])
        np.negative(self.W[a:b], out=self.W[to:to + b - a])


def assemble(sink: Sink, mirrored: list, rest: list, notes: list):
    """The final arrays: ``mirrored`` blocks (``(start, count)``, rows ``[0, L)``), their
    complements in ``[L, 2L)`` (:meth:`Sink.complements`), then ``rest``; the exact witnesses
    and uncertified rows placed.

    ``-w`` realizes the complement (on nonzero rows) of the pattern of ``w`` with the
    same margins, since ``phi . (-w) = -(phi . w)`` exactly (and so does ``-theta``
    for an exact witness): the mirrored half needs no separate check.
    Returns ``(packed, W, n_exact_only, uncertified, exact)``.
    """
    L = sum(k for _, k in mirrored)
    packed, W = sink.packed[:sink.n], sink.W[:sink.n]
    n_exact, bad, exact = 0, [], {}
    for k, (pos, _) in enumerate(mirrored + rest):
        ne, ex, bd = notes[k]
        mirror = k < len(mirrored)
        n_exact += (2 if mirror else 1) * ne
        bad.append(bd + pos)
        for b, theta in ex.items():
            exact[pos + b] = theta
            if mirror:
                exact[L + pos + b] = tuple(-x for x in theta)
        if mirror:
            bad.append(bd + pos + L)
    bad = np.sort(np.concatenate(bad)).astype(np.int64) if bad else np.zeros(0, dtype=np.int64)
    if bad.size:
        warnings.warn(
            f"{bad.size} of {packed.shape[0]} chambers of Phi have no certified witness, neither float64 nor "
            "exact (PatternSet.uncertified); the patterns are exact and counted, their witnesses best effort",
            RuntimeWarning, stacklevel=3)
    return packed, W, n_exact, bad, dict(sorted(exact.items()))
