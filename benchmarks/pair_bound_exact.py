r"""Proven upper bounds on the best pair of neurons over a pair of gating patterns, in exact integers
(``benchmarks/best_pair.py``'s upper end, issue 40).

The data are taken as the doubles they are: ``Phi`` and ``U`` are rationals with power-of-two
denominators, so ``Phi = P / a`` and ``U = V / 2^f`` with integer ``P`` and ``V`` (one ``a`` for all of
``Phi``, one ``2^f`` for all of ``U``).  For a pattern ``S`` the columns of ``n D_S P - 1 1^T D_S P``
are integers and span the residuals against ``1`` of the neurons of chamber ``S``:
``V_S = (I - 11^T/n) col(D_S Phi)``.  For a pair of patterns, ``C = [C_1, C_2]`` spans
``W = V_(S_1) + V_(S_2)`` and

    ``U^T P_W U = A^T G^+ A / 4^f``  with  ``G = C^T C``,  ``A = C^T V``.

Symmetric fraction-free (Bareiss) elimination of ``[[G, A], [A^T, 0]]`` on ``G``'s diagonal decides
the rank exactly: ``G`` is a Gram matrix, so a zero pivot means a column in the span of the pivots
before it, whose whole row (``A``'s part too) is zero and is dropped.  After the pivots the trailing
block is ``-d A^T G_P^(-1) A`` with ``d = det(G_P) > 0``, an integer matrix ``-N``; the eigenvalues of
``U^T P_W U`` are those of ``N / (d 4^f)``.

``N`` is symmetric, so its characteristic polynomial (integer coefficients from the principal
minors) has only real roots, and for such a polynomial Descartes' rule of signs is exact: the number
of roots above ``c`` is the number of sign changes of the coefficients of ``p(x + c)``.  A claimed
``lambda_1 <= a`` (no root of ``N``'s polynomial above ``a d 4^f``) and ``lambda_2 <= b`` (at most one
root above ``b d 4^f``) is therefore decided exactly.  The floats only propose ``a`` and ``b``; when
a proposal fails the margin grows and it is decided again (the trace, an exact valid bound, is the
last resort).  Nothing here is rounded: every bound returned is a :class:`fractions.Fraction`.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import comb, lcm

import numpy as np

#: Relative and absolute margins of the first proposal above a float eigenvalue; each failure
#: multiplies both by ``GROW`` (at most ``TRIES`` proposals, then the trace).
MARGIN_REL, MARGIN_ABS, GROW, TRIES = 1e-9, 1e-12, 1000.0, 4


def as_integers(a: np.ndarray) -> tuple[list[list[int]], int]:
    """``a`` (float64) as ``(integer matrix, common denominator)``: ``a = ints / den`` exactly."""
    fr = [[Fraction(float(x)) for x in row] for row in np.asarray(a, dtype=float)]
    den = lcm(*(x.denominator for row in fr for x in row)) if fr and fr[0] else 1
    return [[int(x * den) for x in row] for row in fr], den


class ExactPairs:
    """Exact ``U^T P_W U`` for pattern pairs of one problem (``Phi``, ``U``, the masks).

    Parameters
    ----------
    Phi : ndarray, shape (n, m)
        Layer input (any doubles).
    U : ndarray, shape (n, K)
        The target basis, taken as the doubles it holds.
    masks : ndarray of bool, shape (N, n)
        The gating patterns.
    """

    def __init__(self, Phi: np.ndarray, U: np.ndarray, masks: np.ndarray) -> None:
        P, _ = as_integers(Phi)
        V, den = as_integers(U)
        self.n, self.K = len(P), len(V[0])
        self.scale = den * den  # U^T P_W U = (V^T P_W V) / den^2
        self.N0 = sum(Fraction(sum(V[i][c] for i in range(self.n)) ** 2, self.n) for c in range(self.K)) / self.scale
        self.C, self.CtV, self.CtC = [], [], []
        for mask in np.asarray(masks, dtype=bool):
            cols = [[P[i][k] if mask[i] else 0 for i in range(self.n)] for k in range(len(P[0]))]
            cols = [[self.n * x - sum(c) for x in c] for c in cols]  # n D_S P - 1 1^T D_S P, by columns
            self.C.append(cols)
            self.CtV.append([[sum(a * V[i][c] for i, a in enumerate(col)) for c in range(self.K)] for col in cols])
            self.CtC.append(_gram(cols, cols))

    def scaled(self, i: int, j: int) -> tuple[list[list[int]], int]:
        """``(N, d)``: ``U^T P_W U = N / (d * scale)`` for ``W = V_i + V_j`` (``i == j``: ``V_i``)."""
        if i == j:
            G, A = self.CtC[i], self.CtV[i]
        else:
            Gij = _gram(self.C[i], self.C[j])
            G = [r + s for r, s in zip(self.CtC[i], Gij)]
            G += [[Gij[a][b] for a in range(len(Gij))] + self.CtC[j][b] for b in range(len(Gij[0]))]
            A = self.CtV[i] + self.CtV[j]
        return schur_block(G, A)

    def certify(self, i: int, j: int, lam1: float, lam2: float) -> tuple[Fraction, Fraction, int]:
        """Proven ``(a, b, proposals)`` with ``lambda_1 <= a`` and ``lambda_2 <= b`` of ``U^T P_W U``."""
        N, d = self.scaled(i, j)
        p = char_poly(N)
        unit = d * self.scale
        tries = 0
        a = b = None
        rel, ab = MARGIN_REL, MARGIN_ABS
        while tries < TRIES and (a is None or b is None):
            tries += 1
            if a is None:
                c = _up(lam1, rel, ab)
                a = c if roots_above(p, c * unit) == 0 else None
            if b is None:
                c = _up(lam2, rel, ab)
                b = c if roots_above(p, c * unit) <= 1 else None
            rel, ab = rel * GROW, ab * GROW
        tr = Fraction(sum(N[k][k] for k in range(len(N))), unit)  # PSD: every eigenvalue is at most the trace
        if a is None:
            a, tries = tr, tries + 1
        if b is None:
            b, tries = tr, tries + 1
        return a, b, tries


def _up(x: float, rel: float, ab: float) -> Fraction:
    """A rational a little above ``x`` (the proposal; its validity is decided exactly elsewhere)."""
    return Fraction(float(max(x, 0.0) * (1.0 + rel) + ab))


def _gram(X: list[list[int]], Y: list[list[int]]) -> list[list[int]]:
    """``X^T Y`` for matrices given by columns (lists of integer columns)."""
    return [[sum(a * b for a, b in zip(x, y)) for y in Y] for x in X]


def schur_block(G: list[list[int]], A: list[list[int]]) -> tuple[list[list[int]], int]:
    """``(N, d)`` with ``N / d = A^T G^+ A`` restricted to ``G``'s range (``G`` a Gram matrix, integers).

    Symmetric Bareiss elimination of ``[[G, A], [A^T, 0]]`` on ``G``'s diagonal; a zero pivot (a column
    dependent on the pivots before it) is dropped with its row, which is zero.  ``d`` is the last
    pivot (``det`` of ``G`` on the kept columns, ``1`` if none); ``N = -`` the trailing block.
    """
    r, K = len(G), len(A[0]) if A else 0
    M = [G[a] + A[a] for a in range(r)] + [[A[a][c] for a in range(r)] + [0] * K for c in range(K)]
    live = list(range(r + K))
    prev = 1
    for k in range(r):
        piv = M[k][k]
        live.remove(k)
        if piv == 0:
            if any(M[k][j] for j in live) or any(M[j][k] for j in live):
                raise ArithmeticError("a zero pivot with a nonzero row: G is not a Gram matrix")
            continue
        if piv < 0:
            raise ArithmeticError("a negative pivot: G is not a Gram matrix")
        for i in live:
            Mi, Mik = M[i], M[i][k]
            for j in live:
                q, rem = divmod(piv * Mi[j] - Mik * M[k][j], prev)
                if rem:
                    raise ArithmeticError("Bareiss division not exact")
                Mi[j] = q
        prev = piv
    return [[-M[r + a][r + c] for c in range(K)] for a in range(K)], prev


def det(M: list[list[int]]) -> int:
    """Determinant of an integer matrix (Bareiss with row pivoting)."""
    M = [row[:] for row in M]
    n, sign, prev = len(M), 1, 1
    for k in range(n):
        p = next((i for i in range(k, n) if M[i][k]), None)
        if p is None:
            return 0
        if p != k:
            M[k], M[p], sign = M[p], M[k], -sign
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                M[i][j] = (M[k][k] * M[i][j] - M[i][k] * M[k][j]) // prev
        prev = M[k][k]
    return sign * M[n - 1][n - 1] if n else 1


def char_poly(N: list[list[int]]) -> list[int]:
    """Coefficients of ``det(x I - N)``, highest degree first: ``(-1)^k`` times the sum of the
    ``k x k`` principal minors."""
    K = len(N)
    out = [1]
    for k in range(1, K + 1):
        e = sum(det([[N[a][b] for b in s] for a in s]) for s in combinations(range(K), k))
        out.append((-1) ** k * e)
    return out


def roots_above(p: list[int], c: Fraction | int) -> int:
    """Roots of ``p`` (all real, with multiplicity) strictly above ``c``: Descartes' sign changes of
    ``p(x + c)``, exact for a polynomial with only real roots."""
    c = Fraction(c)
    deg = len(p) - 1
    lo = [Fraction(x) for x in reversed(p)]  # lowest degree first
    shifted = [sum(lo[j] * comb(j, i) * c ** (j - i) for j in range(i, deg + 1)) for i in range(deg + 1)]
    signs = [x > 0 for x in shifted if x != 0]
    return sum(a != b for a, b in zip(signs, signs[1:]))
