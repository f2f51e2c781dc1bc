"""Proof that a list of masks is the complete set of chambers (private; public via the package).

See :func:`check_completeness`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating._inputs.validate import as_matrix
from relu_gating.errors import InputError
from relu_gating.patterns._count import PatternCount, count_reduced, cover_count
from relu_gating.patterns._exact import single_thread_blas
from relu_gating.patterns._exact_witness import IntPhi, parse_exact_witnesses
from relu_gating.patterns._rowspace import reduce_rows
from relu_gating.patterns._witness import exact_realizes, float_certified

__all__ = ["CompletenessReport", "check_completeness"]


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
        Float witnesses certified only by exact arithmetic (float64 bound too weak).
    n_exact_witnesses : int
        Patterns certified by their exact integer witness (their float witness fails).
    """

    ok: bool
    method: str
    expected: int
    found: int
    reason: str
    n_exact_only: int = 0
    n_exact_witnesses: int = 0


def check_completeness(Phi: Any, masks: Any, witnesses: Any, exact_witnesses: Any = None) -> CompletenessReport:
    """Prove that ``masks`` is the complete list of realized patterns of ``Phi``.

    The proof has three parts, each checked from the inputs alone:

    1. every pattern is strictly realized: its float witness ``w`` satisfies
       ``(2 s_i - 1) phi_i . w > 0`` on nonzero rows and ``s_i`` is False on zero
       rows, evaluated in float64 with a rigorous rounding bound and, where the
       bound is too weak, exactly in rationals; or else (chambers too thin for any
       float64 witness) its exact integer witness satisfies the same inequalities,
       evaluated exactly in integers -- so each mask is a chamber of the arrangement;
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
        Float witnesses (one per mask).
    exact_witnesses : mapping, optional
        Pattern index -> sequence of ``m`` integers (Python or numpy ints) or decimal
        strings, e.g. :attr:`PatternSet.exact_witnesses` or its JSON form
        ``{"17": ["-3", "120000000000000000000001", "5"]}`` (keys may be decimal
        strings).  Every exact witness given must realize its mask exactly (a wrong
        one fails the check even if the float witness is good); a pattern whose float
        witness fails is accepted when its exact witness realizes it.

    Returns
    -------
    CompletenessReport
    """
    Phi = as_matrix(Phi, "Phi")
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
    exact = parse_exact_witnesses(exact_witnesses, N, m)
    red = reduce_rows(Phi)
    # N distinct realized chambers reaching Cover's number (an upper bound for any arrangement of
    # q hyperplanes of rank r) are all of them: the exact general-position test is then not needed
    cover = cover_count(red.q, red.rank)
    cnt = (PatternCount(cover, True, "cover", red.rank, red.q) if N == cover and red.rank > 1
           else count_reduced(red, "exact"))
    packed = np.packbits(M, axis=1)
    with single_thread_blas():
        ok = float_certified(Phi, packed, W)
    n_int = 0
    bad_exact = []
    if exact:
        iphi = IntPhi(Phi)
        for k in sorted(exact):
            if not iphi.realizes(M[k], exact[k]):
                bad_exact.append(k)
            elif not ok[k]:
                ok[k] = True
                n_int += 1
    n_exact = 0
    for k in np.flatnonzero(~ok):
        if exact_realizes(Phi, M[k], W[k]):
            ok[k] = True
            n_exact += 1

    def report(good: bool, reason: str) -> CompletenessReport:
        return CompletenessReport(good, cnt.method, cnt.count, N, reason, n_exact, n_int)

    if bad_exact:
        return report(False, f"{len(bad_exact)} exact witness(es) do not realize their pattern "
                             f"(first: #{bad_exact[0]})")
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        return report(False, f"{int((~ok).sum())} witness(es) do not realize their pattern (first: #{k})")
    if N and not _all_distinct(packed):
        return report(False, "duplicate patterns")
    if N != cnt.count:
        return report(False, f"found {N} distinct realized patterns, the arrangement has {cnt.count}")
    return report(True, "")
