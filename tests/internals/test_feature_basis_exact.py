"""The feature basis of nearly dependent features (issue 37): the orthogonal basis built in exact
rationals, and the proven errors the search's bounds take from it, against exact projectors."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from relu_gating._inputs.feature_basis import feature_basis, m_error
from _exact_reference import exact_projector, spectral_norm_at_most


@pytest.mark.parametrize("E", [20, 30, 40, 52])
@pytest.mark.parametrize("seed", [0, 1])
def test_nearly_dependent_features_get_a_proven_basis(seed, E):
    """``H = [1, 1 + 2^-E r]``: ``eta_H`` is of the order of the rounding whatever ``E``, and it bounds
    ``||Q_H Q_H^T - Pi_H||_2`` exactly; ``m_error`` bounds ``||M - (I - Pi_H) U_K||_2`` exactly."""
    rng = np.random.default_rng([seed, E])
    n = 9
    r = rng.integers(-3, 4, size=n).astype(float)
    r[0] = r[0] or 1.0
    H = np.c_[np.ones(n), 1 + 2.0**-E * r]
    b = feature_basis(H)
    assert b.pivots == (0, 1) and b.eta < 1e-12
    P = exact_projector(H)
    Q = [[Fraction(x) for x in row] for row in b.Q.tolist()]
    QQ = [[sum((Q[i][k] * Q[j][k] for k in range(2)), Fraction(0)) for j in range(n)] for i in range(n)]
    assert spectral_norm_at_most([[QQ[i][j] - P[i][j] for j in range(n)] for i in range(n)], b.eta)
    assert not spectral_norm_at_most([[QQ[i][j] - P[i][j] for j in range(n)] for i in range(n)], b.eta / 1e6)  # not vacuous
    U = np.linalg.qr(rng.normal(size=(n, 2)))[0]
    M = U - b.Q @ (b.Q.T @ U)
    d = m_error(U, b.Q, b.eta)
    Uf = [[Fraction(x) for x in row] for row in U.tolist()]
    ME = [[Fraction(M[i, k]) - Uf[i][k] + sum((P[i][j] * Uf[j][k] for j in range(n)), Fraction(0)) for k in range(2)]
          for i in range(n)]
    G = [[sum((ME[i][k] * ME[j][k] for k in range(2)), Fraction(0)) for j in range(n)] for i in range(n)]  # E E^T
    assert spectral_norm_at_most(G, d * d)  # ||E||_2^2 = ||E E^T||_2 <= d^2
