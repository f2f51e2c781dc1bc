"""The pattern set and its enumeration (private; the public names are re-exported by the package)."""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb
from typing import Any, Iterator

import numpy as np

from relu_gating._runtime.alloc import warm_allocator
from relu_gating._runtime.progress import Progress
from relu_gating._inputs.scaling import pow2_column_scales
from relu_gating._inputs.validate import as_matrix
from relu_gating.errors import InputError, ProblemTooLargeError
from relu_gating.patterns._completeness import CompletenessReport, check_completeness
from relu_gating.patterns._count import PatternCount, count_reduced, cover_count
from relu_gating.patterns._exact import single_thread_blas
from relu_gating.patterns._exact_witness import IntPhi
from relu_gating.patterns._rowspace import Reduction, reduce_rows
from relu_gating.patterns._sink import Sink, assemble
from relu_gating.patterns._sweep import chambers, generic_sweep, level_sweep, subset_groups
from relu_gating.patterns._witness import check_witnesses

__all__ = [
    "enumerate_patterns",
    "PatternSet",
    "count_patterns",
    "PatternCount",
    "check_completeness",
    "CompletenessReport",
]

_SEED = 20260  # fixed: same input -> same patterns in the same order
#: Time the exact count may take to overturn a refusal by Cover's bound (degenerate inputs).
REFUSAL_SECONDS = 1.0


