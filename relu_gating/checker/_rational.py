"""The checker's exact arithmetic (its own; nothing shared with the enumerator).

Every float64 is an exact dyadic rational, so the checker can decide in
integers or :class:`fractions.Fraction` what floats may only approximate:
positive semidefiniteness (:func:`is_psd`), ranks and pivot columns
(:func:`pivot_columns`), determinants (:func:`det`) and linear systems
(:func:`solve`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np

__all__ = ["to_ints", "row_to_ints", "is_psd", "pivot_columns", "det", "solve"]


def to_ints(X: np.ndarray) -> tuple[list, int]:
    """``X`` as exact integers with one common scale: ``(Xi, s)``, ``X = Xi * 2^-s`` (nested lists)."""
    X = np.asarray(X, dtype=float)
    nz = np.abs(X[X != 0])
    s = 0 if nz.size == 0 else max(0, int(53 - np.frexp(nz.min())[1]))

    def one(x: float) -> int:
        if x == 0:
            return 0
        m, e = math.frexp(x)
        return int(m * (1 << 53)) << (e - 53 + s)  # e >= the smallest exponent: a nonnegative shift
    return [one(x) for x in X.reshape(-1).tolist()] if X.ndim == 1 else [[one(x) for x in r] for r in X.tolist()], s


def row_to_ints(v: np.ndarray) -> list[int]:
    """A float row times a positive power of two, as integers (same signs, same hyperplane)."""
    return to_ints(np.asarray(v, dtype=float).reshape(-1))[0]


def is_psd(C: Sequence[Sequence]) -> bool:
    """Exact positive semidefiniteness of a symmetric rational matrix, fraction-free: ``C`` is made
    integer by a congruence ``D C D`` (``d_i`` the lcm of row ``i``'s denominators: PSD-ness kept),
    then symmetric Bareiss elimination (a negative diagonal refutes; a positive pivot is eliminated,
    the live block is then its pivot's multiple of the Schur complement, integer by Sylvester's
    identity; a remaining all-zero diagonal needs an all-zero block).  No gcd is taken."""
    C = [[Fraction(x) for x in row] for row in C]
    d = [math.lcm(*(x.denominator for x in row)) if row else 1 for row in C]
    A = [[x.numerator * (di // x.denominator) * dj for x, dj in zip(row, d)] for row, di in zip(C, d)]
    live, prev = list(range(len(A))), 1
    while live:
        if any(A[i][i] < 0 for i in live):
            return False
        k = next((i for i in live if A[i][i] > 0), None)
        if k is None:
            return all(A[i][j] == 0 for i in live for j in live)
        live.remove(k)
        p, Ak = A[k][k], A[k]
        for i in live:
            Ai, a = A[i], A[i][k]
            for j in live:
                Ai[j] = (Ai[j] * p - a * Ak[j]) // prev
        prev = p
    return True


def pivot_columns(A: np.ndarray) -> list[int]:
    """Pivot columns of a float matrix taken as exact rationals (their number is its rank):
    fraction-free elimination on its rows scaled to integers (row scaling keeps the pivots)."""
    rows = [row_to_ints(r) for r in np.asarray(A, dtype=float) if np.any(r != 0)]
    piv: list[int] = []
    for c in range(A.shape[1] if A.ndim == 2 else 0):
        p = next((i for i in range(len(piv), len(rows)) if rows[i][c] != 0), None)
        if p is None:
            continue
        k = len(piv)
        rows[k], rows[p] = rows[p], rows[k]
        pr = rows[k]
        for i in range(k + 1, len(rows)):
            if rows[i][c] != 0:
                new = [a * pr[c] - rows[i][c] * b for a, b in zip(rows[i], pr)]
                g = 0
                for x in new:
                    g = math.gcd(g, x)
                rows[i] = [x // g for x in new] if g > 1 else new
        piv.append(c)
    return piv


def det(A: Sequence[Sequence[int]]) -> int:
    """Determinant of a square integer matrix (fraction-free Bareiss elimination)."""
    A = [list(r) for r in A]
    k, sign, prev = len(A), 1, 1
    for c in range(k):
        p = next((t for t in range(c, k) if A[t][c] != 0), None)
        if p is None:
            return 0
        if p != c:
            A[c], A[p], sign = A[p], A[c], -sign
        for t in range(c + 1, k):
            for u in range(c + 1, k):
                A[t][u] = (A[t][u] * A[c][c] - A[t][c] * A[c][u]) // prev
        prev = A[c][c]
    return sign * A[k - 1][k - 1] if k else 1


def solve(A: Sequence[Sequence], b: Sequence) -> list | None:
    """A basic solution of ``A y = b`` in rationals (free variables 0), None if inconsistent."""
    m, k = len(A), len(A[0]) if A else 0
    T = [[Fraction(x) for x in A[r]] + [Fraction(b[r])] for r in range(m)]
    piv, row = [], 0
    for c in range(k):
        p = next((t for t in range(row, m) if T[t][c] != 0), None)
        if p is None:
            continue
        T[row], T[p] = T[p], T[row]
        T[row] = [x / T[row][c] for x in T[row]]
        for t in range(m):
            if t != row and T[t][c] != 0:
                f = T[t][c]
                T[t] = [a - f * x for a, x in zip(T[t], T[row])]
        piv.append(c)
        row += 1
        if row == m:
            break
    if any(T[t][k] != 0 for t in range(row, m)):
        return None
    y = [Fraction(0)] * k
    for t, c in enumerate(piv):
        y[c] = T[t][k]
    return y
