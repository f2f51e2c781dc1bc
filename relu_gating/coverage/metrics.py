r"""Coverage of the low frequencies by a feature span.

All projections go through orthonormal bases computed by the SVD with a
documented rank tolerance (never normal equations):
:func:`orthonormal_basis` keeps the left singular vectors whose singular value
exceeds ``rtol * sigma_max`` (default ``rtol = max(n, N) * eps``, as
``numpy.linalg.matrix_rank``).

Definitions (paper): coverage gap :math:`s_K(Z) = \|(I - \Pi_Z) U_K\|_2`;
captured features :math:`N_K(H) = \|U_K^T Q_H\|_F^2`; deficit
:math:`\delta(H) = K - N_K(H) = \|(I - \Pi_H) U_K\|_F^2`; leverage scores
:math:`\ell_i = \|U_K^T e_i\|^2`; marginal gain
:math:`G_H(h) = \|M^T h\|^2 / \|(I - \Pi_H) h\|^2`, :math:`M = (I - \Pi_H) U_K`.

References
----------
Paper: Def 1.1, Sec "Coverage", Def 3.4, Lemma 3.5, Prop 4.1, Prop 4.5.
"""

from __future__ import annotations

import warnings

from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating._inputs.validate import ORTHONORMAL_TOL, as_matrix, as_vector, check_basis  # noqa: F401
from relu_gating.spectral.checks import as_square_operator
from relu_gating.errors import InputError

__all__ = [
    "orthonormal_basis",
    "complement_apply",
    "check_basis",
    "dirichlet_energy",
    "rayleigh_quotient",
    "leverage_scores",
    "coverage_gap",
    "captured_features",
    "coverage_deficit",
    "principal_angles",
    "marginal_gain",
    "readout",
    "Readout",
]



def orthonormal_basis(H: Any, *, rtol: float | None = None, name: str = "H") -> np.ndarray:
    """Orthonormal basis of ``col(H)`` by the SVD (rank-revealing).

    Parameters
    ----------
    H : array_like, shape (n, N) (a vector is treated as one column)
    rtol : float, optional
        Singular values ``<= rtol * sigma_max`` count as zero; default
        ``max(n, N) * eps``.  A zero matrix has rank 0.

    Returns
    -------
    Q : ndarray, shape (n, r)
        ``r = rank(H)``; ``Q.T @ Q = I_r``.
    """
    H = as_matrix(H, name, allow_1d=True)
    if rtol is None:
        rtol = max(H.shape) * np.finfo(float).eps
    U, s, _ = np.linalg.svd(H, full_matrices=False)
    if s.size == 0 or s[0] == 0:
        return np.zeros((H.shape[0], 0))
    r = int(np.count_nonzero(s > rtol * s[0]))
    return U[:, :r]


