"""Per-chamber coordinates for the exact per-pattern solve (private).

The global basis ``Psi`` of ``col(Phi)`` is orthonormal, so its scale is set by the largest rows of
``Phi``, active or not.  Where a chamber's active rows are tiny against an inactive one in the same
column (``Phi = [[1.5e82, 1], [1.8e280, 1], ...]``, chamber of rows 0, 2, 3), ``S Psi`` has entries
of 1e-198 and ``B_S`` of 1e-396: it underflows, the pattern's pencil loses a direction, and its
solve returns a worse neuron.  Where the chamber is thin (two active rows within ``2^-52`` of
exact negatives) its pencil is singular to rounding in any float basis.

The coordinates here are the chamber's own: ``z = Phi_0 theta`` for ``m`` exactly independent
active rows ``Phi_0`` (chosen on the active rows scaled by their own powers of two), so the basis
is ``L = Phi C`` with ``C = Phi_0^{-1}`` computed in exact rationals: the rows of ``Phi_0`` are unit
vectors, the other active rows ``phi_i C`` are formed exactly and rounded once, and the inactive
rows (which only bound the cone) are scaled by powers of two ``c_i`` before rounding.  ``L`` spans
``col(Phi)`` like ``Psi``, so dual multipliers found on the rows of
``L`` are multipliers on the rows of any basis of ``col(Phi)`` once the row scales are divided out
(``N_ij -> c_i c_j N'_ij``): the certificate format and the checker are unchanged, and every claim is
decided by the same exact checks as any other.  A point of the chamber is mapped back to weights
``theta = C z`` in rationals and rounded to a float that lies strictly inside the chamber, decided
exactly (:mod:`relu_gating.search._exact.float_point`).

``Phi`` of rank ``r < m`` (a zero column, dependent columns) is first reduced to ``r`` exactly independent
columns ``J`` (chosen in rationals): ``col(Phi_J) = col(Phi)``, so every neuron ``relu(Phi theta)`` is
``relu(Phi_J theta')`` and the chambers are the same; the weights are ``theta_J = C z`` and 0 off ``J``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from relu_gating._inputs.feature_basis import extend_echelon as _extend_echelon
from relu_gating.errors import InputError
from relu_gating.search.objectives import Objective

__all__ = ["LocalBasis", "local_basis", "needs_local", "independent_columns", "MAX_LOCAL_WORK"]

#: The local basis is formed in rationals only where ``n m^2`` is at most this (each pattern that
#: needs it; the exact products are of dyadic rationals by ``C``).
MAX_LOCAL_WORK = 200_000

#: Singular values below this fraction of the largest span a numerical null space.
_RANK_RTOL = 1e-12


class LocalBasis(NamedTuple):
    """``L`` (n, r) floats with ``L_i = c_i phi_i C`` (``phi_i`` on the columns ``cols``; ``c_i = 1`` on
    active rows), ``C`` (r x r) rationals with ``Phi_0 C = I``, the exponents ``e`` of the row scales
    ``c_i = 2^e_i``, and ``cols``: ``r = rank(Phi)`` exactly independent columns (all ``m`` at full rank)."""

    L: np.ndarray
    C: list
    scale_exp: np.ndarray
    cols: tuple = ()
    m: int = 0


def independent_columns(Phi: np.ndarray, rank: int) -> list[int] | None:
    """``rank`` columns of ``Phi`` that are independent, decided in rationals (the first in order; all
    of them at full rank); None when there are not ``rank`` (``rank`` not exact)."""
    n, m = Phi.shape
    if rank == m:
        return list(range(m))
    if n * m * m > MAX_LOCAL_WORK:
        return None
    key = (hashlib.blake2b(np.ascontiguousarray(Phi).tobytes(), digest_size=16).digest(), Phi.shape, rank)
    last = _COLUMNS.get("last")  # one query's Phi asks again for every pattern (O(n m) to hash)
    if last is not None and last[0] == key:
        return last[1]
    cols = _independent_columns(Phi, rank)
    _COLUMNS["last"] = (key, cols)
    return cols


#: The last ``Phi``'s independent columns (the search asks once per pattern).
_COLUMNS: dict = {}


def _independent_columns(Phi: np.ndarray, rank: int) -> list[int] | None:
    """The first ``rank`` independent columns in order (elimination in rationals), None if fewer."""
    basis: list[tuple[int, list[Fraction]]] = []
    chosen = [j for j in range(Phi.shape[1]) if _extend_echelon(basis, Phi[:, j])]
    return chosen if len(chosen) == rank else None


def _scaled_active(Phi: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The active rows with their columns scaled by the powers of two of those rows alone (exact,
    or unscaled where no exact scaling exists)."""
    from relu_gating._inputs.scaling import pow2_column_scales

    act = Phi[mask]
    try:
        return act * pow2_column_scales(act)
    except InputError:
        return act


