"""Built-in, seeded toy data sets (no downloads).

Every generator returns ``X`` with samples as rows, shape ``(n, d)``, and is a
pure function of its arguments (``numpy.random.default_rng(seed)``).
"""

from __future__ import annotations

import numpy as np

from relu_gating.errors import InputError

__all__ = ["two_moons", "circles", "blobs"]


def _check_n(n: int, minimum: int = 2) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise InputError(f"n must be an integer >= {minimum}, got {n!r}")
    return int(n)


def _check_noise(noise: float) -> float:
    if not (np.isfinite(noise) and noise >= 0):
        raise InputError(f"noise must be a finite number >= 0, got {noise!r}")
    return float(noise)


def two_moons(n: int = 100, *, noise: float = 0.1, seed: int = 0) -> np.ndarray:
    """Two interleaving half circles in the plane.

    Parameters
    ----------
    n : int
        Number of samples (``n // 2`` on the upper moon, the rest on the lower).
    noise : float
        Standard deviation of the Gaussian noise added to each coordinate.
    seed : int

    Returns
    -------
    X : ndarray, shape (n, 2)
    """
    n = _check_n(n)
    noise = _check_noise(noise)
    rng = np.random.default_rng(seed)
    n1 = n // 2
    n2 = n - n1
    t1 = np.linspace(0.0, np.pi, n1)
    t2 = np.linspace(0.0, np.pi, n2)
    upper = np.column_stack([np.cos(t1), np.sin(t1)])
    lower = np.column_stack([1.0 - np.cos(t2), 0.5 - np.sin(t2)])
    X = np.vstack([upper, lower])
    return X + noise * rng.standard_normal(X.shape)


def circles(n: int = 100, *, noise: float = 0.05, factor: float = 0.5, seed: int = 0) -> np.ndarray:
    """Two concentric circles (inner radius ``factor``, outer radius 1).

    Returns
    -------
    X : ndarray, shape (n, 2)
    """
    n = _check_n(n)
    noise = _check_noise(noise)
    if not 0 < factor < 1:
        raise InputError(f"factor must lie in (0, 1), got {factor!r}")
    rng = np.random.default_rng(seed)
    n_out = n // 2
    n_in = n - n_out
    t_out = np.linspace(0.0, 2 * np.pi, n_out, endpoint=False)
    t_in = np.linspace(0.0, 2 * np.pi, n_in, endpoint=False)
    X = np.vstack(
        [np.column_stack([np.cos(t_out), np.sin(t_out)]), factor * np.column_stack([np.cos(t_in), np.sin(t_in)])]
    )
    return X + noise * rng.standard_normal(X.shape)


def blobs(
    n: int = 100,
    *,
    centers: int = 3,
    dim: int = 2,
    spread: float = 1.0,
    box: float = 10.0,
    seed: int = 0,
) -> np.ndarray:
    """Isotropic Gaussian clusters with centers drawn uniformly in ``[-box, box]^dim``.

    Samples are assigned to clusters round-robin (cluster ``i % centers``).

    Returns
    -------
    X : ndarray, shape (n, dim)
    """
    n = _check_n(n)
    if isinstance(centers, bool) or not isinstance(centers, (int, np.integer)) or not 1 <= centers <= n:
        raise InputError(f"centers must be an integer in [1, n], got {centers!r}")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise InputError(f"dim must be a positive integer, got {dim!r}")
    if not (np.isfinite(spread) and spread >= 0):
        raise InputError(f"spread must be a finite number >= 0, got {spread!r}")
    rng = np.random.default_rng(seed)
    C = rng.uniform(-box, box, size=(centers, dim))
    labels = np.arange(n) % centers
    return C[labels] + spread * rng.standard_normal((n, dim))