@dataclass(frozen=True)
class PatternSet:
    """The realized gating patterns of ``Phi`` with a witness for each.

    Attributes
    ----------
    packed : ndarray of uint8, shape (N, ceil(n / 8))
        ``np.packbits(masks, axis=1)``: bit ``i`` (big-endian within each byte,
        numpy's default) of row ``k`` is pattern ``k`` on sample ``i``.
    witnesses : ndarray of float64, shape (N, m)
        ``(2 masks - 1) * (Phi @ witnesses.T).T > 0`` on every nonzero row of
        ``Phi``; zero rows are inactive.  Certified in float64 with a rigorous
        rounding bound (``n_exact_only`` of them only by exact rational
        arithmetic), except for the patterns in ``exact_witnesses``, whose float
        witness is best effort (within rounding of its chamber).
    rank, n, m : int
        Exact rank of ``Phi`` and its shape.
    n_hyperplanes : int
        Distinct hyperplanes after merging parallel and antiparallel rows.
    part : tuple of int
        ``(i, k)``: this is part i of a k-way split (``(0, 1)`` = everything).
    n_exact_only : int
        Float witnesses that float64 alone cannot certify (valid exactly).
    uncertified : ndarray of int
        Patterns with no certified witness at all, neither float nor exact.  Always
        empty unless something failed (then a RuntimeWarning is issued and
        :func:`check_completeness` rejects the set).
    exact_witnesses : dict[int, tuple[int, ...]]
        Pattern index -> exact integer witness ``theta`` (Python ints, length m,
        primitive) with ``(2 s_i - 1) phi_i . theta > 0`` exactly on every nonzero
        row: for the chambers too thin for any float64 witness (relative width below
        ~1e-16: rows dependent to within rounding, e.g. a ReLU layer wider than its
        input, near-collinear points).  Verified exactly when produced; empty on
        ordinary data.  Pass it to :func:`check_completeness` (``exact_witnesses=``);
        for JSON store ``{str(k): [str(x) for x in v]}`` (entries exceed 64 bits).
    phi_sha256 : str
        :func:`phi_digest` of the ``Phi`` the set was enumerated from (``""`` for
        a set built by hand); :meth:`check_belongs_to` compares it.
    n_mirrored : int
        ``L``: pattern ``L + k`` is the complement of pattern ``k`` on the nonzero rows,
        for ``k < L`` (the sweep lists half the chambers and their negations; the
        bound pass computes the masked products of a pair once).  0 when unknown.

    Notes
    -----
    ``masks`` (bool, shape (N, n)) is unpacked on each access: keep a reference
    instead of re-reading it in a loop.
    """

    packed: np.ndarray = field(repr=False)
    witnesses: np.ndarray = field(repr=False)
    rank: int
    n: int
    m: int
    n_hyperplanes: int = 0
    part: tuple = (0, 1)
    n_exact_only: int = 0
    uncertified: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    exact_witnesses: dict = field(default_factory=dict, repr=False)
    phi_sha256: str = field(default="", repr=False)
    n_mirrored: int = field(default=0, repr=False)

    @property
    def masks(self) -> np.ndarray:
        """Bool array, shape (N, n): True where the sample is active."""
        return np.unpackbits(self.packed, axis=1, count=self.n).astype(bool)

    def __len__(self) -> int:
        return int(self.packed.shape[0])

    def iter_chunks(self, size: int) -> Iterator["PatternSet"]:
        """Consecutive sub-sets of at most ``size`` patterns (same order).

        ``uncertified`` and ``exact_witnesses`` of each chunk are re-based to its
        first pattern (index ``k`` of the set is ``k - start`` in the chunk).
        """
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise InputError(f"size must be a positive integer, got {size!r}")
        size = int(size)
        keys = sorted(self.exact_witnesses)
        for s in range(0, len(self), size):
            unc = self.uncertified[(self.uncertified >= s) & (self.uncertified < s + size)] - s
            ex = {k - s: self.exact_witnesses[k] for k in keys[bisect_left(keys, s):bisect_left(keys, s + size)]}
            yield PatternSet(self.packed[s:s + size], self.witnesses[s:s + size], self.rank, self.n,
                             self.m, self.n_hyperplanes, self.part, 0, unc, ex, self.phi_sha256)

    def _index(self) -> dict:
        idx = self.__dict__.get("_lookup")
        if idx is None:
            idx = {row.tobytes(): k for k, row in enumerate(self.packed)}
            object.__setattr__(self, "_lookup", idx)
        return idx

    def index_of(self, mask: Any) -> int | None:
        """Position of ``mask`` (bool, length n) in the set, or None (hash of packed bits)."""
        arr = np.asarray(mask).astype(bool).reshape(-1)
        if arr.size != self.n:
            raise InputError(f"mask must have length n = {self.n}, got {arr.size}")
        return self._index().get(np.packbits(arr).tobytes())

    def __contains__(self, mask: Any) -> bool:
        return self.index_of(mask) is not None

    def check_belongs_to(self, Phi: Any, name: str = "patterns") -> None:
        """Raise :class:`InputError` unless this set was enumerated from ``Phi``.

        Compares the shape and :func:`phi_digest` (one hash of ``Phi``, no
        enumeration).  A set built by hand (``phi_sha256 == ""``) is checked by
        shape only.
        """
        Phi = _validate_phi(Phi)
        if (self.n, self.m) != Phi.shape:
            raise InputError(f"{name} were enumerated from a Phi of shape ({self.n}, {self.m}), this Phi has shape "
                             f"{Phi.shape}: call enumerate_patterns(Phi) for this Phi")
        if self.phi_sha256 and self.phi_sha256 != phi_digest(Phi):
            raise InputError(f"{name} were enumerated from a different Phi of the same shape (SHA-256 "
                             f"{self.phi_sha256[:12]}, this Phi {phi_digest(Phi)[:12]}): call enumerate_patterns(Phi) "
                             "for this Phi")


def _validate_phi(Phi: Any) -> np.ndarray:
    return as_matrix(Phi, "Phi")


def phi_digest(Phi: Any) -> str:
    """SHA-256 (hex) of ``Phi``'s shape and float64 C-order bytes (``-0.0`` counted as ``0.0``)."""
    a = np.ascontiguousarray(_validate_phi(Phi), dtype=np.float64) + 0.0
    return hashlib.sha256(f"{a.shape}|".encode() + a.tobytes()).hexdigest()