def _numeric_rank(R: np.ndarray) -> int:
    s = np.linalg.svd(R, compute_uv=False)
    return int(np.sum(s > _RANK_RTOL * s[0])) if s.size and s[0] > 0 else 0


def needs_local(obj: Objective, mask: np.ndarray, k_global: int) -> bool:
    """Whether the chamber's own coordinates may resolve more of its pencil than the global basis:
    the numerical rank of ``(I - Pi_H) S Phi D_S`` (``D_S`` the powers of two of the active rows)
    above ``k_global``, the rank the global pattern problem kept, or the active rows numerically
    dependent (a thin chamber; whether they are exactly is decided by :func:`local_basis`).  ``Phi`` of
    rank ``r < m``: on ``r`` exactly independent columns (module docstring)."""
    n, m = obj.Phi.shape
    if int(mask.sum()) < obj.rank or n * m * m > MAX_LOCAL_WORK:
        return False
    cols = independent_columns(obj.Phi, obj.rank)
    if cols is None:
        return False
    m = len(cols)
    Pa = np.zeros((n, m))
    with np.errstate(all="ignore"):
        Pa[mask] = _scaled_active(obj.Phi[:, cols], mask)
        R = Pa if obj.Q_H is None else Pa - obj.Q_H @ (obj.Q_H.T @ Pa)
    if not (np.all(np.isfinite(R)) and np.all(np.isfinite(Pa))):
        return False
    return _numeric_rank(R) > k_global or _numeric_rank(Pa) < m


def _independent_rows(Phi: np.ndarray, mask: np.ndarray, complete: bool = False) -> list[int] | None:
    """``m`` exactly independent active rows, tried in the order of a pivoted QR of the scaled
    active rows (the best conditioned first); with ``complete``, fewer completed by inactive rows
    (in order); None when there are not ``m``."""
    import scipy.linalg

    act = np.flatnonzero(mask)
    m = Phi.shape[1]
    with np.errstate(all="ignore"):
        Pa = _scaled_active(Phi, mask)
    order = list(range(act.size))
    if np.all(np.isfinite(Pa)):
        order = scipy.linalg.qr(Pa.T, pivoting=True, mode="r")[1].tolist()
    chosen: list[int] = []
    basis: list[tuple[int, list[Fraction]]] = []  # echelon rows in rationals
    for j in order:
        if _extend_echelon(basis, Phi[act[j]]):
            chosen.append(int(act[j]))
            if len(chosen) == m:
                return chosen
    return _completed(Phi, mask, chosen, basis) if complete else None


def _completed(Phi: np.ndarray, mask: np.ndarray, chosen: list[int], basis: list) -> list[int] | None:
    """``chosen`` (independent active rows, echelon ``basis``) completed to ``m`` by inactive rows."""
    m = Phi.shape[1]
    for i in np.flatnonzero(~mask & np.any(Phi != 0, axis=1)).tolist():
        if _extend_echelon(basis, Phi[i]):
            chosen.append(int(i))
            if len(chosen) == m:
                return chosen
    return None


