"""benchmarks/pair_bound_exact.py: the proven pair bounds against an independent oracle.

The oracle builds ``U^T P_W U`` for pattern pairs of small problems (every pair of a grid with repeated
and collinear rows, 150 sampled pairs of random points) in rationals by Gram-Schmidt
(no elimination, no integer scaling) and takes its eigenvalues at 60 digits; actual pairs of neurons
(exact rationals and dense float sampling) must stay below their pattern pair's proven bound.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from tests._benchmarks import benchmark_script

pe = benchmark_script("pair_bound_exact")
bp = benchmark_script("best_pair")


def _problem(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Small dyadic problems: random points, points on a grid with repeated rows (rank drops), and a
    basis ``U`` with orthonormal float columns (the bound does not need eigenvectors)."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        X = np.round(rng.standard_normal((7, 2)) * 64) / 64
    else:  # a 3 x 2 grid with two rows repeated and three collinear points
        X = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1], [1, 0], [0, 1]], float) / 4
    Phi = np.c_[X, np.ones(len(X))]
    U, _ = np.linalg.qr(np.c_[np.ones(len(X)), rng.standard_normal((len(X), 2))])
    return Phi, U


def _oracle_matrix(Phi: np.ndarray, U: np.ndarray, masks: list[np.ndarray]) -> list[list[Fraction]]:
    """``U^T P_W U`` in rationals, ``W = (I - 11^T/n) col([D_S Phi for S in masks])``, by Gram-Schmidt of
    ``[1, D_S Phi, ...]`` and dropping the first direction (the constant)."""
    n, K = U.shape
    F = [[Fraction(float(x)) for x in row] for row in Phi]
    Uq = [[Fraction(float(x)) for x in U[:, c]] for c in range(K)]
    cols = [[Fraction(1)] * n] + [[F[i][k] if m[i] else Fraction(0) for i in range(n)]
                                  for m in masks for k in range(Phi.shape[1])]
    basis = []
    for v in cols:
        for q, qq in basis:
            c = sum(a * b for a, b in zip(v, q)) / qq
            v = [a - c * b for a, b in zip(v, q)]
        vv = sum(a * a for a in v)
        if vv:
            basis.append((v, vv))
    proj = [[sum(a * b for a, b in zip(q, u)) for u in Uq] for q, _ in basis[1:]]
    return [[sum(p[a] * p[b] / qq for p, (_, qq) in zip(proj, basis[1:])) for b in range(K)] for a in range(K)]


def _eig_desc(M: list[list[Fraction]]) -> list:
    mpmath.mp.dps = 60
    A = mpmath.matrix([[mpmath.mpf(x.numerator) / x.denominator for x in row] for row in M])
    return sorted(mpmath.eigsy(A)[0], reverse=True)


@pytest.mark.parametrize("kind,seed", [("random", 0), ("random", 1), ("grid", 2)])
def test_every_pattern_pairs_bound_against_the_rational_oracle(kind, seed):
    from relu_gating.patterns import enumerate_patterns

    Phi, U = _problem(kind, seed)
    masks = enumerate_patterns(Phi).masks
    ex = pe.ExactPairs(Phi, U, masks)
    rng = np.random.default_rng(seed)
    pairs = [(i, j) for i in range(len(masks)) for j in range(i, len(masks))]
    dropped = 0
    if kind == "random":  # 990 pattern pairs: a sample (the grid's 406 are all checked)
        pairs = [pairs[k] for k in rng.choice(len(pairs), 150, replace=False)] + [(0, 0)]
    for i, j in pairs:
        M = _oracle_matrix(Phi, U, [masks[i], masks[j]])
        N, d = ex.scaled(i, j)
        assert [[Fraction(x, d * ex.scale) for x in row] for row in N] == M  # the same matrix, exactly
        ev = _eig_desc(M)
        dropped += sum(abs(e) < 1e-40 for e in ev) > 0
        a, b, tries = ex.certify(i, j, float(ev[0]), float(ev[1]))
        assert tries == 1 and a >= ev[0] - mpmath.mpf(10) ** -50 and b >= ev[1] - mpmath.mpf(10) ** -50
        assert float(a - ev[0]) < 1e-8 and float(b - ev[1]) < 1e-8
    assert dropped > 0  # some pairs span fewer than K directions of U: rank decisions were exercised
    assert ex.N0 == sum(sum(Fraction(float(x)) for x in U[:, c]) ** 2 for c in range(U.shape[1])) / Phi.shape[0]


def test_a_proposal_below_an_eigenvalue_is_rejected_and_the_bound_still_holds():
    from relu_gating.patterns import enumerate_patterns

    Phi, U = _problem("random", 3)
    masks = enumerate_patterns(Phi).masks
    ex = pe.ExactPairs(Phi, U, masks)
    i, j = 1, len(masks) - 2
    ev = _eig_desc(_oracle_matrix(Phi, U, [masks[i], masks[j]]))
    assert ev[1] > 1e-3
    a, b, tries = ex.certify(i, j, float(ev[0]) * 0.9, float(ev[1]) * 0.9)  # both claims false
    assert tries > 1 and a >= ev[0] and b >= ev[1]
    a, b, tries = ex.certify(i, j, float(ev[0]) - 1e-6, float(ev[1]))  # lambda_1 a hair too small
    assert tries > 1 and a >= ev[0]


def test_descartes_counts_eigenvalues_above_a_value_exactly():
    rng = np.random.default_rng(5)
    for _ in range(40):
        B = rng.integers(-4, 5, size=(4, 3))
        N = (B @ B.T).tolist()  # PSD, rank <= 3, integer eigenvalues in some cases
        p = pe.char_poly(N)
        assert np.allclose(np.poly(np.array(N, float)), p)
        ev = np.linalg.eigvalsh(np.array(N, float))
        for c in [Fraction(0), Fraction(1, 3), Fraction(int(round(ev[-1]))), Fraction(ev[-2]).limit_denominator(7)]:
            want = int(np.sum(ev > float(c) + 1e-9))
            if np.all(np.abs(ev - float(c)) > 1e-9):
                assert pe.roots_above(p, c) == want
    D = [[3, 0, 0, 0], [0, 3, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]]  # a double root, a root at c exactly
    p = pe.char_poly(D)
    assert [pe.roots_above(p, c) for c in (-1, 0, 1, 2, 3, 4)] == [4, 3, 2, 2, 0, 0]


def test_elimination_refuses_what_is_not_a_gram_matrix():
    with pytest.raises(ArithmeticError):
        pe.schur_block([[1, 2], [2, 1]], [[1], [0]])  # indefinite: a negative pivot
    with pytest.raises(ArithmeticError):
        pe.schur_block([[0, 1], [1, 1]], [[0], [1]])  # zero pivot with a nonzero row
    assert pe.schur_block([[0, 0], [0, 0]], [[0], [0]]) == ([[0]], 1)


def test_actual_pairs_stay_below_their_pattern_pairs_proven_bound():
    from relu_gating.patterns import enumerate_patterns

    Phi, U = _problem("random", 4)
    pats = enumerate_patterns(Phi)
    bases, _, _ = bp.pattern_bases(Phi, pats.masks.astype(float))
    lam, _, _ = bp.pair_bounds(bases, U)
    I, J = np.triu_indices(len(bases))
    ub, N0, stats = bp.proven_bounds(Phi, U, pats.masks, lam, I, J)
    assert stats["proposals_rejected"] == 0
    index = {m.tobytes(): k for k, m in enumerate(pats.masks)}
    flat = {(int(i), int(j)): k for k, (i, j) in enumerate(zip(I, J))}
    rng = np.random.default_rng(6)
    top, best, needs_lambda2 = max(ub), N0, 0
    for s in range(3000):
        t = rng.standard_normal((2, Phi.shape[1]))
        a, b = sorted((index[(Phi @ t[0] > 0).tobytes()], index[(Phi @ t[1] > 0).tobytes()]))
        if s < 40:  # exact rationals
            v = bp.exact_value_q(Phi, U, t)
            assert v <= ub[flat[(a, b)]] and v <= top
        else:
            v = bp.layer_value(Phi, U, t)
            assert v <= float(ub[flat[(a, b)]]) + 1e-12
        best = max(best, v)
        needs_lambda2 += v > float(N0) + lam[flat[(a, b)], 0] + 1e-9
    assert N0 < best <= top
    assert needs_lambda2 > 0  # pairs above N_K(H_0) + lambda_1: a bound without lambda_2 would be false
