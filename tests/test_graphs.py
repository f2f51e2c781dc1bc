"""Sample graphs and Laplacians: hand-computed graphs, brute-force oracles, validation."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph
from scipy.spatial.distance import cdist

from relu_gating import InputError
from relu_gating.data.datasets import blobs, circles, two_moons
from relu_gating.spectral.graphs import laplacian, sample_graph

from _instances import (
    complete_graph,
    cycle_graph,
    cycle_spectrum,
    path_graph,
    path_spectrum,
    path_sym_spectrum,
    two_cliques,
)

# ------------------------------------------------------------------ Laplacians


def test_path_laplacian_entries_by_hand():
    L = laplacian(path_graph(4))
    expected = np.array([[1, -1, 0, 0], [-1, 2, -1, 0], [0, -1, 2, -1], [0, 0, -1, 1]], float)
    np.testing.assert_array_equal(L, expected)
    Ls = laplacian(path_graph(3), kind="sym")
    r = 1 / np.sqrt(2)
    np.testing.assert_allclose(Ls, [[1, -r, 0], [-r, 1, -r], [0, -r, 1]], atol=1e-15)


@pytest.mark.parametrize("n", [2, 5, 9])
def test_path_spectra(n):
    np.testing.assert_allclose(np.linalg.eigvalsh(laplacian(path_graph(n))), path_spectrum(n), atol=1e-12)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(laplacian(path_graph(n), kind="sym")), path_sym_spectrum(n), atol=1e-12
    )


@pytest.mark.parametrize("n", [3, 6, 11])
def test_cycle_spectra(n):
    np.testing.assert_allclose(np.linalg.eigvalsh(laplacian(cycle_graph(n))), cycle_spectrum(n), atol=1e-12)
    # 2-regular: L_sym = L / 2
    np.testing.assert_allclose(
        np.linalg.eigvalsh(laplacian(cycle_graph(n), kind="sym")), cycle_spectrum(n) / 2, atol=1e-12
    )


def test_complete_and_two_cliques_spectra():
    n = 6
    np.testing.assert_allclose(np.linalg.eigvalsh(laplacian(complete_graph(n))), [0] + [n] * (n - 1), atol=1e-12)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(laplacian(complete_graph(n), kind="sym")), [0] + [n / (n - 1)] * (n - 1), atol=1e-12
    )
    a, b = 3, 5
    W = two_cliques(a, b)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(laplacian(W)), [0, 0] + [a] * (a - 1) + [b] * (b - 1), atol=1e-12
    )
    np.testing.assert_allclose(
        np.linalg.eigvalsh(laplacian(W, kind="sym")),
        np.sort([0, 0] + [a / (a - 1)] * (a - 1) + [b / (b - 1)] * (b - 1)),
        atol=1e-12,
    )


def test_sparse_in_sparse_out_and_matches_csgraph():
    W = sp.csr_matrix(cycle_graph(7) * np.arange(1, 8)[:, None] * np.arange(1, 8)[None, :])
    L = laplacian(W)
    assert sp.issparse(L)
    np.testing.assert_allclose(L.toarray(), csgraph.laplacian(W.toarray()), atol=1e-12)
    np.testing.assert_allclose(
        laplacian(W, kind="sym").toarray(), csgraph.laplacian(W.toarray(), normed=True), atol=1e-12
    )


@settings(derandomize=True, deadline=None, max_examples=25)
@given(n=st.integers(2, 12), seed=st.integers(0, 10_000))
def test_quadratic_forms_equation_1(n, seed):
    """x^T L x = sum_{i<j} w_ij (x_i - x_j)^2 and the L_sym version (paper eq. (1))."""
    rng = np.random.default_rng(seed)
    W = rng.uniform(0, 1, (n, n)) * (rng.uniform(size=(n, n)) < 0.6)
    W = np.triu(W, 1)
    W = W + W.T
    W[np.arange(n - 1), np.arange(1, n)] += 0.1  # connected through the path: degrees > 0
    W[np.arange(1, n), np.arange(n - 1)] += 0.1
    x = rng.standard_normal(n)
    d = W.sum(1)
    iu = np.triu_indices(n, 1)
    brute = np.sum(W[iu] * (x[iu[0]] - x[iu[1]]) ** 2)
    brute_sym = np.sum(W[iu] * (x[iu[0]] / np.sqrt(d[iu[0]]) - x[iu[1]] / np.sqrt(d[iu[1]])) ** 2)
    np.testing.assert_allclose(x @ laplacian(W) @ x, brute, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x @ laplacian(W, kind="sym") @ x, brute_sym, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "W, match",
    [
        (np.array([[0, 1], [2, 0]], float), "symmetric"),
        (np.array([[0, -1], [-1, 0]], float), "nonnegative"),
        (np.array([[0, np.nan], [np.nan, 0]]), "NaN"),
        (np.array([[0, np.inf], [np.inf, 0]]), "inf|NaN"),
        (np.zeros((2, 3)), "square"),
        (np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], float), "zero-degree vertex 2"),
        (np.zeros((3,)), "2-D"),
    ],
)
def test_laplacian_rejects_bad_weights(W, match):
    with pytest.raises(InputError, match="W") as info:
        laplacian(W)
    assert info.match(match)
    if W.ndim == 2 and W.shape[0] == W.shape[1]:
        with pytest.raises(InputError, match=match):
            laplacian(sp.csr_matrix(W))


# ------------------------------------------------------------------ sample graphs


def _check_graph(W, n):
    assert sp.issparse(W) and W.shape == (n, n)
    A = W.toarray()
    np.testing.assert_array_equal(A, A.T)
    assert A.min() >= 0
    np.testing.assert_array_equal(np.diag(A), 0)
    assert A.sum(1).min() > 0
    return A


@pytest.mark.parametrize("k", [1, 3, 7])
def test_knn_graph_matches_brute_force(k):
    X = blobs(40, centers=3, seed=1)
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    nn = np.argsort(D, axis=1, kind="stable")[:, :k]
    directed = np.zeros((40, 40), bool)
    directed[np.repeat(np.arange(40), k), nn.ravel()] = True
    A = _check_graph(sample_graph(X, kind="knn", n_neighbors=k), 40)
    np.testing.assert_array_equal(A > 0, directed | directed.T)
    np.testing.assert_array_equal(A[A > 0], 1.0)
    sig = 0.7
    Ag = sample_graph(X, kind="knn", n_neighbors=k, sigma=sig).toarray()
    np.testing.assert_allclose(Ag[A > 0], np.exp(-(cdist(X, X)[A > 0] ** 2) / (2 * sig**2)))


def test_mutual_knn_is_intersection():
    X = two_moons(40, seed=1)
    k = 6
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    nn = np.argsort(D, axis=1, kind="stable")[:, :k]
    directed = np.zeros((40, 40), bool)
    directed[np.repeat(np.arange(40), k), nn.ravel()] = True
    Am = _check_graph(sample_graph(X, kind="knn", n_neighbors=k, mutual=True), 40)
    np.testing.assert_array_equal(Am > 0, directed & directed.T)
    assert (directed & directed.T).sum() < (directed | directed.T).sum()


def test_gaussian_graph_formula_and_default_sigma():
    X = circles(30, seed=2)
    D = cdist(X, X)
    A = _check_graph(sample_graph(X, kind="gaussian", sigma=0.5), 30)
    E = np.exp(-(D**2) / (2 * 0.25))
    np.fill_diagonal(E, 0)
    np.testing.assert_allclose(A, E, rtol=1e-12)
    med = np.median(D[np.triu_indices(30, 1)])
    A2 = sample_graph(X, kind="gaussian").toarray()
    E2 = np.exp(-(D**2) / (2 * med**2))
    np.fill_diagonal(E2, 0)
    np.testing.assert_allclose(A2, E2, rtol=1e-12)


def test_epsilon_graph_brute_force_and_default_is_connected():
    X = two_moons(50, seed=3)
    D = cdist(X, X)
    A = _check_graph(sample_graph(X, kind="epsilon", epsilon=0.5), 50)
    expected = (D <= 0.5) & ~np.eye(50, dtype=bool)
    np.testing.assert_array_equal(A > 0, expected)
    A0 = sample_graph(X, kind="epsilon")
    assert csgraph.connected_components(A0)[0] == 1
    # the default radius is the smallest that connects: slightly smaller disconnects
    mst = csgraph.minimum_spanning_tree(D).toarray().max()
    smaller = (D <= mst * (1 - 1e-9)) & ~np.eye(50, dtype=bool)
    assert csgraph.connected_components(smaller.astype(float))[0] > 1


def test_duplicate_points_are_handled():
    X = np.array([[0.0, 0], [0, 0], [1, 0], [1, 0], [0.5, 3]])
    _check_graph(sample_graph(X, kind="knn", n_neighbors=2), 5)
    _check_graph(sample_graph(X, kind="gaussian"), 5)
    _check_graph(sample_graph(X, kind="epsilon"), 5)


def test_zero_degree_vertex_is_named():
    X = np.array([[0.0, 0], [0.1, 0], [0.2, 0], [50.0, 50.0]])
    with pytest.raises(InputError, match=r"vertex 3.*epsilon"):
        sample_graph(X, kind="epsilon", epsilon=1.0)
    with pytest.raises(InputError, match=r"vertex 3.*n_neighbors"):
        sample_graph(X, kind="knn", n_neighbors=2, mutual=True)
    with pytest.raises(InputError, match=r"vertex 3.*sigma"):
        sample_graph(X, kind="gaussian", sigma=0.01)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(X=np.array([[0.0, np.nan], [1, 1]])), "X contains NaN"),
        (dict(X=np.array([[0.0, np.inf], [1, 1]])), "X contains inf"),
        (dict(X=np.zeros(5)), "X must be a 2-D"),
        (dict(X=np.zeros((1, 2))), "X must have at least 2"),
        (dict(X=np.zeros((5, 0))), "X must have at least 1 column"),
        (dict(X=np.eye(4), kind="grid"), "kind"),
        (dict(X=np.eye(4), n_neighbors=4), "n_neighbors"),
        (dict(X=np.eye(4), n_neighbors=0), "n_neighbors"),
        (dict(X=np.eye(4), n_neighbors=2.5), "n_neighbors"),
        (dict(X=np.eye(4), kind="gaussian", sigma=-1.0), "sigma"),
        (dict(X=np.eye(4), kind="epsilon", epsilon=0.0), "epsilon"),
    ],
)
def test_sample_graph_validation(kwargs, match):
    with pytest.raises(InputError, match=match):
        sample_graph(**kwargs)


def test_datasets_are_seeded_and_shaped():
    np.testing.assert_array_equal(two_moons(31, seed=4), two_moons(31, seed=4))
    assert not np.array_equal(two_moons(31, seed=4), two_moons(31, seed=5))
    assert two_moons(31).shape == (31, 2) and circles(20).shape == (20, 2)
    assert blobs(12, centers=4, dim=3).shape == (12, 3)
    with pytest.raises(InputError, match="n must"):
        two_moons(1)
    with pytest.raises(InputError, match="noise"):
        circles(10, noise=-1)
    with pytest.raises(InputError, match="centers"):
        blobs(5, centers=6)
