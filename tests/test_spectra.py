"""Low-frequency bases: known spectra, disconnected graphs, ties, sparse path, validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import subspace_angles

from relu_gating import InputError
from relu_gating.spectral import spectra
from relu_gating.spectral.graphs import laplacian, sample_graph
from relu_gating.data.datasets import two_moons
from relu_gating.spectral.spectra import SpectralTieWarning, low_frequency_basis

from _instances import (
    complete_graph,
    cycle_graph,
    cycle_spectrum,
    path_graph,
    path_spectrum,
    path_sym_spectrum,
    two_cliques,
)


def _check_eigenpairs(L, b):
    L = L.toarray() if sp.issparse(L) else np.asarray(L)
    K = b.U_K.shape[1]
    np.testing.assert_allclose(b.U_K.T @ b.U_K, np.eye(K), atol=1e-12)
    np.testing.assert_allclose(L @ b.U_K, b.U_K * b.eigenvalues, atol=1e-10)
    assert np.all(np.diff(b.eigenvalues) >= -1e-12)


@pytest.mark.parametrize("normalized", [False, True])
def test_path_graph_eigenvalues(normalized):
    n = 9
    L = laplacian(path_graph(n), kind="sym" if normalized else "combinatorial")
    expected = path_sym_spectrum(n) if normalized else path_spectrum(n)
    for K in (1, 4, n):
        b = low_frequency_basis(L, K)
        np.testing.assert_allclose(b.eigenvalues, expected[:K], atol=1e-12)
        _check_eigenpairs(L, b)
        if K < n:
            np.testing.assert_allclose(b.next_eigenvalue, expected[K], atol=1e-12)
        else:
            assert np.isnan(b.next_eigenvalue)
        assert b.n_components == 1 and not b.tie_at_K
        assert b.kind == ("sym" if normalized else "combinatorial")
        assert b.normalized == normalized
    # Fiedler vector of the path: cos(pi (i + 1/2) / n) up to sign (fixed: max |entry| > 0)
    u2 = low_frequency_basis(laplacian(path_graph(n)), 2).U_K[:, 1]
    c = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    c /= np.linalg.norm(c)
    np.testing.assert_allclose(np.abs(u2 @ c), 1.0, atol=1e-12)


@pytest.mark.parametrize("normalized", [False, True])
def test_cycle_graph_eigenvalues_and_ties(normalized):
    n = 8
    L = laplacian(cycle_graph(n), kind="sym" if normalized else "combinatorial")
    expected = cycle_spectrum(n) / (2 if normalized else 1)
    with pytest.warns(SpectralTieWarning, match="lambda_K"):
        b = low_frequency_basis(L, 2)  # lambda_2 = lambda_3
    assert b.tie_at_K
    with warnings.catch_warnings():
        warnings.simplefilter("error", SpectralTieWarning)
        b3 = low_frequency_basis(L, 3)
    assert not b3.tie_at_K
    np.testing.assert_allclose(b3.eigenvalues, expected[:3], atol=1e-12)
    _check_eigenpairs(L, b3)


def test_complete_graph():
    n = 7
    with pytest.warns(SpectralTieWarning):
        b = low_frequency_basis(laplacian(complete_graph(n)), 3)
    np.testing.assert_allclose(b.eigenvalues, [0, n, n], atol=1e-12)
    np.testing.assert_allclose(b.U_K[:, 0], np.full(n, 1 / np.sqrt(n)), atol=1e-15)
    b = low_frequency_basis(laplacian(complete_graph(n), kind="sym"), n)
    np.testing.assert_allclose(b.eigenvalues, [0] + [n / (n - 1)] * (n - 1), atol=1e-12)


@pytest.mark.parametrize("normalized", [False, True])
def test_two_cliques_zero_eigenspace(normalized):
    a, c = 3, 5
    W = two_cliques(a, c)
    W[a:, a:] *= 2.0  # different degrees across components (matters for L_sym)
    L = laplacian(W, kind="sym" if normalized else "combinatorial")
    with pytest.warns(SpectralTieWarning):  # lambda_3 = lambda_4 (clique of 3)
        b = low_frequency_basis(L, 3)
    assert b.n_components == 2
    np.testing.assert_array_equal(b.components, [0] * a + [1] * c)
    np.testing.assert_allclose(b.eigenvalues[:2], 0.0, atol=0)
    deg = W.sum(1)
    for j, block in enumerate([np.arange(a), np.arange(a, a + c)]):
        v = np.zeros(a + c)
        v[block] = np.sqrt(deg[block]) if normalized else 1.0
        np.testing.assert_allclose(b.U_K[:, j], v / np.linalg.norm(v), atol=1e-12)
    _check_eigenpairs(L, b)
    # the next eigenvalue: L: a (= 3) for K_3, 2 * 5 for the doubled K_5; L_sym: 3/2 and 5/4
    expected = 1.25 if normalized else 3.0
    np.testing.assert_allclose(b.eigenvalues[2], expected, atol=1e-12)


def test_deterministic_and_read_only():
    X = two_moons(40, seed=0)
    L = laplacian(sample_graph(X, n_neighbors=5))
    b1, b2 = low_frequency_basis(L, 5), low_frequency_basis(L, 5)
    np.testing.assert_array_equal(b1.U_K, b2.U_K)
    with pytest.raises(ValueError):
        b1.U_K[0, 0] = 1.0


@pytest.mark.parametrize("normalized", [False, True])
def test_sparse_path_agrees_with_dense(normalized, monkeypatch):
    X = two_moons(300, seed=1)
    L = laplacian(sample_graph(X, n_neighbors=8), kind="sym" if normalized else "combinatorial")
    dense = low_frequency_basis(L, 6, method="dense")
    monkeypatch.setattr(spectra, "DENSE_LIMIT", 50)
    auto = low_frequency_basis(L, 6)
    assert auto.method == "sparse" and dense.method == "dense"
    np.testing.assert_allclose(auto.eigenvalues, dense.eigenvalues, atol=1e-9)
    np.testing.assert_allclose(auto.next_eigenvalue, dense.next_eigenvalue, atol=1e-9)
    assert np.max(subspace_angles(auto.U_K, dense.U_K)) < 1e-6
    _check_eigenpairs(L, auto)


def test_sparse_disconnected():
    W = sp.block_diag([sp.csr_matrix(cycle_graph(60)), sp.csr_matrix(path_graph(70))]).tocsr()
    L = laplacian(W)
    b = low_frequency_basis(L, 4, method="sparse")
    assert b.n_components == 2
    expected = np.sort(np.concatenate([cycle_spectrum(60), path_spectrum(70)]))
    np.testing.assert_allclose(b.eigenvalues, expected[:4], atol=1e-9)
    np.testing.assert_allclose(b.next_eigenvalue, expected[4], atol=1e-9)


@pytest.mark.parametrize(
    "L, K, match",
    [
        (laplacian(path_graph(4)), 0, "K must satisfy"),
        (laplacian(path_graph(4)), 5, "K must satisfy"),
        (laplacian(path_graph(4)), 2.0, "K must be an integer"),
        (np.array([[1.0, 1.0], [1.0, 1.0]]), 1, "L is not a graph Laplacian"),
        (np.array([[1.0, -1.0, 0], [-1.0, 1.0, 0], [0, 0, 0]]), 1, "L has a zero-degree vertex 2"),
        (np.array([[1.0, -1.0], [-2.0, 1.0]]), 1, "L must be symmetric"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), 1, "L contains NaN"),
        (np.zeros((2, 3)), 1, "L must be square"),
        (np.array([[2.0, -1.0], [-1.0, 2.0]]), 1, "L is not a graph Laplacian"),
    ],
)
def test_validation(L, K, match):
    with pytest.raises(InputError, match=match):
        low_frequency_basis(L, K)


def test_bad_method():
    with pytest.raises(InputError, match="method"):
        low_frequency_basis(laplacian(path_graph(3)), 1, method="lobpcg")
