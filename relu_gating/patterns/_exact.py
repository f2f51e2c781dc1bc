"""Exact sign predicates on integer/dyadic data (private).

Every float64 is a dyadic rational, so the sign of any polynomial in the
entries of ``Phi`` (a determinant, a dot product) is a well-defined exact
quantity.  This module decides such signs with a *floating-point filter*: the
value is computed in float64 together with a rigorous bound on its rounding
error; if ``|value| > bound`` the float sign is the exact sign.  Otherwise the
value is recomputed exactly with Python integers (rows are first scaled to
integer vectors by powers of two, which never changes a sign).

Conventions
-----------
* Integer matrices are lists of tuples of Python ints ("int rows").
* A float copy of an int matrix is row-scaled by a power of two so that every
  row has max-abs in [1, 2); its entries carry a relative error <= u = 2**-53.
* ``cross_stack`` returns the generalised cross product ``X`` of ``k`` vectors in
  ``R^(k+1)``, normalised so that ``det([x; R]) = x @ X`` for every ``x``.
"""

from __future__ import annotations

import contextlib
import math
import threading
from functools import reduce
from itertools import combinations
from typing import Sequence

import numpy as np
from threadpoolctl import ThreadpoolController

__all__ = [
    "U",
    "across",
    "float_rows_to_int",
    "primitive",
    "det_int",
    "rank_int",
    "kernel_basis_int",
    "IntMatrix",
    "cross_stack",
    "cross_stack_T",
    "cross_int",
    "skinny_matmul",
    "single_thread_blas",
]

U = 2.0 ** -53
IntRow = tuple  # tuple[int, ...]


