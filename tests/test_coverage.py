"""Coverage metrics: Lemma 3.5 (i)-(iv), Lemma 3.2, Prop 4.5, Def 1.1, readout; validation.

Oracles are independent of ``relu_gating.coverage.metrics``: projectors from
``numpy.linalg.pinv``/``lstsq``, ``scipy.linalg.subspace_angles`` and explicit ``P_K``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import subspace_angles

from relu_gating import InputError
from relu_gating.coverage.metrics import (
    captured_features,
    coverage_deficit,
    coverage_gap,
    dirichlet_energy,
    leverage_scores,
    marginal_gain,
    orthonormal_basis,
    principal_angles,
    rayleigh_quotient,
    readout,
)

from _instances import moons_problem, path_graph, random_basis, random_features

SETTINGS = settings(derandomize=True, deadline=None, max_examples=100)


@st.composite
def instance(draw, min_rank=0):
    """(H, U_K) with n in [4, 14], K <= n, H possibly rank deficient."""
    n = draw(st.integers(4, 14))
    K = draw(st.integers(1, n))
    N = draw(st.integers(1, n + 2))
    rank = draw(st.integers(max(min_rank, 0), min(N, n)))
    seed = draw(st.integers(0, 2**20))
    H = random_features(n, N, seed, rank=rank) if rank > 0 else np.zeros((n, N))
    return H, random_basis(n, K, seed + 1)


def _proj(H):
    """Orthogonal projector onto col(H) from the pseudo-inverse (oracle)."""
    return H @ np.linalg.pinv(H)


# ---------------------------------------------------------------- Lemma 3.5


@SETTINGS
@given(instance(min_rank=1))
def test_lemma_3_5_i_principal_angles(inst):
    H, U = inst
    NK = captured_features(H, U)
    oracle = np.sum(np.cos(subspace_angles(H, U)) ** 2) if np.linalg.matrix_rank(H) == H.shape[1] else None
    ang = principal_angles(H, U)
    assert ang.size == min(np.linalg.matrix_rank(H), U.shape[1])
    np.testing.assert_allclose(np.sum(np.cos(ang) ** 2), NK, atol=1e-9)
    np.testing.assert_allclose(NK, np.trace(_proj(H) @ U @ U.T), atol=1e-9)
    if oracle is not None:
        np.testing.assert_allclose(NK, oracle, atol=1e-9)
        np.testing.assert_allclose(np.sort(ang), np.sort(subspace_angles(H, U)), atol=1e-7)


@SETTINGS
@given(instance())
def test_lemma_3_5_ii_range(inst):
    H, U = inst
    NK = captured_features(H, U)
    r = np.linalg.matrix_rank(H) if np.any(H) else 0
    assert -1e-12 <= NK <= min(U.shape[1], r) + 1e-9
    if r == 0:
        assert NK == 0.0


@SETTINGS
@given(n=st.integers(3, 15), K=st.integers(1, 15), seed=st.integers(0, 2**20))
def test_lemma_3_5_iii_single_vector(n, K, seed):
    K = min(K, n)
    U = random_basis(n, K, seed)
    h = np.random.default_rng(seed).standard_normal(n)
    PK = U @ U.T
    value = captured_features(h, U)
    np.testing.assert_allclose(value, np.linalg.norm(PK @ h) ** 2 / np.linalg.norm(h) ** 2, rtol=1e-10, atol=1e-14)
    assert value <= 1 + 1e-12
    np.testing.assert_allclose(captured_features(U[:, 0], U), 1.0, atol=1e-12)


@SETTINGS
@given(instance())
def test_lemma_3_5_iv_deficit_and_gap(inst):
    H, U = inst
    K = U.shape[1]
    NK = captured_features(H, U)
    delta = coverage_deficit(H, U)
    s = coverage_gap(H, U)
    Mo = (np.eye(H.shape[0]) - _proj(H)) @ U if np.any(H) else U
    np.testing.assert_allclose(delta, np.linalg.norm(Mo, "fro") ** 2, atol=1e-9)
    np.testing.assert_allclose(delta, K - NK, atol=1e-9)
    np.testing.assert_allclose(s, min(np.linalg.norm(Mo, 2), 1.0), atol=1e-9)
    assert s**2 <= K - NK + 1e-9
    assert s**2 >= (K - NK) / K - 1e-9
    assert 0 <= s <= 1


# ---------------------------------------------------------------- Lemma 3.2


@SETTINGS
@given(inst=instance(min_rank=1), extra=st.integers(0, 4), mix=st.booleans())
def test_lemma_3_2_monotone(inst, extra, mix):
    A, U = inst
    n = A.shape[0]
    rng = np.random.default_rng(extra * 7 + A.shape[1])
    B = np.hstack([A, rng.standard_normal((n, extra))])
    if mix:  # same column space in a different basis
        B = B @ rng.standard_normal((B.shape[1], B.shape[1]))
    assert coverage_gap(B, U) <= coverage_gap(A, U) + 1e-9
    assert captured_features(B, U) >= captured_features(A, U) - 1e-9


# ---------------------------------------------------------------- Prop 4.5


@SETTINGS
@given(inst=instance(), seed=st.integers(0, 2**20), none=st.booleans())
def test_prop_4_5_marginal_gain_identity(inst, seed, none):
    H, U = inst
    h = np.random.default_rng([seed, 45]).standard_normal(H.shape[0])  # a stream apart from random_features(seed)
    if none:
        G = marginal_gain(h, U, None)
        np.testing.assert_allclose(G, captured_features(h, U), atol=1e-10)
        return
    if np.linalg.matrix_rank(H) == H.shape[0]:
        with pytest.raises(InputError, match="col\\(H\\)"):
            marginal_gain(h, U, H)
        return
    G = marginal_gain(h, U, H)
    # identity against recomputing N_K
    np.testing.assert_allclose(G, captured_features(np.column_stack([H, h]), U) - captured_features(H, U), atol=1e-8)
    # the explicit ratio ||M^T h||^2 / ||(I - Pi_H) h||^2 with an oracle projector
    C = np.eye(H.shape[0]) - (_proj(H) if np.any(H) else 0)
    M = C @ U
    np.testing.assert_allclose(G, np.linalg.norm(M.T @ h) ** 2 / np.linalg.norm(C @ h) ** 2, atol=1e-8)
    assert G <= coverage_gap(H, U) ** 2 + 1e-9


def test_marginal_gain_rejects_h_in_span_and_zero():
    U = random_basis(6, 2, 0)
    H = random_features(6, 3, 1)
    with pytest.raises(InputError, match="col\\(H\\)"):
        marginal_gain(H @ np.array([1.0, -2.0, 0.5]), U, H)
    with pytest.raises(InputError, match="h must be nonzero"):
        marginal_gain(np.zeros(6), U, H)
    with pytest.raises(InputError, match="h must have length 6"):
        marginal_gain(np.ones(5), U, H)
    with pytest.raises(InputError, match="H must have 6 rows"):
        marginal_gain(np.ones(6), U, H[:5])


def test_marginal_gain_bias_default_and_old_argument_order():
    U = random_basis(6, 2, 0)
    h = np.abs(random_features(6, 1, 2)[:, 0]) + np.arange(6.0)
    ones = np.ones((6, 1))
    assert marginal_gain(h, U) == pytest.approx(marginal_gain(h, U, ones), abs=1e-14)
    with pytest.warns(DeprecationWarning, match="marginal_gain\\(h, U_K, features=H\\)"):
        old = marginal_gain(ones, h, U)
    assert old == pytest.approx(marginal_gain(h, U, ones), abs=1e-14)
    with pytest.raises(InputError, match="features must be 'bias'"):
        marginal_gain(h, U, "ones")


# ---------------------------------------------------------------- other metrics


def test_leverage_scores_sum_to_K():
    U = random_basis(10, 4, 3)
    lev = leverage_scores(U)
    np.testing.assert_allclose(lev, np.diag(U @ U.T), atol=1e-14)
    np.testing.assert_allclose(lev.sum(), 4.0, atol=1e-12)


def test_dirichlet_energy_and_rayleigh():
    _, L, b = moons_problem(30, 4, 0)
    x = np.random.default_rng(0).standard_normal(30)
    Ld = L.toarray() if sp.issparse(L) else L
    np.testing.assert_allclose(dirichlet_energy(L, x), x @ Ld @ x, rtol=1e-12)
    np.testing.assert_allclose(rayleigh_quotient(L, x), x @ Ld @ x / (x @ x), rtol=1e-12)
    for k in range(4):  # R(u_k) = lambda_k
        np.testing.assert_allclose(rayleigh_quotient(L, b.U_K[:, k]), b.eigenvalues[k], atol=1e-10)
    # Lemma 2.1: ||P_K^perp x||^2 <= x^T L x / lambda_{K+1}
    r = x - b.U_K @ (b.U_K.T @ x)
    assert r @ r <= dirichlet_energy(L, x) / b.next_eigenvalue + 1e-10
    W = path_graph(3)
    np.testing.assert_allclose(dirichlet_energy(np.diag(W.sum(1)) - W, [1.0, 2.0, 4.0]), 1 + 4)
    with pytest.raises(InputError, match="x must be nonzero"):
        rayleigh_quotient(L, np.zeros(30))
    with pytest.raises(InputError, match="x must have length 30"):
        dirichlet_energy(L, np.ones(3))
    with pytest.raises(InputError, match="L must be square"):
        dirichlet_energy(np.ones((2, 3)), np.ones(3))


@SETTINGS
@given(inst=instance(min_rank=1), seed=st.integers(0, 2**20))
def test_readout_matches_lstsq(inst, seed):
    Z, _ = inst
    f = np.random.default_rng(seed).standard_normal(Z.shape[0])
    r = readout(Z, f)
    beta, *_ = np.linalg.lstsq(Z, f, rcond=None)
    np.testing.assert_allclose(r.g, Z @ beta, atol=1e-8)
    np.testing.assert_allclose(r.residual, r.g - f, atol=1e-14)
    np.testing.assert_allclose(Z @ r.beta, r.g, atol=1e-8)
    assert np.linalg.norm(Z.T @ r.residual) <= 1e-8 * max(1.0, np.linalg.norm(Z) * np.linalg.norm(f))
    np.testing.assert_allclose(r.beta, np.linalg.pinv(Z) @ f, atol=1e-6)  # minimum norm
    assert r.rank == np.linalg.matrix_rank(Z)


def test_orthonormal_basis_rank_tolerance():
    H = random_features(8, 5, 2, rank=3)
    Q = orthonormal_basis(H)
    assert Q.shape == (8, 3)
    np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-13)
    np.testing.assert_allclose(Q @ Q.T @ H, H, atol=1e-12)
    H2 = H.copy()
    H2[:, 0] += 1e-9 * np.random.default_rng(0).standard_normal(8)
    assert orthonormal_basis(H2).shape[1] == 4
    assert orthonormal_basis(H2, rtol=1e-6).shape[1] == 3
    assert orthonormal_basis(np.zeros((4, 2))).shape == (4, 0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda U: captured_features(np.full((6, 2), np.nan), U), "H contains NaN"),
        (lambda U: captured_features(np.ones((6, 0)), U), "H must have at least 1 column"),
        (lambda U: captured_features(np.ones((5, 2)), U), "H must have 6 rows"),
        (lambda U: coverage_gap(np.ones((6, 2)) * np.inf, U), "Z contains inf"),
        (lambda U: coverage_gap(np.ones((6, 2)), U * 2), "U_K must have orthonormal columns"),
        (lambda U: coverage_deficit(np.ones((6, 2)), np.ones((6, 7))), "U_K must have at most"),
        (lambda U: leverage_scores(np.ones((3, 3, 3))), "U_K must be a 2-D"),
        (lambda U: principal_angles(np.ones((6, 2)), np.ones((5, 2))), "B must have 6 rows"),
        (lambda U: readout(np.ones((6, 2)), np.ones(5)), "f must have length 6"),
    ],
)
def test_validation_names_argument(call, match):
    with pytest.raises(InputError, match=match):
        call(random_basis(6, 2, 0))
