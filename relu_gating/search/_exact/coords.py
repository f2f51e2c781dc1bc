"""Coordinates for the exact per-pattern solve (private).

A pattern ``S`` gives the problem ``max x^T A x / x^T B x`` over the cone ``G x >= 0`` with
``B = R^T R`` and ``A = (U_K^T R)^T (U_K^T R)``, ``R = (I - Pi_H) S Psi`` (``M^T S Psi =
U_K^T (I - Pi_H) S Psi``).  :func:`pattern_problem` poses it in whitened coordinates
from the SVD of ``R`` itself; :func:`gram_problem` in row-space coordinates with the
Gram matrices (the pencil the bound phase uses), kept for dual evidence, whose SDP is
sometimes tighter there.

Why whitened: on clustered active samples ``R`` has singular values ``~1e-7`` of its
largest; ``R^T R`` squares that to ``1e-14``, below the rounding of its entries, and
the exact value of the float Gram pencil then differed from the value of the
neuron it returns by up to ``6e-2`` (fuzz seed 1108 of ``tests/test_verify_fuzz.py``).
In whitened coordinates ``B`` is ``I`` (``0`` on ``null(R)``) and ``A = C^T C``
with ``C = U_K^T U_R`` has entries at most 1: accurate to ``eps / sigma_min`` through
the SVD of ``R``.
"""

from __future__ import annotations

import numpy as np

from relu_gating.search.objectives import Objective, single_pattern_matrices

__all__ = ["pattern_problem", "gram_problem", "ACTIVE_RANK_RTOL"]

#: Singular values of ``R`` (or ``S Psi``) below this (relative) span its null space.
ACTIVE_RANK_RTOL = 1e-12


def _cone_rows(obj: Objective, mask: np.ndarray) -> np.ndarray:
    """``(2S - I) Psi`` on the samples with a nonzero row of ``Phi``."""
    nz = np.any(obj.Phi != 0, axis=1)
    return (np.where(mask, 1.0, -1.0)[:, None] * obj.Psi)[nz]


def pattern_problem(obj: Objective, mask: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(A, B, G, T, Ti)``: the pattern's pencil and cone in coordinates ``x`` with
    ``v = T x`` and ``x = Ti v`` (``v``: row-space coordinates, ``Phi theta = Psi v``).

    ``R = U_R Sigma V^T``, ``k`` singular values above ``ACTIVE_RANK_RTOL``:
    ``T = [V_k / sigma_k, V_0]``, ``B = diag(I_k, 0)``, ``A = diag(C^T C, 0)``
    with ``C = U_K^T U_R[:, :k]``, ``G = (2S - I) Psi T``.  ``null(R)`` (the
    directions that leave ``(I - Pi_H) h`` at 0) is split off exactly.
    """
    r = obj.Psi.shape[1]
    SPsi = obj.Psi * mask[:, None]
    R = SPsi if obj.Q_H is None else SPsi - obj.Q_H @ (obj.Q_H.T @ SPsi)
    top = float(np.abs(R).max(initial=0.0))
    if 0 < top < 2.0**-500:  # active rows near 2^-1000: R 2^e (exact, e > 0) keeps V / s in the float range;
        R = np.ldexp(R, -int(np.frexp(top)[1]))  # T, Ti and G scale by 2^-e, 2^e, 2^-e: the same cone and quotient
    Ur, s, Vt = np.linalg.svd(R, full_matrices=False)  # n >= r: all of V, U_R as big as Psi
    k = int(np.sum(s > ACTIVE_RANK_RTOL * s[0])) if s.size and s[0] > 0 else 0
    T = np.hstack([Vt[:k].T / s[:k], Vt[k:].T])
    Ti = np.vstack([s[:k, None] * Vt[:k], Vt[k:]])
    C = obj.U_K.T @ Ur[:, :k]
    CC = C.T @ C
    A, B = np.zeros((r, r)), np.zeros((r, r))
    A[:k, :k] = 0.5 * (CC + CC.T)
    B[:k, :k] = np.eye(k)
    return A, B, _cone_rows(obj, mask) @ T, T, Ti


def gram_problem(obj: Objective, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(A, B, G, T)``: the Gram pencil in orthonormal coordinates ``x = T^T v`` that split off
    ``null(S Psi)`` (where ``A`` and ``B`` are set to exactly 0)."""
    A, B, G = single_pattern_matrices(obj, mask)
    act = obj.Psi[mask]
    _, s, Vt = np.linalg.svd(act, full_matrices=act.shape[0] < act.shape[1])  # all of V, never a big U
    k = int(np.sum(s > ACTIVE_RANK_RTOL * s[0])) if s.size else 0
    if k == A.shape[0]:
        return A, B, G, np.eye(A.shape[0])
    T = Vt.T
    A, B = T.T @ A @ T, T.T @ B @ T
    A[k:, :] = A[:, k:] = 0.0
    B[k:, :] = B[:, k:] = 0.0
    return 0.5 * (A + A.T), 0.5 * (B + B.T), G @ T, T
