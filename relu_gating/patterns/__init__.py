"""Exact enumeration of realized gating patterns (chambers of the arrangement).

A neuron ``h = relu(Phi theta)`` has gating pattern ``S = 1[Phi theta > 0]``.
The patterns realized on open sets are the chambers of the central hyperplane
arrangement ``{theta : phi_i^T theta = 0}`` in ``R^m`` (SPEC 3.1; paper Prop 4.3):

.. math::

    \\mathcal{S}(\\Phi) = \\{ 1[\\Phi\\theta > 0] : \\theta \\in \\mathbb{R}^m,\\
    \\phi_i^T\\theta \\neq 0 \\text{ for every nonzero row } i \\}.

Public API: :func:`enumerate_patterns`, :class:`PatternSet`,
:func:`count_patterns`, :class:`PatternCount`, :func:`check_completeness`,
:class:`CompletenessReport`.  Samples are rows (``Phi`` is n x m; the paper's
``X`` is d x n).

How (details in the private modules): rows are merged exactly into distinct
hyperplanes and moved to the row space of rank r (:mod:`._rowspace`); chambers
are listed by a lowest-vertex sweep over the rays of the arrangement, one chamber
per simple ray, local recursion at non-simple rays, and a recursion in dimension
r - 2 for the rest (:mod:`._sweep`); every sign is decided exactly by filtered
predicates (:mod:`._exact`); every witness is certified (:mod:`._witness`).

References
----------
T. M. Cover, "Geometrical and statistical properties of systems of linear
inequalities", IEEE Trans. Electron. Comput., 1965.  T. Zaslavsky, "Facing up to
arrangements", Mem. AMS 154, 1975.  Paper: Prop 4.3 (cones of patterns).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from math import comb
from typing import Any, Iterator

import numpy as np

from .._progress import Progress
from .._validate import as_matrix
from ..errors import InputError, ProblemTooLargeError, SolverFailure
from ._count import PatternCount, count_reduced, cover_count
from ._exact import U, single_thread_blas  # noqa: F401  (U re-exported for verifiers)
from ._rowspace import Reduction, reduce_rows
from ._sweep import _MAX_ATTEMPTS, _NonGeneric, _rand_int_vec, chambers, level_sweep, subset_groups
from ._witness import check_witnesses, exact_realizes, float_certified

__all__ = [
    "enumerate_patterns",
    "PatternSet",
    "count_patterns",
    "PatternCount",
    "check_completeness",
    "CompletenessReport",
]

_SEED = 20260  # fixed: same input -> same patterns in the same order


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
        rounding bound (``n_exact_only`` of them only by exact rational arithmetic).
    rank, n, m : int
        Exact rank of ``Phi`` and its shape.
    n_hyperplanes : int
        Distinct hyperplanes after merging parallel and antiparallel rows.
    part : tuple of int
        ``(i, k)``: this is part i of a k-way split (``(0, 1)`` = everything).
    n_exact_only : int
        Witnesses that float64 alone cannot certify (valid exactly).
    uncertified : ndarray of int
        Patterns whose chamber is too thin for any witness we can certify (relative
        width below ~1e-16: rows dependent to within rounding).  The patterns are
        exact (counted by the independent exact count); their witnesses are best
        effort and :func:`check_completeness` rejects them.  Empty on ordinary data.

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

    @property
    def masks(self) -> np.ndarray:
        """Bool array, shape (N, n): True where the sample is active."""
        return np.unpackbits(self.packed, axis=1, count=self.n).astype(bool)

    def __len__(self) -> int:
        return int(self.packed.shape[0])

    def iter_chunks(self, size: int) -> Iterator["PatternSet"]:
        """Consecutive sub-sets of at most ``size`` patterns (same order)."""
        if not isinstance(size, (int, np.integer)) or size < 1:
            raise InputError(f"size must be a positive integer, got {size!r}")
        for s in range(0, len(self), int(size)):
            unc = self.uncertified[(self.uncertified >= s) & (self.uncertified < s + size)] - s
            yield PatternSet(self.packed[s:s + size], self.witnesses[s:s + size], self.rank, self.n,
                             self.m, self.n_hyperplanes, self.part, 0, unc)

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


def _validate_phi(Phi: Any) -> np.ndarray:
    return as_matrix(Phi, "Phi")


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


def _top_level(red: Reduction, part, progress: bool):
    """Sweep the reduced arrangement; returns ``(mirrored, rest)`` lists of (packed, W) blocks.

    The full list is ``mirrored``, then the negations of ``mirrored``, then ``rest``.
    """
    r, rows, q = red.rank, red.red, red.q

    def emit(P, Y):
        return np.packbits(red.class_masks_to_rows(P), axis=1), red.lift_witnesses(Y)

    if r <= 1:
        if part[0] != 0:
            return [], []
        if r == 0:
            return [], [(np.packbits(np.zeros((1, red.n), dtype=bool), axis=1), np.zeros((1, red.m)))]
        P, Y = chambers(rows, 1, np.random.default_rng(_SEED))
        return [emit(P[:1], Y[:1])], []
    firsts = subset_groups(q, r - 1, part)
    total = sum(comb(q - 1 - f, r - 2) for f in firsts)
    rng = np.random.default_rng(_SEED)
    for attempt in range(_MAX_ATTEMPTS):
        c, g = _rand_int_vec(rng, r), _rand_int_vec(rng, r)
        try:
            with Progress(total, "patterns", enabled=None if progress else False) as bar:
                blocks, child = level_sweep(rows, r, c, g, rng, firsts=firsts, emit=emit, progress=bar,
                                            with_child=part[0] == 0)
        except _NonGeneric:
            if part[1] > 1:
                raise SolverFailure("pattern enumeration: the sweep direction was not generic for this "
                                    "part; run without part=") from None
            continue
        return blocks, ([emit(*child)] if child is not None else [])
    raise SolverFailure("pattern enumeration: no generic sweep direction found")


def _assemble(Phi: np.ndarray, red: Reduction, mirrored: list, rest: list):
    """Concatenate, certify the witnesses of ``mirrored`` and ``rest`` and mirror the former.

    ``-w`` realizes the complement (on nonzero rows) of the pattern of ``w`` with the
    same margins, since ``phi . (-w) = -(phi . w)`` exactly: the mirrored half needs
    no separate check.
    """
    nbytes = (red.n + 7) // 8
    L = sum(b[0].shape[0] for b in mirrored)
    R = sum(b[0].shape[0] for b in rest)
    packed = np.empty((2 * L + R, nbytes), dtype=np.uint8)
    W = np.empty((2 * L + R, red.m))
    pos = 0
    for pk, w in mirrored:
        packed[pos:pos + len(pk)], W[pos:pos + len(pk)] = pk, w
        pos += len(pk)
    pos = 2 * L
    for pk, w in rest:
        packed[pos:pos + len(pk)], W[pos:pos + len(pk)] = pk, w
        pos += len(pk)
    n_exact = 0
    bad = []
    for sl, mult in ((slice(0, L), 2), (slice(2 * L, 2 * L + R), 1)):
        W[sl], ok, ne = check_witnesses(Phi, packed[sl], W[sl], repair=True)
        n_exact += mult * ne
        idx = np.flatnonzero(~ok) + sl.start
        bad.append(idx)
        if sl.start == 0:
            bad.append(idx + L)
    np.bitwise_xor(packed[:L], np.packbits(red.cls >= 0)[None, :], out=packed[L:2 * L])
    np.negative(W[:L], out=W[L:2 * L])
    bad = np.sort(np.concatenate(bad)).astype(np.int64)
    if bad.size:
        warnings.warn(
            f"{bad.size} of {packed.shape[0]} chambers of Phi are too thin for a certified float64 witness "
            "(rows parallel or dependent to within rounding, e.g. a ReLU layer wider than its input): "
            "their patterns are exact and counted, their witnesses are best effort (PatternSet.uncertified)",
            RuntimeWarning, stacklevel=3)
    return packed, W, n_exact, bad


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
        exact count if the bound is too large).
    progress : bool
        Progress bar on stderr (only on a terminal).
    part : (i, k), optional
        Compute only part ``i`` of a ``k``-way split (for workers): the parts are
        disjoint and their union is the full set (the rays are split by their
        first generating hyperplane; part 0 also holds the lower-dimensional rest).

    Returns
    -------
    PatternSet
        Distinct patterns in a deterministic order, each with a certified witness.

    Notes
    -----
    Exact on degenerate inputs (duplicates, parallel/antiparallel/zero rows, grids,
    rank deficiency): all signs are decided by filtered exact predicates.
    Cost ~ ``C(q, r-1) * q`` for ``q`` distinct hyperplanes of rank ``r``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(15, 2))
    >>> len(enumerate_patterns(np.c_[X, np.ones(15)]))
    212
    """
    Phi = _validate_phi(Phi)
    if max_patterns is not None:
        if isinstance(max_patterns, bool) or not isinstance(max_patterns, (int, np.integer)) or max_patterns < 1:
            raise InputError(f"max_patterns must be a positive integer, got {max_patterns!r}")
    if part is None:
        part = (0, 1)
    if (not isinstance(part, tuple) or len(part) != 2 or not all(isinstance(x, (int, np.integer)) for x in part)
            or not 0 <= part[0] < part[1]):
        raise InputError(f"part must be a pair (i, k) with 0 <= i < k, got {part!r}")
    red = reduce_rows(Phi)
    if max_patterns is not None and cover_count(red.q, red.rank) > max_patterns:
        cnt = count_reduced(red, "auto")
        if cnt.count > max_patterns:
            what = "patterns" if cnt.exact else "patterns (upper bound)"
            raise ProblemTooLargeError(
                f"Phi has {cnt.count} {what} ({cnt.method}), more than max_patterns = {max_patterns}")
    with single_thread_blas():
        mirrored, rest = _top_level(red, part, progress)
        packed, W, n_exact, bad = _assemble(Phi, red, mirrored, rest)
    return PatternSet(packed, W, red.rank, red.n, red.m, red.q, tuple(int(x) for x in part), n_exact, bad)


