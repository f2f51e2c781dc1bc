"""A chamber's own coordinates and float points strictly inside thin chambers
(relu_gating.search._exact.chamber_coords, relu_gating.search._exact.float_point).

The references here share no code with the modules: exact rationals (fractions.Fraction) for the
basis ``L = diag(c) Phi C``, for the signs of a point and for the objective of the issue-37 examples.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from _exact_reference import interior

from relu_gating.search._exact import chamber_coords as cc
from relu_gating.search._exact.float_point import float_points, strictly_inside
from relu_gating.search.objectives import make_objective

# at the ends of the float range nothing overflows or turns nan unnoticed (issue 37)
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

A = 2.0**-520 * (1 + 2**-52)
PHI_RANGE = np.array([[-2.0**511, 0], [A, 1], [-2.0**-520, -1], [0, 0]])
U_PAIR = np.array([[0.0], [1], [1], [0]]) / np.sqrt(2)
PHI_SCALE = np.array([[1.4791513063353245e+82, 1.0], [1.8152061871066688e+280, 1.0], [0.0, 1.0], [0.0, 1.0]])


def _pair_value(Phi: np.ndarray, theta) -> Fraction:
    """``N_K`` of ``relu(Phi theta)`` for ``U_K`` the pair of rows 1 and 2, exactly (up to the rounding
    of ``1/sqrt 2``, which is the same factor 2 u^2 on every neuron: returned without it)."""
    th = [t if isinstance(t, Fraction) else Fraction(float(t)) for t in theta]
    h = [max(sum(Fraction(float(a)) * t for a, t in zip(row, th)), Fraction(0)) for row in Phi]
    return (h[1] + h[2]) ** 2 / (2 * sum(x * x for x in h))


def test_the_rounded_optimum_leaves_the_thin_chamber_and_a_multiple_stays():
    """The optimum's direction (1, -2^-520 (1 + 2^-53)) rounds onto a wall; a candidate strictly inside
    (decided here in rationals) reaches the exact optimum 1 to 1e-15."""
    mask = np.array([False, True, True, False])
    theta = [Fraction(1), -Fraction(2) ** -520 * (1 + Fraction(2) ** -53)]
    assert _pair_value(PHI_RANGE, theta) == 1
    assert not interior(PHI_RANGE, mask, [float(t) for t in theta])
    got = float_points(PHI_RANGE, mask, theta)
    assert got and all(interior(PHI_RANGE, mask, t) for t in got)
    assert max(_pair_value(PHI_RANGE, t) for t in got) >= 1 - Fraction(1, 10**15)


@pytest.mark.parametrize("seed", range(4))
def test_strictly_inside_agrees_with_the_reference(seed):
    rng = np.random.default_rng([37, seed])
    Phi = np.c_[rng.normal(size=(7, 2)) * 2.0 ** rng.integers(-300, 300, size=(1, 2)), np.ones(7)]
    Phi[rng.integers(0, 7)] = 0.0
    for theta in rng.normal(size=(30, 3)):
        z = np.array([float(sum(Fraction(float(a)) * Fraction(float(t)) for a, t in zip(r, theta))) for r in Phi])
        for mask in (z > 0, ~(z > 0), rng.integers(0, 2, size=7).astype(bool)):
            assert strictly_inside(Phi, mask, theta) == interior(Phi, mask, theta)


@pytest.mark.parametrize("Phi, mask", [(PHI_SCALE, [True, False, True, True]), (PHI_RANGE, [False, True, True, False])])
def test_local_basis_is_phi_times_the_exact_inverse(Phi, mask):
    """Rows of the chosen active rows are unit vectors; every row is ``2^e_i phi_i C`` rounded once (``e_i = 0``
    on active rows), with ``Phi_0 C = I`` exactly."""
    mask = np.array(mask)
    obj = make_objective(Phi, U_PAIR if Phi is PHI_RANGE else np.eye(4)[:, :1], None)
    lb = cc.local_basis(obj, mask)
    assert lb is not None
    C = lb.C
    for i in range(Phi.shape[0]):
        exact = [sum(Fraction(float(a)) * C[k][j] for k, a in enumerate(Phi[i])) * Fraction(2) ** int(lb.scale_exp[i])
                 for j in range(Phi.shape[1])]
        assert lb.scale_exp[i] == 0 or not mask[i]
        for x, y in zip(lb.L[i].tolist(), exact):
            assert x == float(y)  # rounded once
    units = [i for i in range(Phi.shape[0]) if mask[i] and sorted(lb.L[i].tolist()) == [0.0, 1.0]]
    assert len(units) >= Phi.shape[1]


def test_evidence_maps_back_by_the_row_scales_exactly():
    rows = np.array([0, 2])
    N = np.array([[0.5, 0.25], [0.25, 3.0]])
    got = cc.evidence_to_rows((rows, N), np.array([-300, 0, 7, 0]))
    assert got is not None and np.array_equal(got[0], rows)
    assert got[1][0, 0] == 0.5 * 2.0**-600 and got[1][0, 1] == 0.25 * 2.0**-293 and got[1][1, 1] == 3.0 * 2.0**14
    assert cc.evidence_to_rows((rows, N), np.array([-600, 0, 7, 0])) is None  # 2^-1200 underflows: dropped


def test_evidence_that_would_lose_bits_is_dropped():
    got = cc.evidence_to_rows((np.array([0, 1]), np.array([[1.0, 0.5], [0.5, 1.0]])), np.array([-540, -540]))
    assert got is None  # 2^-1080 underflows


def test_needs_local_on_the_chamber_scaled_by_an_inactive_row():
    """The global basis keeps one direction of the chamber {0, 2, 3} (B_S ~ 1e-396 underflows); its own
    scaling keeps two."""
    obj = make_objective(PHI_SCALE, np.eye(4)[:, :1], "bias")
    assert cc.needs_local(obj, np.array([True, False, True, True]), 1)
    assert not cc.needs_local(obj, np.array([True, False, True, True]), 2)
