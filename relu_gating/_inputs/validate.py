"""Input validation shared by the public functions (private).

Each helper raises :class:`relu_gating.errors.InputError` with a message that
names the argument and says what is wrong with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating._inputs.arrays import as_matrix, as_vector, check_same_rows
from relu_gating.errors import InputError

__all__ = ["as_matrix", "as_vector", "check_K", "check_same_rows", "shape_warning",
           "warn_suspicious_shape", "SuspiciousShapeWarning", "check_basis", "ORTHONORMAL_TOL",
           "with_ones"]

#: Tolerance of the orthonormality check of a basis ``U_K`` given by the user.
ORTHONORMAL_TOL = 1e-6


class SuspiciousShapeWarning(UserWarning):
    """The samples-as-rows array has a shape that is legal but usually a mistake (a transposed input)."""


def check_K(K: Any, n: int, name: str = "K") -> int:
    """Check that ``K`` is an integer with ``1 <= K <= n``."""
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {K!r}")
    K = int(K)
    if not 1 <= K <= n:
        raise InputError(f"{name} must satisfy 1 <= {name} <= n = {n}, got {K}")
    return K


def shape_warning(n: int, d: int, name: str, m: int | None = None) -> str | None:
    """One line when ``n`` samples in ``d`` dimensions (``m`` columns of ``Phi``) look transposed, else None.

    Legal but suspicious: ``n < m`` (fewer samples than the layer's columns: every sign pattern is
    realizable and the question is degenerate) or ``n < 2 d`` (3 samples in 300 dimensions is
    usually a 300 x 3 array read the wrong way round).
    """
    m = d + 1 if m is None else m
    if n >= m and n >= 2 * d:
        return None
    return (f"{name} has n = {n} samples (rows) in d = {d} dimensions (columns): fewer than "
            f"{'m = ' + str(m) + ' columns of Phi' if n < m else '2 d'}; samples must be rows: is it transposed?")


def warn_suspicious_shape(n: int, d: int, name: str, m: int | None = None) -> None:
    """Issue :class:`SuspiciousShapeWarning` (one line on the command line) for :func:`shape_warning`'s cases."""
    import warnings

    msg = shape_warning(n, d, name, m)
    if msg is not None:
        warnings.warn(msg, SuspiciousShapeWarning, stacklevel=3)


def with_ones(H: Any, name: str = "H") -> np.ndarray:
    """``[H, 1]``, shape (n, m + 1): a layer's input (:func:`relu_gating.layer_input`, which calls this)."""
    Hm = as_matrix(H, name, allow_1d=True)
    return np.hstack([Hm, np.ones((Hm.shape[0], 1))])


def check_basis(U_K: Any, name: str = "U_K", *, n: int | None = None) -> np.ndarray:
    """Validate an (n, K) matrix with orthonormal columns."""
    U = as_matrix(U_K, name, rows=n, allow_1d=True)
    if U.shape[1] > U.shape[0]:
        raise InputError(f"{name} must have at most n = {U.shape[0]} columns, got shape {U.shape}")
    err = np.abs(U.T @ U - np.eye(U.shape[1])).max()
    if err > ORTHONORMAL_TOL:
        raise InputError(f"{name} must have orthonormal columns (max |U^T U - I| = {err:.3g})")
    return U
