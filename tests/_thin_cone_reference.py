"""Exact / high-precision reference and seeded generators for the thin-cone
fuzz suite of :mod:`solvers` (``tests/test_solvers_thin_cones.py``).

Shares no code with :mod:`solvers` (``fractions``, ``mpmath`` and numpy only).

The problem is ``sup {x^T A x / x^T B x : G x >= 0, B x != 0}`` with the
input floats read as exact rationals.  Every generated case comes with a
rational point ``p`` with ``G p > 0`` (checked with :class:`fractions.Fraction`),
so the cone is full-dimensional and the problem is feasible iff ``B != 0``.

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


# ----------------------------------------------------------------------------- generators

@dataclass(frozen=True)
class ThinCase:
    """One fuzz case: data (floats, exact rationals), a rational strict interior point,
    and a float ``hint`` (the same point when it is a float strictly inside, else None)."""

    name: str
    A: np.ndarray
    B: np.ndarray
    G: np.ndarray
    interior: tuple
    hint: np.ndarray | None


def _int_psd(rng, m, rank, lo=-3, hi=3):
    M = rng.integers(lo, hi + 1, size=(rank, m)).astype(float)
    return M.T @ M  # small integers: exact


def _int_basis_perp(K: list[Vec], m: int) -> np.ndarray:
    """Integer basis (rows) of the orthogonal complement of the rational vectors K."""
    N = nullspace(K, m) if K else [[Fraction(int(i == j)) for j in range(m)] for i in range(m)]
    out = []
    for v in N:
        den = np.lcm.reduce([int(a.denominator) for a in v])
        out.append([float(a * den) for a in v])
    return np.array(out).reshape(-1, m)


def _pencil(rng, m, kernel: list[Vec], nearly: bool, shared: bool):
    """``(A, B)`` integer PSD with ``ker B ⊇ kernel`` (``+ 2^-20 k k^T`` if ``nearly``)."""
    P0 = _int_basis_perp(kernel, m)
    if P0.shape[0] == 0:
        P0 = np.zeros((1, m))
    R = rng.integers(-2, 3, size=(max(P0.shape[0], 1), P0.shape[0])).astype(float)
    if not R.any():
        R[0, 0] = 1.0
    P = R @ P0
    B = P.T @ P
    if not B.any():
        B = P0.T @ P0
    if nearly and kernel:
        k = [Fraction(a) for a in kernel[0]]
        den = np.lcm.reduce([int(a.denominator) for a in k])
        kf = np.array([float(a * den) for a in k])
        Bn = B + 2.0 ** -20 * np.outer(kf, kf)
        exact = all(Fraction(Bn[i, j]) == Fraction(B[i, j]) + Fraction(1, 2**20) * Fraction(kf[i]) * Fraction(kf[j])
                    for i in range(m) for j in range(m))
        B = Bn if exact else B
    if shared:
        T = _int_psd(rng, P.shape[0], int(rng.integers(1, P.shape[0] + 1)))
        A = P.T @ T @ P
    else:
        A = _int_psd(rng, m, int(rng.integers(1, m + 1)))
    if not A.any():
        A = np.eye(m)
    return A, B


def _fat_cone(rng, m, n):
    """Integer rows ``sign(X y0) X`` and the integer interior point ``y0``."""
    while True:
        y0 = rng.integers(-3, 4, size=m).astype(float)
        X = rng.integers(-4, 5, size=(n, m)).astype(float)
        s = X @ y0
        if y0.any() and np.all(s != 0):
            return np.sign(s)[:, None] * X, y0


def _unimodular(rng, m):
    L = np.eye(m) + np.tril(rng.integers(-1, 2, size=(m, m)), -1)
    U = np.eye(m) + np.triu(rng.integers(-1, 2, size=(m, m)), 1)
    M = L @ U
    Minv = np.rint(np.linalg.inv(M))
    assert np.array_equal(M @ Minv, np.eye(m))
    return M, Minv


def scaled_case(seed: int, m: int, width_exp: int) -> ThinCase:
    """A fat integer cone squashed EXACTLY by ``2^-width_exp`` along one direction
    (``x = U D y``, ``U`` unimodular), with ``B`` singular (or nearly) along the
    thin normal, the in-plane axis, or everything but the normal."""
    rng = np.random.default_rng([seed, m, width_exp, 1])
    G0, y0 = _fat_cone(rng, m, int(rng.integers(m, m + 4)))
    k = int(rng.integers(m))
    w = 2.0 ** -width_exp
    D = np.ones(m)
    D[k] = w
    U, Uinv = _unimodular(rng, m)
    G = (G0 / D[None, :]) @ Uinv
    assert np.array_equal(frac(G), [[sum((Fraction(G0[i, j]) / Fraction(D[j]) * Fraction(Uinv[j, l])
                                          for j in range(m)), Fraction(0)) for l in range(m)]
                                     for i in range(G0.shape[0])]), "G not exact"
    x0 = U @ (D * y0)
    normal = [Fraction(v) for v in Uinv.T[:, k]]  # (U^{-T} e_k): the cone nearly lies in normal^perp
    Dp = np.ones(m)
    Dp[k] = 0.0
    axis = [Fraction(v) for v in U @ (Dp * y0)]
    kind = ["none", "normal", "axis", "plane", "normal"][int(rng.integers(5))]
    kernel = {"none": [], "normal": [normal], "axis": [axis] if any(axis) else [normal],
              "plane": nullspace([normal], m)}[kind]
    nearly = bool(rng.random() < 0.25)
    A, B = _pencil(rng, m, kernel, nearly, shared=bool(rng.random() < 0.3))
    p = tuple(Fraction(v) for v in x0)
    return ThinCase(f"scaled(seed={seed},m={m},w=2^-{width_exp},ker={kind},nearly={nearly})",
                    A, B, G, p, x0 if strictly_inside(frac(G), p) else None)


def _interior_from_lp(Gq, G) -> tuple | None:
    from scipy.optimize import linprog

    q, m = G.shape
    Gn = G / np.linalg.norm(G, axis=1)[:, None]
    res = linprog(np.r_[np.zeros(m), -1.0], A_ub=np.hstack([-Gn, np.ones((q, 1))]), b_ub=np.zeros(q),
                  bounds=[(-1, 1)] * m + [(None, 1)], method="highs")
    if res.status == 0:
        p = tuple(Fraction(float(v)) for v in res.x[:m])
        if strictly_inside(Gq, p):
            return p
    return None


def rounded_case(seed: int, m: int) -> ThinCase | None:
    """Rows ``fl(a r0 + b r1)``: a needle (m = 3, simplicial, width by rounding), a
    near-redundant sliver row, or a thin wedge (m = 2, ``|b/a| ~ 2^-40``); ``B``
    singular (or nearly) along the needle's axis or a thin normal."""
    rng = np.random.default_rng([seed, m, 2])
    r0, r1 = (rng.integers(-4, 5, size=m).astype(float) for _ in range(2))
    if m == 2:
        a = -rng.uniform(0.5, 2.0)
        b = rng.choice([-1, 1]) * rng.uniform(0.5, 2.0) * 2.0 ** -int(rng.integers(30, 46))
        rows = [r0, a * r0 + b * r1]
    else:
        a, b = rng.uniform(0.3, 3.0, size=2) * rng.choice([-1.0, 1.0], size=2)
        rows = [r0, r1, a * r0 + b * r1]
        if a > 0 and b > 0:  # sliver: close the cone with more rows
            G0, _ = _fat_cone(rng, m, 3)
            rows += list(G0)
    G = np.array(rows)
    Gq = frac(G)
    if len(nullspace(Gq, m)):
        return None
    p = None
    if G.shape[0] == m:
        p = solve(Gq, [Fraction(1)] * m)
        p = tuple(p) if p is not None and strictly_inside(Gq, p) else None
    if p is None:
        p = _interior_from_lp(Gq, G)
    if p is None:
        return None
    axis = nullspace(frac(np.array([r0, r1]))[: m - 1], m) if m == 3 else nullspace([frac(r0[None])[0]], m)
    normal = [frac(r0[None])[0]]
    kind = ["axis", "normal", "none", "axis"][int(rng.integers(4))]
    kernel = {"axis": axis[:1], "normal": normal, "none": []}[kind]
    nearly = bool(rng.random() < 0.25)
    A, B = _pencil(rng, m, kernel, nearly, shared=bool(rng.random() < 0.3))
    hint = np.array([float(v) for v in p])
    hint = hint if strictly_inside(Gq, tuple(Fraction(v) for v in hint)) else None
    return ThinCase(f"rounded(seed={seed},m={m},a={a:.3g},b={b:.3g},ker={kind},nearly={nearly})",
                    A, B, G, p, hint)


