"""Networks: forward pass (plain and Rem 5.7 skips), Prop 3.3, Thm 5.1, Prop 5.5."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating import InputError
from relu_gating.coverage.bounds import coverage_ceiling, row_partition
from relu_gating.coverage.metrics import captured_features, coverage_gap
from relu_gating.layers.networks import (
    class_spanning_neurons,
    copy_neurons,
    forward,
    layer_input,
    preserving_layer,
    relu,
)

from _instances import duplicated_rows, random_basis, random_features

SETTINGS = settings(derandomize=True, deadline=None, max_examples=60)


def _in_span(Y, B, atol=1e-8):
    """Every column of Y lies in col(B) (least-squares oracle)."""
    C, *_ = np.linalg.lstsq(B, Y, rcond=None)
    return np.linalg.norm(B @ C - Y) <= atol * max(1.0, np.linalg.norm(Y))


def _random_net(d, widths, seed, skip):
    rng = np.random.default_rng(seed)
    Ws, bs, m = [], [], d
    for w in widths:
        Ws.append(rng.standard_normal((m, w)))
        bs.append(rng.standard_normal(w))
        m = m + w if skip else w
    return Ws, bs


# ---------------------------------------------------------------- forward pass


def test_forward_by_hand():
    X = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.0]])
    W1 = np.array([[1.0, -1.0, 0.0], [0.5, 0.0, 2.0]])
    b1 = np.array([0.0, 0.5, -1.0])
    W2 = np.array([[1.0], [-1.0], [1.0]])
    b2 = np.array([-0.25])
    net = forward(X, [W1, W2], [b1, b2])
    H1 = np.maximum(X @ W1 + b1, 0)
    np.testing.assert_array_equal(net.layers[1], H1)
    np.testing.assert_array_equal(net.layers[2], np.maximum(H1 @ W2 + b2, 0))
    np.testing.assert_array_equal(net.readout, np.column_stack([net.layers[2], np.ones(3)]))
    np.testing.assert_array_equal(net.phi(2), np.column_stack([H1, np.ones(3)]))
    assert net.depth == 2 and not net.skip
    skipnet = forward(X, [W1, np.vstack([W2, W2[:2]])], [b1, b2], skip=True)
    np.testing.assert_array_equal(skipnet.layers[1], np.hstack([X, H1]))
    R2 = np.maximum(layer_input(skipnet.layers[1]) @ np.vstack([W2, W2[:2], b2[None]]), 0)
    np.testing.assert_allclose(skipnet.layers[2], np.hstack([X, H1, R2]))


def test_forward_validation():
    X = np.ones((4, 2))
    with pytest.raises(InputError, match=r"weights\[1\] must have 3 rows"):
        forward(X, [np.ones((2, 3)), np.ones((2, 1))], [np.zeros(3), np.zeros(1)])
    with pytest.raises(InputError, match=r"biases\[0\] must have length 3"):
        forward(X, [np.ones((2, 3))], [np.zeros(2)])
    with pytest.raises(InputError, match="same length"):
        forward(X, [np.ones((2, 3))], [])
    with pytest.raises(InputError, match="X contains NaN"):
        forward(np.full((3, 2), np.nan), [], [])
    with pytest.raises(InputError, match="layer must be"):
        forward(X, [], []).phi(1)


# ---------------------------------------------------------------- Rem 5.7


@SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(5, 20), depth=st.integers(1, 4), K=st.integers(1, 5))
def test_rem_5_7_skips_monotone(seed, n, depth, K):
    X = random_features(n, 2, seed)
    U = random_basis(n, min(K, n), seed + 1)
    widths = np.random.default_rng(seed).integers(1, 4, depth)
    net = forward(X, *_random_net(2, widths, seed, True), skip=True)
    gaps = [coverage_gap(layer_input(H), U) for H in net.layers]
    caps = [captured_features(layer_input(H), U) for H in net.layers]
    assert np.all(np.diff(gaps) <= 1e-9)
    assert np.all(np.diff(caps) >= -1e-9)
    for l in range(1, depth + 1):
        assert _in_span(net.phi(l), net.readout if l == depth else net.phi(l + 1))
    # distinct rows stay distinct
    assert row_partition(net.layers[-1]).max() + 1 == row_partition(X).max() + 1


# ---------------------------------------------------------------- Prop 3.3


@SETTINGS
@given(z=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=20))
def test_prop_3_3_a(z):
    z = np.array(z)
    np.testing.assert_array_equal(relu(z) - relu(-z), z)
    assert _in_span(z[:, None], np.column_stack([relu(z), relu(-z)]), atol=1e-12)


@SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(4, 15), d=st.integers(1, 4), K=st.integers(1, 5))
def test_prop_3_3_b_c_copy_neurons(seed, n, d, K):
    X = random_features(n, d, seed)
    U = random_basis(n, min(K, n), seed + 1)
    # (c) first layer: 2d neurons +-e_k, zero bias
    W1, b1 = copy_neurons(X, first_layer=True)
    assert W1.shape == (d, 2 * d)
    net1 = forward(X, [W1], [b1])
    assert _in_span(layer_input(X), net1.readout)
    assert coverage_gap(net1.readout, U) <= coverage_gap(layer_input(X), U) + 1e-9
    # (b) later layer: m neurons e_k reproduce the nonnegative H_{l-1} exactly
    H1 = net1.layers[1]
    rng = np.random.default_rng(seed)
    Wextra = rng.standard_normal((2 * d, 3))
    W2, b2 = copy_neurons(H1)
    net = forward(X, [W1, np.hstack([W2, Wextra])], [b1, np.concatenate([b2, rng.standard_normal(3)])])
    np.testing.assert_array_equal(net.layers[2][:, : 2 * d], H1)
    assert _in_span(layer_input(H1), net.readout)
    # consequence: s_K nonincreasing across the layers
    gaps = [coverage_gap(layer_input(H), U) for H in net.layers]
    assert gaps[0] + 1e-9 >= gaps[1] and gaps[1] + 1e-9 >= gaps[2]
    with pytest.raises(InputError, match="H_prev must be nonnegative"):
        copy_neurons(X - X.max() - 1.0)


# ---------------------------------------------------------------- Thm 5.1


@SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(3, 18), q=st.integers(1, 18), d=st.integers(1, 4))
def test_thm_5_1_span_is_V_P(seed, n, q, d):
    q = min(q, n)
    Hprev = duplicated_rows(n, d, q, seed, nonnegative=True)
    Phi = layer_input(Hprev)
    labels = row_partition(Hprev)
    E = np.zeros((n, q))
    E[np.arange(n), labels] = 1.0
    # (a) every neuron is constant on the classes
    rng = np.random.default_rng(seed)
    V = relu(Phi @ rng.standard_normal((Phi.shape[1], 10)))
    assert _in_span(V, E)
    # (b) q neurons sharing one direction span V_P exactly
    Theta = class_spanning_neurons(Hprev, seed=seed)
    assert Theta.shape == (d + 1, q)
    np.testing.assert_allclose(Theta[:-1], np.repeat(Theta[:-1, :1], q, axis=1))  # one shared direction
    N = relu(Phi @ Theta)
    assert np.linalg.matrix_rank(N) == q
    assert _in_span(N, E) and _in_span(E, N, atol=1e-6)
    # triangular in the class-indicator basis, classes ordered by projection t_c, positive diagonal
    C = np.linalg.lstsq(E, N, rcond=None)[0]  # C[c, k] = value of neuron k on class c
    reps = np.array([Hprev[labels == c][0] for c in range(q)])
    T = C[np.argsort(reps @ Theta[:-1, 0])]
    np.testing.assert_allclose(np.triu(T, 1), 0.0, atol=1e-12)
    assert np.all(np.diag(T) > 0)
    U = random_basis(n, min(3, n), seed + 2)
    np.testing.assert_allclose(captured_features(N, U), coverage_ceiling(Hprev, U).value, atol=1e-8)


# ---------------------------------------------------------------- Prop 5.5


@SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(6, 20), d=st.integers(1, 4), K=st.integers(1, 6))
def test_prop_5_5_preserving_layer(seed, n, d, K):
    K = min(K, n)
    X = random_features(n, d, seed)
    Phi = layer_input(X)
    U = random_basis(n, K, seed + 1)
    layer = preserving_layer(Phi, U, seed=seed)
    r = min(K, np.linalg.matrix_rank(Phi))
    assert layer.r == r and layer.Theta.shape == (Phi.shape[1], 2 * r + 2)
    np.testing.assert_allclose(Phi @ layer.Theta[:, 0 : 2 * r : 2], layer.principal_vectors, atol=1e-9)
    # principal vectors retain N_K(Phi) (Lemma 3.5 (i))
    np.testing.assert_allclose(captured_features(layer.principal_vectors, U), captured_features(Phi, U), atol=1e-9)
    H = relu(Phi @ layer.Theta)
    Z = layer_input(H)
    assert captured_features(Z, U) >= captured_features(Phi, U) - 1e-9
    assert coverage_gap(Z, U) <= coverage_gap(Phi, U) + 1e-9
    assert row_partition(H).max() + 1 == n  # rows stay distinct


def test_prop_5_5_requires_distinct_rows():
    Phi = layer_input(np.array([[0.0], [0.0], [1.0]]))
    with pytest.raises(InputError, match="rows of Phi must be pairwise distinct"):
        preserving_layer(Phi, random_basis(3, 1, 0))
