"""Dual evidence for a pattern whose pencil is singular to rounding only (private).

Where ``Y = (I - Pi_H) S Phi`` has a kernel in floats but not exactly (``H`` contains ``col(Phi)``
up to rounding, so ``(I - Pi_H) S Phi theta = -(I - Pi_H) (I - S) Phi theta`` and the inactive rows
of ``Phi`` have rank ``< m`` to 1e-16: a greedy layer's own neuron among the features), the exact
``B_S`` has an eigenvalue near 1e-32 and the solver's float multipliers ``N`` (found with that
direction treated as a kernel) leave ``u B - A - D`` with an O(1e-16) coupling against an O(1e-32)
diagonal: the exact check refutes every claim near the solver's.

Here the pencil is solved again in coordinates where it is well scaled: an exact rational
congruence ``T`` (a float eigenbasis of ``B_S`` taken as the rationals it is, the near-kernel
columns scaled by a power of two to unit ``B`` norm), and the numerator the checker's S-lemma
uses (``A + lam (B - EXCLUDE_RTOL^2 (S Phi)^T (S Phi))``, ``lam = ROUNDING_STEP max(1, |u|)``: a
neuron with ``||(I - Pi_H) h|| <= EXCLUDE_RTOL ||h||`` is excluded by definition; without
features, ``A`` itself), an exact kernel eliminated by an exact Schur complement.  A solver's
multipliers on the rows ``G T`` (unit-scaled) are multipliers on the rows ``G`` (congruence keeps
``u B - A - G^T N G`` PSD or not), so they map back by the row scales alone, and the claim is
decided by the exact check on the caller's inputs like any other.  The floats only choose ``T``
and ``N``; nothing is decided by them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating._inputs.scaling import pow2_norms

__all__ = ["near_kernel_evidence", "NEAR_RTOL"]

#: ``B_S``'s float eigenvalues below this times its largest count as near-kernel (only a choice of
#: coordinates: any nonsingular ``T`` gives valid evidence).
NEAR_RTOL = 1e-12


def _pow2(b: Fraction) -> Fraction:
    """A power of two near ``1 / sqrt(b)`` (``b > 0``), from the bit lengths: no float can overflow
    or vanish on the way (``b`` may be far outside the float range)."""
    return Fraction(2) ** -((b.numerator.bit_length() - b.denominator.bit_length()) // 2)


def _quad(M: list, v: list) -> Fraction:
    m = len(M)
    return sum((M[a][b] * v[a] * v[b] for a in range(m) for b in range(m)), Fraction(0))


def _schur(M: list, k: int) -> list | None:
    """The Schur complement of the leading ``k x k`` block of ``M`` exactly; None unless that block
    is negative definite."""
    M = [row[:] for row in M]
    for p in range(k):
        if M[p][p] >= 0:
            return None
        for i in range(p + 1, len(M)):
            if M[i][p]:
                f = M[i][p] / M[p][p]
                for j in range(p, len(M)):
                    M[i][j] -= f * M[p][j]
    return [row[k:] for row in M[k:]]


def _floats(M: list) -> np.ndarray:
    return np.array([[float(x) for x in row] for row in M])


def _congruent(M: list, T: list) -> list:
    """``T^T M T`` exactly (``T``: columns as lists of Fractions)."""
    m = len(M)
    MT = [[sum((M[i][k] * t[k] for k in range(m)), Fraction(0)) for t in T] for i in range(m)]
    return [[sum((a[i] * MT[i][c] for i in range(m)), Fraction(0)) for c in range(len(T))] for a in T]


def near_kernel_evidence(obj: Any, basis: Any, mask: np.ndarray, claims: list[float],
                         budget: Any = None) -> tuple[float, tuple] | None:
    """``(u, (rows, N))`` proving the least ``u`` of ``claims`` (or of the solver's bound in the
    rescaled coordinates) in exact rationals, for a pattern whose ``B_S`` is singular to rounding
    but not exactly (an exact kernel besides is quotiented by the S-lemma's term); None otherwise
    (no direction singular to rounding only, or nothing proven, or rationals beyond the float range
    on the way: inputs spanning the ends of the float range; the claim then falls back)."""
    try:
        return _near_kernel_evidence(obj, basis, mask, claims, budget)
    except (OverflowError, ZeroDivisionError, FloatingPointError):
        return None


def _near_kernel_evidence(obj: Any, basis: Any, mask: np.ndarray, claims: list[float],
                          budget: Any = None) -> tuple[float, tuple] | None:
    import solvers

    from relu_gating.search.proofs import exact_below, exact_gram, exact_parts, exact_pencil
    from relu_gating.checker import EXCLUDE_RTOL, ROUNDING_STEP

    fin = [float(c) for c in claims if np.isfinite(c)]
    if not fin:
        return None
    from relu_gating.search._exact.kernel_evidence import exact_nullspace

    A, B = exact_pencil(obj.Phi, obj.U_K, basis, mask)
    m = len(B)
    w, V = np.linalg.eigh(_floats(B))
    near = w < NEAR_RTOL * max(float(w[-1]), np.finfo(float).tiny)
    K = exact_nullspace(B, m)
    if near.sum() <= len(K) or near.all():  # no direction singular to rounding only
        return None
    if basis is None:  # no features, no exclusions: the pencil alone (an exact kernel is kernel_evidence's)
        if K:
            return None
        ZZ, lam, t2 = [[Fraction(0)] * m for _ in range(m)], Fraction(0), Fraction(0)
    else:
        ZZ = exact_gram(obj.Phi, mask)
        lam = Fraction(ROUNDING_STEP * max(1.0, abs(min(fin))))
        t2 = lam * Fraction(EXCLUDE_RTOL) ** 2
    # exact kernel columns first (B and A vanish there; the S-lemma's -lam tau^2 ZZ is negative
    # definite there unless h = 0), then the near-kernel directions past them, scaled to unit B norm
    T = [list(kv) for kv in K]
    if any(_quad(ZZ, kv) <= 0 for kv in K):  # h = 0 along the kernel: not this module's case
        return None
    Vn = V[:, near]
    if K:  # the near-kernel directions past the exact kernel (floats: only a choice of coordinates)
        Kf = np.linalg.qr(np.array([[float(x) for x in kv] for kv in K]).T)[0]
        Vn = np.linalg.svd(Vn - Kf @ (Kf.T @ Vn))[0][:, :Vn.shape[1] - len(K)]
    for v in Vn.T:
        col = [Fraction(float(x)) for x in v]
        bvv = _quad(B, col)
        if bvv <= 0:
            return None
        T.append([x * _pow2(bvv) for x in col])
    T += [[Fraction(float(x)) for x in V[:, j]] for j in np.flatnonzero(~near).tolist()]
    A2 = _congruent([[A[i][j] + lam * B[i][j] - t2 * ZZ[i][j] for j in range(m)] for i in range(m)], T)
    k = len(K)
    # the exact kernel block eliminated exactly (Schur complement: u B - A2 - D is PSD iff its
    # complement is, for D vanishing on the kernel, i.e. multipliers on rows with G_i K = 0 only)
    reduced = _schur(A2, k)
    if reduced is None:
        return None
    Ap, Bp = _floats(reduced), _floats(_congruent(B, T[k:]))
    sgn = np.where(mask, 1, -1)
    Gx = [[Fraction(float(x)) * int(s) for x in row] for row, s in zip(obj.Phi, sgn.tolist())]
    free = [all(sum((g[c] * kv[c] for c in range(m)), Fraction(0)) == 0 for kv in K) for g in Gx]
    Gp = np.array([[float(sum((g[c] * t[c] for c in range(m)), Fraction(0))) for t in T[k:]] for g in Gx])
    Gp[~np.array(free, dtype=bool)] = 0.0  # rows that see the kernel carry no multiplier
    scale = pow2_norms(Gp, axis=1)  # rows near 2^1023: no square overflows
    live = np.flatnonzero((scale > 0) & np.isfinite(scale))
    try:
        if live.size:
            dual = solvers.cone_dual(Ap, Bp, Gp[live] / scale[live, None])
            upper, Nd = float(dual.upper), dual.N
        else:  # no row can carry a multiplier: the pencil's own top
            Wh = np.linalg.cholesky(Bp)
            Ci = np.linalg.solve(Wh, np.linalg.solve(Wh, Ap).T)
            upper, Nd = float(np.linalg.eigvalsh(0.5 * (Ci + Ci.T))[-1]), np.zeros((0, 0))
    except (solvers.ConeEigError, np.linalg.LinAlgError, ValueError):
        return None
    with np.errstate(under="ignore"):  # one division at a time: scale_i scale_j may overflow (rows near 2^1023)
        Nl = np.maximum(0.5 * (Nd + Nd.T), 0.0) / scale[live, None] / scale[None, live]
    if not (np.all(np.isfinite(Nl)) and np.isfinite(upper)):
        return None
    keep = np.flatnonzero(Nl.any(axis=1))
    rows, N = live[keep].astype(np.int64), Nl[np.ix_(keep, keep)]
    AD, Bx = exact_parts(obj.Phi, obj.U_K, basis, mask, rows, N)
    for u in sorted(set(fin) | {upper * (1 + r) + r for r in (1e-12, 1e-10, 1e-9)}):
        if budget is not None:
            if budget.left <= 0:
                return None
            budget.left -= 1
        if exact_below(Fraction(u), AD, Bx, None if basis is None else ZZ):
            return u, (rows, N)
    return None
