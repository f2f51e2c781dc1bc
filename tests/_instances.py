"""Seeded instance generators shared by the tests (read-only for other engineers).

Every function is a pure function of its arguments; samples are rows.
"""

from __future__ import annotations

import warnings

import numpy as np

from relu_gating.data.datasets import two_moons
from relu_gating.spectral.graphs import laplacian, sample_graph
from relu_gating.layers.networks import layer_input, relu
from relu_gating.spectral.spectra import SpectralTieWarning, low_frequency_basis

# ---------------------------------------------------------------- named graphs


def path_graph(n: int) -> np.ndarray:
    """Adjacency of the path P_n (dense)."""
    W = np.zeros((n, n))
    i = np.arange(n - 1)
    W[i, i + 1] = W[i + 1, i] = 1.0
    return W


def cycle_graph(n: int) -> np.ndarray:
    """Adjacency of the cycle C_n (dense), n >= 3."""
    W = path_graph(n)
    W[0, n - 1] = W[n - 1, 0] = 1.0
    return W


def complete_graph(n: int) -> np.ndarray:
    return np.ones((n, n)) - np.eye(n)


def two_cliques(a: int, b: int) -> np.ndarray:
    """Disjoint union K_a + K_b (vertices 0..a-1 and a..a+b-1)."""
    W = np.zeros((a + b, a + b))
    W[:a, :a] = complete_graph(a)
    W[a:, a:] = complete_graph(b)
    return W


# known spectra (ascending)
def path_spectrum(n: int) -> np.ndarray:
    return np.sort(2 - 2 * np.cos(np.pi * np.arange(n) / n))


def path_sym_spectrum(n: int) -> np.ndarray:
    return np.sort(1 - np.cos(np.pi * np.arange(n) / (n - 1)))


def cycle_spectrum(n: int) -> np.ndarray:
    return np.sort(2 - 2 * np.cos(2 * np.pi * np.arange(n) / n))


# ---------------------------------------------------------------- random data


def random_basis(n: int, K: int, seed: int) -> np.ndarray:
    """A random (n, K) matrix with orthonormal columns."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, K)))
    return Q


def random_features(n: int, N: int, seed: int, *, rank: int | None = None) -> np.ndarray:
    """Random (n, N) features, optionally of lower rank."""
    rng = np.random.default_rng(seed)
    if rank is None:
        return rng.standard_normal((n, N))
    return rng.standard_normal((n, rank)) @ rng.standard_normal((rank, N))


def moons_problem(n: int, K: int, seed: int, *, normalized: bool = False, n_neighbors: int = 6):
    """(X, L, basis) for noisy two moons with a knn graph."""
    X = two_moons(n, noise=0.1, seed=seed)
    L = laplacian(sample_graph(X, kind="knn", n_neighbors=n_neighbors), kind="sym" if normalized else "combinatorial")
    with warnings.catch_warnings():  # ties at lambda_K are legitimate instances here
        warnings.simplefilter("ignore", SpectralTieWarning)
        return X, L, low_frequency_basis(L, K)


def random_neuron(Phi: np.ndarray, seed: int) -> np.ndarray:
    """A nonzero ReLU neuron relu(Phi theta) with a random theta."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        h = relu(Phi @ rng.standard_normal(Phi.shape[1]))
        if np.linalg.norm(h) > 0:
            return h
    raise RuntimeError("no active neuron found")


def duplicated_rows(n: int, d: int, q: int, seed: int, *, nonnegative: bool = False) -> np.ndarray:
    """(n, d) features with q distinct rows (each class nonempty), shuffled."""
    rng = np.random.default_rng(seed)
    reps = rng.standard_normal((q, d))
    if nonnegative:
        reps = np.abs(reps)
    labels = np.concatenate([np.arange(q), rng.integers(0, q, n - q)])
    rng.shuffle(labels)
    return reps[labels]


def phi_of(X: np.ndarray) -> np.ndarray:
    return layer_input(X)
