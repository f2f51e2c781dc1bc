"""Reading ``X`` from a ``.csv`` input file (private; :func:`relu_gating.data.io.load_input` loads it
for CSV input only)."""

from __future__ import annotations

import warnings

import numpy as np

from relu_gating.errors import InputError

__all__ = ["read_csv"]


def read_csv(path: str) -> np.ndarray:
    """``X`` from a comma-separated file, skipping a header row of column names; :class:`InputError`
    naming the file when it is empty, holds no data row or does not parse as numbers."""
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
    if not first.strip():
        raise InputError(f"{path}: empty CSV file")
    try:
        [float(tok) for tok in first.strip().split(",")]
        skip = 0
    except ValueError:
        skip = 1  # header row of names
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X = np.loadtxt(path, delimiter=",", skiprows=skip, ndmin=2, dtype=float)
    except ValueError as exc:
        raise InputError(f"{path}: cannot parse as comma-separated numbers ({exc})") from exc
    if X.size == 0:
        raise InputError(f"{path}: no data rows")
    return X
