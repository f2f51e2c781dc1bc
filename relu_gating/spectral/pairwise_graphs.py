"""The sample graphs read off all pairwise distances (private; :func:`relu_gating.sample_graph` loads
this for ``kind="gaussian"`` and ``kind="epsilon"`` only).

The Gaussian graph is complete, its bandwidth by default the median pairwise distance; the epsilon
graph's radius defaults to the longest edge of a Euclidean minimum spanning tree (the smallest radius
that connects it).  Both take ``X`` already rescaled by ``sample_graph``; the k-nearest-neighbour graph
(a k-d tree query, no pairwise matrix) stays in :mod:`relu_gating.spectral.graphs`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from scipy.spatial import cKDTree
from scipy.spatial.distance import pdist, squareform

from relu_gating.errors import InputError

__all__ = ["gaussian_graph", "epsilon_graph"]


def gaussian_graph(X: np.ndarray, sigma: float | None) -> sp.csr_matrix:
    """The complete graph with :math:`w_{ij} = \\exp(-\\|x_i - x_j\\|^2 / (2\\sigma^2))`, zero diagonal;
    ``sigma`` defaults to the median pairwise distance (the largest where the median is 0, else 1)."""
    if sigma is None:
        d = pdist(X)
        sigma = float(np.median(d)) if d.size else 1.0
        if not sigma > 0:
            sigma = float(d.max()) if d.size and d.max() > 0 else 1.0
    D2 = squareform(pdist(X, "sqeuclidean"))
    K = np.exp(-D2 / (2.0 * sigma**2))
    np.fill_diagonal(K, 0.0)
    return sp.csr_matrix(K)


def epsilon_graph(X: np.ndarray, epsilon: float | None,
                  weight: Callable[[np.ndarray], np.ndarray]) -> sp.csr_matrix:
    """``i ~ j`` when :math:`\\|x_i - x_j\\| \\le \\epsilon`, with weights ``weight(distances)``; ``epsilon``
    defaults to the longest edge of a Euclidean minimum spanning tree (times ``1 + 1e-12``)."""
    n = X.shape[0]
    tree = cKDTree(X)
    if epsilon is None:
        D = squareform(pdist(X))
        # tiny offset so that duplicates (distance 0) remain edges of the MST
        mst = csgraph.minimum_spanning_tree(sp.csr_matrix(D + 1e-300 * (D == 0)))
        epsilon = float(mst.max()) if mst.nnz else 0.0
        epsilon *= 1 + 1e-12
    elif not (np.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be a positive finite number, got {epsilon!r}")
    pairs = tree.query_pairs(r=float(epsilon), output_type="ndarray")
    if pairs.size == 0:
        return sp.csr_matrix((n, n))
    i, j = pairs[:, 0], pairs[:, 1]
    w = weight(np.linalg.norm(X[i] - X[j], axis=1))
    A = sp.csr_matrix((w, (i, j)), shape=(n, n))
    return A + A.T
