"""The verifier's statement of the problem, computed from the caller's inputs alone (private)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating._inputs.validate import as_matrix, check_same_rows
from relu_gating.checker import array_sha256  # the one definition: the input hashes the checker compares
from relu_gating.errors import InputError

__all__ = ["StatedProblem", "state_problem", "exact_rank", "array_sha256", "pow2_scales", "UK_ORTHONORMAL_TOL"]

#: ``U_K`` must be orthonormal to this (the bounds use ``P_K <= I``).
UK_ORTHONORMAL_TOL = 1e-10


@dataclass(frozen=True)
class StatedProblem:
    """What the caller asks to be checked.

    ``Q`` is the verifier's own orthonormal basis of ``col(Phi)`` (its rank
    decided exactly), ``M = (I - Pi_H) U_K`` and ``QH`` an orthonormal basis
    of ``col(H)`` (None without features).
    """

    Phi: np.ndarray
    U: np.ndarray
    Q: np.ndarray
    M: np.ndarray
    QH: np.ndarray | None
    features: str
    features_sha256: str | None
    H: np.ndarray | None = None  # the features as a matrix (the ones column for "bias")
    eta_H: float = 0.0  # proven ||QH QH^T - Pi_H||_2 (inf where none is found)
    d_M: float = 0.0  # proven ||M - (I - Pi_H) U||_2 (inf where eta_H is)

    def allowances(self) -> tuple[float, float]:
        """``(a, b)``: proven distances of every pattern's true pencil from the one formed with ``M``
        and ``QH`` (:func:`relu_gating._inputs.feature_basis.pencil_allowances`); ``(0, 0)`` without
        features."""
        from relu_gating._inputs.feature_basis import pencil_allowances

        if self.QH is None:
            return 0.0, 0.0
        return pencil_allowances(self.eta_H, self.d_M, self.Q, self.U.shape[1])

    @property
    def n(self) -> int:
        return self.Phi.shape[0]

    @property
    def objective(self) -> str:
        return "captured" if self.QH is None else "marginal"


def exact_rank(Phi: np.ndarray) -> int:
    """Rank of a float matrix taken as exact rationals (Gaussian elimination on fractions)."""
    rows = [[Fraction(float(x)) for x in col] for col in np.asarray(Phi, dtype=float).T]  # columns as rows
    rank = 0
    ncols = len(rows[0]) if rows else 0
    for c in range(ncols):
        piv = next((i for i in range(rank, len(rows)) if rows[i][c] != 0), None)
        if piv is None:
            continue
        rows[rank], rows[piv] = rows[piv], rows[rank]
        p = rows[rank]
        for i in range(rank + 1, len(rows)):
            if rows[i][c] != 0:
                f = rows[i][c] / p[c]
                rows[i] = [a - f * b for a, b in zip(rows[i], p)]
        rank += 1
        if rank == len(rows):
            break
    return rank


def pow2_scales(A: np.ndarray, axis: int = 0) -> np.ndarray:
    """Per column (``axis=0``) or row (``axis=1``), an exact power-of-two scale
    (:func:`relu_gating._inputs.scaling.pow2_column_scales`)."""
    from relu_gating._inputs.scaling import pow2_column_scales  # exact, or the input is refused

    return pow2_column_scales(A) if axis == 0 else pow2_column_scales(A.T)[:, None]


def _basis(Phi: np.ndarray) -> np.ndarray:
    """Orthonormal basis of ``col(Phi)``: columns scaled by powers of two, SVD, exact rank."""
    U = np.linalg.svd(Phi * pow2_scales(Phi), full_matrices=False)[0]
    return U[:, :exact_rank(Phi)]


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
    QH = None
    M = U
    eta, d = 0.0, 0.0
    if H is not None:
        from relu_gating._inputs.feature_basis import feature_basis, m_error

        fb = feature_basis(H)  # the rank of H decided exactly, never by a float threshold
        QH, eta = fb.Q, fb.eta
        M = U - QH @ (QH.T @ U)
        d = m_error(U, QH, eta)
    return StatedProblem(Phi, U, _basis(Phi), M, QH, spec, sha, H, float(eta), float(d))
