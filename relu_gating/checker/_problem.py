"""The problem stated by the caller, and everything the checks derive from it alone.

``Q`` is the checker's orthonormal basis of ``col(Phi)`` (its rank decided
exactly), ``M = (I - Pi_H) U_K`` and ``QH`` an orthonormal basis of ``col(H)``
(None without features), with proven bounds on how far these floats are from
their exact counterparts (``eps_Q``, ``eta_H``, ``d_M``).  Its ``exact`` (:mod:`._exact_problem`, loaded on
first use) holds the same problem in exact integers and fractions: every float input
is the exact rational it is.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from relu_gating._inputs.arrays import as_matrix, check_same_rows
from relu_gating.checker._constants import UK_ORTHONORMAL_TOL
from relu_gating.checker._floats import basis_error, fro, gamma, projector_gap
from relu_gating.checker._rational import pivot_columns
from relu_gating.errors import InputError

__all__ = ["StatedProblem", "state_problem", "array_sha256", "pow2_scales"]


def array_sha256(a: np.ndarray) -> str:
    """SHA-256 of an array's float64 C-ordered bytes and shape."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return hashlib.sha256(str(a.shape).encode() + a.tobytes()).hexdigest()


#: Where the SVD's basis of ``col(H)`` proves no ``eta_H`` below this (features of condition about 1e4 and
#: more), an exact orthogonal one is tried (:mod:`._orth`; the better proven ``eta_H`` is kept).
ORTH_ETA = 1e-12

#: Where bringing a column's largest entry into ``[0.5, 1)`` loses bits (a subnormal product), the
#: exact scale may leave it up to this power of two; a column needing more is refused.
SCALED_TOP_EXPONENT = 64


def _lowest_bit(x: np.ndarray) -> int:
    """``t`` with every nonzero float of ``x`` an integer multiple of ``2^t``."""
    ratios = [v.as_integer_ratio() for v in x[x != 0].tolist()]
    return min((p & -p).bit_length() - q.bit_length() for p, q in ratios)  # q = 2^(q.bit_length() - 1)


def pow2_scales(A: np.ndarray, axis: int = 0, name: str = "Phi") -> np.ndarray:
    """Per column (``axis=0``) or row (``axis=1``), a power of two ``s`` with ``A * s / s == A`` exactly:
    the one bringing the largest entry into ``[0.5, 1)`` where that is exact, else the smallest exact one
    (every entry's lowest bit kept at or above ``2^-1074``); 1 for a zero column or row.  InputError for
    a column of subnormals only, or one too wide to scale exactly with its top below ``2^64``."""
    B = A if axis == 0 else A.T
    top = np.abs(B).max(axis=0) if B.shape[0] else np.zeros(B.shape[1])
    k = [0] * B.shape[1]
    for j, t in enumerate(top.tolist()):
        if t == 0:
            continue
        if t < np.finfo(float).tiny:
            raise InputError(f"{name} has a column whose entries are all subnormal (below 2^-1022): rescale it "
                             "(the objective does not depend on the scale of a column)")
        e = int(np.frexp(t)[1])
        with np.errstate(under="ignore"):
            k[j] = -e if np.all(np.ldexp(np.ldexp(B[:, j], -e), e) == B[:, j]) else -1074 - _lowest_bit(B[:, j])
        if e + k[j] > SCALED_TOP_EXPONENT:
            raise InputError(f"{name} column {j} spans 2^{e - 1} to a lowest significant bit of 2^{-1074 - k[j]}: "
                             f"no power-of-two scaling represents it exactly with its top below 2^{SCALED_TOP_EXPONENT}")
    s = np.ldexp(1.0, np.array(k, dtype=np.int64))
    with np.errstate(under="ignore"):
        if np.any(B * s / s != B):
            raise InputError(f"{name}: no exact power-of-two scaling of its columns")
    return s if axis == 0 else s[:, None]


