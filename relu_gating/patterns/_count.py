"""Exact chamber counts, independent of the enumerator (private).

Two exact methods on the merged hyperplane classes (``q`` distinct hyperplanes,
rank ``r``):

* **Cover's formula** ``2 * sum_{k<r} C(q-1, k)`` (Cover 1965), valid exactly when
  the normals are in general position (every ``r`` of them independent).  General
  position is *verified exactly*: for every (r-1)-subset ``S`` the cross product
  ``X(a_S)`` is nonzero and no other normal is orthogonal to it (filtered exact
  determinant signs).  The formula is always an upper bound for ``q`` hyperplanes
  of rank ``r``.
* **Deletion-restriction** (Zaslavsky): ``r(A) = r(A - H) + r(A^H)``.  Adding the
  hyperplanes one at a time, ``r(A) = 1 + sum_k r(A_{<k} restricted to H_k)``; the
  restriction is computed exactly in integer coordinates of ``H_k`` (an integer
  kernel basis), parallel restricted normals are merged exactly; base cases
  ``r = 2q`` in the plane, ``2`` on a line.
"""

from __future__ import annotations

import time

from dataclasses import dataclass
from math import comb

import numpy as np

from relu_gating.patterns._exact import IntMatrix, cross_int, cross_stack_T, err_factor, kernel_basis_int, single_thread_blas
from relu_gating.patterns._rowspace import Reduction, merge_int_rows
from relu_gating.patterns._subsets import batches, decide

__all__ = ["PatternCount", "cover_count", "is_general_position", "deletion_restriction_count", "count_reduced"]


@dataclass(frozen=True)
class PatternCount:
    """Predicted number of realized gating patterns.

    Attributes
    ----------
    count : int
        The number of chambers (``exact=True``) or an upper bound on it.
    exact : bool
        Whether ``count`` is the exact number of realized patterns.
    method : str
        ``"cover"`` (Cover's formula after an exact general-position check),
        ``"deletion-restriction"`` (exact Zaslavsky recursion, degenerate inputs),
        ``"cover-bound"`` (Cover's formula as an upper bound, not verified) or
        ``"trivial"`` (rank <= 1).
    rank : int
        Exact rank r of ``Phi``.
    n_hyperplanes : int
        Number of distinct hyperplanes after merging parallel/antiparallel rows.
    """

    count: int
    exact: bool
    method: str
    rank: int
    n_hyperplanes: int


def cover_count(q: int, r: int) -> int:
    """Cover's count ``2 * sum_{k<r} C(q-1, k)`` (1 if q == 0)."""
    if q == 0:
        return 1
    return 2 * sum(comb(q - 1, k) for k in range(r))


def _dot(a, b) -> int:
    return sum(x * y for x, y in zip(a, b))


#: (r-1)-subsets the exact general-position test checks per second, roughly (for the time budget).
_COMBOS_PER_SECOND = 5_000_000


class Undecided(Exception):
    """The exact test ran out of its time budget."""


def is_general_position(rows: list, d: int, deadline: float | None = None) -> bool:
    """Exact test: every d of the (pairwise non-parallel) integer normals are independent.

    Raises :class:`Undecided` once ``time.perf_counter()`` passes ``deadline``.
    """
    q = len(rows)
    if d <= 1 or q < d:
        # d-subsets do not exist or d == 1 (q <= 1 after merging)
        if q < d:
            return True
        return q <= 1

    t = d - 1
    M = IntMatrix(rows, d)
    facD = err_factor(t, M.rel)
    facX = err_factor(t - 1, M.rel) if t > 1 else 4 * M.rel + 4 * 2.0 ** -53
    fT = np.ascontiguousarray(M.f.T)
    amax_all = float(M.amax.max(initial=0.0))
    amax_bound = max(amax_all, 2.0) * (1 + 2.0 ** -40)
    with single_thread_blas():
        for S in batches(q, t, list(range(0, q - t + 1))):
            if deadline is not None and time.perf_counter() > deadline:
                raise Undecided
            X, PX = cross_stack_T(fT[:, S.T])
            nz = np.any(decide(X, PX, facX, M.exact_int) & (X != 0), axis=1)
            for b in np.flatnonzero(~nz):
                if not any(cross_int([rows[j] for j in S[b]])):
                    return False
            B = S.shape[0]
            A = np.abs(X @ fT)
            A[np.arange(B)[:, None], S] = np.inf
            rowmin = A.min(axis=1)
            sP = PX.sum(axis=1)
            clean = rowmin > amax_bound * facD * sP
            if M.exact_int:
                exact = sP * amax_all < 2.0 ** 51
                if np.any(exact & (rowmin == 0)):
                    return False
                clean |= exact
            for b in np.flatnonzero(~clean):  # undecided: exact signs of the small entries
                Xi = cross_int([rows[k] for k in S[b]])
                for j in np.flatnonzero(A[b] <= amax_bound * facD * sP[b]):
                    if _dot(rows[j], Xi) == 0:
                        return False
    return True


def deletion_restriction_count(rows: list, d: int) -> int:
    """Exact number of chambers of the central arrangement of distinct normals ``rows`` in Z^d."""
    q = len(rows)
    if q == 0:
        return 1
    if d == 1:
        return 2
    if d == 2:
        return 2 * q
    total = 1
    for k in range(q):
        if k == 0:
            total += 1  # the restriction of the empty arrangement has one chamber
            continue
        Qk = kernel_basis_int([rows[k]])
        proj = [tuple(_dot(rows[j], qv) for qv in Qk) for j in range(k)]
        reps, _, _ = merge_int_rows(proj)
        total += deletion_restriction_count(reps, d - 1)
    return total


def count_reduced(red: Reduction, method: str = "auto", seconds: float | None = None) -> PatternCount:
    """Count chambers of a reduced ``Phi`` (see :func:`relu_gating.patterns.count_patterns`).

    With ``seconds``, method ``"auto"`` returns Cover's bound (``exact=False``)
    when the exact general-position test is not decided within that time.
    """
    q, r = red.q, red.rank
    bound = cover_count(q, r)
    if r <= 1:
        return PatternCount(count=bound, exact=True, method="trivial", rank=r, n_hyperplanes=q)
    if method == "bound":
        return PatternCount(count=bound, exact=False, method="cover-bound", rank=r, n_hyperplanes=q)
    deadline = None if seconds is None or method != "auto" else time.perf_counter() + seconds
    if deadline is not None and comb(q, r - 1) > _COMBOS_PER_SECOND * seconds:  # cannot finish in time
        return PatternCount(count=bound, exact=False, method="cover-bound", rank=r, n_hyperplanes=q)
    try:
        general = is_general_position(red.red, r, deadline)
    except Undecided:
        return PatternCount(count=bound, exact=False, method="cover-bound", rank=r, n_hyperplanes=q)
    if general:
        return PatternCount(count=bound, exact=True, method="cover", rank=r, n_hyperplanes=q)
    if method == "auto" and comb(q, r - 1) > 3_000_000:
        return PatternCount(count=bound, exact=False, method="cover-bound", rank=r, n_hyperplanes=q)
    exact = deletion_restriction_count(red.red, r)
    return PatternCount(count=exact, exact=True, method="deletion-restriction", rank=r, n_hyperplanes=q)
