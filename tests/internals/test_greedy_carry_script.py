"""benchmarks/greedy_carry.py: the rank-one identity between two greedy steps' gains and the floor ``B(0)``
of any correction of an old bound, in exact rationals, and the script's float figures against them."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from tests._benchmarks import benchmark_script as _script


def _solve(A: list, b: list) -> list:
    """``A x = b`` in rationals (A square, nonsingular)."""
    n = len(A)
    M = [row[:] + [b[i]] for i, row in enumerate(A)]
    for c in range(n):
        p = next(r for r in range(c, n) if M[r][c] != 0)
        M[c], M[p] = M[p], M[c]
        for r in range(n):
            if r != c and M[r][c] != 0:
                f = M[r][c] / M[c][c]
                M[r] = [x - f * y for x, y in zip(M[r], M[c])]
    return [M[i][n] / M[i][i] for i in range(n)]


def _dot(a: list, b: list) -> Fraction:
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


def _complement(cols: list, v: list) -> list:
    """``(I - Pi_X) v`` in rationals, ``X`` the columns ``cols`` (independent)."""
    if not cols:
        return v[:]
    G = [[_dot(a, b) for b in cols] for a in cols]
    w = _solve(G, [_dot(a, v) for a in cols])
    return [v[i] - sum(w[k] * cols[k][i] for k in range(len(cols))) for i in range(len(v))]


def _gain(cols: list, U: list, h: list) -> Fraction:
    """``G_X(h) = ||U^T (I - Pi_X) h||^2 / ||(I - Pi_X) h||^2`` in rationals (``U`` as columns)."""
    r = _complement(cols, h)
    return sum((_dot(u, r) ** 2 for u in U), Fraction(0)) / _dot(r, r)


def _instance(seed: int, n: int = 7):
    rng = np.random.default_rng(seed)
    ints = lambda *s: rng.integers(-4, 5, size=s)  # noqa: E731
    H = [[Fraction(1)] * n, [Fraction(int(x)) for x in ints(n)]]
    U = [[Fraction(int(x)) for x in ints(n)] for _ in range(2)]
    g = [Fraction(int(max(x, 0))) for x in ints(n)]
    h = [Fraction(int(max(x, 0))) for x in ints(n)]
    return H, U, g, h


@pytest.mark.parametrize("seed", range(6))
def test_the_rank_one_identity_between_two_steps_gains_is_exact(seed):
    H, U, g, h = _instance(seed)
    assert not (any(all(x == 0 for x in _complement(H, v)) for v in (g, h)) or all(
        x == 0 for x in _complement(H + [g], h))), "a degenerate instance: g or h in col(H)"
    lhs = _gain(H + [g], U, h)
    assert lhs == _gain(H, U, h) + _gain(H + [h], U, g) - _gain(H, U, g)


@pytest.mark.parametrize("seed", range(6))
def test_the_floor_is_attained_by_a_vector_of_zero_old_gain_exactly(seed):
    """``h = (I - Pi_[H, M]) (I - Pi_H) g`` gains 0 under ``H`` and ``(1 - p) / p * G_H(g)`` under ``[H, g]``."""
    H, U, g, _ = _instance(seed, n=9)
    q = _complement(H, g)
    assert not all(x == 0 for x in q), "a degenerate instance: g in col(H)"
    M = [_complement(H, u) for u in U]
    y = _complement(H + M, q)
    assert all(_dot(m, y) == 0 for m in M) and all(_dot(c, y) == 0 for c in H)
    p = 1 - _dot(_complement(M, q), _complement(M, q)) / _dot(q, q)
    floor = (1 - p) / p * _gain(H, U, g)
    assert _gain(H + [g], U, y) == floor
    # the script's float figures agree with the exact ones (its formulas hold for any U, orthonormal or not)
    gc = _script("greedy_carry")
    Hf, Uf, gf = (np.array(x, dtype=float).T for x in (H, U, [g]))
    out = gc.carry_floor(Hf, gf[:, 0], Uf)
    assert out["gain"] == pytest.approx(float(_gain(H, U, g)), rel=1e-9)
    assert out["B0"] == pytest.approx(float(floor), rel=1e-7)
    yf = gc.extremal(Hf, gf[:, 0], Uf)
    assert np.allclose(yf / np.linalg.norm(yf), np.array(y, dtype=float) / float(_dot(y, y)) ** 0.5)


def test_the_slack_bounds_the_new_gain_of_random_neurons():
    """``G_[H, g](h) <= G_H(h) + s_K(H)^2 - G_H(g)`` on random neurons, with the float figures and
    ``relu_gating.coverage.metrics.marginal_gain``; and ``B(0) <= slack`` (a vector of gain 0 obeys it)."""
    from relu_gating.coverage.metrics import marginal_gain

    gc = _script("greedy_carry")
    rng = np.random.default_rng(3)
    n = 40
    X = rng.standard_normal((n, 2))
    Phi = np.c_[X, np.ones(n)]
    U = np.linalg.qr(rng.standard_normal((n, 3)))[0]
    H = np.c_[np.ones(n), np.maximum(Phi @ rng.standard_normal(3), 0)]
    g = np.maximum(Phi @ rng.standard_normal(3), 0)
    out = gc.carry_floor(H, g, U)
    assert out["gain"] == pytest.approx(marginal_gain(g, U, H), rel=1e-9)
    assert out["B0"] <= out["slack"] + 1e-12
    rises = 0
    for _ in range(300):
        h = np.maximum(Phi @ rng.standard_normal(3), 0)
        if np.count_nonzero(h) < 4:
            continue
        old, new = marginal_gain(h, U, H), marginal_gain(h, U, np.c_[H, g])
        assert new <= old + out["slack"] + 1e-9
        rises += new > old + 1e-12
    assert rises > 0  # the new gain does rise above the old on some neurons (no bound without the slack)