@dataclass(frozen=True)
class StatedProblem:
    """What the caller asks to be checked (see the module docstring)."""

    Phi: np.ndarray
    U: np.ndarray
    H: np.ndarray | None
    Q: np.ndarray
    M: np.ndarray
    QH: np.ndarray | None
    Phi_r: np.ndarray  # the independent columns of Phi, scaled by powers of two: col(Phi_r) = col(Phi)
    features: str
    features_sha256: str | None
    eps_Q: float  # ||Q - Q*|| for an exactly orthonormal basis Q* of col(Phi)
    eta_H: float  # ||QH QH^T - Pi_H||
    d_M: float  # ||M - (I - Pi_H) U_K||_2, rounding included
    Hs: np.ndarray | None = None  # the independent columns of H, scaled by powers of two
    sigma_H: float = 0.0  # a proven lower bound on sigma_min(Hs) (0 if none)

    @property
    def n(self) -> int:
        return self.Phi.shape[0]

    @property
    def objective(self) -> str:
        return "captured" if self.QH is None else "marginal"

    @cached_property
    def exact(self) -> Any:
        """The same problem in exact arithmetic (:class:`relu_gating.checker._exact_problem.ExactProblem`,
        built and loaded on first use)."""
        from relu_gating.checker._exact_problem import ExactProblem

        return ExactProblem(self)

    def basis_allowance(self, u: Any, extra: float = 0.0) -> Any:
        """How much the float pencil ``u B_S - A_S - D`` in the basis ``Q`` (``||D|| <= extra``)
        can differ in norm from the exact one in an exact orthonormal basis of ``col(Phi)``."""
        e, normM, au = self.eps_Q, fro(self.M), np.abs(u)
        return _times(au + normM**2 + extra, 2 * e + e * e) + _times(au, self.eta_H) + _times(2 * normM + self.d_M, self.d_M)


def _times(a: Any, b: float) -> Any:
    """``a * b`` for ``a >= 0`` (an array) and a proven norm bound ``b >= 0`` (``inf``: none proven), with
    ``0 * inf = 0``: a zero factor times a norm that is finite but unbounded here (never nan)."""
    return np.where(np.asarray(a) > 0, np.asarray(a) * b if b < np.inf else np.inf, 0.0)


def _features(features: Any, n: int) -> tuple[np.ndarray | None, str, str | None]:
    if features is None or (isinstance(features, str) and features == "none"):
        return None, "none", None
    if isinstance(features, str):
        if features != "bias":
            raise InputError(f"features must be None, 'none', 'bias' or an array with n = {n} rows, "
                             f"got {features!r}")
        return np.ones((n, 1)), "bias", None
    H = as_matrix(features, "features", allow_1d=True)
    check_same_rows(n, features=H)
    if not np.any(H):
        raise InputError("features is all zeros: pass features=None for the N_K objective")
    return H, "array", array_sha256(H)


def _basis(Xs: np.ndarray, piv: list[int]) -> tuple[np.ndarray, float]:
    """Orthonormal basis of ``col(Xs)`` (SVD, the exact rank ``len(piv)``) and its proven distance
    to an exact one."""
    O = np.linalg.svd(Xs, full_matrices=False)[0][:, :len(piv)]
    return O, basis_error(O, Xs[:, piv])


def state_problem(Phi: Any, U_K: Any, features: Any) -> StatedProblem:
    """Validate the caller's inputs and derive everything the checks need."""
    Phi = as_matrix(Phi, "Phi")
    n = Phi.shape[0]
    U = as_matrix(U_K, "U_K", allow_1d=True)
    check_same_rows(n, U_K=U)
    err = float(np.abs(U.T @ U - np.eye(U.shape[1])).max())
    if err > UK_ORTHONORMAL_TOL:
        raise InputError(f"U_K must have orthonormal columns to {UK_ORTHONORMAL_TOL:g} (max |U_K^T U_K - I| = "
                         f"{err:.2e})")
    if not np.any(Phi):
        raise InputError("Phi is all zeros: every neuron is dead")
    H, spec, sha = _features(features, n)
    Phi_s = Phi * pow2_scales(Phi)
    piv = pivot_columns(Phi_s)
    Q, eps_Q = _basis(Phi_s, piv)
    QH, eta_H, d_M, M, Hp, sigma_H = None, 0.0, 0.0, U, None, 0.0
    if H is not None:
        Hs = H * pow2_scales(H, name="features")
        Hp = Hs[:, pivot_columns(Hs)]
        QH = np.linalg.svd(Hp, full_matrices=False)[0]
        eta_H, sigma_H, _ = projector_gap(QH, Hp)
        if not eta_H <= ORTH_ETA:  # nearly dependent features: an exact orthogonal basis (its code loaded only then)
            from relu_gating.checker._orth import better_basis
            QH, eta_H, sigma_H = better_basis(Hp, QH, eta_H, sigma_H)
        M = U - QH @ (QH.T @ U)
        d_M = eta_H * fro(U) + gamma(n + QH.shape[1] + 2) * fro(np.abs(U) + np.abs(QH) @ (np.abs(QH).T @ np.abs(U)))
    return StatedProblem(Phi, U, H, Q, M, QH, Phi_s[:, piv], spec, sha, eps_Q, eta_H, d_M, Hp, float(sigma_H))
