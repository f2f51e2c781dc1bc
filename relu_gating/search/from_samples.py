"""``best_neuron_from_samples``: build ``Phi = [X, 1]`` and ``U_K`` from samples, then the certified query."""

from __future__ import annotations

from typing import Any

from relu_gating.errors import InputError
from relu_gating.search.front import best_neuron
from relu_gating.search.result import NeuronResult

__all__ = ["best_neuron_from_samples"]


def best_neuron_from_samples(
    X: Any,
    *,
    K: int | None = None,
    graph: str = "knn",
    laplacian: str = "combinatorial",
    features: Any = "bias",
    graph_options: dict | None = None,
    **search_options: Any,
) -> NeuronResult:
    """Build ``Phi = [X, 1]`` and ``U_K`` from samples, then :func:`best_neuron`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Samples as rows (the paper's ``X`` is ``d x n``).
    K : int, optional
        Number of low-frequency eigenvectors; default ``min(8, n - 1)``, as the CLI.
    graph, laplacian : str
        ``kind`` of :func:`relu_gating.sample_graph` (``"knn"``, ``"gaussian"``,
        ``"epsilon"``) and of :func:`relu_gating.laplacian` (``"combinatorial"``
        or ``"sym"``): the spellings of ``--graph`` and ``--laplacian``.
    features : None, "bias" or array_like
        As in :func:`best_neuron`.
    graph_options : dict, optional
        Extra keyword arguments of :func:`relu_gating.sample_graph`.
    **search_options
        Passed to :func:`best_neuron`.
    """
    from relu_gating.spectral.graphs import graph_laplacian, sample_graph
    from relu_gating.spectral.spectra import laplacian_basis
    from relu_gating._inputs.validate import as_matrix, check_K, with_ones

    from relu_gating.data.io import DEFAULT_K

    X = as_matrix(X, "X", min_rows=2)
    K = min(DEFAULT_K, X.shape[0] - 1) if K is None else check_K(K, X.shape[0])
    if laplacian not in ("combinatorial", "sym"):
        raise InputError(f"laplacian must be 'combinatorial' or 'sym', got {laplacian!r}")
    W = sample_graph(X, kind=graph, **(graph_options or {}))
    basis = laplacian_basis(graph_laplacian(W, laplacian), K)  # valid by construction: not checked again
    return best_neuron(with_ones(X, "X"), basis.U_K, features=features, **search_options)