def gating_control(seed: int, m: int) -> ThinCase:
    """An ordinary (fat) integer gating cone, for contrast."""
    rng = np.random.default_rng([seed, m, 3])
    G, y0 = _fat_cone(rng, m, int(rng.integers(m, m + 5)))
    kind = ["none", "random"][int(rng.integers(2))]
    kernel = [] if kind == "none" else [[Fraction(int(v)) for v in rng.integers(-2, 3, size=m)]]
    kernel = [k for k in kernel if any(k)]
    A, B = _pencil(rng, m, kernel, False, shared=bool(rng.random() < 0.3))
    p = tuple(Fraction(v) for v in y0)
    return ThinCase(f"gating(seed={seed},m={m},ker={kind})", A, B, G, p, y0)


def make_case(family: str, seed: int, m: int) -> ThinCase:
    """The seeded case ``(family, seed, m)``; ``rounded`` resamples until a cone is full-dimensional."""
    if family == "scaled33":
        return scaled_case(seed, m, 33)
    if family == "scaled43":
        return scaled_case(seed, m, 43)
    if family == "gating":
        return gating_control(seed, m)
    for k in range(100):
        c = rounded_case(seed * 101 + k, m)
        if c is not None:
            return c
    raise RuntimeError("no full-dimensional rounded cone")
