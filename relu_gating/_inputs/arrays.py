"""Array arguments: finite, real, float64, of the expected shape (private).

Each helper raises :class:`relu_gating.errors.InputError` with a message that names the
argument and says what is wrong with it.  The checker uses these alone; the rest of the input
validation is :mod:`relu_gating._inputs.validate`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from relu_gating.errors import InputError

__all__ = ["as_matrix", "as_vector", "check_same_rows"]


def _as_float_array(x: Any, name: str) -> np.ndarray:
    if sp.issparse(x):
        raise InputError(f"{name} must be a dense array, got a scipy.sparse matrix")
    if np.iscomplexobj(x):
        raise InputError(f"{name} must be real, got complex values")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a numeric array ({exc})") from exc
    return arr


def _check_finite(arr: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(arr)):
        bad = "NaN" if np.isnan(arr).any() else "inf"
        idx = np.argwhere(~np.isfinite(arr))[0]
        raise InputError(f"{name} contains {bad} (first at index {tuple(int(i) for i in idx)})")


def as_matrix(
    x: Any,
    name: str,
    *,
    rows: int | None = None,
    cols: int | None = None,
    min_rows: int = 1,
    min_cols: int = 1,
    allow_1d: bool = False,
) -> np.ndarray:
    """Return ``x`` as a finite float64 2-D array or raise :class:`InputError`.

    ``allow_1d`` turns a vector of length n into an (n, 1) matrix.
    """
    arr = _as_float_array(x, name)
    if arr.ndim == 1 and allow_1d:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-D array, got shape {arr.shape}")
    n, m = arr.shape
    if rows is not None and n != rows:
        raise InputError(f"{name} must have {rows} rows, got shape {arr.shape}")
    if cols is not None and m != cols:
        raise InputError(f"{name} must have {cols} columns, got shape {arr.shape}")
    if n < min_rows:
        raise InputError(f"{name} must have at least {min_rows} row(s), got shape {arr.shape}")
    if m < min_cols:
        raise InputError(f"{name} must have at least {min_cols} column(s), got shape {arr.shape} (empty features?)")
    _check_finite(arr, name)
    return arr


def as_vector(x: Any, name: str, *, size: int | None = None) -> np.ndarray:
    """Return ``x`` as a finite float64 1-D array or raise :class:`InputError`."""
    arr = _as_float_array(x, name)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise InputError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if size is not None and arr.shape[0] != size:
        raise InputError(f"{name} must have length {size}, got {arr.shape[0]}")
    if arr.size == 0:
        raise InputError(f"{name} must not be empty")
    _check_finite(arr, name)
    return arr


def check_same_rows(n: int, **arrays: np.ndarray) -> None:
    """Check that every named array has ``n`` rows."""
    for name, arr in arrays.items():
        if arr is not None and arr.shape[0] != n:
            raise InputError(f"{name} must have n = {n} rows (one per sample), got shape {arr.shape}")
