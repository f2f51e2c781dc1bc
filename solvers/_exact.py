"""Exact rational arithmetic (:class:`fractions.Fraction`) and rigorous
floating-point checks: what :mod:`solvers` falls back on where float64 cannot
decide a sign.

The inputs are floats, hence exact rationals; every function here answers for
those rationals.  Float fast paths carry an a priori rounding-error bound and
hand the rows (or values) they cannot settle to exact arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from solvers._norms import norm2

__all__ = ["fr_matrix", "fr_vector", "dot", "matvec", "quad", "compress", "nullspace", "is_psd", "solve_exact",
           "det", "quad_rounded", "float_down", "float_up", "pow2", "nonneg", "quotient_lower", "combine", "LOOSE_RTOL"]

_EPS = float(np.finfo(float).eps)
_TINY = float(np.finfo(float).tiny)
#: A float quotient whose rigorous error bound exceeds this (relative) is recomputed exactly.
LOOSE_RTOL = 1e-13

Vec = list  # list[Fraction]
Mat = list  # list[list[Fraction]], rows


def fr_matrix(M) -> Mat:
    """A float matrix as exact rationals (list of rows)."""
    return [[Fraction(v) for v in row] for row in np.atleast_2d(np.asarray(M, dtype=float)).tolist()]


def fr_vector(x) -> Vec:
    return [Fraction(v) for v in np.asarray(x, dtype=float).reshape(-1).tolist()]


def dot(u, v) -> Fraction:
    s = Fraction(0)
    for a, b in zip(u, v):
        if a and b:
            s += a * b
    return s


def matvec(M: Mat, v: Vec) -> Vec:
    return [dot(row, v) for row in M]


def quad(M: Mat, u: Vec, v: Vec | None = None) -> Fraction:
    """``u^T M v`` (``v = u`` by default)."""
    return dot(u, matvec(M, u if v is None else v))


def compress(M: Mat, V: list[Vec]) -> Mat:
    """``V^T M V`` for the basis vectors ``V`` (columns), exactly."""
    MV = [matvec(M, v) for v in V]
    return [[dot(u, w) for w in MV] for u in V]


def combine(V: list[Vec], c) -> Vec:
    """``sum_j c_j V_j`` (``c`` floats or Fractions), exactly."""
    n = len(V[0]) if V else 0
    out = [Fraction(0)] * n
    for cj, v in zip(c, V):
        cj = Fraction(cj)
        if cj:
            out = [a + cj * b for a, b in zip(out, v)]
    return out


def nullspace(rows: Mat, n: int) -> list[Vec]:
    """Rational basis of ``{x in Q^n : r . x = 0 for every row r}`` (reduced row echelon form)."""
    R = [list(r) for r in rows if any(r)]
    piv: list[int] = []
    i = 0
    for col in range(n):
        if i == len(R):
            break
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
    basis = []
    for free in (c for c in range(n) if c not in piv):
        v = [Fraction(0)] * n
        v[free] = Fraction(1)
        for r, c in enumerate(piv):
            v[c] = -R[r][free]
        basis.append(v)
    return basis


def solve_exact(M: Mat, b: Vec) -> Vec | None:
    """Exact solution of the square system ``M x = b`` (None if ``M`` is singular)."""
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


def det(M: Mat) -> Fraction:
    """Exact determinant (Gaussian elimination)."""
    R = [list(r) for r in M]
    n = len(R)
    d = Fraction(1)
    for c in range(n):
        p = next((k for k in range(c, n) if R[k][c] != 0), None)
        if p is None:
            return Fraction(0)
        if p != c:
            R[c], R[p] = R[p], R[c]
            d = -d
        d *= R[c][c]
        for k in range(c + 1, n):
            if R[k][c]:
                f = R[k][c] / R[c][c]
                R[k] = [a - f * b for a, b in zip(R[k], R[c])]
    return d


def is_psd(M: Mat) -> bool:
    """Exact test of positive semidefiniteness of a symmetric rational matrix.

    Symmetric elimination with the largest diagonal pivot: ``M`` is PSD iff
    the pivot is positive and its Schur complement is PSD, or every
    remaining diagonal entry is zero and so is the remaining block.
    """
    S = [list(r) for r in M]
    idx = list(range(len(S)))
    while idx:
        p = max(idx, key=lambda i: S[i][i])
        piv = S[p][p]
        if piv <= 0:
            return piv == 0 and all(S[i][j] == 0 for i in idx for j in idx)
        idx.remove(p)
        row = S[p]
        for i in idx:
            if row[i]:
                f = row[i] / piv
                Si = S[i]
                for j in idx:
                    if row[j]:
                        Si[j] -= f * row[j]
    return True


def float_down(q: Fraction) -> float:
    """The largest float ``<= q``."""
    f = float(q)
    return float(np.nextafter(f, -np.inf)) if Fraction(f) > q else f


def float_up(q: Fraction) -> float:
    """The smallest float ``>= q``."""
    f = float(q)
    return float(np.nextafter(f, np.inf)) if Fraction(f) < q else f


def pow2(v: float) -> float:
    """A power of two within a factor 2 of ``|v|`` (1 for 0 or non-finite): exact scaling."""
    return 2.0 ** math.frexp(v)[1] if np.isfinite(v) and v != 0 else 1.0


def nonneg(G: np.ndarray, x: np.ndarray, *, strict: bool = False) -> bool:
    """``G x >= 0`` (``> 0`` if ``strict``) on every row, exactly.

    numpy first, with the a priori bound ``|fl(G x) - G x| <= (m+2) eps |G||x|``;
    only the rows inside that bound are summed with Fractions.
    """
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        return False
    if G.shape[0] == 0:
        return True
    v = G @ x
    err = (G.shape[1] + 2) * _EPS * (np.abs(G) @ np.abs(x)) + G.shape[1] * _TINY
    if np.any(v < -err) or (strict and np.any(v <= -err)):
        return False
    unsure = np.flatnonzero(v <= err)
    if unsure.size == 0:
        return True
    xq = fr_vector(x)
    for i in unsure.tolist():
        s = dot(fr_vector(G[i]), xq)
        if s < 0 or (strict and s == 0):
            return False
    return True


_SPLIT = 134217729.0  # 2^27 + 1 (Dekker)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a * b = p + e`` exactly, elementwise (Dekker's TwoProduct, no FMA needed)."""
    p = a * b
    ca = _SPLIT * a
    ah = ca - (ca - a)
    al = a - ah
    cb = _SPLIT * b
    bh = cb - (cb - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def matmul2(X: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, float]:
    """``X W`` as if computed in twice the working precision and a proven bound on its error in
    Frobenius norm (Ogita, Rump and Oishi's ``Dot2``, SIAM J. Sci. Comput. 26 (2005), Prop. 5.5):
    per entry ``|fl - x^T w| <= eps |x^T w| + gamma_c^2 |x|^T |w|``, plus an underflow term;
    ``inf`` when an entry is too large for the splitting."""
    k, c = X.shape
    if c == 0 or max(float(np.abs(X).max(initial=0.0)), float(np.abs(W).max(initial=0.0))) >= 2.0**400:
        return X @ W, math.inf
    p, s = _two_prod(X[:, :1], W[:1, :])
    for j in range(1, c):
        h, r = _two_prod(X[:, j:j + 1], W[j:j + 1, :])
        t = p + h  # TwoSum(p, h) = t + (p - (t - z)) + (h - z)
        z = t - p
        s = s + (((p - (t - z)) + (h - z)) + r)
        p = t
    out = p + s
    g = c * _EPS / (1 - c * _EPS)
    bound = (_EPS / 2 * float(norm2(out)) * (1 + 2 * _EPS) + g * g * float(norm2(np.abs(X) @ np.abs(W)))
             + 8.0 * c * k * _TINY) * (1 + 4 * _EPS)
    return out, bound


def quad_rounded(M: np.ndarray, x: np.ndarray) -> float | None:
    """``x^T M x`` of the exact rationals, correctly rounded to a float (error-free
    products and :func:`math.fsum`); None where the products may under/overflow."""
    p, e = _two_prod(M, x[:, None])
    terms = [*_two_prod(p, x[None, :]), *_two_prod(e, x[None, :])]
    flat = np.concatenate([t.ravel() for t in terms])
    nz = np.abs(flat[flat != 0])
    if not np.all(np.isfinite(flat)) or (nz.size and (nz.min() < 1e-280 or nz.max() > 1e280)):
        return None
    return math.fsum(flat.tolist())


def quotient_lower(A: np.ndarray, B: np.ndarray, x: np.ndarray) -> float:
    """A float ``<=`` the exact ``x^T A x / x^T B x`` (``nan`` when ``x^T B x <= 0`` exactly).

    numpy with an a priori error bound when that bound is within
    ``LOOSE_RTOL`` of the values; else both forms correctly rounded
    (:func:`quad_rounded`); else Fractions rounded down.
    """
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        return float("nan")
    ax = np.abs(x)
    k = (2 * x.size + 4) * _EPS
    num, den = float(x @ A @ x), float(x @ B @ x)
    en = k * float(ax @ np.abs(A) @ ax) + _TINY
    eb = k * float(ax @ np.abs(B) @ ax) + _TINY
    if den > 0 and eb <= LOOSE_RTOL * den and en <= LOOSE_RTOL * abs(num):
        lo = num - en
        q = lo / (den + eb) if lo >= 0 else lo / (den - eb)
        return q - 4 * _EPS * abs(q)
    rn, rd = quad_rounded(A, x), quad_rounded(B, x)
    if rn is not None and rd is not None:
        if rd <= 0:
            return float("nan")
        q = rn / rd  # three roundings, each <= eps/2 relative
        return q - 4 * _EPS * abs(q)
    xq = fr_vector(x)
    d = quad(fr_matrix(B), xq)
    if d <= 0:
        return float("nan")
    return float_down(quad(fr_matrix(A), xq) / d)