def count_patterns(Phi: Any, *, method: str = "auto") -> PatternCount:
    """Number of realized gating patterns of ``Phi`` (chambers), without listing them.

    Parameters
    ----------
    Phi : array_like, shape (n, m)
        Layer input, samples as rows (typically with a ones column).
    method : {"auto", "exact", "bound"}
        ``"bound"``: Cover's formula for the distinct hyperplanes, an upper bound
        (instant).  ``"exact"``: Cover's formula after an exact general-position
        check, else the exact deletion-restriction recursion.  ``"auto"``: like
        ``"exact"`` but falls back to the bound when the recursion would be long.

    Returns
    -------
    PatternCount
        ``count``, ``exact``, ``method``, ``rank``, ``n_hyperplanes``.

    Notes
    -----
    In general position the count is ``2 * sum_{k<r} C(n-1, k)``, ``r = rank Phi``
    (Cover 1965); it is the maximum for ``n`` hyperplanes of rank ``r``.
    """
    Phi = _validate_phi(Phi)
    if method not in ("auto", "exact", "bound"):
        raise InputError(f"method must be 'auto', 'exact' or 'bound', got {method!r}")
    return count_reduced(reduce_rows(Phi), method)


class _Certifier:
    """Certifies each block as the sweep emits it (while its exact-witness provider is alive).

    Float check with a rigorous bound, LP repair, exact rational check of the float
    witness (:func:`._witness.check_witnesses`); a chamber none of these certifies
    gets an exact integer witness from the sweep's provider, checked exactly on
    ``Phi``.  ``notes`` holds, per emitted block in emission order,
    ``(n_exact_only, {local index: exact theta}, local indices left uncertified)``.
    """

    def __init__(self, Phi: np.ndarray, red: Reduction) -> None:
        self.Phi, self.red = Phi, red
        self.notes: list = []
        self._iphi: IntPhi | None = None

    def __call__(self, pk: np.ndarray, W: np.ndarray, prov, sure: np.ndarray | None = None) -> np.ndarray:
        if sure is None:
            W, ok, ne = check_witnesses(self.Phi, pk, W, repair=True)
        else:  # ``sure``: proved by the sweep (``certified_simple``); the rest checked here
            ok, rest = sure.copy(), np.flatnonzero(~sure)
            ne = 0
            if rest.size:
                Wr, ok[rest], ne = check_witnesses(self.Phi, pk[rest], W[rest], repair=True)
                W[rest] = Wr
        bad = np.flatnonzero(~ok)
        exact: dict = {}
        if bad.size:
            if self._iphi is None:
                self._iphi = IntPhi(self.Phi)
            masks = np.unpackbits(pk[bad], axis=1, count=self.red.n).astype(bool)
            for b, mk in zip(bad.tolist(), masks):
                try:
                    y = prov([b])[0]
                except ArithmeticError:  # a bug: the pattern is reported as uncertified
                    continue
                theta = [0] * self.red.m
                for k, col in enumerate(self.red.cols):
                    theta[col] = int(y[k])
                if self._iphi.realizes(mk, theta):
                    exact[b] = tuple(theta)
            bad = np.array([b for b in bad.tolist() if b not in exact], dtype=np.int64)
        self.notes.append((ne, exact, bad))
        return W


def _top_level(red: Reduction, part, progress: bool, certify: _Certifier | None, sink: Sink):
    """Sweep the reduced arrangement into ``sink``; returns ``(mirrored, rest)`` lists of
    ``(start, count)`` blocks.

    The full list is ``mirrored`` (rows ``[0, L)``), then the negations of ``mirrored``
    (``[L, 2L)``, :meth:`._sink.Sink.complements`), then ``rest``.  With ``certify`` each
    block is certified (and repaired) as it is emitted (without: the raw sweep witnesses).
    """
    r, rows, q = red.rank, red.red, red.q

    mirror = [True]  # the sweep's blocks are the mirrored half; the child is not

    def emit(P, Y, prov, sure=None):
        pk, W = np.packbits(red.class_masks_to_rows(P), axis=1), red.lift_witnesses(Y)
        return sink.put(pk, certify(pk, W, prov, sure) if certify is not None else W, mirror[0])

    def finish(blocks: list, child) -> tuple[list, list]:
        L = sink.n
        sink.skip_to(2 * L)
        sink.complements(L)  # rows [L, 2L), before the child is written after them
        mirror[0] = False
        return blocks, ([emit(*child)] if child is not None else [])

    if r <= 1:
        if part[0] != 0:
            return [], []
        if r == 0:
            return finish([], (np.zeros((1, 0), dtype=bool), np.zeros((1, 0)), lambda idx: [() for _ in idx]))
        P, Y, prov = chambers(rows, 1, np.random.default_rng(_SEED))
        return finish([emit(P[:1], Y[:1], prov)], None)
    firsts = subset_groups(q, r - 1, part)
    total = sum(comb(q - 1 - f, r - 2) for f in firsts)
    rng = np.random.default_rng(_SEED)

    def sweep(c: tuple, g: tuple):
        if certify is not None:
            certify.notes.clear()
        sink.n, sink.mirrored = 0, 0  # a redrawn sweep starts over
        with Progress(total, "enumerate", unit="vertices", enabled=None if progress else False) as bar:
            return level_sweep(rows, r, c, g, rng, firsts=firsts, emit=emit, progress=bar, with_child=part[0] == 0)

    return finish(*generic_sweep(sweep, r, rng, redraw=part[1] == 1))


