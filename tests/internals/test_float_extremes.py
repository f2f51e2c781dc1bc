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


# ---- the norms of the search (issue 37, Trust III): every one scaled by a power of two, or bounded ----

def _fraction_norm(vec) -> Fraction:
    """``||vec||^2`` in rationals."""
    return sum((Fraction(float(x)) ** 2 for x in vec), Fraction(0))


def test_unit_rows_are_unit_against_rationals():
    """Rows of ``2^±1000`` scale: ``v / np.linalg.norm(v)`` was ``nan`` (a square overflowed, or every
    square underflowed to 0 and the row was divided by a floor of 1e-300); each row is now unit to 8 u."""
    from relu_gating._inputs.scaling import unit_rows

    rows = np.array([[2.0**1000, -(2.0**1000), 3.0], [2.0**-1074, 3 * 2.0**-1074, 0.0], [1e-200, 2e-200, 0.0],
                     [1.0, -2.0, 2.0], [0.0, 0.0, 0.0]])
    got = unit_rows(rows)
    assert np.all(np.isfinite(got)) and not got[4].any()
    for g, r in zip(got[:4], rows[:4]):
        assert abs(_fraction_norm(g) - 1) <= 8 * Fraction(EPS)
        # the same direction: each entry is the row's entry over one common positive factor (to rounding)
        ratios = [Fraction(float(a)) / Fraction(float(b)) for a, b in zip(g, r) if b]
        assert max(ratios) - min(ratios) <= 4 * Fraction(EPS) * max(ratios)


def test_node_frobenius_norm_at_the_ends_of_the_float_range():
    """The node bound's Frobenius norm was the float dot product ``a @ a``: ``inf`` (with an overflow)
    for entries of 2^600, and 0 for entries of 2^-600 (every square underflowed)."""
    from relu_gating.search.proofs._node import _fro

    for A in ([[2.0**600, 1.0], [-(2.0**600), 0.0]], [[2.0**-600, 0.0], [3 * 2.0**-600, 0.0]], [[3.0, 4.0]],
              [[2.0**-1074, 0.0]]):
        a = np.array(A)
        got = _fro(a)
        assert math.isfinite(got) and got > 0 and _norm_within(got, a.ravel(), 8 * EPS), (A, got)
    assert _fro(np.zeros((2, 2))) == 0.0


def test_stack_frobenius_norms_keep_entries_near_2_to_the_minus_537():
    """The bound pass's Frobenius norms (rounding allowances of ``mu B - A``): a pencil of entries 1e-200
    had norm 0 (every square underflowed), an allowance taken as nothing; now each is the norm to 8 u."""
    from relu_gating.search._kernels.stacks import frob

    X = np.zeros((2, 2, 4))
    X[:, :, 0] = [[1e-200, -3e-200], [0.0, 2e-170]]
    X[:, :, 1] = [[3.0, 4.0], [0.0, 0.0]]
    X[:, :, 3] = [[2.0**-1074, 0.0], [1.0, 0.0]]
    got = frob(X)
    assert got[2] == 0.0
    for k in (0, 1, 3):
        assert math.isfinite(got[k]) and _norm_within(got[k], X[:, :, k].ravel(), 8 * EPS), (k, got[k])


def test_node_sigma_min_of_a_tiny_block_is_a_proven_positive_bound():
    """``Y = diag(2^-600, 3 2^-601)``: its inverse is ``2^600``-sized, whose Frobenius norm overflowed
    (an overflow, and the bound 0).  Now a positive lower bound, at most the exact ``sigma_min``."""
    from relu_gating.search.proofs._node import _sigma_min_lower

    Y = np.diag([2.0**-600, 3 * 2.0**-601])
    got = _sigma_min_lower(Y)
    assert 0 < got and Fraction(got) <= Fraction(2) ** -600
    assert got >= 0.5 * 2.0**-600  # (1 - beta) / ||Y^-1||_F: within sqrt(1 + 4/9) of sigma_min here


def test_node_sigma_min_never_returns_nan():
    """An approximate inverse whose products overflow (``inf - inf``): ``beta`` was nan, ``nan >= 0.5`` is
    False and the 'proven' bound was nan; now 0 (no bound)."""
    from relu_gating.search.proofs._node import _sigma_min_lower

    Y = np.array([[1.0, 1.0], [1.0, -1.0]])
    Z = np.array([[1e300, 1e300], [1e300, 1e300]])
    assert _sigma_min_lower(Y, Z) == 0.0


def test_dual_multipliers_of_rows_far_apart_are_unnormalized_exactly():
    """``a Nn_ij / (c_i c_j)`` for row norms ``c`` of ``2^±600``: ``np.outer(c, c)`` overflowed (or
    underflowed to 0 and the division made inf); now each entry is the exact quotient (powers of two)
    or 0 where it leaves the float range (a smaller multiplier: a valid, weaker bound)."""
    from solvers.dual import _unnormalized

    c = np.array([2.0**600, 1.5, 2.0**-600])
    Nn = np.array([[1.0, 0.5, 0.25], [0.5, 1.0, 0.75], [0.25, 0.75, 1.0]])
    got = _unnormalized(Nn, 3.0, c)
    assert np.all(np.isfinite(got)) and np.all(got >= 0)
    for i in range(3):
        for j in range(3):
            want = 3 * Fraction(float(Nn[i, j])) / (Fraction(float(c[i])) * Fraction(float(c[j])))
            if Fraction(2) ** -1022 <= want <= Fraction(np.finfo(float).max):
                assert abs(Fraction(float(got[i, j])) - want) <= 4 * Fraction(EPS) * want, (i, j)
            else:
                assert Fraction(float(got[i, j])) <= want, (i, j)


