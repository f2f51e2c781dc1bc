r"""The paper's bounds on readout error and coverage, as computable quantities.

* :func:`target_coverage_bound` -- Cor 3.1 (both forms) and Rem 6.1.
* :func:`active_set_bound` -- Prop 4.1 (leverage and Dirichlet-eigenvalue limits).
* :func:`ky_fan_limits` -- Thm 5.13 (:math:`\eta_i`, Ky Fan benchmark).
* :func:`coverage_ceiling` -- Cor 5.2 (:math:`N_K(V_P)` from identical rows).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating._inputs.validate import as_matrix, as_vector
from relu_gating.coverage.metrics import (
    captured_features,
    check_basis,
    complement_apply,
    coverage_gap,
    dirichlet_energy,
    orthonormal_basis,
    readout,
)
from relu_gating.errors import InputError

__all__ = [
    "TargetBound",
    "target_coverage_bound",
    "ActiveSetBound",
    "active_set_bound",
    "KyFanLimits",
    "ky_fan_limits",
    "CoverageCeiling",
    "coverage_ceiling",
    "row_partition",
]


@dataclass(frozen=True)
class TargetBound:
    r"""Terms of Cor 3.1 and Rem 6.1 for readout features ``Z`` and target ``f``.

    Attributes
    ----------
    residual_norm : float
        :math:`\|g - f\|` (actual error of the least-squares readout).
    coverage_gap : float
        :math:`s = s_K(Z)`.
    low_term, high_term : float
        :math:`s\|P_K f\|` and :math:`\|P_K^\perp f\|`.
    projection_bound : float
        :math:`s\|P_K f\| + \|P_K^\perp f\|` (first form of Cor 3.1).
    energy_term : float
        :math:`E(f)/\sqrt{\lambda_{K+1}}`; ``nan`` without ``L`` or if
        :math:`\lambda_{K+1} \le 0`.
    smoothness_bound : float
        :math:`s\|f\| + E(f)/\sqrt{\lambda_{K+1}}` (second form of Cor 3.1).
    deficit_bound : float
        :math:`\sqrt{K - N_K(Z)}\,\|f\| + E(f)/\sqrt{\lambda_{K+1}}` (Rem 6.1).
    captured : float
        :math:`N_K(Z)`.
    """

    residual_norm: float
    coverage_gap: float
    low_term: float
    high_term: float
    projection_bound: float
    energy_term: float
    smoothness_bound: float
    deficit_bound: float
    captured: float


def target_coverage_bound(
    Z: Any,
    f: Any,
    U_K: Any,
    *,
    L: Any = None,
    next_eigenvalue: float | None = None,
    rtol: float | None = None,
) -> TargetBound:
    r"""Target-only coverage bound (Cor 3.1) and its deficit form (Rem 6.1).

    .. math::

        \|g - f\| \le s\|P_K f\| + \|P_K^\perp f\|
                  \le s\|f\| + \frac{E(f)}{\sqrt{\lambda_{K+1}}},
        \qquad
        \|g - f\| \le \sqrt{K - N_K(Z)}\,\|f\| + \frac{E(f)}{\sqrt{\lambda_{K+1}}}.

    Parameters
    ----------
    Z : array_like, shape (n, N)
        Readout features (``[H_p, 1]``).
    f : array_like, shape (n,)
        Target.
    U_K : array_like, shape (n, K)
        Lowest K eigenvectors of ``L``.
    L : array_like or sparse, shape (n, n), optional
        The Laplacian ``U_K`` comes from; needed for the energy terms.
    next_eigenvalue : float, optional
        :math:`\lambda_{K+1}` of ``L``; needed with ``L``.

    References
    ----------
    Paper, Cor 3.1, Lemma 2.1, Rem 6.1.
    """
    U = check_basis(U_K)
    n, K = U.shape
    fv = as_vector(f, "f", size=n)
    Zm = as_matrix(Z, "Z", rows=n, allow_1d=True)
    s = coverage_gap(Zm, U, rtol=rtol)
    NK = captured_features(Zm, U, rtol=rtol)
    r = readout(Zm, fv, rtol=rtol)
    c = U.T @ fv
    low = s * float(np.linalg.norm(c))
    high = float(np.linalg.norm(fv - U @ c))
    energy_term = float("nan")
    if L is not None:
        if next_eigenvalue is None or not np.isfinite(next_eigenvalue):
            raise InputError("next_eigenvalue (lambda_{K+1}) is required with L")
        if next_eigenvalue > 0:
            energy_term = float(np.sqrt(dirichlet_energy(L, fv) / next_eigenvalue))
    nf = float(np.linalg.norm(fv))
    return TargetBound(
        residual_norm=float(np.linalg.norm(r.residual)),
        coverage_gap=s,
        low_term=low,
        high_term=high,
        projection_bound=low + high,
        energy_term=energy_term,
        smoothness_bound=s * nf + energy_term,
        deficit_bound=float(np.sqrt(max(K - NK, 0.0))) * nf + energy_term,
        captured=NK,
    )


@dataclass(frozen=True)
class ActiveSetBound:
    r"""Limits of a neuron supported on an active set ``A`` (Prop 4.1).

    Attributes
    ----------
    spectral : float
        :math:`\|U_K[A,:]\|_2^2`, an upper bound on :math:`N_K(h)`.
    leverage : float
        :math:`\min(1, \sum_{i\in A}\ell_i) \ge` ``spectral``.
    dirichlet : float
        :math:`\lambda_{\min}(\mathcal L_{AA})`, a lower bound on :math:`R(h)`
        (``nan`` without ``L``).
    interlacing : float
        :math:`\lambda_{|B|+1}(\mathcal L) \ge` ``dirichlet`` (``nan`` without ``L``).
    size : int
        :math:`|A|`.
    """

    spectral: float
    leverage: float
    dirichlet: float
    interlacing: float
    size: int


def _active_mask(active: Any, n: int) -> np.ndarray:
    a = np.asarray(active)
    if a.dtype == bool:
        if a.shape != (n,):
            raise InputError(f"active must be a boolean mask of length n = {n}, got shape {a.shape}")
        mask = a.copy()
    else:
        if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
            raise InputError("active must be a boolean mask or a 1-D array of integer indices")
        if a.size and (a.min() < 0 or a.max() >= n):
            raise InputError(f"active indices must lie in [0, {n - 1}]")
        mask = np.zeros(n, dtype=bool)
        mask[a] = True
    if not mask.any():
        raise InputError("active must be nonempty (a neuron with empty active set is h = 0)")
    return mask


def active_set_bound(U_K: Any, active: Any, *, L: Any = None) -> ActiveSetBound:
    r"""Prop 4.1: what a neuron active on ``A`` can capture, and how rough it must be.

    .. math::

        N_K(h) \le \|U_K[A,:]\|_2^2 \le \min\Bigl(1, \sum_{i\in A}\ell_i\Bigr),
        \qquad R(h) \ge \lambda_{\min}(\mathcal L_{AA}) \le \lambda_{|B|+1}.

    Parameters
    ----------
    U_K : array_like, shape (n, K)
    active : array_like of bool, shape (n,), or integer indices
        The active set ``A`` (support of ``h``).
    L : array_like or sparse, shape (n, n), optional
        Laplacian for the Dirichlet-eigenvalue terms.
    """
    U = check_basis(U_K)
    n = U.shape[0]
    mask = _active_mask(active, n)
    UA = U[mask]
    spectral = float(np.linalg.norm(UA, 2) ** 2)
    leverage = float(min(1.0, np.einsum("ij,ij->", UA, UA)))
    dirichlet = interlacing = float("nan")
    if L is not None:
        from relu_gating.spectral.checks import check_laplacian
        from relu_gating.spectral.spectra import SpectralTieWarning, laplacian_basis

        A = check_laplacian(L, "L")
        if A.shape[0] != n:
            raise InputError(f"L must be {n} x {n} to match U_K, got shape {A.shape}")
        LAA = A[mask][:, mask].toarray()
        dirichlet = float(np.linalg.eigvalsh(LAA)[0])
        nB = int(n - mask.sum())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SpectralTieWarning)
            interlacing = float(laplacian_basis(A, nB + 1).eigenvalues[-1])  # A checked above
    return ActiveSetBound(spectral, leverage, dirichlet, interlacing, int(mask.sum()))


@dataclass(frozen=True, eq=False)
class KyFanLimits:
    r"""Thm 5.13: per-neuron limits from the singular values of :math:`M_\Phi`.

    Attributes
    ----------
    etas : ndarray, shape (K,)
        :math:`\eta_1 \ge \dots \ge \eta_K`, singular values of
        :math:`M_\Phi = (I - \Pi_\Phi) U_K`.
    directions : ndarray, shape (n, K)
        Left singular vectors of :math:`M_\Phi` (in :math:`\mathrm{col}(\Phi)^\perp`);
        the top ``t`` span the subspace ``T`` attaining both bounds.
    captured : float
        :math:`N_K(\Phi)`.
    """

    etas: np.ndarray
    directions: np.ndarray
    captured: float

    def gain_bound(self, t: int) -> float:
        r""":math:`\sum_{i\le t}\eta_i^2 \ge N_K(Z) - N_K(\Phi)` when ``col(Z) ⊆ col(Phi) + T``, ``dim T <= t``."""
        t = _check_t(t)
        return float(np.sum(self.etas[:t] ** 2))

    def gap_bound(self, t: int) -> float:
        r""":math:`\eta_{t+1} \le s_K(Z)` (0 when ``t >= K``)."""
        t = _check_t(t)
        return float(self.etas[t]) if t < self.etas.size else 0.0

    def benchmark(self) -> np.ndarray:
        r"""Ky Fan benchmark :math:`\sum_{i\le t}\eta_i^2` for ``t = 0..K``, shape (K + 1,)."""
        return np.concatenate([[0.0], np.cumsum(self.etas**2)])


def _check_t(t: Any) -> int:
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 0:
        raise InputError(f"t must be a nonnegative integer, got {t!r}")
    return int(t)


def ky_fan_limits(Phi: Any, U_K: Any, *, rtol: float | None = None) -> KyFanLimits:
    r"""Singular values :math:`\eta_i` of :math:`M_\Phi = (I - \Pi_\Phi) U_K` (Thm 5.13).

    If :math:`\mathrm{col}(Z) \subseteq \mathrm{col}(\Phi) + T` with
    :math:`\dim T \le t` then

    .. math::

        N_K(Z) - N_K(\Phi) \le \sum_{i \le t} \eta_i^2, \qquad s_K(Z) \ge \eta_{t+1},

    both attained by ``T`` = the top ``t`` left singular vectors of :math:`M_\Phi`.

    Parameters
    ----------
    Phi : array_like, shape (n, m)
        Layer input ``[H_{l-1}, 1]``.
    U_K : array_like, shape (n, K)

    References
    ----------
    Paper, Thm 5.13, Rem 5.14.
    """
    U = check_basis(U_K)
    P = as_matrix(Phi, "Phi", rows=U.shape[0], allow_1d=True)
    Q = orthonormal_basis(P, rtol=rtol, name="Phi")
    M = complement_apply(Q, U)
    left, etas, _ = np.linalg.svd(M, full_matrices=False)
    etas = np.clip(etas, 0.0, 1.0)
    return KyFanLimits(etas=etas, directions=left, captured=float(np.linalg.norm(U.T @ Q, "fro") ** 2))


def row_partition(H: Any, *, name: str = "H") -> np.ndarray:
    """Labels of the classes of identical rows of ``H``, shape (n,).

    Classes are numbered by first occurrence.  Rows must be exactly equal
    (Thm 5.1: identical samples receive identical pre-activations).
    """
    Hm = as_matrix(H, name, allow_1d=True)
    _, first, inv = np.unique(Hm, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    rank = np.empty(first.size, dtype=int)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inv]


@dataclass(frozen=True, eq=False)
class CoverageCeiling:
    r"""Cor 5.2: :math:`N_K(V_P) = K - \|(I - \Pi_P) U_K\|_F^2`.

    Attributes
    ----------
    value : float
        The ceiling :math:`N_K(V_P)`.
    labels : ndarray of int, shape (n,)
        Class of each sample (identical rows of the layer input).
    q : int
        Number of classes, :math:`\dim V_P`.
    """

    value: float
    labels: np.ndarray
    q: int

    def basis(self) -> np.ndarray:
        """Orthonormal basis of :math:`V_P`: normalized class indicators, shape (n, q)."""
        n = self.labels.size
        B = np.zeros((n, self.q))
        B[np.arange(n), self.labels] = 1.0
        return B / np.sqrt(B.sum(axis=0))


def coverage_ceiling(H_prev: Any, U_K: Any) -> CoverageCeiling:
    r"""Coverage ceiling of every later layer (Cor 5.2).

    .. math::

        N_K(Z) \le N_K(V_P) = K - \|(I - \Pi_P) U_K\|_F^2,

    where :math:`V_P` holds the vectors constant on each class of identical rows
    of :math:`H_{\ell-1}` (rows of ``Phi = [H_{l-1}, 1]`` work equally well).
    :math:`\Pi_P U_K` replaces each row by its class mean.

    Parameters
    ----------
    H_prev : array_like, shape (n, m)
        Layer input features :math:`H_{\ell-1}` (or ``Phi``).
    U_K : array_like, shape (n, K)
    """
    U = check_basis(U_K)
    Hm = as_matrix(H_prev, "H_prev", rows=U.shape[0], allow_1d=True)
    labels = row_partition(Hm, name="H_prev")
    q = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=q).astype(float)
    means = np.zeros((q, U.shape[1]))
    np.add.at(means, labels, U)
    means /= counts[:, None]
    within = float(np.sum((U - means[labels]) ** 2))
    labels.setflags(write=False)
    return CoverageCeiling(value=U.shape[1] - within, labels=labels, q=q)