def enumerate_patterns(Phi: Any, *, max_patterns: int | None = None, progress: bool = False,
                       part: tuple[int, int] | None = None) -> PatternSet:
    """List every realized gating pattern ``1[Phi theta > 0]`` with a witness.

    Parameters
    ----------
    Phi : array_like, shape (n, m)
        Layer input, samples as rows (typically ``[X, 1]``).  Finite, n, m >= 1.
    max_patterns : int, optional
        Refuse (:class:`~relu_gating.errors.ProblemTooLargeError`) before starting
        when the number of patterns exceeds this (Cover's bound first, then an
        exact count, given at most a second, if the bound is too large).
    progress : bool
        Progress bar on stderr (only on a terminal).
    part : (i, k), optional
        Compute only part ``i`` of a ``k``-way split (for workers): the parts are
        disjoint and their union is the full set (the rays are split by their
        first generating hyperplane; part 0 also holds the lower-dimensional rest).

    Returns
    -------
    PatternSet
        Distinct patterns in a deterministic order, each with a certified witness:
        a float64 one, or, for chambers too thin for float64, an exact integer one
        in ``exact_witnesses`` (pass it to :func:`check_completeness`).

    Notes
    -----
    Exact on degenerate inputs (duplicates, parallel/antiparallel/zero rows, grids,
    rank deficiency): all signs are decided by filtered exact predicates.
    Cost ~ ``C(q, r-1) * q`` for ``q`` distinct hyperplanes of rank ``r``.  Exact
    witnesses cost about a millisecond per thin chamber and nothing otherwise: the
    sweep keeps, per block, a provider that rebuilds a chamber's ray and local
    direction in integers on demand (:mod:`._exact_witness`).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(15, 2))
    >>> len(enumerate_patterns(np.c_[X, np.ones(15)]))
    212
    """
    Phi = _validate_phi(Phi)
    digest = phi_digest(Phi)
    if max_patterns is not None:
        if isinstance(max_patterns, bool) or not isinstance(max_patterns, (int, np.integer)) or max_patterns < 1:
            raise InputError(f"max_patterns must be a positive integer, got {max_patterns!r}")
    if part is None:
        part = (0, 1)
    if (not isinstance(part, tuple) or len(part) != 2 or not all(isinstance(x, (int, np.integer)) for x in part)
            or not 0 <= part[0] < part[1]):
        raise InputError(f"part must be a pair (i, k) with 0 <= i < k, got {part!r}")
    # Columns scaled by exact powers of two: the same hyperplanes (theta -> D theta), well-scaled
    # floats for the filters; witnesses are mapped back exactly below.
    scales = pow2_column_scales(Phi)
    Phi = Phi * scales
    red = reduce_rows(Phi)
    if max_patterns is not None and cover_count(red.q, red.rank) > max_patterns:
        cnt = count_reduced(red, "auto", seconds=REFUSAL_SECONDS)
        if cnt.count > max_patterns:
            what = "patterns" if cnt.exact else "patterns (upper bound)"
            raise ProblemTooLargeError(
                f"Phi has {cnt.count} {what} ({cnt.method}), more than max_patterns = {max_patterns}")
    warm_allocator()  # the batches' temporaries stay in the heap (relu_gating._runtime.alloc)
    with single_thread_blas():
        cert = _Certifier(Phi, red)
        sink = Sink(_expected_rows(red, part), np.packbits(red.cls >= 0), red.m, _expected_half(red, part))
        mirrored, rest = _top_level(red, part, progress, cert, sink)
        packed, W, n_exact, bad, exact = assemble(sink, mirrored, rest, cert.notes)
    W, exact = _unscale_witnesses(W, exact, scales)
    return PatternSet(packed, W, red.rank, red.n, red.m, red.q, tuple(int(x) for x in part), n_exact, bad,
                      exact, phi_sha256=digest, n_mirrored=sum(k for _, k in mirrored))


