"""Exact products on a dyadic grid (relu_gating.experiments._theory.dyadic / exact_product).

The experiments round data and constructed weights to a grid of 2^-16 so that
``relu(p) - relu(-p) = p`` holds exactly and ``col(Phi)`` lies exactly in the features of Prop 5.5;
the reference here is the same product in exact rationals.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from relu_gating.experiments._theory import GRID_BITS, column_basis, dyadic, exact_product


def _exact(A: np.ndarray, B: np.ndarray) -> list:
    return [[sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(row, col)) for col in B.T] for row in A]


@pytest.mark.parametrize("seed", range(5))
def test_product_is_exact(seed):
    rng = np.random.default_rng(seed)
    A = np.c_[rng.standard_normal((30, 2)) * 3, np.ones(30)]
    B = rng.standard_normal((3, 6)) * 5
    Aq, Bq, P = exact_product(A, B)
    assert np.all(Aq * 2.0**GRID_BITS == np.round(Aq * 2.0**GRID_BITS))
    assert np.abs(Aq - A).max() <= 2.0 ** -(GRID_BITS + 1)
    ref = _exact(Aq, Bq)
    assert all(Fraction(float(P[i, j])) == ref[i][j] for i in range(P.shape[0]) for j in range(P.shape[1]))
    assert np.array_equal(np.maximum(P, 0) - np.maximum(-P, 0), P)


def test_unrounded_product_is_not_exact():
    """The failing input: the same product of unrounded floats is off in exact arithmetic."""
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((30, 3)), rng.standard_normal((3, 6))
    P, ref = A @ B, _exact(A, B)
    assert any(Fraction(float(P[i, j])) != ref[i][j] for i in range(30) for j in range(6))


def test_too_large_magnitudes_are_refused():
    with pytest.raises(ValueError, match="too large"):
        exact_product(np.full((2, 3), 2.0**10), np.full((3, 2), 2.0**10))


def test_prop55_features_contain_col_phi_exactly():
    """On the grid, col(Phi) lies in col(H) exactly: Phi = H C solved in rationals has no residual."""
    from relu_gating.layers.networks import layer_input, preserving_layer

    rng = np.random.default_rng(3)
    X = dyadic(rng.standard_normal((12, 2)))
    Phi = layer_input(X)
    U = np.linalg.qr(rng.standard_normal((12, 3)))[0]
    P = exact_product(Phi, preserving_layer(Phi, U, seed=3).Theta)[2]
    H = column_basis(np.c_[np.maximum(P, 0), np.ones(12)])
    rank = np.linalg.matrix_rank
    assert rank(np.c_[H, Phi]) == rank(H)
    # the identity relu(p) - relu(-p) = p holds exactly, column by column, so each Phi theta_i is in col(H)
    assert np.array_equal(np.maximum(P, 0) - np.maximum(-P, 0), P)


def test_exact_neurons_are_exact_and_keep_the_span():
    """Each column is relu(Phi theta') with theta' = theta / 2^e on the grid, max |theta'| in [1/2, 1)."""
    from relu_gating.experiments._theory import exact_neurons

    rng = np.random.default_rng(1)
    Phi = np.c_[dyadic(rng.standard_normal((20, 2))), np.ones(20)]
    thetas = rng.standard_normal((3, 3)) * np.array([[1e-3], [1.0], [40.0]])
    R = exact_neurons(Phi, thetas)
    for j, th in enumerate(thetas):
        scaled = th / 2.0 ** np.frexp(np.abs(th).max())[1]
        assert 0.5 <= np.abs(scaled).max() < 1.0
        P = exact_product(Phi, scaled[:, None])[2][:, 0]
        assert np.array_equal(R[:, j], np.maximum(P, 0))
        assert np.allclose(R[:, j] * 2.0 ** np.frexp(np.abs(th).max())[1], np.maximum(Phi @ th, 0), atol=1e-3)