def float_rows_to_int(A: np.ndarray) -> list[IntRow]:
    """Scale each row of a finite float array by a power of two to integers (exact)."""
    out = []
    for row in A:
        ratios = [float(x).as_integer_ratio() for x in row]
        den = max(d for _, d in ratios)
        out.append(tuple(p * (den // d) for p, d in ratios))
    return out


def primitive(row: Sequence[int]) -> tuple[IntRow, int]:
    """Return (primitive row with first nonzero entry > 0, orientation sign) or ((), 0) for zero."""
    g = 0
    for x in row:
        g = math.gcd(g, x)
    if g == 0:
        return (), 0
    first = next(x for x in row if x != 0)
    s = 1 if first > 0 else -1
    return tuple((x // g) * s for x in row), s


def det_int(M: Sequence[Sequence[int]]) -> int:
    """Exact determinant of a square integer matrix (Bareiss, fraction free)."""
    n = len(M)
    if n == 0:
        return 1
    A = [list(r) for r in M]
    sign, prev = 1, 1
    for k in range(n - 1):
        if A[k][k] == 0:
            for i in range(k + 1, n):
                if A[i][k] != 0:
                    A[k], A[i] = A[i], A[k]
                    sign = -sign
                    break
            else:
                return 0
        akk = A[k][k]
        for i in range(k + 1, n):
            aik = A[i][k]
            Ai, Ak = A[i], A[k]
            for j in range(k + 1, n):
                Ai[j] = (Ai[j] * akk - aik * Ak[j]) // prev
        prev = akk
    return sign * A[n - 1][n - 1]


def rank_int(M: Sequence[Sequence[int]]) -> tuple[int, list[int]]:
    """Exact rank and pivot columns (first independent columns) of an integer matrix."""
    A = [list(r) for r in M if any(r)]
    if not A:
        return 0, []
    ncol = len(A[0])
    rank, prev, pivots = 0, 1, []
    for col in range(ncol):
        piv = next((i for i in range(rank, len(A)) if A[i][col] != 0), None)
        if piv is None:
            continue
        A[rank], A[piv] = A[piv], A[rank]
        p = A[rank][col]
        for i in range(rank + 1, len(A)):
            aic = A[i][col]
            Ai, Ar = A[i], A[rank]
            for j in range(col, ncol):
                Ai[j] = (Ai[j] * p - aic * Ar[j]) // prev
        prev = p
        pivots.append(col)
        rank += 1
        if rank == len(A):
            break
    return rank, pivots


def kernel_basis_int(R: Sequence[Sequence[int]]) -> list[IntRow]:
    """Integer basis (as rows) of ``{x : R x = 0}`` for a full-row-rank integer ``R`` (k x d)."""
    k = len(R)
    d = len(R[0])
    rank, piv = rank_int(R)
    if rank != k:
        raise ValueError("kernel_basis_int needs a full-row-rank matrix")
    free = [j for j in range(d) if j not in piv]
    RP = [[R[i][j] for j in piv] for i in range(k)]
    delta = det_int(RP)
    basis = []
    for f in free:
        b = [0] * d
        b[f] = delta
        for t, p in enumerate(piv):
            # Cramer: x_P = -RP^{-1} R_f * delta
            Mt = [[(R[i][f] if jj == t else RP[i][jj]) for jj in range(k)] for i in range(k)]
            b[p] = -det_int(Mt)
        g = 0
        for x in b:
            g = math.gcd(g, x)
        basis.append(tuple(x // g for x in b))
    return basis


class IntMatrix:
    """An integer matrix with a row-scaled float64 copy for filtered predicates.

    ``f`` has rows scaled by powers of two (max-abs in [1, 2)); ``rel`` is the
    relative error of each float entry (0 when the copy is exact).  ``exact_int``
    means ``f`` equals the integers themselves (small entries, no scaling), so a
    float computation whose absolute terms stay below 2**52 is exact.
    """

    def __init__(self, rows: Sequence[IntRow], d: int) -> None:
        self.rows = [tuple(r) for r in rows]
        self.q = len(self.rows)
        self.d = d
        if self.q == 0:
            self.f = np.zeros((0, d))
            self.exact_int = True
            self.rel = 0.0
            return
        big = max((abs(x).bit_length() for r in self.rows for x in r), default=0)
        if big <= 26:
            self.f = np.array(self.rows, dtype=float).reshape(self.q, d)
            self.exact_int = True
            self.rel = 0.0
        else:
            f = np.empty((self.q, d))
            exact = True
            for i, r in enumerate(self.rows):
                s = max(abs(x).bit_length() for x in r) - 1
                scale = 2 ** s
                vals = [x / scale for x in r]  # correctly rounded int / int
                f[i] = vals
                if any(x != 0 and (abs(v) < 2.0 ** -1000) for x, v in zip(r, vals)):
                    exact = False
            self.f = f
            self.exact_int = False
            self.rel = U if exact else np.inf
        self.amax = np.max(np.abs(self.f), axis=1, initial=0.0)


# ---------------------------------------------------------------------------
# generalised cross products with error bounds (vectorised over a batch)
# ---------------------------------------------------------------------------

def cross_stack(R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Generalised cross products of a batch of k x (k+1) matrices.

    Parameters
    ----------
    R : ndarray, shape (B, k, k+1)

    Returns
    -------
    X : ndarray, shape (B, k+1)
        ``X[:, i] = (-1)**i det(R[:, :, cols != i])`` so ``det([x; R_b]) = x @ X_b``.
    P : ndarray, shape (B, k+1)
        A magnitude bound for every component: the product of the row 1-norms of
        ``|R|``, which dominates the permanent of ``|R|`` without any column (each
        Laplace term is a product of one entry per row).  The float error of ``X``
        (Laplace expansion) is at most ``(k(k+1)/2 + k) * u * P`` plus the input error.
    """
    return cross_stack_T(np.transpose(R, (2, 1, 0)))


def cross_stack_T(RT: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cross_stack` on the layout ``RT[c, t, b] = R[b, t, c]`` (shape (k+1, k, B)).

    ``RT[c, t]`` should be contiguous (e.g. ``fT[:, S.T]`` for a gather of rows ``S``).
    """
    d, k, B = RT.shape
    if k == 0:
        return np.ones((B, 1)), np.ones((B, 1))
    minors: dict = {}
    tmp = np.empty(B)
    for t in range(1, k + 1):
        new = {}
        for cols in combinations(range(d), t):
            if t == 1:
                new[cols] = RT[cols[0], 0]
                continue
            val = np.multiply(RT[cols[0], t - 1], minors[cols[1:]])
            if (t - 1) % 2:
                np.negative(val, out=val)
            for j in range(1, t):
                np.multiply(RT[cols[j], t - 1], minors[cols[:j] + cols[j + 1:]], out=tmp)
                if (t - 1 + j) % 2 == 0:
                    val += tmp
                else:
                    val -= tmp
            new[cols] = val
        minors = new
    X = np.empty((B, d))
    for i in range(d):
        v = minors[tuple(c for c in range(d) if c != i)]
        X[:, i] = v if i % 2 == 0 else -v
    P = reduce(np.multiply, (reduce(np.add, (np.abs(RT[c, t]) for c in range(d))) for t in range(k)))
    return X, np.broadcast_to(P[:, None], (B, d)).copy()


def cross_int(rows: Sequence[Sequence[int]]) -> list[int]:
    """Exact generalised cross product of k integer vectors in Z^(k+1) (same convention)."""
    k = len(rows)
    d = k + 1
    out = []
    for i in range(d):
        sub = [[r[c] for c in range(d) if c != i] for r in rows]
        v = det_int(sub)
        out.append(v if i % 2 == 0 else -v)
    return out


def err_factor(k: int, rel: float) -> float:
    """Relative error factor for a degree-(k+1) determinant built from ``cross_stack``."""
    d = k + 1
    ops = k * (k + 1) // 2 + k + 2 * d + 2
    return 1.1 * (ops * U + d * rel * 1.01)


_STATE = {"single": False}
_BLAS: list = []  # [ThreadpoolController] once created


def _blas_controller() -> ThreadpoolController:
    """One threadpoolctl controller for the process (numpy's BLAS is loaded before the first call).

    ``threadpool_limits(...)`` would rescan every loaded library on each call (about 2 ms,
    as long as a small enumeration); ``limit`` on a kept controller costs 0.01 ms.
    """
    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    return _BLAS[0]


@contextlib.contextmanager
def single_thread_blas():
    """Run numpy's BLAS single-threaded inside the block (restored after), via threadpoolctl.

    Skinny products (inner dimension <= 8) are memory bound: extra BLAS threads only
    add synchronisation, catastrophically so on a loaded machine (measured 30x).
    Only engaged when this is the sole Python thread (no effect on concurrent work)
    and a BLAS library is found; otherwise :func:`skinny_matmul` falls back to fused
    numpy axpys.
    """
    if _STATE["single"] or threading.active_count() != 1:
        yield
        return
    ctl = _blas_controller()
    if not ctl.select(user_api="blas").lib_controllers:
        yield
        return
    with ctl.limit(limits=1, user_api="blas"):
        _STATE["single"] = True
        try:
            yield
        finally:
            _STATE["single"] = False


def across(op: np.ufunc, A: np.ndarray) -> np.ndarray:
    """``op.reduce(A, axis=1)`` for a narrow 2-D ``A`` (a few columns), column by column.

    numpy reduces a short last axis row by row (about 20x slower at 4 columns); this is
    one vectorized ``op`` per column.  Sums are then sequential (any order obeys the
    same error bound).
    """
    if A.shape[1] == 0:
        return op.reduce(A, axis=1)
    return reduce(op, (A[:, k] for k in range(A.shape[1])))


def skinny_matmul(A: np.ndarray, BT: np.ndarray) -> np.ndarray:
    """``A @ BT`` for a small inner dimension (A: (N, k), BT: (k, n)), as k fused axpys.

    For k <= 8 this is several times faster than BLAS on this kind of shape and
    its rounding obeys the same dot-product error bound (sequential summation).
    """
    if _STATE["single"]:
        return A @ BT
    N, k = A.shape
    n = BT.shape[1]
    out = np.empty((N, n))
    if k == 0:
        out.fill(0.0)
        return out
    np.multiply(A[:, 0:1], BT[0], out=out)
    if k > 1:
        tmp = np.empty((N, n))
        for i in range(1, k):
            np.multiply(A[:, i:i + 1], BT[i], out=tmp)
            out += tmp
    return out