def _expected_rows(red: Reduction, part: tuple) -> int:
    """Room to reserve for part ``(i, k)``: Cover's bound, times the part's share of the rays
    (:func:`._subsets.subset_groups` balances the parts by rays), plus the lower-dimensional
    rest in part 0; only a hint (the sink grows if it is short)."""
    q, r = red.q, red.rank
    whole = cover_count(q, r)
    if part[1] == 1 or r < 2:
        return whole
    share = sum(comb(q - 1 - f, r - 2) for f in subset_groups(q, r - 1, part)) / max(comb(q - 1, r - 1), 1)
    return min(whole, int(whole * share * 1.05) + (cover_count(q, r - 1) if part[0] == 0 else 0) + 16)


def _expected_half(red: Reduction, part: tuple) -> int | None:
    """The size of the mirrored half in general position (Cover's count less the chambers of the
    rank r - 2 restriction, halved); None for a part or rank below 3."""
    q, r = red.q, red.rank
    if part[1] != 1 or r < 3:
        return None
    return (cover_count(q, r) - cover_count(q, r - 2)) // 2


def _unscale_witnesses(W: np.ndarray, exact: dict, scales: np.ndarray) -> tuple[np.ndarray, dict]:
    """Witnesses of ``Phi D`` turned into witnesses of ``Phi`` (``theta = D theta_D``), exactly.

    Float witnesses are multiplied by powers of two (exact barring underflow;
    a positive common factor keeps the largest scale at 1); integer witnesses are multiplied by ``2^(E - e_j)`` so they
    stay integers (a positive multiple of ``D theta_D``: the same signs).
    """
    for k in [k for k in exact if not np.all(np.isfinite(W[k]))]:  # best effort: the exact one, rounded
        top = max(abs(int(t)) for t in exact[k]) or 1
        W[k] = [float(Fraction(int(t), top)) for t in exact[k]]
    if np.any(scales != scales.max()):  # a positive power of two per column: the same signs, no overflow
        _scale_rows(W, scales)  # in place: W is this call's own array
    if not exact:
        return W, exact
    e = [int(np.frexp(s)[1]) - 1 for s in scales]  # scales[j] = 2^e[j]
    lo = min(e)
    mult = [1 << (x - lo) for x in e]
    return W, {k: tuple(int(t) * c for t, c in zip(v, mult)) for k, v in exact.items()}


def _scale_rows(W: np.ndarray, scales: np.ndarray) -> None:
    """``W <- W diag(scales) 2^t`` row by row (in place), ``2^t = 1 / max(scales)`` or, where an entry
    would then fall below ``2^-1021`` (columns of very different scales), ``t`` lifting the smallest
    entry to ``2^-1021`` and no further than a largest entry of ``2^1000``:
    powers of two, so exact unless a row spans more than the float range (a positive factor per row:
    the same signs).  Before, a weight of ``1e-350`` underflowed to 0 and the witness left its chamber."""
    e = np.frexp(scales)[1] - 1  # scales = 2^e exactly
    with np.errstate(divide="ignore"):
        f, x = np.frexp(W)
    x = np.where(W != 0, x + e[None, :], 0)
    nz = W != 0
    top = np.where(nz, x, -(1 << 30)).max(axis=1)
    low = np.where(nz, x, 1 << 30).min(axis=1)
    t = np.full(W.shape[0], -int(e.max()))  # W diag(scales) / max(scales), as before, unless it underflows
    lift = nz.any(axis=1) & (low + t < -1021)
    t[lift] = np.minimum(-1021 - low[lift], 1000 - top[lift])
    with np.errstate(under="ignore", over="ignore"):
        W[:] = np.ldexp(f, np.where(nz, x + t[:, None], 0)) * nz
