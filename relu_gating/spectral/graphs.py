"""Sample graphs and their Laplacians.

Samples are rows: ``X`` has shape ``(n, d)`` (the paper's ``X`` is ``d x n``, so
the paper's ``H_0 = X^T`` is our ``X``).  A graph is a symmetric nonnegative
weight matrix ``W`` with every degree ``d_i = sum_j w_ij`` positive.

References
----------
Paper, "Setting and notation": ``L = D - W``, ``L_sym = D^{-1/2} L D^{-1/2}``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from relu_gating._inputs.validate import as_matrix
from relu_gating.errors import InputError

__all__ = ["sample_graph", "laplacian", "graph_laplacian", "DEFAULT_NEIGHBORS", "GRAPH_KINDS", "LAPLACIAN_KINDS"]

#: Default number of neighbours of the k-nearest-neighbour graph (clipped to n - 1).
DEFAULT_NEIGHBORS = 10

#: ``kind=`` of :func:`sample_graph` (``graph=`` / ``--graph`` of the higher-level functions and the CLI).
GRAPH_KINDS = ("knn", "gaussian", "epsilon")
#: ``kind=`` of :func:`laplacian` (``laplacian=`` / ``--laplacian`` elsewhere).
LAPLACIAN_KINDS = ("combinatorial", "sym")
_KINDS = GRAPH_KINDS


def sample_graph(
    X: Any,
    *,
    kind: str = "knn",
    n_neighbors: int | None = None,
    sigma: float | None = None,
    epsilon: float | None = None,
    mutual: bool = False,
) -> sp.csr_matrix:
    r"""Build a weighted undirected graph on the rows of ``X``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Samples as rows (the transpose of the paper's ``X``).
    kind : {"knn", "gaussian", "epsilon"}
        ``"knn"``: ``i ~ j`` when ``j`` is among the ``n_neighbors`` nearest
        neighbours of ``i`` or vice versa (both, if ``mutual``); weight 1, or the
        Gaussian weight when ``sigma`` is given.
        ``"gaussian"``: complete graph with
        :math:`w_{ij} = \exp(-\|x_i - x_j\|^2 / (2\sigma^2))`; ``sigma`` defaults
        to the median pairwise distance.
        ``"epsilon"``: ``i ~ j`` when :math:`\|x_i - x_j\| \le \epsilon` (weight 1,
        or Gaussian with ``sigma``); ``epsilon`` defaults to the longest edge of
        a Euclidean minimum spanning tree, the smallest radius that connects
        the graph.
    n_neighbors : int, optional
        For ``"knn"``; default ``min(10, n - 1)``.
    sigma : float, optional
        Gaussian bandwidth (> 0).
    epsilon : float, optional
        Radius of the ``"epsilon"`` graph (> 0).
    mutual : bool
        ``"knn"`` only: keep an edge only if each end is a neighbour of the other.

    Returns
    -------
    W : scipy.sparse.csr_matrix, shape (n, n)
        Symmetric, nonnegative, zero diagonal, every degree positive.

    Raises
    ------
    InputError
        Bad ``X`` or option, or a vertex with zero degree (the message names the
        vertex and suggests a larger ``n_neighbors`` / ``epsilon`` / ``sigma``).
    """
    X = as_matrix(X, "X", min_rows=2)
    if kind not in _KINDS:
        raise InputError(f"kind must be one of {_KINDS}, got {kind!r}")
    if sigma is not None and not (np.isfinite(sigma) and sigma > 0):
        raise InputError(f"sigma must be a positive finite number, got {sigma!r}")
    X, sigma, epsilon = _rescaled(X, sigma, epsilon)
    if kind == "knn":
        W = _knn(X, n_neighbors, sigma, mutual)
        hint = "use a larger n_neighbors or mutual=False"
    elif kind == "gaussian":
        from relu_gating.spectral.pairwise_graphs import gaussian_graph  # all pairs: loaded for this kind only

        W = gaussian_graph(X, sigma)
        hint = "use a larger sigma"
    else:
        from relu_gating.spectral.pairwise_graphs import epsilon_graph

        W = epsilon_graph(X, epsilon, lambda dist: _gauss(dist, sigma))
        hint = "use a larger epsilon"
    W = ((W + W.T) * 0.5).tocsr()  # exact symmetry
    W.eliminate_zeros()
    deg = np.asarray(W.sum(axis=1)).ravel()
    zero = np.flatnonzero(deg <= 0)
    if zero.size:
        raise InputError(
            f"sample_graph({kind!r}): vertex {int(zero[0])} has zero degree "
            f"({zero.size} such vertices); {hint}"
        )
    return W


def _rescaled(X: np.ndarray, sigma: float | None, epsilon: float | None) -> tuple:
    """``X``, ``sigma`` and ``epsilon`` times the power of two bringing ``max |X|`` into ``[0.5, 1)``.

    Exact (barring subnormal entries), so every distance is scaled exactly and the
    graph is the one of ``X``; without it, squared distances overflow for
    ``|X| ~ 1e160`` and underflow (all ties) for ``|X| ~ 1e-160``.
    """
    top = float(np.abs(X).max())
    if top == 0.0:
        return X, sigma, epsilon
    e = int(np.frexp(top)[1])
    X = np.ldexp(X, -e)
    out = []
    for name, v in (("sigma", sigma), ("epsilon", epsilon)):
        if v is not None and np.isfinite(v) and v > 0:
            scaled = float(np.ldexp(v, -e))
            if not 0 < scaled < np.inf:
                raise InputError(f"{name} = {v!r} is out of floating-point range relative to the scale of X "
                                 f"(max |X| = {top:.3g})")
            v = scaled
        out.append(v)
    return X, out[0], out[1]


def _gauss(dist: np.ndarray, sigma: float | None) -> np.ndarray:
    if sigma is None:
        return np.ones_like(dist)
    return np.exp(-(dist**2) / (2.0 * sigma**2))


def _knn(X: np.ndarray, k: int | None, sigma: float | None, mutual: bool) -> sp.csr_matrix:
    n = X.shape[0]
    if k is None:
        k = min(DEFAULT_NEIGHBORS, n - 1)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n - 1:
        raise InputError(f"n_neighbors must be an integer in [1, n - 1 = {n - 1}], got {k!r}")
    k = int(k)
    tree = cKDTree(X)
    dist, idx = tree.query(X, k=min(k + 1, n))
    dist = np.atleast_2d(dist)
    idx = np.atleast_2d(idx)
    rows, cols, vals = [], [], []
    for i in range(n):
        keep = idx[i] != i  # duplicates may put i elsewhere than first
        j, dd = idx[i][keep][:k], dist[i][keep][:k]
        rows.append(np.full(j.size, i))
        cols.append(j)
        vals.append(dd)
    r, c, dval = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    A = sp.csr_matrix((_gauss(dval, sigma), (r, c)), shape=(n, n))
    return A.minimum(A.T) if mutual else A.maximum(A.T)


def laplacian(W: Any, *, kind: str = "combinatorial", normalized: bool | None = None) -> sp.csr_matrix | np.ndarray:
    r"""Graph Laplacian, combinatorial or symmetric normalized.

    .. math::

        L = D - W, \qquad L_{\mathrm{sym}} = D^{-1/2} L D^{-1/2},
        \qquad D = \mathrm{diag}(W \mathbf 1).

    Parameters
    ----------
    W : array_like or scipy.sparse matrix, shape (n, n)
        Symmetric nonnegative weights with positive degrees.
    kind : {"combinatorial", "sym"}
        ``L = D - W`` or ``L_sym`` (the same spelling as ``laplacian=`` of
        :func:`relu_gating.best_neuron_from_samples`, :func:`relu_gating.resolve_problem`
        and ``--laplacian`` of the CLI, and as :attr:`SpectralBasis.kind`).
    normalized : bool, optional
        Deprecated spelling: ``normalized=True`` is ``kind="sym"``.

    Returns
    -------
    L : same kind as ``W`` (csr_matrix for sparse input, ndarray for dense), shape (n, n)

    References
    ----------
    Paper, "Setting and notation", equation (1).
    """
    if normalized is not None:
        warnings.warn("laplacian(W, normalized=...) is deprecated; use kind='sym' or kind='combinatorial'",
                      DeprecationWarning, stacklevel=2)
        kind = "sym" if normalized else "combinatorial"
    if kind not in LAPLACIAN_KINDS:
        raise InputError(f"kind must be one of {LAPLACIAN_KINDS}, got {kind!r}")
    from relu_gating.spectral.checks import check_weights  # the caller's W (a graph built here needs no check)

    L = graph_laplacian(check_weights(W, "W"), kind)
    return L if sp.issparse(W) else L.toarray()


def graph_laplacian(A: sp.csr_matrix, kind: str) -> sp.csr_matrix:
    """The Laplacian of a valid weight matrix, unchecked (the step of :func:`laplacian` after its check;
    the pipeline from samples calls it directly on the graph :func:`sample_graph` built).

    Parameters
    ----------
    A : scipy.sparse.csr_matrix, shape (n, n)
        Exactly symmetric, nonnegative, every degree positive: as :func:`sample_graph` builds it and
        :func:`relu_gating.spectral.checks.check_weights` returns it.
    kind : {"combinatorial", "sym"}

    Returns
    -------
    L : scipy.sparse.csr_matrix, shape (n, n)
    """
    deg = np.asarray(A.sum(axis=1)).ravel()
    L = (sp.diags(deg) - A).tocsr()
    if kind == "sym":
        s = sp.diags(1.0 / np.sqrt(deg))
        L = (s @ L @ s).tocsr()
        L = ((L + L.T) * 0.5).tocsr()
    return L
