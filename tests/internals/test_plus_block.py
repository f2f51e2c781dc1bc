"""The ``+`` block of the tree node bound with explicit features (greedy layers on the branch and bound).

A node's active rows ``S`` carry ``h = Phi_S theta``, so its block is the complement of
``span([Phi_S, H_S])``. Two cases made that span unprovable and the block was dropped (a valid, far
weaker bound), so greedy steps were not certified:

* a feature column lying in ``col(Phi)`` (the bias passed as an explicit ones column, as every greedy
  layer does): ``[Phi_S, H_S]`` is rank-deficient on every node. Such columns are now decided
  exactly and left out, by the search (``certificate._tree.plus_features``) and by the checker;
* a feature ``relu(Phi theta_1)`` of an earlier greedy step, equal to ``Phi_S theta_1`` on ``S`` up
  to rounding: nearly rank-deficient, the small direction real. The search now proves a whitened
  basis of the stated data (the checker already did), a product in twice the working precision
  (``solvers.matmul2``, tested against rationals with the checker's own in
  ``test_checker_whiten.py``), and refuses one where the dependence is exact.

Oracles: the bias case's bound; exact rationals for the product and the projector; the checker's
own bound; neurons sampled inside a node as lower bounds of its bound.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating.search.proofs._node import _whitened_basis, in_phi_columns, node_bound, node_problem
from relu_gating.checker._problem import state_problem
from relu_gating.checker._tree import _Node, node_bound as checker_node_bound
from relu_gating.search.objectives import make_objective, neuron_values


def _data(seed: int, n: int = 30, d: int = 3):
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    U, _ = np.linalg.qr(rng.normal(size=(n, 3)))
    return Phi, U, rng


def _search_problem(Phi, U, features):
    obj = make_objective(Phi, U, features)
    return obj, node_problem(obj.Phi, obj.Psi, obj.M, obj.Q_H, obj.feature_matrix, obj.cap)


def _signs(rng, n: int, p=(0.3, 0.4, 0.3)) -> np.ndarray:
    return rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=n, p=list(p))


def test_which_feature_columns_lie_in_col_phi_is_decided_exactly():
    Phi, _, rng = _data(0)
    h = np.maximum(Phi @ rng.normal(size=4), 0)
    H = np.c_[np.ones(30), 3.0 * np.ones(30), Phi[:, 1], Phi[:, 1] * (1 + 2**-52), h, np.zeros(30)]
    assert in_phi_columns(Phi, H).tolist() == [True, True, True, False, False, True]
    assert not in_phi_columns(Phi[:, :3], H)[:2].any()  # no constant column in Phi: the ones are not in it


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_an_explicit_ones_column_bounds_a_node_as_the_bias_does(seed):
    """Search and checker: the node bound with ``H`` the ones column equals the bias's (it was the
    bound without the ``+`` block: ``[Phi_S, 1_S]`` is rank-deficient)."""
    Phi, U, rng = _data(seed)
    ones = np.ones((30, 1))
    _, Pb = _search_problem(Phi, U, "bias")
    _, Ph = _search_problem(Phi, U, ones)
    Nb, Nh = _Node(state_problem(Phi, U, "bias")), _Node(state_problem(Phi, U, ones))
    for _ in range(5):
        signs = _signs(rng, 30)
        assert node_bound(Ph, signs) == pytest.approx(node_bound(Pb, signs), abs=1e-9)
        assert checker_node_bound(Nh, signs) == pytest.approx(checker_node_bound(Nb, signs), abs=1e-9)


def _greedy_node(seed: int):
    """Features ``[1, relu(Phi theta_1)]`` (float outputs, as a greedy layer's) and a node whose
    active rows lie inside ``theta_1``'s: ``[Phi_S, h_S]`` is nearly rank-deficient there."""
    Phi, U, rng = _data(seed, n=40)
    theta1 = rng.normal(size=4)
    theta1[-1] = abs(theta1[-1]) + 0.5  # its bias puts most rows active
    H = np.c_[np.ones(40), np.maximum(Phi @ theta1, 0)]
    act = Phi @ theta1 > 0
    v = theta1 + 0.2 * rng.normal(size=4)  # a neuron whose active rows overlap theta_1's
    signs = np.where((Phi @ v > 0) & act & (rng.uniform(size=40) < 0.7), 1, np.where(Phi @ v > 0, 0, -1))
    return Phi, U, H, signs.astype(np.int8), v, act


@pytest.mark.parametrize("seed", range(8))
def test_a_nearly_dependent_plus_block_is_kept_and_its_bound_holds(seed):
    Phi, U, H, signs, v, act = _greedy_node(seed)
    plus = signs > 0
    assert plus.sum() > 6 and np.all(act[plus])
    obj, P = _search_problem(Phi, U, H)
    s = np.linalg.svd(np.c_[Phi[plus], H[plus, 1]], compute_uv=False)
    assert s[-1] < 1e-12 * s[0]  # nearly rank-deficient, as the greedy's nodes are
    u = node_bound(P, signs)
    N = _Node(state_problem(Phi, U, H))
    assert u == pytest.approx(checker_node_bound(N, signs), abs=1e-9)  # the checker proves what the search claims
    no_plus = signs.copy()
    no_plus[plus] = 0  # the same node without its + block's rows decided: a bound at least as weak
    assert u < node_bound(P, no_plus) - 1e-6  # the block is used
    # lower bounds: neurons of the node (rows of ``signs`` respected) never exceed its bound
    rng = np.random.default_rng(seed)
    dec = signs != 0
    th = v + 0.05 * rng.normal(size=(4000, 4))
    inside = np.all(np.sign(th @ Phi[dec].T) == signs[dec], axis=1)
    vals = np.nan_to_num(neuron_values(obj, th[inside]), nan=-np.inf)
    assert inside.sum() > 0 and vals.max() <= u + 1e-9


def test_an_exactly_dependent_block_is_refused():
    """``[A, A c]`` with the product exact (dyadic data): rank-deficient in exact arithmetic, so no
    whitened basis may be proven (a float could show it full rank by a rounding)."""
    rng = np.random.default_rng(3)
    A = np.round(rng.normal(size=(12, 4)) * 2**10) / 2**10
    c = np.round(rng.normal(size=4) * 2**8) / 2**8
    X = np.c_[A, A @ c]  # exact: 18-bit products, sums far below 2^53
    assert all(Fraction(float(x)) == sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(row, c))
               for x, row in zip(X[:, 4], A))
    assert _whitened_basis(X)[1] == np.inf
