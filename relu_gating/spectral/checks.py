"""Checks of a graph, a Laplacian or a square operator given by the caller (loaded by :func:`relu_gating.laplacian` and
:func:`relu_gating.low_frequency_basis` when they are called, and by the coverage metrics).

A graph built here from samples (:func:`relu_gating.sample_graph`) is symmetric, nonnegative and
of positive degrees by construction, and its Laplacian a valid one: the pipeline from samples to a
basis (:func:`relu_gating.resolve_problem`, ``relu-gating verify`` on ``X``) does not check them
again and does not load this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from relu_gating._inputs.validate import as_matrix
from relu_gating.errors import InputError

__all__ = ["as_square_operator", "check_weights", "check_laplacian"]


def as_square_operator(x: Any, name: str) -> Any:
    """A finite, nonempty square matrix: scipy.sparse input stays sparse (csr), else dense."""
    if sp.issparse(x):
        A = sp.csr_matrix(x, dtype=float)
        if not np.all(np.isfinite(A.data)):
            raise InputError(f"{name} contains NaN or inf")
    else:
        A = as_matrix(x, name)
    if A.shape[0] != A.shape[1] or A.shape[0] < 1:
        raise InputError(f"{name} must be square and nonempty, got shape {A.shape}")
    return A


def check_weights(W: Any, name: str = "W", *, rtol: float = 1e-10) -> sp.csr_matrix:
    """Validate a weight matrix; return it as a symmetrized float csr matrix.

    Checks: square, finite, nonnegative, symmetric (relative ``rtol``), every
    degree positive.  Each failure raises :class:`InputError` naming ``name``.
    """
    if sp.issparse(W):
        A = sp.csr_matrix(W, dtype=float)
        if A.shape[0] != A.shape[1] or A.shape[0] < 1:
            raise InputError(f"{name} must be a nonempty square matrix, got shape {A.shape}")
        data = A.data
    else:
        A = sp.csr_matrix(as_matrix(W, name))
        if A.shape[0] != A.shape[1]:
            raise InputError(f"{name} must be square, got shape {A.shape}")
        data = A.data
    if not np.all(np.isfinite(data)):
        raise InputError(f"{name} contains NaN or inf")
    if data.size and data.min() < 0:
        raise InputError(f"{name} must be nonnegative, found weight {data.min():.3g}")
    scale = float(np.abs(data).max()) if data.size else 0.0
    asym = abs(A - A.T)
    if asym.nnz and asym.max() > rtol * max(scale, 1e-300):
        raise InputError(f"{name} must be symmetric (max |W - W^T| = {asym.max():.3g})")
    A = ((A + A.T) * 0.5).tocsr()
    deg = np.asarray(A.sum(axis=1)).ravel()
    zero = np.flatnonzero(deg <= 0)
    if zero.size:
        raise InputError(
            f"{name} has a zero-degree vertex {int(zero[0])} ({zero.size} in all); "
            "every vertex needs an edge (build the graph with a larger n_neighbors/epsilon)"
        )
    return A


def check_laplacian(L: Any, name: str = "L", *, rtol: float = 1e-10) -> sp.csr_matrix:
    """Validate a graph Laplacian: square, finite, symmetric, nonpositive
    off-diagonal entries and positive diagonal (no zero-degree vertex)."""
    A = sp.csr_matrix(as_square_operator(L, name))
    scale = float(abs(A).max()) if A.nnz else 0.0
    asym = abs(A - A.T)
    if asym.nnz and asym.max() > rtol * max(scale, 1e-300):
        raise InputError(f"{name} must be symmetric (max |L - L^T| = {asym.max():.3g})")
    A = ((A + A.T) * 0.5).tocsr()
    diag = A.diagonal()
    bad = np.flatnonzero(diag <= 0)
    if bad.size:
        raise InputError(f"{name} has a zero-degree vertex {int(bad[0])} (diagonal entry {diag[bad[0]]:.3g} <= 0)")
    off = (A - sp.diags(diag)).tocsr()
    if off.nnz and off.data.max() > rtol * scale:
        raise InputError(f"{name} is not a graph Laplacian: it has a positive off-diagonal entry {off.data.max():.3g}")
    return A
