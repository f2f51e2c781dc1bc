"""The low eigenvectors of a nearly disconnected component, beside its pinned constant vector.

Where ``lambda_2`` of a component is below rounding, the eigensolver may return any basis of the
near-null space; once the constant null vector is pinned (:mod:`relu_gating.spectral.spectra`), the
other columns are then off orthogonal. Rayleigh-Ritz on the rest of the span puts them back.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def ritz_beside_constant(B: sp.csr_matrix, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rayleigh-Ritz on ``span(V)`` with the constant vector pinned first: ``(w[1:], V)``.

    Where ``lambda_2`` is below rounding (a nearly disconnected component) the eigensolver may
    return any basis of the near-null space; pinning the constant then leaves the other columns
    off orthogonal (by up to 0.74 measured). Here they are replaced by the Ritz vectors of ``B`` on
    the part of ``span(V)`` orthogonal to the constant, so ``V`` is orthonormal to rounding.
    """
    p = V[:, 0]
    Q = np.linalg.svd(V - np.outer(p, p @ V), full_matrices=False)[0][:, : V.shape[1] - 1]
    Q = np.linalg.qr(Q - np.outer(p, p @ Q))[0]
    w2, Y = np.linalg.eigh(Q.T @ (B @ Q))
    return np.maximum(w2, 0.0), np.column_stack([p, Q @ Y])
