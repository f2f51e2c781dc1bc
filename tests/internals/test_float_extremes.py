"""No float decides at the ends of the float range (issue 37): each place where a float product or norm
overflowed (or became nan) on inputs near ``2^±1023``, against exact rationals (fractions.Fraction).

Every test here failed on the code before: an overflow warning (raised as an error by this module's
filter) or a wrong or missing result.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from _exact_reference import exact_features, exact_objective, exact_projector, spectral_norm_at_most

import relu_gating as rg

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

EPS = 2.0**-52


def _exact_sign(row, theta) -> int:
    s = sum((Fraction(float(a)) * Fraction(float(t)) for a, t in zip(row, theta)), Fraction(0))
    return (s > 0) - (s < 0)


def _norm_within(got: float, vec, rel: float) -> bool:
    """``got`` is the Euclidean norm of ``vec`` to a relative ``rel`` plus ``2^-1074`` (a subnormal result's
    last rounding), decided in rationals."""
    S = sum((Fraction(float(x)) ** 2 for x in vec), Fraction(0))
    g, tiny = Fraction(got), Fraction(2) ** -1074
    return max(g * (1 - Fraction(rel)) - tiny, Fraction(0)) ** 2 <= S <= (g * (1 + Fraction(rel)) + tiny) ** 2


# Phi theta overflows: 2^600 times weights of 2^500 (inf - inf = nan on row 0)
PHI_BIG = np.array([[2.0**600, -(2.0**600) * (1 - EPS)], [-(2.0**600), 0.0], [1.0, 1.0], [2.0**-1000, -(2.0**-1000)]])
THETA_BIG = np.array([2.0**500, 2.0**500])


def test_exact_signs_of_products_beyond_the_float_range():
    """Row 0 is ``2^1100 2^-52 > 0`` exactly; in floats ``inf - inf`` (nan, "not positive")."""
    from relu_gating.search._exact.signs import exact_signs, scaled_products

    want = [_exact_sign(r, THETA_BIG) for r in PHI_BIG.tolist()]
    assert want == [1, -1, 1, 0]
    assert exact_signs(PHI_BIG, THETA_BIG).tolist() == want
    z = scaled_products(PHI_BIG, THETA_BIG)
    assert np.all(np.isfinite(z)) and np.sign(z[1:3]).tolist() == want[1:3]


@pytest.mark.parametrize("strategy", ["enumerate", "branch-and-bound"])
def test_reported_pattern_is_the_exact_signs(strategy):
    """The issue's extreme-range example with the bias: the reported neuron is ``(3.1e172, -9e15)``
    against a row of ``-2^511`` (the product overflowed); its pattern is the exact signs."""
    A = 2.0**-520 * (1 + 2**-52)
    Phi = np.array([[-(2.0**511), 0], [A, 1], [-(2.0**-520), -1], [0, 0]])
    U = np.array([[0.0], [1], [1], [0]]) / np.sqrt(2)
    res = rg.best_neuron(Phi, U, features="bias", strategy=strategy)
    want = [_exact_sign(r, res.theta) > 0 for r in Phi.tolist()]
    assert res.pattern.tolist() == want
    rep = rg.verify(res, Phi, U, features="bias")
    assert rep.valid, rep.reasons


def test_pow2_norms_against_rationals():
    from relu_gating._inputs.scaling import pow2_norms

    rows = [[2.0**1000, 2.0**1000, 3.0], [2.0**-1074, 3 * 2.0**-1074, 0.0], [1.0, -2.0, 2.0], [0.0, 0.0, 0.0],
            [2.0**1023, 1.0, 2.0**-1074]]
    got = pow2_norms(np.array(rows), axis=1)
    assert np.all(np.isfinite(got))
    for g, r in zip(got.tolist(), rows):
        assert _norm_within(g, r, 4 * EPS), (g, r)
    assert np.array_equal(pow2_norms(np.array(rows[2:4]), axis=1), np.linalg.norm(np.array(rows[2:4]), axis=1))


def test_checker_frobenius_norm_against_rationals():
    from relu_gating.checker._floats import fro

    for A in ([[2.0**700, -(2.0**700)], [2.0**-1074, 1.0]], [[2.0**-1074, 2.0**-1073]], [[3.0, 4.0]],
              [[2.0**1023, 2.0**1023]]):
        a = np.array(A)
        got = fro(a)
        S = sum((Fraction(float(x)) ** 2 for x in a.ravel()), Fraction(0))
        if S > Fraction(np.finfo(float).max) ** 2:
            assert got == math.inf
            continue
        assert math.isfinite(got) and _norm_within(got, a.ravel(), 8 * EPS), (A, got)


def test_checker_basis_of_columns_far_apart():
    """``X = [1, 2^-1074 e_0]`` (the feature block of a tree leaf: ``H``'s column ``[2^511, 2^-564, 0..]``
    scaled exactly): exact rank 2; the float inverse of its singular values overflowed, and no
    ``eta`` was proven.  Now the columns are scaled exactly and ``eta`` is proven small; checked
    against the exact projector."""
    from relu_gating.checker._whiten import basis

    X = np.c_[np.ones(5), np.r_[2.0**-1074, np.zeros(4)]]
    O, eta = basis(X)
    assert eta < 1e-12
    P = exact_projector(X)
    OO = O @ O.T
    D = [[P[i][j] - Fraction(float(OO[i, j])) for j in range(5)] for i in range(5)]
    # O O^T is rounded (about 1e-16 per entry): eta plus that rounding bounds ||P - fl(O O^T)||
    assert spectral_norm_at_most(D, eta + 1e-14)


def test_generator_steps_of_nearly_parallel_generators_are_finite():
    """Generators ``[0, 0, 1]`` and ``[-1.7e-310, 0, 1]``: the step solving ``a_S u = (-1, 1)`` is
    ``(-1.15e310, 0, -1)``, beyond the float range; it was ``inf`` and the witness nan.  Now a step is
    finite, and where it is not 0 its signs on the generators are right (exactly)."""
    from relu_gating.patterns._sweep_level import _generator_steps

    As = np.array([[[0.0, 0.0, 1.0], [-1.73833895e-310, 0.0, 1.0]], [[-1.0, -1.0, 1.0], [0.0, 0.0, 1.0]]])
    sg = np.array([[-1.0, 1.0], [-1.0, -1.0]])
    vh = np.array([[0.0, -1.0, 0.0], [-0.5**0.5, 0.5**0.5, 0.0]])
    u = _generator_steps(As, sg, vh)
    assert np.all(np.isfinite(u))
    for b in range(2):
        if np.any(u[b]):
            assert [_exact_sign(a, u[b]) for a in As[b].tolist()] == sg[b].tolist()
    assert np.any(u[1])


def test_enumerated_witnesses_of_a_column_spanning_2_to_the_1000_are_finite():
    Phi = np.array([[-7.229475734293037e+221, -1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0],
                    [-1.256727927116218e-88, 0.0, 1.0]])
    ps = rg.enumerate_patterns(Phi)
    assert len(ps.masks) == 8 and np.all(np.isfinite(ps.witnesses))


def test_neuron_values_of_weights_whose_products_overflow():
    """``theta = (2^600, 1)`` on a row of ``2^511``: ``Phi theta`` overflowed to inf and the neuron was
    taken as excluded; its value is the exact one."""
    from relu_gating.search.objectives import make_objective, neuron_values

    Phi = np.array([[2.0**511, 1.0], [2.0**510, 1.0], [-(2.0**511), 1.0], [0.0, 1.0], [2.0**509, -1.0]])
    U = np.linalg.qr(np.random.default_rng(3).normal(size=(5, 2)))[0]
    theta = np.array([2.0**600, 1.0])
    for features in (None, "bias"):
        obj = make_objective(Phi, U, features)
        got = float(neuron_values(obj, theta)[0])
        want = exact_objective(Phi, U, exact_features(features, 5), theta)
        assert want is not None and abs(got - float(want)) <= 1e-12, (features, got, float(want))
