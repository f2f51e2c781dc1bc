"""Seeded fuzz instances for the soundness tests, and an independent lower-bound oracle.

Every instance is a pure function of its recipe (seed, kind, n, d, K, basis,
features); :func:`recipe` prints it so that a failing seed can be rebuilt with
``instance(**recipe_dict)``.  Coordinates are dyadic (or small integers) for
the degenerate kinds, so that translations by integers, scalings by powers of
two and products with small integer matrices are exact in float64: the
transformed problem then has exactly the same set of neurons.

The oracle (:func:`oracle_lower`) shares no code with the library: it draws
neurons ``relu(Phi theta)`` at random in a well-conditioned basis of the row
space, on every wall ``{phi_i^T theta = 0}`` and on every ray of the
arrangement, and evaluates the objective by its definition.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from _instances import duplicated_rows, random_basis

from relu_gating import SpectralTieWarning, laplacian, low_frequency_basis, sample_graph

#: generic kinds (any rounding-level perturbation keeps the optimum) and degenerate ones
GENERIC = ("gauss", "clusters", "translated", "scaled")
DEGENERATE = ("duplicates", "collinear", "collinear_axis", "grid", "thin")
KINDS = GENERIC + DEGENERATE
FEATURES = ("bias", "none", "array", "ones_and_array", "indicator")
BASES = ("random", "knn")


def _dyadic(a: np.ndarray, bits: int = 16) -> np.ndarray:
    return np.round(np.asarray(a, dtype=float) * 2.0**bits) / 2.0**bits


def make_X(kind: str, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Samples as rows, of the given kind."""
    if kind == "gauss":
        return _dyadic(rng.normal(size=(n, d)))
    if kind == "clusters":  # a few tight clusters (spread 1e-6 around their centres)
        q = int(rng.integers(2, 4))
        centres = rng.normal(size=(q, d))
        lab = np.r_[np.arange(q), rng.integers(0, q, n - q)]
        return centres[lab] + 1e-6 * rng.normal(size=(n, d))
    if kind == "translated":  # far from the origin, relative to its spread
        c = rng.choice([-1.0, 1.0], size=d) * 10.0 ** rng.uniform(2, 4, size=d)
        return rng.normal(size=(n, d)) + c
    if kind == "scaled":  # columns in wildly different units
        return rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-6, 6, size=d)
    if kind == "duplicates":
        q = int(rng.integers(max(2, d + 1), max(d + 2, n // 2) + 1))
        return _dyadic(duplicated_rows(n, d, min(q, n), int(rng.integers(2**31))))
    if kind == "collinear":  # points on one or two lines, exactly (dyadic parameters, small integer directions)
        lines = 1 if d == 1 or rng.random() < 0.5 else 2
        X = np.empty((n, d))
        for i in range(n):
            ell = i % lines
            a = np.random.default_rng(ell + 7).integers(1, 4, size=d).astype(float) * (1 if ell == 0 else -1)
            b = np.random.default_rng(ell + 11).integers(-2, 3, size=d).astype(float)
            X[i] = _dyadic(rng.normal(), 12) * a + b
        return X
    if kind == "collinear_axis":  # lines parallel to coordinate axes (survive per-column rounding)
        X = _dyadic(rng.normal(size=(n, d)), 12)
        levels = _dyadic(rng.normal(size=2), 8)
        X[:, -1] = levels[rng.integers(0, 2, size=n)]
        return X
    if kind == "grid":  # small integer grid, repeats allowed
        return rng.integers(0, 4, size=(n, d)).astype(float)
    if kind == "thin":  # lines computed in floating point: rows dependent only to within rounding
        t = rng.normal(size=n)
        if d == 1:
            return (t / 3.0)[:, None]
        X = np.where((np.arange(n) % 2)[:, None] == 0, np.c_[t, 2.5 * t + 1 / 3], np.c_[t, -t / 7])
        return np.c_[X, rng.normal(size=(n, d - 2))] if d > 2 else X
    raise ValueError(kind)


def make_basis(how: str, X: np.ndarray, K: int, rng: np.random.Generator) -> np.ndarray:
    n = X.shape[0]
    if how == "random":
        return random_basis(n, K, int(rng.integers(2**31)))
    Xs = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-300)  # a graph on the shape of the data
    W = sample_graph(Xs + 1e-9 * rng.normal(size=X.shape), kind="knn", n_neighbors=min(4, n - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpectralTieWarning)
        return np.ascontiguousarray(low_frequency_basis(laplacian(W), K).U_K)


def make_features(kind: str, X: np.ndarray, rng: np.random.Generator) -> Any:
    n = X.shape[0]
    if kind == "bias":
        return "bias"
    if kind == "none":
        return None
    if kind == "array":
        return rng.normal(size=(n, int(rng.integers(1, 3))))
    if kind == "ones_and_array":
        return np.c_[np.ones(n), rng.normal(size=n)]
    if kind == "indicator":  # the ones column and the indicator of an extreme sample: a pruned pattern
        e = np.zeros(n)
        e[int(np.argmax(X[:, 0]))] = 1.0
        return np.c_[np.ones(n), e]
    raise ValueError(kind)


@dataclass
class Instance:
    seed: int
    kind: str
    n: int
    d: int
    K: int
    basis: str
    feat: str
    X: np.ndarray = field(repr=False)
    Phi: np.ndarray = field(repr=False)
    U: np.ndarray = field(repr=False)
    features: Any = field(repr=False)

    @property
    def H(self) -> np.ndarray | None:
        if self.features is None:
            return None
        if isinstance(self.features, str):
            return np.ones((self.n, 1))
        return np.asarray(self.features, dtype=float)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # how hypothesis prints a draw
        p.text(self.recipe())

    def recipe(self) -> str:
        return (f"instance(seed={self.seed}, kind={self.kind!r}, n={self.n}, d={self.d}, K={self.K}, "
                f"basis={self.basis!r}, feat={self.feat!r})")


def instance(seed: int, kind: str | None = None, n: int | None = None, d: int | None = None,
             K: int | None = None, basis: str | None = None, feat: str | None = None,
             n_range: tuple[int, int] = (6, 14)) -> Instance:
    """The fuzz instance of a seed; any field given overrides the one drawn from the seed."""
    rng = np.random.default_rng([seed, 20240])
    kind = kind or str(rng.choice(KINDS))
    feat = feat or str(rng.choice(FEATURES))
    basis = basis or str(rng.choice(BASES))
    d = d or int(rng.choice([1, 2, 2, 2, 3]))
    hi = n_range[1] if d < 3 else min(n_range[1], 10)  # d = 3: keep the pattern count small
    n = n or int(rng.integers(n_range[0], hi + 1))
    K = K or int(rng.integers(1, min(4, n - 1) + 1))
    X = make_X(kind, n, d, rng)
    U = make_basis(basis, X, K, rng)
    features = make_features(feat, X, rng)
    Phi = np.c_[X, np.ones(n)]
    return Instance(seed, kind, n, d, K, basis, feat, X, Phi, U, features)


# ---------------------------------------------------------------- independent objective and oracle


def _proj_H(H: np.ndarray | None) -> np.ndarray | None:
    if H is None:
        return None
    u, s, _ = np.linalg.svd(H, full_matrices=False)
    return u[:, s > max(H.shape) * np.finfo(float).eps * s[0]]


def values(Phi: np.ndarray, U: np.ndarray, H: np.ndarray | None, thetas: np.ndarray,
           exclude_rtol: float = 1e-5) -> np.ndarray:
    """Objective of relu(Phi theta) for each row of thetas, by the definition.

    Entries of ``Phi theta`` below 1e-8 of the largest are taken as 0 (a
    theta on a wall through several samples computes to rounding noise there),
    and a neuron whose part outside col(H) is below ``exclude_rtol`` of its
    norm is dropped (nan): conservative, so the oracle never reports a
    rounding artefact.
    """
    z = np.atleast_2d(thetas) @ Phi.T  # (k, n)
    # a sample on the wall (phi_i^T theta = 0 exactly) computes to rounding noise: count it inactive
    z = np.where(np.abs(z) <= 1e-8 * np.abs(z).max(axis=1, keepdims=True), 0.0, z)
    h = np.maximum(z, 0.0)
    Qh = _proj_H(H)
    y = h if Qh is None else h - (h @ Qh) @ Qh.T
    hh = np.sum(h * h, axis=1)
    yy = np.sum(y * y, axis=1)
    num = np.sum((y @ U) ** 2, axis=1)
    ok = (hh > 0) & (yy > exclude_rtol**2 * hh)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, num / np.where(ok, yy, 1.0), np.nan)


def oracle_lower(Phi: np.ndarray, U: np.ndarray, H: np.ndarray | None, *, n_random: int = 20_000,
                 per_wall: int = 200, seed: int = 0) -> float:
    """Best objective over sampled neurons: a lower bound on the optimum (nan-free, -inf if none)."""
    rng = np.random.default_rng(seed)
    n = Phi.shape[0]
    top = np.abs(Phi).max(axis=0)
    D = np.where(top > 0, 1.0 / np.where(top > 0, top, 1.0), 1.0)
    _, s, Vt = np.linalg.svd(Phi * D, full_matrices=False)
    keep = s > 1e-9 * s[0]
    T = (D[:, None] * Vt[keep].T) / s[keep]  # theta = T v: Phi theta = an orthonormal basis times v
    r = T.shape[1]
    thetas = [rng.normal(size=(n_random, r)) @ T.T]
    P = Phi * D
    rows = [i for i in range(n) if np.any(P[i])]
    # on each wall phi_i^T theta = 0 (optima often lie on faces), and on each ray of the arrangement
    for i in rows:
        N = _null(P[i:i + 1] @ (T / D[:, None]))
        if N.shape[1]:
            thetas.append(rng.normal(size=(per_wall, N.shape[1])) @ (T @ N).T)
    if r >= 2:
        for J in itertools.combinations(rows, r - 1):
            N = _null(P[list(J)] @ (T / D[:, None]))
            if N.shape[1] == 1:
                t = (T @ N)[:, 0]
                thetas.append(np.stack([t, -t]))
    vals = values(Phi, U, H, np.vstack(thetas))
    return float(np.nanmax(vals)) if np.any(np.isfinite(vals)) else float("-inf")


def _null(A: np.ndarray) -> np.ndarray:
    _, s, Vt = np.linalg.svd(A)
    rank = int(np.sum(s > 1e-10 * max(s.max(initial=0.0), 1e-300)))
    return Vt[rank:].T


# ---------------------------------------------------------------- near-degenerate families (issue 23)

#: near-degenerate families: each draw is exact data (the floats as given) near a degeneracy
NEAR_DEGENERATE = ("near_duplicates", "tiny_gaps", "near_features")


def near_degenerate(seed: int, family: str, d: int = 1) -> Instance:
    """A near-degenerate instance of ``family`` (kNN graph, ``K = 4`` or fewer):

    * ``near_duplicates``: 7 points, each duplicated with a jitter of 1e-12..1e-15 (bias features);
    * ``tiny_gaps``: sorted points, some consecutive gaps as small as 1e-12..1e-15 (bias features);
    * ``near_features``: the marginal gain over features ``H = [1, Phi c + e]``, ``e`` of size
      about 1e-9 (``H`` within 1e-9 of ``col(Phi)``).
    """
    rng = np.random.default_rng([seed, 23, NEAR_DEGENERATE.index(family)])
    jitter = 10.0 ** -rng.uniform(12, 15)
    if family == "near_duplicates":
        base = _dyadic(rng.normal(size=(7, d)), 8)
        X = np.concatenate([base, base + jitter * rng.choice([-1.0, 1.0], size=(7, d))])
    elif family == "tiny_gaps":
        n = int(rng.integers(6, 11))
        gaps = np.where(rng.random(size=(n, d)) < 0.4, jitter, rng.uniform(0.2, 1.0, size=(n, d)))
        X = np.cumsum(gaps, axis=0) - 2.0
    elif family == "near_features":
        n = int(rng.integers(7, 11))
        X = _dyadic(rng.normal(size=(n, d)), 8)
    else:
        raise ValueError(family)
    n = X.shape[0]
    Phi = np.c_[X, np.ones(n)]
    K = int(min(4, n - 2))
    U = make_basis("knn", X, K, rng)
    if family == "near_features":
        c = rng.normal(size=d + 1)
        features: Any = np.c_[np.ones(n), Phi @ c + 1e-9 * rng.normal(size=n)]
    else:
        features = "bias"
    return Instance(seed, family, n, d, K, "knn", "array" if family == "near_features" else "bias",
                    X, Phi, U, features)
