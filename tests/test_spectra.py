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


# ---------------------------------------------------------------------- the pipeline from samples
_BUILT = [("knn", {}), ("knn", {"n_neighbors": 6, "mutual": True}), ("knn", {"sigma": 0.7}), ("gaussian", {}),
          ("epsilon", {}), ("epsilon", {"sigma": 2.0})]  # sigma in units of the data's scale


@pytest.mark.parametrize("graph, opts", _BUILT)
@pytest.mark.parametrize("scale", [1e-150, 1.0, 1e150])
def test_a_graph_built_from_samples_passes_the_checks_it_skips(graph, opts, scale):
    """The pipeline from samples (``graph_laplacian``, ``laplacian_basis``) skips the checks of a caller's
    graph and Laplacian because what it builds is valid by construction: the checks accept it, change
    nothing (bitwise), and the checked and unchecked bases are the same arrays."""
    from relu_gating.spectral.checks import check_laplacian, check_weights
    from relu_gating.spectral.graphs import graph_laplacian
    from relu_gating.spectral.spectra import laplacian_basis

    rng = np.random.default_rng(11)
    X = np.r_[rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 6.0][rng.permutation(60)] * scale
    X[5] = X[4]  # a duplicate sample
    W = sample_graph(X, kind=graph, **{k: v * scale if k == "sigma" else v for k, v in opts.items()})
    assert (abs(check_weights(W) - W)).nnz == 0
    for kind in ("combinatorial", "sym"):
        L = graph_laplacian(W, kind)
        assert (abs(check_laplacian(L) - L)).nnz == 0 and (abs(laplacian(W, kind=kind) - L)).nnz == 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SpectralTieWarning)
            a, b = laplacian_basis(L, 4), low_frequency_basis(L, 4)
        assert np.array_equal(a.U_K, b.U_K) and np.array_equal(a.eigenvalues, b.eigenvalues)
        assert a.next_eigenvalue == b.next_eigenvalue and a.kind == b.kind


def test_the_sparse_path_of_the_unchecked_basis_is_the_checked_one(monkeypatch):
    """Above ``DENSE_LIMIT`` (lowered here) the shift-inverted ``eigsh`` path: the same arrays either way."""
    from relu_gating.spectral.graphs import graph_laplacian
    from relu_gating.spectral.spectra import laplacian_basis

    monkeypatch.setattr(spectra, "DENSE_LIMIT", 20)
    X = np.random.default_rng(12).normal(size=(80, 2))
    L = graph_laplacian(sample_graph(X), "sym")
    a, b = laplacian_basis(L, 5), low_frequency_basis(L, 5)
    assert a.method == "sparse" and np.array_equal(a.U_K, b.U_K) and np.array_equal(a.eigenvalues, b.eigenvalues)


def test_the_unchecked_basis_still_checks_its_own_arguments():
    from relu_gating.spectral.spectra import laplacian_basis

    L = laplacian(cycle_graph(6))
    with pytest.raises(InputError, match="K"):
        laplacian_basis(sp.csr_matrix(L), 0)
    with pytest.raises(InputError, match="method"):
        laplacian_basis(sp.csr_matrix(L), 2, method="qr")


def test_the_basis_of_a_nearly_disconnected_graph_is_orthonormal():
    """Two clusters joined by one edge of weight ``exp(-72)`` (an epsilon graph, ``sigma = 0.5``): ``lambda_2``
    is below rounding, and ``U_K`` came out with ``max |U^T U - I| = 0.74`` (``relu-gating best-neuron X.npy
    --graph epsilon --sigma 0.5`` then refuses its own ``U_K``)."""
    from relu_gating.data.io import InputData, resolve_problem

    rng = np.random.default_rng(11)
    X = np.r_[rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 6.0][rng.permutation(60)]
    X[5] = X[4]
    U = resolve_problem(InputData(path="x", X=X), graph="epsilon", sigma=0.5).U_K
    assert np.abs(U.T @ U - np.eye(U.shape[1])).max() <= 1e-10


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gap", [5.0, 6.0, 8.0])
def test_a_nearly_disconnected_basis_is_orthonormal_and_spans_eigenvectors(seed, gap):
    """Two clusters ``gap`` apart on an epsilon graph with ``sigma = 0.5``: the edges between them
    weigh ``exp(-gap^2 / 0.5)`` or less, so ``lambda_2`` is at or below rounding. The basis must be
    orthonormal, start with the constant vector, and its columns be eigenvectors of ``L`` to
    rounding (residual against ``||L||``)."""
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(size=(25, 2)), rng.normal(size=(25, 2)) + gap][rng.permutation(50)]
    L = laplacian(sample_graph(X, kind="epsilon", sigma=0.5))
    basis = low_frequency_basis(L, 4)
    U, lam = basis.U_K, basis.eigenvalues
    Ld = L.toarray() if sp.issparse(L) else np.asarray(L)
    scale = np.abs(Ld).sum(axis=1).max()
    assert np.abs(U.T @ U - np.eye(4)).max() <= 1e-10
    assert np.allclose(U[:, 0], 1 / np.sqrt(50), atol=1e-12) and lam[0] == 0.0
    assert np.abs(Ld @ U - U * lam).max() <= 1e-10 * scale
    assert np.all(np.diff(lam) >= 0)
