"""Exact / high-precision reference for the thin-cone fuzz suite of
:mod:`solvers` (``tests/internals/test_solvers_thin_cones.py``, which holds the seeded
generators).

Shares no code with :mod:`solvers` (``fractions``, ``mpmath`` and numpy only;
the few rational helpers are written again here on purpose).

The problem is ``sup {x^T A x / x^T B x : G x >= 0, B x != 0}`` with the
input floats read as exact rationals.  :func:`reference` takes a rational
point ``p`` with ``G p > 0`` (checked with :class:`fractions.Fraction`), so
the cone is full-dimensional and the problem is feasible iff ``B != 0``.

How the reference decides (``m = 2, 3``):

* **Unbounded** (exact): ``Z`` = a rational basis of ``ker B``; the problem is
  unbounded iff the cone ``{c : G Z c >= 0}`` has a point with
  ``(Zc)^T A (Zc) > 0``.  That cone meets the box ``|c_i| <= 1`` in a
  polytope whose vertices (every ``dim``-subset of its constraints, solved
  with Fractions) generate it; ``A`` is PSD, so it suffices to test them.
* **Optimum** (face enumeration, independent of the solver's): an optimum
  lies in the relative interior of a face ``F``, where it is a top
  eigenvector of the pencil compressed to ``span F = null(G_J)``.  For every
  row subset ``J`` with ``|J| <= m - 1``: a rational basis ``V`` of
  ``null(G_J)`` and the compressed pencil ``(V^T A V, V^T B V)`` exactly;
  the flat is skipped if ``B`` vanishes on it, or if ``A`` does not vanish on
  its exact ``ker B`` (the quotient is unbounded on the flat, never attained
  in a bounded problem); otherwise the top eigenpairs on the complement of
  ``ker B`` are computed with mpmath at ``DPS = 100`` digits (the exact
  bases of thin cones make these pencils ill-conditioned, ~1e-50: 60 digits
  were seen to fail), and the whole computation is repeated at ``DPS_CHECK =
  160`` digits: the two answers must agree to ``ZERO_RTOL``.  The flat is
  *realizable* when some ``E y + K n`` (``E`` the top eigenvectors, ``K`` the
  exact kernel, ``y != 0``) lies in the closed cone: ``+-v`` for a single
  vector, else the vertices of ``{z : M z >= 0, |z_i| <= 1}`` (every
  ``dim``-subset of constraints).  The optimum is the largest realizable top
  eigenvalue.  Quantities below ``ZERO_RTOL = 1e-40`` (relative) count as
  zero; the inputs' features (widths ``>= 2^-53``, B-masses ``>= 2^-110``)
  are far above it, and a near-zero sign only ever decides between a face and
  a sub-face carrying the same eigenvalue.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

DPS = 100
DPS_CHECK = 160
ZERO_RTOL = mpmath.mpf(10) ** -40

Vec = list  # list[Fraction]


# ----------------------------------------------------------------------------- rational linear algebra

def frac(M) -> list[list[Fraction]]:
    """A float matrix as exact rationals (rows)."""
    return [[Fraction(float(v)) for v in row] for row in np.atleast_2d(np.asarray(M, dtype=float))]


def dot(u, v) -> Fraction:
    return sum((a * b for a, b in zip(u, v)), Fraction(0))


def matvec(M, v) -> Vec:
    return [dot(row, v) for row in M]


def quad(M, u, v) -> Fraction:
    return dot(u, matvec(M, v))


def nullspace(rows, n: int) -> list[Vec]:
    """Rational basis of ``{x in Q^n : r . x = 0 for every r in rows}`` (reduced row echelon form)."""
    R = [list(r) for r in rows if any(r)]
    piv: list[int] = []
    i = 0
    for col in range(n):
        p = next((k for k in range(i, len(R)) if R[k][col] != 0), None)
        if p is None:
            continue
        R[i], R[p] = R[p], R[i]
        inv = 1 / R[i][col]
        R[i] = [v * inv for v in R[i]]
        for k in range(len(R)):
            if k != i and R[k][col] != 0:
                f = R[k][col]
                R[k] = [a - f * b for a, b in zip(R[k], R[i])]
        piv.append(col)
        i += 1
        if i == len(R):
            break
    basis = []
    for free in (c for c in range(n) if c not in piv):
        v = [Fraction(0)] * n
        v[free] = Fraction(1)
        for r, c in enumerate(piv):
            v[c] = -R[r][free]
        basis.append(v)
    return basis


def solve(M, b) -> Vec | None:
    """Exact solution of the square system ``M x = b`` (None if singular)."""
    n = len(M)
    R = [list(M[i]) + [b[i]] for i in range(n)]
    for col in range(n):
        p = next((k for k in range(col, n) if R[k][col] != 0), None)
        if p is None:
            return None
        R[col], R[p] = R[p], R[col]
        for k in range(n):
            if k != col and R[k][col] != 0:
                f = R[k][col] / R[col][col]
                R[k] = [a - f * c for a, c in zip(R[k], R[col])]
    return [R[i][n] / R[i][i] for i in range(n)]


def compress(M, V: list[Vec]) -> list[list[Fraction]]:
    """``V^T M V`` for basis vectors ``V`` (exact)."""
    MV = [matvec(M, v) for v in V]
    return [[dot(u, w) for w in MV] for u in V]


def strictly_inside(G, x) -> bool:
    """``G x > 0`` on every row, exactly (``G``, ``x`` rational)."""
    return all(dot(g, x) > 0 for g in G)


def in_closed_cone(G, x) -> bool:
    return all(dot(g, x) >= 0 for g in G)


def _vertices_exact(cons: list[Vec], k: int) -> list[Vec]:
    """Vertices of ``{c in Q^k : a . c >= 0 (a in cons), |c_i| <= 1}``."""
    box = []
    for i in range(k):
        e = [Fraction(0)] * k
        e[i] = Fraction(1)
        box += [(e, Fraction(-1)), ([-v for v in e], Fraction(-1))]  # e.c >= -1, -e.c >= -1
    allc = [(a, Fraction(0)) for a in cons] + box
    out = []
    for sub in itertools.combinations(allc, k):
        c = solve([a for a, _ in sub], [r for _, r in sub])
        if c is not None and all(dot(a, c) >= r for a, r in allc):
            out.append(c)
    return out


# ----------------------------------------------------------------------------- high precision

def _mp(M):
    return mpmath.matrix([[mpmath.mpf(v.numerator) / v.denominator for v in row] for row in M])


def _mpvec(v):
    return mpmath.matrix([mpmath.mpf(a.numerator) / a.denominator for a in v])


def _top_pencil(Aw, Bw):
    """Top eigenvalue and eigenvectors of the PD pencil ``(Aw, Bw)`` (rational, k x k)."""
    L = mpmath.cholesky(_mp(Bw))
    Li = mpmath.inverse(L)
    C = Li * _mp(Aw) * Li.T
    C = (C + C.T) / 2
    E, Q = mpmath.eigsy(C)
    vals = [E[i] for i in range(len(Aw))]
    top = max(vals)
    tol = ZERO_RTOL * max(max(abs(v) for v in vals), mpmath.mpf(10) ** -300)
    idx = [i for i, v in enumerate(vals) if v >= top - tol]
    vecs = [Li.T * Q[:, i] for i in idx]
    return top, vecs


def _mp_solve(M, b):
    """Gaussian elimination with partial pivoting; None when a pivot is below ZERO_RTOL."""
    n = len(M)
    R = [M[i] + [b[i]] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda k: abs(R[k][c]))
        if abs(R[p][c]) <= ZERO_RTOL:
            return None
        R[c], R[p] = R[p], R[c]
        for k in range(c + 1, n):
            f = R[k][c] / R[c][c]
            R[k] = [a - f * q for a, q in zip(R[k], R[c])]
    z = [mpmath.mpf(0)] * n
    for i in reversed(range(n)):
        z[i] = (R[i][n] - sum(R[i][j] * z[j] for j in range(i + 1, n))) / R[i][i]
    return z


def _cone_has_point(Gmp, cols, k_e: int) -> bool:
    """Some ``z`` with ``Gmp * (cols z) >= 0`` and ``z[:k_e] != 0`` (to ZERO_RTOL)."""
    k = len(cols)
    X = mpmath.matrix(cols[0].rows, k)
    for j, c in enumerate(cols):
        X[:, j] = c / mpmath.norm(c)
    M = Gmp * X
    rows = [[M[i, j] for j in range(k)] for i in range(M.rows)]
    if k == 1:
        col = [r[0] for r in rows]
        return min(col, default=0) >= -ZERO_RTOL or max(col, default=0) <= ZERO_RTOL
    box = []
    for i in range(k):
        e = [mpmath.mpf(0)] * k
        e[i] = mpmath.mpf(1)
        box += [(e, -1), ([-v for v in e], -1)]
    allc = [(r, 0) for r in rows] + box
    for sub in itertools.combinations(allc, k):
        z = _mp_solve([list(a) for a, _ in sub], [mpmath.mpf(r) for _, r in sub])
        if z is None:
            continue
        if all(sum(a[j] * z[j] for j in range(k)) >= r - ZERO_RTOL for a, r in allc):
            if max(abs(z[j]) for j in range(k_e)) > ZERO_RTOL * 1e10:
                return True
    return False


# ----------------------------------------------------------------------------- the reference

@dataclass(frozen=True)
class ThinReference:
    status: str  # "exact" / "unbounded" / "infeasible"
    value: object  # mpmath.mpf (inf for unbounded, -inf for infeasible)
    flat: tuple[int, ...] | None = None
    flats: int = 0


def unbounded(Aq, Bq, Gq, m: int) -> bool:
    """A ray ``d`` of the cone with ``B d = 0`` and ``A d != 0`` (exact)."""
    Z = nullspace(Bq, m)
    if not Z or all(not any(matvec(Aq, z)) for z in Z):
        return False
    cons = [[dot(g, z) for z in Z] for g in Gq]
    for c in _vertices_exact(cons, len(Z)):
        d = [sum((c[j] * Z[j][i] for j in range(len(Z))), Fraction(0)) for i in range(m)]
        if quad(Aq, d, d) > 0:
            return True
    return False


def _flat_candidate(Aq, Bq, V):
    """``(mu, vecs, kernel)`` for the flat spanned by ``V`` (x-space mp vectors), or None."""
    k = len(V)
    Af, Bf = compress(Aq, V), compress(Bq, V)
    if not any(any(r) for r in Bf):
        return None
    K = nullspace(Bf, k)
    if K and any(any(matvec(Af, v)) for v in K):
        return None  # A does not vanish on ker B here: not attained
    W = nullspace(K, k) if K else [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]
    mu, ys = _top_pencil(compress(Af, W), compress(Bf, W))
    Vm = mpmath.matrix(len(V[0]), k)
    for j, v in enumerate(V):
        Vm[:, j] = _mpvec(v)
    Wm = mpmath.matrix(k, len(W))
    for j, w in enumerate(W):
        Wm[:, j] = _mpvec(w)
    vecs = [Vm * (Wm * y) for y in ys]
    kern = [Vm * _mpvec(v) for v in K]
    return mu, vecs, kern


def reference(A, B, G, interior) -> ThinReference:
    """Exact / high-precision optimum of a full-dimensional cone problem (see the module
    docstring), computed at ``DPS`` and ``DPS_CHECK`` digits, which must agree.

    ``interior`` must be a rational point with ``G p > 0`` (checked).
    """
    r1 = _reference(A, B, G, interior, DPS)
    r2 = _reference(A, B, G, interior, DPS_CHECK)
    with mpmath.workdps(DPS):
        agree = r1.status == r2.status and (not mpmath.isfinite(r1.value) or
                                            abs(r1.value - r2.value) <= ZERO_RTOL * max(abs(r2.value), 1))
    if not agree:
        raise AssertionError(f"reference: {DPS} and {DPS_CHECK} digits disagree: {r1} vs {r2}")
    return r1


def _reference(A, B, G, interior, dps: int) -> ThinReference:
    """The reference at ``dps`` digits (see the module docstring)."""
    with mpmath.workdps(dps):
        Aq, Bq, Gq = frac(A), frac(B), frac(G)
        m = len(Aq)
        if not strictly_inside(Gq, interior):
            raise ValueError("reference: the given point is not strictly interior")
        if not any(any(r) for r in Bq):
            return ThinReference("infeasible", -mpmath.inf)
        if unbounded(Aq, Bq, Gq, m):
            return ThinReference("unbounded", mpmath.inf)
        Gmp = _mp([[g / max(abs(v) for v in row) if any(row) else g for g in row] for row in Gq])
        cands = []
        count = 0
        for size in range(0, m):
            for J in itertools.combinations(range(len(Gq)), size):
                V = nullspace([Gq[j] for j in J], m)
                if not V:
                    continue
                count += 1
                c = _flat_candidate(Aq, Bq, V)
                if c is not None:
                    cands.append((c[0], J, c[1], c[2]))
        cands.sort(key=lambda t: -t[0])
        for mu, J, vecs, kern in cands:
            if _cone_has_point(Gmp, vecs + kern, len(vecs)):
                return ThinReference("exact", mu, J, count)
        raise AssertionError("reference: feasible bounded problem without a realizable flat")
