"""Real data sets a user knows, reduced by PCA to a few dimensions (needs the ``real`` extra).

scikit-learn ships iris (150 x 4, 3 classes), wine (178 x 13, 3 classes) and breast-cancer
(569 x 30, 2 classes) inside the package, so nothing is downloaded.  :func:`real_dataset` standardizes
the features, projects them on the top principal components (numpy SVD; all of them is a rotation of
the standardized data), optionally draws a seeded class-stratified subsample (exact searches want
small ``n``) and drops duplicate rows.  :func:`sklearn_moons` is scikit-learn's two-moons generator,
standardized.

    pip install ".[real]"
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relu_gating.errors import InputError

__all__ = ["RealData", "real_dataset", "sklearn_moons", "REAL_DATASETS"]

#: Names accepted by :func:`real_dataset` -> scikit-learn loader.
REAL_DATASETS = {"iris": "load_iris", "wine": "load_wine", "breast-cancer": "load_breast_cancer"}


@dataclass(frozen=True, eq=False)
class RealData:
    """Samples as rows ``X`` (n, dims), integer class labels ``y`` (n,), and provenance.

    ``explained`` is the fraction of the standardized variance each kept component explains.
    """

    X: np.ndarray
    y: np.ndarray
    name: str
    explained: np.ndarray
    source_shape: tuple[int, int]


def _load(name: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        import sklearn.datasets as skd
    except ImportError as exc:
        raise InputError(f'data set {name!r} needs scikit-learn: pip install ".[real]"') from exc
    bunch = getattr(skd, REAL_DATASETS[name])()
    return np.asarray(bunch.data, dtype=float), np.asarray(bunch.target, dtype=int)


def _stratified(y: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Indices of a seeded subsample of size n with class proportions kept (rounded)."""
    rng = np.random.default_rng(seed)
    classes, counts = np.unique(y, return_counts=True)
    take = np.floor(counts * n / y.size).astype(int)
    for i in np.argsort(-(counts * n / y.size - take))[: n - take.sum()]:
        take[i] += 1
    idx = [rng.choice(np.flatnonzero(y == c), size=k, replace=False) for c, k in zip(classes, take)]
    return np.sort(np.concatenate(idx))


def real_dataset(name: str = "iris", *, dims: int = 2, n: int | None = None, seed: int = 0) -> RealData:
    """A scikit-learn bundled data set, standardized and reduced to ``dims`` principal components.

    Parameters
    ----------
    name : {"iris", "wine", "breast-cancer"}
    dims : int
        Principal components kept, from 1 to the data set's feature count (iris 4, wine 13,
        breast-cancer 30).
    n : int, optional
        Class-stratified seeded subsample of this size (default: all samples).
    seed : int

    Raises
    ------
    InputError
        Unknown name, bad ``dims``/``n``, or scikit-learn missing (names the extra).
    """
    if name not in REAL_DATASETS:
        raise InputError(f"name must be one of {sorted(REAL_DATASETS)}, got {name!r}")
    if isinstance(dims, bool) or not isinstance(dims, (int, np.integer)) or dims < 1:
        raise InputError(f"dims must be a positive integer, got {dims!r}")
    D, y = _load(name)
    if dims > D.shape[1]:
        raise InputError(f"dims must be at most {D.shape[1]} for {name!r}, got {dims!r}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 4 <= n <= D.shape[0]):
        raise InputError(f"n must be an integer in [4, {D.shape[0]}] for {name!r}, got {n!r}")
    Z = (D - D.mean(axis=0)) / np.where(D.std(axis=0) > 0, D.std(axis=0), 1.0)
    _, s, Vt = np.linalg.svd(Z, full_matrices=False)
    V = Vt[:dims].T * np.where(Vt[:dims].sum(axis=1) < 0, -1.0, 1.0)  # deterministic signs
    X = Z @ V
    if n is not None:
        idx = _stratified(y, int(n), seed)
        X, y = X[idx], y[idx]
    _, keep = np.unique(X, axis=0, return_index=True)
    keep = np.sort(keep)
    return RealData(X=X[keep], y=y[keep], name=name, explained=(s[:dims] ** 2) / np.sum(s**2),
                    source_shape=(int(D.shape[0]), int(D.shape[1])))


def sklearn_moons(n: int = 2000, *, noise: float = 0.1, seed: int = 0) -> RealData:
    """scikit-learn's two interleaving half circles (``make_moons``, generated, not downloaded),
    standardized; duplicate rows dropped.

    Raises
    ------
    InputError
        Bad ``n`` or ``noise``, or scikit-learn missing (names the extra).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 4:
        raise InputError(f"n must be an integer >= 4, got {n!r}")
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not noise >= 0:
        raise InputError(f"noise must be a nonnegative number, got {noise!r}")
    try:
        from sklearn.datasets import make_moons
    except ImportError as exc:
        raise InputError('two moons needs scikit-learn: pip install ".[real]"') from exc
    D, y = make_moons(n_samples=int(n), noise=float(noise), random_state=int(seed))
    X = (D - D.mean(axis=0)) / D.std(axis=0)
    _, keep = np.unique(X, axis=0, return_index=True)
    keep = np.sort(keep)
    return RealData(X=X[keep], y=np.asarray(y, dtype=int)[keep], name="moons", explained=np.full(2, 0.5),
                    source_shape=(int(n), 2))