def test_normalized_theta_of_weights_whose_products_overflow():
    """``theta = (2^30, 2^20)`` on rows of ``2^1000``: ``Phi theta`` overflowed and ``theta`` was returned
    unnormalized; now ``||relu(Phi theta)|| = 1`` to rounding (in rationals), and where a weight would
    leave the float range ``theta`` is kept as it is."""
    from relu_gating.search.objectives import make_objective, normalized_theta

    Phi = np.array([[2.0**1000, 1.0], [2.0**999, -1.0], [-(2.0**1000), 1.0], [0.0, 1.0]])
    obj = make_objective(Phi, np.array([[1.0], [0.0], [0.0], [0.0]]))
    theta = np.array([2.0**30, 2.0**20])
    got = normalized_theta(obj, theta)
    h = [max(sum((Fraction(float(a)) * Fraction(float(t)) for a, t in zip(row, got)), Fraction(0)), Fraction(0))
         for row in Phi.tolist()]
    assert abs(sum(x * x for x in h) - 1) <= 16 * Fraction(EPS)
    assert got[0] / theta[0] == got[1] / theta[1] > 0  # a positive multiple: the same pattern
    wide = np.array([1.0, 2.0**-300])  # ||h|| ~ 2^1000: 2^-1300 would lose its bits
    assert np.array_equal(normalized_theta(obj, wide), wide)


def test_wedge_rows_see_rows_below_2_to_the_minus_537():
    """The wedge's most violated rows, normalized: a row of ``Psi`` of ``1e-200`` had norm 0 (its squares
    underflowed) and was never chosen (no pair of violated rows); the choice is now the exact argmin
    and argmax of the normalized products."""
    from types import SimpleNamespace

    from relu_gating.search._kernels.wedge import _rows

    Psi = np.array([[1.0, 0.0], [-1e-200, -1e-200], [0.0, 1.0]])
    x = np.array([[1.0], [0.2]])
    masks = np.array([[True, True, True]])
    a, b, ok = _rows(SimpleNamespace(Psi=Psi), masks, x)
    z = [sum(Fraction(float(p)) * Fraction(float(v)) for p, v in zip(row, x[:, 0])) for row in Psi.tolist()]
    zn = [math.copysign(math.sqrt(v * v / _fraction_norm(row)), v) if any(row) else 0.0 for v, row in zip(z, Psi.tolist())]
    assert int(a[0]) == int(np.argmin(zn)) == 1 and int(b[0]) == int(np.argmax(zn)) == 0 and ok[0]  # both violated


def test_positive_dependency_of_a_row_below_2_to_the_minus_537():
    """Rows ``2^-700`` and ``-1`` (both active): ``2^700 row_0 + row_1 = 0``.  The row norm of ``2^-700``
    underflowed to 0 and no dependency was sought; it is found, and checked in rationals."""
    from relu_gating.search.bnb._zero import positive_dependency

    Phi = np.array([[2.0**-700], [-1.0]])
    signs = np.array([1, 1])
    got = positive_dependency(Phi, Phi.copy(), signs, np.zeros(2, dtype=bool), 1)
    assert got is not None
    rows, y = got
    assert sorted(rows.tolist()) == [0, 1] and all(v > 0 for v in y)
    for col in range(1):
        assert sum(v * int(signs[k]) * Fraction(float(Phi[k, col])) for v, k in zip(y, rows.tolist())) == 0


# rows scaled by t (whole rows, not columns): the squares of the search's basis rows underflow.  (seed, t):
# before, (1, 1e-250) overflowed in the SDP multipliers' row scales, (2, 1e-300) in the node bound's norm,
# (1, 5e-310) in the chamber's coordinates (V / s), (0, 5e-310) in the checker's witness test (1 / row sum)
TINY_ROWS = [(1, 1e-250), (2, 1e-300), (1, 5e-310), (0, 5e-310)]


@pytest.mark.parametrize("features", [None, "bias"])
@pytest.mark.parametrize("seed, t", TINY_ROWS)
def test_tiny_rows_make_no_false_claims(seed, t, features):
    """Two of seven rows of ``X`` scaled by ``t``.  Each result's value is the exact value of its neuron,
    and no certified bound (search, float and exact verify) is below the exact value of the neurons
    exhibited (the results' own and 200 random ones)."""
    rng = np.random.default_rng([37, seed])
    X = rng.normal(size=(7, 2))
    X[2] *= t
    X[5] *= t
    U = np.linalg.qr(rng.normal(size=(7, 1)))[0]
    basis = exact_features(features, 7)
    exhibit = list(np.random.default_rng(seed).normal(size=(200, 2)))
    for strategy in ("enumerate", "branch-and-bound"):
        res = rg.best_neuron(X, U, features=features, strategy=strategy)
        want = exact_objective(X, U, basis, res.theta)
        assert want is not None and abs(res.value - float(want)) <= 1e-9, (strategy, res.value)
        best = max(float(v) for v in (exact_objective(X, U, basis, th) for th in exhibit + [res.theta]) if v is not None)
        assert not res.certified or res.upper_bound >= best - 1e-9
        for exact in (False, True):
            rep = rg.verify(res, X, U, features=features, exact=exact)
            assert rep.valid and (not rep.certified or rep.upper_bound >= best - 1e-9), (strategy, exact)