def _all_distinct(packed: np.ndarray) -> bool:
    """Exact test that the rows of a packed bit matrix are pairwise distinct (sort, compare)."""
    N, nb = packed.shape
    w = (nb + 7) // 8
    buf = np.zeros((N, 8 * w), dtype=np.uint8)
    buf[:, :nb] = packed
    words = buf.view(np.uint64)
    order = np.lexsort(words.T[::-1])
    srt = words[order]
    return not np.any(np.all(srt[1:] == srt[:-1], axis=1))


@dataclass(frozen=True)
class CompletenessReport:
    """Outcome of :func:`check_completeness`.

    Attributes
    ----------
    ok : bool
        The masks are exactly the realized patterns of ``Phi``.
    method : str
        How the expected count was obtained (see :class:`PatternCount`).
    expected : int
        Exact number of realized patterns.
    found : int
        Number of masks given.
    reason : str
        Empty when ``ok``; else what failed.
    n_exact_only : int
        Witnesses certified only by exact arithmetic (float64 bound too weak).
    """

    ok: bool
    method: str
    expected: int
    found: int
    reason: str
    n_exact_only: int = 0


def check_completeness(Phi: Any, masks: Any, witnesses: Any) -> CompletenessReport:
    """Prove that ``masks`` is the complete list of realized patterns of ``Phi``.

    The proof has three parts, each checked from the inputs alone:

    1. every witness strictly realizes its mask: ``(2 s_i - 1) phi_i . w > 0`` on
       nonzero rows and ``s_i`` False on zero rows, evaluated in float64 with a
       rigorous rounding bound and, where the bound is too weak, exactly in
       rationals -- so each mask is a chamber of the arrangement;
    2. the masks are pairwise distinct (exact comparison of packed bits);
    3. their number equals the exact number of chambers, computed independently of
       the enumerator: Cover's formula after an exact general-position check, or
       else Zaslavsky's deletion-restriction recursion with exact integer
       arithmetic on the merged hyperplanes.

    Distinct realized chambers as many as there are chambers: the list is complete.
    Soundness does not even rest on the general-position test: Cover's number for
    ``q`` distinct hyperplanes of rank ``r`` (both decided exactly) is an upper bound
    on the chamber count of *any* such arrangement, so ``N`` distinct realized
    chambers reaching it are all of them.  Runs in about a second for n = 200, m = 3
    and n = 100, m = 4 (random or grid data).

    Parameters
    ----------
    Phi : array_like, shape (n, m)
    masks : array_like of bool, shape (N, n)
    witnesses : array_like, shape (N, m)

    Returns
    -------
    CompletenessReport
    """
    Phi = _validate_phi(Phi)
    n, m = Phi.shape
    M = np.asarray(masks)
    if M.ndim != 2 or M.shape[1] != n:
        raise InputError(f"masks must have shape (N, n = {n}), got {M.shape}")
    if M.dtype != bool:
        if not np.all((M == 0) | (M == 1)):
            raise InputError("masks must be boolean (or 0/1)")
        M = M.astype(bool)
    W = as_matrix(witnesses, "witnesses", cols=m, min_rows=0) if M.shape[0] else np.zeros((0, m))
    if W.shape[0] != M.shape[0]:
        raise InputError(f"witnesses must have one row per mask ({M.shape[0]}), got shape {W.shape}")
    N = M.shape[0]
    red = reduce_rows(Phi)
    cnt = count_reduced(red, "exact")
    packed = np.packbits(M, axis=1)
    with single_thread_blas():
        _, ok, n_exact = check_witnesses(Phi, packed, W, repair=False)

    def report(good: bool, reason: str) -> CompletenessReport:
        return CompletenessReport(good, cnt.method, cnt.count, N, reason, n_exact)

    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        return report(False, f"{int((~ok).sum())} witness(es) do not realize their pattern (first: #{k})")
    if N and not _all_distinct(packed):
        return report(False, "duplicate patterns")
    if N != cnt.count:
        return report(False, f"found {N} distinct realized patterns, the arrangement has {cnt.count}")
    return report(True, "")


# quiet linters: helpers re-exported for verifiers and tests
_ = (exact_realizes, float_certified)
