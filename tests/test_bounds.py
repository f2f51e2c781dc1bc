"""The paper's bounds: Cor 3.1, Rem 6.1, Prop 4.1, Thm 5.13, Cor 5.2 (hypothesis, seeded)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating import InputError
from relu_gating.coverage.bounds import (
    active_set_bound,
    coverage_ceiling,
    ky_fan_limits,
    row_partition,
    target_coverage_bound,
)
from relu_gating.coverage.metrics import captured_features, coverage_gap, rayleigh_quotient
from relu_gating.layers.networks import forward, layer_input, relu

from _instances import duplicated_rows, moons_problem, random_basis, random_features, random_neuron

SETTINGS = settings(derandomize=True, deadline=None, max_examples=60)


def _graph_instance(seed, n, K, normalized):
    X, L, b = moons_problem(n, K, seed, normalized=normalized)
    return X, L.toarray(), b


# ---------------------------------------------------------------- Cor 3.1 and Rem 6.1


@SETTINGS
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(12, 30),
    K=st.integers(1, 6),
    width=st.integers(1, 8),
    normalized=st.booleans(),
    smooth=st.booleans(),
)
def test_cor_3_1_and_rem_6_1(seed, n, K, width, normalized, smooth):
    X, L, b = _graph_instance(seed, n, K, normalized)
    rng = np.random.default_rng(seed)
    Z = layer_input(relu(X @ rng.standard_normal((2, width)) + rng.standard_normal(width)))
    # a smooth target (low eigenvectors plus a little noise) or a rough one
    f = b.U_K @ rng.standard_normal(K) + (0.1 if smooth else 1.0) * rng.standard_normal(n)
    t = target_coverage_bound(Z, f, b.U_K, L=L, next_eigenvalue=b.next_eigenvalue)
    # independent recomputation of every term
    beta, *_ = np.linalg.lstsq(Z, f, rcond=None)
    resid = np.linalg.norm(Z @ beta - f)
    PK = b.U_K @ b.U_K.T
    s = coverage_gap(Z, b.U_K)
    np.testing.assert_allclose(t.residual_norm, resid, atol=1e-9)
    np.testing.assert_allclose(t.low_term, s * np.linalg.norm(PK @ f), atol=1e-9)
    np.testing.assert_allclose(t.high_term, np.linalg.norm(f - PK @ f), atol=1e-9)
    tol = 1e-9 * (1 + np.linalg.norm(f))
    assert t.residual_norm <= t.projection_bound + tol  # Cor 3.1, first form
    if b.n_components > K:  # lambda_{K+1} = 0: the energy form does not apply
        assert b.next_eigenvalue == 0.0 and np.isnan(t.energy_term) and np.isnan(t.deficit_bound)
        return
    E = np.sqrt(f @ L @ f)
    np.testing.assert_allclose(t.energy_term, E / np.sqrt(b.next_eigenvalue), rtol=1e-9)
    np.testing.assert_allclose(t.smoothness_bound, s * np.linalg.norm(f) + E / np.sqrt(b.next_eigenvalue), rtol=1e-9)
    NK = captured_features(Z, b.U_K)
    np.testing.assert_allclose(
        t.deficit_bound, np.sqrt(max(K - NK, 0.0)) * np.linalg.norm(f) + E / np.sqrt(b.next_eigenvalue), rtol=1e-9
    )
    # Cor 3.1: ||g - f|| <= s||P_K f|| + ||P_K^perp f|| <= s||f|| + E(f)/sqrt(lambda_{K+1})
    assert t.projection_bound <= t.smoothness_bound + tol
    # Rem 6.1
    assert t.residual_norm <= t.deficit_bound + tol
    assert t.smoothness_bound <= t.deficit_bound + tol


def test_cor_3_1_is_tight_when_f_is_low_frequency():
    """f in span(U_K) and Z = U_K: both sides vanish; Z = ones: residual = s ||P_K f|| for f = u_2."""
    X, L, b = _graph_instance(0, 25, 3, False)
    f = b.U_K[:, 1]
    t = target_coverage_bound(np.ones((25, 1)), f, b.U_K, L=L, next_eigenvalue=b.next_eigenvalue)
    np.testing.assert_allclose(t.coverage_gap, 1.0, atol=1e-12)
    np.testing.assert_allclose(t.residual_norm, t.projection_bound, atol=1e-12)
    t0 = target_coverage_bound(b.U_K, f, b.U_K)
    assert t0.residual_norm < 1e-12 and np.isnan(t0.energy_term)
    with pytest.raises(InputError, match="next_eigenvalue"):
        target_coverage_bound(b.U_K, f, b.U_K, L=L)


# ---------------------------------------------------------------- Prop 4.1


@SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(10, 30), K=st.integers(1, 6), normalized=st.booleans())
def test_prop_4_1_active_set_limits(seed, n, K, normalized):
    X, L, b = _graph_instance(seed, n, K, normalized)
    h = random_neuron(layer_input(X), seed)
    A = h > 0
    bound = active_set_bound(b.U_K, A, L=L)
    UA = b.U_K[A]
    np.testing.assert_allclose(bound.spectral, np.linalg.svd(UA, compute_uv=False)[0] ** 2, atol=1e-12)
    np.testing.assert_allclose(bound.leverage, min(1.0, np.sum(UA**2)), atol=1e-12)
    np.testing.assert_allclose(bound.dirichlet, np.linalg.eigvalsh(L[np.ix_(A, A)])[0], atol=1e-10)
    nB = int(n - A.sum())
    np.testing.assert_allclose(bound.interlacing, np.linalg.eigvalsh(L)[nB], atol=1e-9)
    # the inequalities of Prop 4.1
    assert captured_features(h, b.U_K) <= bound.spectral + 1e-10
    assert bound.spectral <= bound.leverage + 1e-10
    assert rayleigh_quotient(L, h) >= bound.dirichlet - 1e-10
    assert bound.dirichlet <= bound.interlacing + 1e-9
    # also index input and full support
    np.testing.assert_allclose(active_set_bound(b.U_K, np.flatnonzero(A)).spectral, bound.spectral)
    assert active_set_bound(b.U_K, np.ones(n, bool)).spectral == pytest.approx(1.0)


def test_prop_4_1_validation():
    U = random_basis(5, 2, 0)
    with pytest.raises(InputError, match="active must be nonempty"):
        active_set_bound(U, np.zeros(5, bool))
    with pytest.raises(InputError, match="active must be a boolean mask of length"):
        active_set_bound(U, np.ones(4, bool))
    with pytest.raises(InputError, match="active indices"):
        active_set_bound(U, np.array([0, 7]))
    with pytest.raises(InputError, match="L must be 5 x 5"):
        active_set_bound(U, np.array([0]), L=np.array([[1.0, -1, 0], [-1, 2, -1], [0, -1, 1]]))


# ---------------------------------------------------------------- Thm 5.13


@SETTINGS
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(6, 16),
    K=st.integers(1, 6),
    m=st.integers(1, 5),
    t=st.integers(0, 6),
    inside=st.booleans(),
)
def test_thm_5_13_limits(seed, n, K, m, t, inside):
    K = min(K, n)
    U = random_basis(n, K, seed)
    Phi = layer_input(random_features(n, m, seed + 1))
    lim = ky_fan_limits(Phi, U)
    # independent etas: singular values of (I - Phi Phi^+) U_K
    M = U - Phi @ (np.linalg.pinv(Phi) @ U)
    np.testing.assert_allclose(lim.etas, np.linalg.svd(M, compute_uv=False), atol=1e-9)
    np.testing.assert_allclose(np.sum(lim.etas**2), K - captured_features(Phi, U), atol=1e-9)
    rng = np.random.default_rng(seed + 2)
    # Z with col(Z) inside col(Phi) + T, dim T <= t (optionally a strict subspace)
    T = rng.standard_normal((n, t))
    Z = np.hstack([Phi @ rng.standard_normal((Phi.shape[1], 3)) if inside else Phi, T])
    if inside:
        Z = np.hstack([Z, Phi[:, -1:]])  # bias column
    gain = captured_features(Z, U) - captured_features(Phi, U)
    assert gain <= lim.gain_bound(t) + 1e-9
    assert coverage_gap(Z, U) >= lim.gap_bound(t) - 1e-9
    # attained by the top t left singular vectors of M_Phi (without the ReLU constraint)
    Zs = np.hstack([Phi, lim.directions[:, :t]]) if t else Phi
    np.testing.assert_allclose(captured_features(Zs, U) - captured_features(Phi, U), lim.gain_bound(t), atol=1e-8)
    np.testing.assert_allclose(coverage_gap(Zs, U), lim.gap_bound(t), atol=1e-8)
    np.testing.assert_allclose(lim.benchmark()[min(t, K)], lim.gain_bound(t), atol=1e-12)


def test_thm_5_13_t_validation():
    lim = ky_fan_limits(layer_input(random_features(8, 2, 0)), random_basis(8, 3, 0))
    with pytest.raises(InputError, match="t must be"):
        lim.gain_bound(-1)
    assert lim.gap_bound(10) == 0.0


# ---------------------------------------------------------------- Cor 5.2


@SETTINGS
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(5, 16),
    q=st.integers(1, 16),
    K=st.integers(1, 6),
    depth=st.integers(1, 3),
    skip=st.booleans(),
)
def test_cor_5_2_ceiling(seed, n, q, K, depth, skip):
    q, K = min(q, n), min(K, n)
    U = random_basis(n, K, seed)
    Hprev = duplicated_rows(n, 3, q, seed)
    ceil = coverage_ceiling(Hprev, U)
    assert ceil.q == q
    # oracle: N_K of the class indicator matrix, and the formula K - ||(I - Pi_P) U_K||_F^2
    labels = row_partition(Hprev)
    E = np.zeros((n, q))
    E[np.arange(n), labels] = 1.0
    np.testing.assert_allclose(ceil.value, captured_features(E, U), atol=1e-10)
    PiP = E @ np.linalg.pinv(E)
    np.testing.assert_allclose(ceil.value, K - np.linalg.norm(U - PiP @ U, "fro") ** 2, atol=1e-10)
    np.testing.assert_allclose(ceil.basis().T @ ceil.basis(), np.eye(q), atol=1e-12)
    # every later layer's readout is capped
    rng = np.random.default_rng(seed + 3)
    widths = rng.integers(1, 2 * n, depth)
    Ws, bs, m = [], [], 3
    for w in widths:
        Ws.append(rng.standard_normal((m, w)))
        bs.append(rng.standard_normal(w))
        m = m + w if skip else w
    net = forward(Hprev, Ws, bs, skip=skip)
    assert captured_features(net.readout, U) <= ceil.value + 1e-9
    if q == n:
        np.testing.assert_allclose(ceil.value, K, atol=1e-12)


def test_row_partition_first_occurrence_order():
    H = np.array([[2.0, 1], [0, 0], [2, 1], [5, 5], [0, 0]])
    np.testing.assert_array_equal(row_partition(H), [0, 1, 0, 2, 1])