def complement_apply(Q: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``(I - Q Q^T) Y`` for an orthonormal ``Q`` (two passes for accuracy)."""
    R = Y - Q @ (Q.T @ Y)
    return R - Q @ (Q.T @ R)


def _features(H: Any, n: int, name: str, rtol: float | None) -> np.ndarray:
    Hm = as_matrix(H, name, rows=n, allow_1d=True)
    return orthonormal_basis(Hm, rtol=rtol, name=name)


def _operator(L: Any, name: str = "L") -> Any:
    return as_square_operator(L, name)


def dirichlet_energy(L: Any, x: Any) -> float:
    r"""Dirichlet energy :math:`E(x)^2 = x^T \mathcal{L} x` (a squared seminorm).

    Parameters
    ----------
    L : array_like or sparse, shape (n, n)
        ``L`` or ``L_sym``.
    x : array_like, shape (n,)

    Returns
    -------
    float
        :math:`x^T L x` (clipped at 0 against rounding); take the square root for
        the seminorm :math:`E(x)` used in Cor 3.1.

    References
    ----------
    Paper, Def 1.1 and equation (1).
    """
    A = _operator(L)
    x = as_vector(x, "x", size=A.shape[0])
    return max(float(x @ (A @ x)), 0.0)


def rayleigh_quotient(L: Any, x: Any) -> float:
    r"""Rayleigh quotient :math:`R(x) = x^T \mathcal{L} x / x^T x` for ``x != 0`` (Def 1.1)."""
    A = _operator(L)
    x = as_vector(x, "x", size=A.shape[0])
    nx = float(x @ x)
    if nx == 0:
        raise InputError("x must be nonzero for the Rayleigh quotient")
    return float(x @ (A @ x)) / nx


def leverage_scores(U_K: Any) -> np.ndarray:
    r"""Leverage scores :math:`\ell_i = \|U_K^T e_i\|^2`, shape (n,); they sum to K (Prop 4.1)."""
    U = check_basis(U_K)
    return np.einsum("ij,ij->i", U, U)


def coverage_gap(Z: Any, U_K: Any, *, rtol: float | None = None) -> float:
    r"""Coverage gap :math:`s_K(Z) = \|(I - \Pi_Z) U_K\|_2 \in [0, 1]`.

    Parameters
    ----------
    Z : array_like, shape (n, N)
        Features (readout ``Z = [H_p, 1]`` in the paper).
    U_K : array_like, shape (n, K)
        Orthonormal low-frequency eigenvectors.
    rtol : float, optional
        Rank tolerance of :func:`orthonormal_basis`.
    """
    U = check_basis(U_K)
    Q = _features(Z, U.shape[0], "Z", rtol)
    M = complement_apply(Q, U)
    return float(min(np.linalg.norm(M, 2), 1.0))


def captured_features(H: Any, U_K: Any, *, rtol: float | None = None) -> float:
    r"""Captured low-frequency features :math:`N_K(H) = \|U_K^T Q_H\|_F^2` (Def 3.4).

    :math:`0 \le N_K(H) \le \min(K, \operatorname{rank} H)` (Lemma 3.5).
    """
    U = check_basis(U_K)
    Q = _features(H, U.shape[0], "H", rtol)
    return float(np.linalg.norm(U.T @ Q, "fro") ** 2)


def coverage_deficit(H: Any, U_K: Any, *, rtol: float | None = None) -> float:
    r"""Coverage deficit :math:`\delta(H) = \|(I - \Pi_H) U_K\|_F^2 = K - N_K(H)` (Lemma 3.5 (iv))."""
    U = check_basis(U_K)
    Q = _features(H, U.shape[0], "H", rtol)
    return float(np.linalg.norm(complement_apply(Q, U), "fro") ** 2)


def principal_angles(A: Any, B: Any, *, rtol: float | None = None) -> np.ndarray:
    r"""Principal angles between ``col(A)`` and ``col(B)``, ascending, in radians.

    Björck-Golub: with orthonormal bases :math:`Q_A, Q_B`, the cosines are the
    singular values of :math:`Q_A^T Q_B`; small angles are taken from the sines,
    the singular values of :math:`(I - Q_A Q_A^T) Q_B`, for accuracy.
    There are ``min(rank A, rank B)`` angles.

    Parameters
    ----------
    A : array_like, shape (n, p)
    B : array_like, shape (n, q)

    References
    ----------
    Björck and Golub (1973), paper [6]; Lemma 3.5 (i).
    """
    Am = as_matrix(A, "A", allow_1d=True)
    Bm = as_matrix(B, "B", rows=Am.shape[0], allow_1d=True)
    QA = orthonormal_basis(Am, rtol=rtol, name="A")
    QB = orthonormal_basis(Bm, rtol=rtol, name="B")
    if QA.shape[1] < QB.shape[1]:
        QA, QB = QB, QA
    k = QB.shape[1]
    if k == 0:
        return np.zeros(0)
    cos = np.clip(np.linalg.svd(QA.T @ QB, compute_uv=False), 0.0, 1.0)[:k]
    sin = np.clip(np.linalg.svd(complement_apply(QA, QB), compute_uv=False), 0.0, 1.0)[:k]
    ang_c = np.arccos(cos)  # ascending angles
    ang_s = np.arcsin(sin[::-1])  # ascending: smallest sine first
    return np.where(cos ** 2 > 0.5, ang_s, ang_c)


def marginal_gain(h: Any, U_K: Any, features: Any = "bias", *, rtol: float | None = None,
                  gtol: float = 1e-10) -> float:
    r"""Marginal gain of appending ``h`` to the features ``H`` (Prop 4.5).

    .. math::

        G_H(h) = N_K([H, h]) - N_K(H)
               = \frac{\|M^T h\|_2^2}{\|(I - \Pi_H) h\|_2^2},
        \qquad M = (I - \Pi_H) U_K .

    The arguments follow :func:`relu_gating.best_neuron`: the neuron, ``U_K``,
    then the features (the same default, ``"bias"``).

    Parameters
    ----------
    h : array_like, shape (n,)
        The new feature (for a neuron, ``relu(Phi @ theta)``).
    U_K : array_like, shape (n, K)
    features : "bias" (default), None or array_like, shape (n, q)
        Existing features ``H``: ``"bias"`` is the ones column; ``None`` means
        no features (then ``G = N_K(h)``).
    gtol : float
        ``h`` counts as lying in ``col(H)`` when
        ``||(I - Pi_H) h|| <= gtol * ||h||``.

    Raises
    ------
    InputError
        ``h = 0`` or ``h`` in ``col(H)``: the gain is then not defined (0/0),
        such neurons are excluded rather than given value 0.

    Notes
    -----
    The order ``marginal_gain(H, h, U_K)`` of version 0.2 is still understood
    (recognised by ``h`` being one-dimensional) with a DeprecationWarning.
    """
    if np.ndim(U_K) == 1 and (features is None or np.ndim(features) == 2):  # 0.2 order (H, h, U_K)
        warnings.warn("marginal_gain(H, h, U_K) is deprecated; call marginal_gain(h, U_K, features=H)",
                      DeprecationWarning, stacklevel=2)
        h, U_K, features = U_K, features, h
    if isinstance(features, str):
        if features != "bias":
            raise InputError(f"features must be 'bias', None or a matrix, got {features!r}")
        H = np.ones((np.shape(h)[0], 1))
    else:
        H = features
    U = check_basis(U_K)
    n = U.shape[0]
    hv = as_vector(h, "h", size=n)
    nh = np.linalg.norm(hv)
    if nh == 0:
        raise InputError("h must be nonzero (the marginal gain of h = 0 is undefined)")
    Q = np.zeros((n, 0)) if H is None else _features(H, n, "H", rtol)
    ht = complement_apply(Q, hv[:, None])[:, 0]
    nt = np.linalg.norm(ht)
    if nt <= gtol * nh:
        raise InputError(
            f"h lies in col(H) (||(I - Pi_H) h|| / ||h|| = {nt / nh:.3g}); its marginal gain is undefined"
        )
    return float(np.linalg.norm(U.T @ ht) ** 2 / nt**2)


@dataclass(frozen=True, eq=False)
class Readout:
    """Least-squares readout (paper, "Setting": ``beta = Z^+ f``, ``g = Pi_Z f``, ``r = g - f``).

    Attributes
    ----------
    beta : ndarray, shape (N,)
        Minimum-norm least-squares coefficients.
    g : ndarray, shape (n,)
        Fitted values :math:`\\Pi_Z f`.
    residual : ndarray, shape (n,)
        :math:`r = g - f`.
    rank : int
        Numerical rank of ``Z`` used.
    """

    beta: np.ndarray
    g: np.ndarray
    residual: np.ndarray
    rank: int


def readout(Z: Any, f: Any, *, rtol: float | None = None) -> Readout:
    r"""Least-squares readout :math:`\beta = Z^+ f`, :math:`g = Z\beta = \Pi_Z f`, :math:`r = g - f`.

    Computed from the truncated SVD of ``Z`` (rank tolerance as in
    :func:`orthonormal_basis`).

    Parameters
    ----------
    Z : array_like, shape (n, N)
    f : array_like, shape (n,)
    """
    Zm = as_matrix(Z, "Z", allow_1d=True)
    fv = as_vector(f, "f", size=Zm.shape[0])
    if rtol is None:
        rtol = max(Zm.shape) * np.finfo(float).eps
    U, s, Vt = np.linalg.svd(Zm, full_matrices=False)
    r = int(np.count_nonzero(s > rtol * s[0])) if s.size and s[0] > 0 else 0
    c = U[:, :r].T @ fv
    beta = Vt[:r].T @ (c / s[:r])
    g = U[:, :r] @ c
    return Readout(beta=beta, g=g, residual=g - fv, rank=r)
