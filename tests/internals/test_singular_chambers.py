"""Exact pricing bounds on the singular chambers at d = 3 (relu_gating.layers._singular_chambers).

Oracles: each chamber's exact maximum of ``<y, d>`` from an SOCP over the chamber (Clarabel, a float
solver independent of the pricing: the bound must lie above it and, being the chamber's exact maximum
up to the float choice of multipliers, within 1e-3 of it); the certified best-neuron search on the same dual for the maximum
over all chambers; dense sampling of neurons; and exact integer arithmetic for the null bases.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from relu_gating.layers import _cone_pricing
from relu_gating.layers._cone_pricing import ConePricer
from relu_gating.layers._singular_chambers import _int_adj, _int_det, _null_basis, singular_chambers
from relu_gating.layers.variation import _Pricer, normalized_neurons, variation_norm
from relu_gating.patterns import enumerate_patterns


def _phi3(n: int, seed: int, thin: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    X[:, 2] *= thin
    return np.c_[np.round(X * 2.0**12) / 2.0**12, np.ones(n)]


def _chamber_max(Phi: np.ndarray, mask: np.ndarray, y: np.ndarray) -> float:
    """``max <y, S Phi theta>`` over the chamber with ``||S Phi theta|| <= 1`` (SOCP, Clarabel)."""
    import cvxpy as cp

    th = cp.Variable(Phi.shape[1])
    sg = np.where(mask, 1.0, -1.0)
    prob = cp.Problem(cp.Maximize(y[mask] @ (Phi[mask] @ th)),
                      [cp.norm(Phi[mask] @ th) <= 1, cp.multiply(sg, Phi @ th) >= 0])
    prob.solve(solver="CLARABEL")
    return max(float(prob.value), 0.0)


@pytest.mark.parametrize("seed,thin", [(0, 1.0), (1, 1.0), (2, 0.05)])
def test_each_singular_chamber_bound_is_its_exact_maximum(seed, thin):
    Phi = _phi3(11, seed, thin)
    pats = enumerate_patterns(Phi)
    cp_ = ConePricer(Phi, pats, batched=True)
    y = np.random.default_rng(20 + seed).standard_normal(11)
    cp_.bound(y)  # builds the singular chambers
    Y, k = cp_._quantize(y)
    yq = Y / 2.0**k
    sizes = pats.masks[list(cp_.sing)].sum(axis=1)
    assert set(sizes.tolist()) == {2, 3}  # both null dimensions are exercised
    for sign in (1, -1):
        c, pos = cp_._products(sign * Y)
        for i, ch in cp_.sing.items():
            t, _ = ch.bound(cp_.P, cp_.Pf, [int(x) for x in c[i]])
            assert t is not None  # the repair succeeds on these instances
            b = float(np.sqrt(float(t))) / 2.0**k
            exact = _chamber_max(Phi, pats.masks[i], sign * yq)
            assert b >= exact - 1e-6 * max(1.0, exact)  # the SOCP's own tolerance
            assert b <= exact + 1e-3 * max(1.0, exact)  # tight: ||(y_S)_+|| is often several times larger


@pytest.mark.parametrize("seed", [0, 1])
def test_d3_bound_equals_the_certified_search_and_lies_above_sampled_neurons(seed):
    Phi = _phi3(12, seed)
    pats = enumerate_patterns(Phi)
    cp_ = ConePricer(Phi, pats, batched=True)
    y = np.random.default_rng(30 + seed).standard_normal(12)
    B, yq, thetas, exact = cp_.bound(y)
    assert Fraction(B) ** 2 >= exact
    T = np.random.default_rng(seed).standard_normal((100_000, 4))
    D, _ = normalized_neurons(Phi, T)
    assert B >= float(np.max(np.abs(yq @ D))) * (1 - 1e-12)
    g, _ = _Pricer(Phi, pats, None).certified(yq, 1.0)
    assert abs(B - g) <= 1e-6 * g


def test_null_basis_is_integral_orthogonal_and_independent():
    rng = np.random.default_rng(5)
    for r in (2, 3):
        rows = rng.integers(-2**12, 2**12, size=(r, 4)).tolist()
        N = _null_basis(rows, 4)
        assert len(N) == 4 - r
        assert all(isinstance(x, int) for v in N for x in v)
        assert all(sum(a * b for a, b in zip(row, v)) == 0 for row in rows for v in N)
        assert _int_det([[sum(a * b for a, b in zip(u, w)) for w in N] for u in N]) != 0
    M = rng.integers(-50, 50, size=(3, 3)).tolist()
    adj, det = _int_adj(M), _int_det(M)
    assert all(sum(adj[i][t] * M[t][j] for t in range(3)) == det * (i == j) for i in range(3) for j in range(3))
    assert Fraction(det) == Fraction(round(np.linalg.det(np.array(M, dtype=float))))


def test_dependent_rows_are_left_to_the_orthant_bound():
    Phi = np.array([[1, 0, 0, 1], [2, 0, 0, 2], [0, 1, 0, 1], [0, 0, 1, 1], [1, 1, 1, 1]], dtype=float)
    S = np.array([[True, True, False, False, False]])
    G = (Phi[S[0]].T @ Phi[S[0]]).astype(np.int64)
    assert singular_chambers(Phi.astype(np.int64), S, G[None], np.array([False])) == {}


def test_multiplier_cap_keeps_the_integer_b_exact():
    Phi = _phi3(10, 3)
    cp_ = ConePricer(Phi, enumerate_patterns(Phi))
    N = cp_.S.shape[0]
    mi = np.tile(np.argsort(-np.abs(cp_.P).max(axis=1))[:4], (N, 1))
    k = 23
    mv = np.full((N, 4), (_cone_pricing._MU_CAP - 1) / 2.0**k)
    Y = np.full(10, 2**23 - 1, dtype=np.int64)
    c, _ = cp_._products(Y)
    rows = np.arange(N)
    b = cp_._b(c, k, mi, mv, rows)
    M = int(np.round(mv[0, 0] * 2.0**k))
    for i in range(0, N, 37):
        sg = [1 if cp_.S[i, j] else -1 for j in mi[i]]
        ref = [int(c[i, t]) + sum(M * s * int(cp_.P[j, t]) for s, j in zip(sg, mi[i])) for t in range(4)]
        assert [int(x) for x in b[i]] == ref


def test_variation_norm_closes_at_d3_with_a_valid_dual():
    Phi = _phi3(14, 4)
    v = np.random.default_rng(6).standard_normal(14)
    r = variation_norm(v, Phi, tol=1e-3, pricing="cone", max_iter=60)
    assert r.certified and r.lower <= r.upper
    D, _ = normalized_neurons(Phi, np.random.default_rng(7).standard_normal((100_000, 4)))
    assert float(np.max(np.abs(r.dual @ D))) <= 1.0 + 1e-12  # the proving dual: max |<y, d>| <= 1
    assert abs(float(r.dual @ v) - r.lower) <= 1e-9 * r.upper
