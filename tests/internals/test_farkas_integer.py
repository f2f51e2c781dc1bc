"""The exact Farkas check's integer path and its memo (``relu_gating.search.proofs._farkas``, issue 39).

Rows that are not a basis (fewer than the rank, or dependent) were decided by Gaussian elimination on
``Fraction``; they are now decided by fraction-free elimination on integers, and answers are kept per claim.
Checked here against an independent oracle: a claim accepted is a nonnegative combination exactly (the
coefficients recomputed in rationals by least squares on the chosen rows), and on every claim the answer is
the ``Fraction`` elimination's (the switch ``INTEGER_ELIMINATION = False``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import relu_gating.search.proofs._farkas as F


def _exact_combination(Phi: np.ndarray, signs: np.ndarray, i: int, s: int, rows: list[int]) -> list[Fraction] | None:
    """Independent oracle: the coefficients ``y`` with ``s phi_i = sum_j y_j signs_j phi_j`` exactly, from the
    normal equations of a maximal independent subset of ``rows`` (in rationals), or None when no combination
    of those rows is exact."""
    cols = [[Fraction(float(v)) * int(signs[j]) for v in Phi[j]] for j in rows]
    b = [Fraction(float(v)) * s for v in Phi[i]]
    m = len(b)
    basis: list[int] = []
    for c in range(len(rows)):  # the greedy independent prefix (Gram determinant nonzero)
        trial = basis + [c]
        G = [[sum(cols[a][r] * cols[bb][r] for r in range(m)) for bb in trial] for a in trial]
        if _det(G) != 0:
            basis = trial
    if not basis:
        return None if any(b) else []
    G = [[sum(cols[a][r] * cols[bb][r] for r in range(m)) for bb in basis] for a in basis]
    rhs = [sum(cols[a][r] * b[r] for r in range(m)) for a in basis]
    y = _solve(G, rhs)
    resid = [b[r] - sum(y[t] * cols[basis[t]][r] for t in range(len(basis))) for r in range(m)]
    if any(resid):
        return None
    full = [Fraction(0)] * len(rows)
    for t, c in enumerate(basis):
        full[c] = y[t]
    return full


def _det(A: list[list[Fraction]]) -> Fraction:
    A = [row[:] for row in A]
    n, d = len(A), Fraction(1)
    for c in range(n):
        p = next((r for r in range(c, n) if A[r][c] != 0), None)
        if p is None:
            return Fraction(0)
        if p != c:
            A[c], A[p], d = A[p], A[c], -d
        d *= A[c][c]
        for r in range(c + 1, n):
            f = A[r][c] / A[c][c]
            A[r] = [a - f * bb for a, bb in zip(A[r], A[c])]
    return d


def _solve(G: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction]:
    n = len(G)
    A = [G[r][:] + [rhs[r]] for r in range(n)]
    for c in range(n):
        p = next(r for r in range(c, n) if A[r][c] != 0)
        A[c], A[p] = A[p], A[c]
        A[c] = [v / A[c][c] for v in A[c]]
        for r in range(n):
            if r != c and A[r][c] != 0:
                f = A[r][c]
                A[r] = [a - f * bb for a, bb in zip(A[r], A[c])]
    return [A[r][n] for r in range(n)]


def _instances(seed: int, count: int):
    """Claims on rows that are not a basis: fewer rows than the rank, duplicated and parallel rows, exact
    combinations on dyadic grids (exactly in the span) and rounded ones (generically not), wide exponents."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        m = int(rng.integers(2, 7))
        k = int(rng.integers(1, m + 1))
        base = rng.standard_normal((k, m))
        if rng.random() < 0.6:
            base = np.round(base * 8) / 8  # dyadic: combinations below are exact
        base *= rng.choice([1.0, 2.0 ** -40, 2.0 ** 30, 3.0], size=(k, 1))
        if k > 1 and rng.random() < 0.4:
            base[1] = base[0] * rng.choice([2.0, -0.5, 1.0])  # parallel or duplicate: not a basis
        coef = np.round(rng.standard_normal(k) * 4) / 4 * (rng.random(k) < 0.8)
        extra = [coef @ base, rng.standard_normal(m), -base[0], 0.375 * base[-1], (coef @ base) * 3.3]
        Phi = np.vstack([base, *extra])
        signs = np.r_[rng.choice(np.array([-1, 1], dtype=np.int8), size=k), np.zeros(len(extra), dtype=np.int8)]
        for i in range(k, Phi.shape[0]):
            for s in (1, -1):
                yield Phi, signs, i, s, list(range(k))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_integer_path_agrees_with_fractions_and_accepts_only_exact_combinations(seed):
    seen = {True: 0, False: 0}
    for Phi, signs, i, s, rows in _instances(seed, 70):
        old = F.INTEGER_ELIMINATION
        try:
            F.INTEGER_ELIMINATION = True
            new = F.implied_exact(Phi, signs, i, s, rows)
            F.INTEGER_ELIMINATION = False
            frac = F.implied_exact(Phi, signs, i, s, rows)
        finally:
            F.INTEGER_ELIMINATION = old
        assert new == frac, (Phi, signs, i, s, rows)
        y = _exact_combination(Phi, signs, i, s, rows)
        if new:  # sound: an exact combination with nonnegative coefficients exists
            assert y is not None and all(v >= 0 for v in y)
        if y is None:
            assert not new
        seen[new] += 1
    assert seen[True] > 15 and seen[False] > 15  # both answers exercised


def test_integer_path_on_rows_that_are_not_a_basis():
    Phi = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [3.0, 6.0, 0.0], [0.0, 1.0, 1.0], [1.0, 3.0, 1.0],
                    [1.0, 2.0, 1e-300]])
    sg = np.array([1, 1, 0, 1, 0, 0], dtype=np.int8)
    assert F.implied_exact(Phi, sg, 2, 1, [0])  # parallel, positive multiple
    assert not F.implied_exact(Phi, sg, 2, -1, [0])
    assert F.implied_exact(Phi, sg, 2, 1, [0, 1])  # dependent pair: the basic solution uses row 0 only
    assert F.implied_exact(Phi, sg, 4, 1, [0, 3])  # (1,3,1) = (1,2,0) + (0,1,1)
    assert not F.implied_exact(Phi, sg, 5, 1, [0])  # off the line by 1e-300: exactly not in the span
    sg2 = sg.copy()
    sg2[3] = -1
    assert not F.implied_exact(Phi, sg2, 4, 1, [0, 3])  # the coefficient of row 3 is then -1


def test_the_memo_answers_per_claim_and_signs_of_its_rows():
    Phi = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    cache: dict = {}
    plus = np.array([1, 1, 0], dtype=np.int8)
    minus = np.array([1, -1, 0], dtype=np.int8)
    assert F.implied_exact(Phi, plus, 2, 1, [0, 1], cache)
    assert not F.implied_exact(Phi, minus, 2, 1, [0, 1], cache)  # another key: the signs of the rows differ
    assert not F.implied_exact(Phi, plus, 2, -1, [0, 1], cache)
    assert len(cache["claims"]) == 3
    cache["claims"][(2, 1, (0, 1), (1, 1))] = "kept"  # a second ask is answered from the memo
    assert F.implied_exact(Phi, plus, 2, 1, [0, 1], cache) == "kept"
    old = F.CLAIMS_KEPT
    try:
        F.CLAIMS_KEPT = 3
        assert F.implied_exact(Phi, plus, 0, 1, [1], cache) is False  # full: started afresh
        assert len(cache["claims"]) == 1
    finally:
        F.CLAIMS_KEPT = old
