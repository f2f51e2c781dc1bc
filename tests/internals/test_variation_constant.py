"""The variation norm's first certified lower end ``||v||_A >= ||v||`` and the constant neuron in its pool.

Every kappa bracket starts with the constant vector (a connected graph's first Laplacian vector), one
atom: ``||v||_A = ||v||``.  Oracles: the norm's bounds and the dual's length in exact rationals
(``fractions``), the one-atom decomposition ``relu(Phi e_bias) / ||.||`` written out by hand, the LP over
dense sampled neurons (an upper end on any norm: every lower end lies below it).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from relu_gating.layers import variation
from relu_gating.layers.variation import variation_norm
from relu_gating.patterns import enumerate_patterns
from _variation_reference import dense_atoms, dyadic_phi, lp_upper


@pytest.mark.parametrize("seed", range(6))
def test_norm_bounds_and_dual_are_rigorous(seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(rng.integers(1, 1200)) * 10.0 ** rng.integers(-150, 150)
    lo, hi = variation._norm_bounds(v)
    q = sum((Fraction(x) ** 2 for x in v.tolist()), Fraction(0))
    assert Fraction(lo) ** 2 <= q <= Fraction(hi) ** 2
    assert math.nextafter(hi, 0.0) ** 2 < float(q) * (1 + 1e-12)  # tight: a few ulps
    low, y = variation._trivial_dual(v)
    assert low == lo
    assert sum((Fraction(x) ** 2 for x in y.tolist()), Fraction(0)) <= 1  # |<y, d>| <= ||y|| <= 1 on atoms
    assert float(y @ v) > (1 - 1e-12) * lo


def test_zero_and_tiny_vectors():
    assert variation._trivial_dual(np.zeros(5))[0] == 0.0
    lo, hi = variation._norm_bounds(np.array([5e-324, 0.0]))
    assert lo <= 5e-324 <= hi


def test_bias_theta_is_exact_or_none():
    Phi = dyadic_phi(12, 0)
    assert np.array_equal(variation._bias_theta(Phi), [0.0, 0.0, 1.0])
    assert np.array_equal(Phi @ variation._bias_theta(Phi), np.ones(12))
    Q = Phi @ np.array([[1.0, 0, 0], [0, 1, 0], [2.0, 0, 0.5]])  # the bias in col(Phi), not a column
    c = variation._bias_theta(Q)
    assert c is None or np.array_equal(Q @ c, np.ones(12))
    assert variation._bias_theta(Phi[:, :2]) is None  # no constant in col(Phi) (generic points)


@pytest.mark.parametrize("pricing", ["early", "cone"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_constant_vector_closes_at_the_first_round(pricing, sign):
    Phi = dyadic_phi(40, 1)
    v = sign * np.full(40, 0.3)
    rounds = []
    r = variation_norm(v, Phi, tol=1e-3, patterns=enumerate_patterns(Phi), pricing=pricing,
                       on_round=lambda it, lo, up: rounds.append((it, lo, up)))
    norm2 = Fraction(0.3) ** 2 * 40  # ||v||^2 exactly (0.3 as stored)
    assert r.certified and len(rounds) == 1
    assert Fraction(r.lower) ** 2 <= norm2  # a certified lower end: at most ||v|| (= ||v||_A)
    assert r.lower >= np.linalg.norm(v) * (1 - 1e-15)
    d = np.maximum(Phi @ np.array([0.0, 0.0, 1.0]), 0.0)  # the one atom, by hand
    assert abs(r.upper - abs(v @ d) / np.linalg.norm(d)) <= 1e-12 * r.upper
    assert float(np.sum(r.dual ** 2)) <= 1.0 + 1e-15 and float(r.dual @ v) >= r.lower * (1 - 1e-12)


@pytest.mark.parametrize("pricing", ["early", "cone"])
def test_other_targets_stay_below_the_dense_lp(pricing):
    Phi = dyadic_phi(36, 4)
    pats = enumerate_patterns(Phi)
    D = dense_atoms(Phi, pats.witnesses)
    v = np.sin(2 * Phi[:, 0]) + 0.5 * np.abs(Phi[:, 1])
    r = variation_norm(v, Phi, tol=1e-2, patterns=pats, pricing=pricing)
    assert r.certified
    assert np.linalg.norm(v) * (1 - 1e-15) <= r.lower <= lp_upper(v, D) * (1 + 1e-9)
    assert r.upper >= r.lower