def _inverse(P: list) -> list | None:
    """Gauss-Jordan inverse of a square rational matrix (None when singular)."""
    m = len(P)
    A = [list(row) + [Fraction(int(i == j)) for j in range(m)] for i, row in enumerate(P)]
    for c in range(m):
        p = next((r for r in range(c, m) if A[r][c]), None)
        if p is None:
            return None
        A[c], A[p] = A[p], A[c]
        inv = 1 / A[c][c]
        A[c] = [x * inv for x in A[c]]
        for r in range(m):
            if r != c and A[r][c]:
                f = A[r][c]
                A[r] = [x - f * y for x, y in zip(A[r], A[c])]
    return [row[m:] for row in A]


def _pow2_down(row: list) -> int:
    """An exponent ``k`` with ``max |row| * 2^-k`` in ``[0.5, 4)`` (0 for a zero row)."""
    top = max((abs(x) for x in row), default=Fraction(0))
    if top == 0:
        return 0
    return top.numerator.bit_length() - top.denominator.bit_length()


def local_basis(obj: Objective, mask: np.ndarray, complete: bool = False) -> LocalBasis | None:
    """The chamber's coordinates (module docstring), or None where they do not exist or do not fit
    in floats (fewer than ``r = rank(Phi)`` independent active rows, an active row of ``Phi C``
    overflowing; ``Phi`` of rank ``r < m`` on ``r`` exactly independent columns)."""
    n, m_all = obj.Phi.shape
    cols = independent_columns(obj.Phi, obj.rank) if n * m_all * m_all <= MAX_LOCAL_WORK else None
    if cols is None:
        return None
    Phi = obj.Phi[:, cols]
    m = len(cols)
    rows = _independent_rows(Phi, mask, complete)
    if rows is None:
        return None
    C = _inverse([[Fraction(float(x)) for x in Phi[i]] for i in rows])
    if C is None:
        return None
    L, scale = np.zeros((n, m)), np.zeros(n, dtype=np.int64)
    for i in np.flatnonzero(np.any(Phi != 0, axis=1)).tolist():
        p = [Fraction(float(x)) for x in Phi[i]]
        row = [sum((a * C[k][j] for k, a in enumerate(p) if a), Fraction(0)) for j in range(m)]
        if not mask[i]:  # a cone row only: any positive scale
            k = _pow2_down(row)
            row = [x / Fraction(2) ** k for x in row] if k >= 0 else [x * Fraction(2) ** -k for x in row]
            scale[i] = -k
        try:
            L[i] = [float(x) for x in row]
        except OverflowError:
            return None
    if not np.all(np.isfinite(L)):
        return None
    return LocalBasis(L, C, scale, tuple(cols), m_all)


def local_objective(obj: Objective, basis: LocalBasis) -> Objective:
    """``obj`` with the chamber's basis in place of ``Psi`` (what :func:`relu_gating.search._exact.coords.pattern_problem` reads)."""
    return dataclasses.replace(obj, Psi=basis.L)


def evidence_to_rows(evidence: tuple[np.ndarray, np.ndarray], scale_exp: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray] | None:
    """Multipliers on the rows of ``L`` as multipliers on the rows of ``Phi C`` (``N_ij c_i c_j``,
    exact products by powers of two); None when an entry would leave the float range (or lose bits)."""
    rows, N = evidence
    e = scale_exp[rows]
    with np.errstate(all="ignore"):
        out = np.ldexp(N, e[:, None] + e[None, :])
    if np.any(np.ldexp(out, -(e[:, None] + e[None, :])) != N):
        return None
    if not np.all(np.isfinite(out)) or np.any((out == 0) & (N != 0)):
        return None
    return rows, out


def theta_of(basis: LocalBasis, z: np.ndarray) -> list:
    """``theta = C z`` in rationals on the columns ``cols``, 0 elsewhere (``z`` the float chamber
    coordinates, taken exactly)."""
    zf = [Fraction(float(x)) for x in z]
    theta = [Fraction(0)] * (basis.m or len(basis.C))
    for j, row in zip(basis.cols or range(len(basis.C)), basis.C):
        theta[j] = sum((c * x for c, x in zip(row, zf) if x), Fraction(0))
    return theta
