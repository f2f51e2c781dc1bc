"""The ReLU variation norm (Def 5.8) and the representability constant, against independent oracles.

Oracles: the exact convex program over *all* gating patterns (a group-lasso SOCP, solved by cvxpy:
the cost of the atoms of one pattern and sign is ``||S Phi theta||`` with ``theta`` in the pattern's
closed cone), the LP over every pattern's extreme-ray neurons (an upper bound: the normalized
neurons of one cone form a curved piece whose interior points are not convex combinations of the
rays), closed forms (a single neuron, the constant), and the invariances.
"""

from __future__ import annotations

import numpy as np
import pytest

from relu_gating.layers.variation import normalized_neurons, representability_constant, variation_norm
from relu_gating.errors import InputError
from relu_gating.patterns import enumerate_patterns


def _line(n: int, seed: int = 0) -> np.ndarray:
    x = np.sort(np.random.default_rng(seed).uniform(-1, 1, n))
    return np.c_[x, np.ones(n)]


def _plane(n: int, seed: int = 0) -> np.ndarray:
    return np.c_[np.random.default_rng(seed).normal(size=(n, 2)), np.ones(n)]


def _socp_norm(v: np.ndarray, Phi: np.ndarray) -> float:
    """||v||_A exactly: min sum_S,± ||S Phi theta_S±|| s.t. sum ± S Phi theta_S± = v, theta_S± in C_S."""
    import cvxpy as cp

    masks = enumerate_patterns(Phi).masks
    expr, cost, cons = 0, 0, []
    for mask in masks:
        A = np.where(mask, 1.0, -1.0)[:, None] * Phi
        G = mask[:, None] * Phi
        for sign in (1.0, -1.0):
            th = cp.Variable(Phi.shape[1])
            cons.append(A @ th >= 0)
            expr = expr + sign * (G @ th)
            cost = cost + cp.norm(G @ th)
    prob = cp.Problem(cp.Minimize(cost), [expr == v] + cons)
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == "optimal"
    return float(prob.value)


def _extreme_ray_lp(v: np.ndarray, Phi: np.ndarray) -> float:
    """LP over the normalized neurons of every pattern's extreme rays (Phi with 2 columns: cones are sectors)."""
    from scipy.optimize import linprog

    rays = []
    for mask in enumerate_patterns(Phi).masks:
        A = np.where(mask, 1.0, -1.0)[:, None] * Phi
        for a in A:
            for r in (np.array([-a[1], a[0]]), np.array([a[1], -a[0]])):
                if np.all(A @ r >= -1e-12 * np.linalg.norm(A, axis=1) * np.linalg.norm(r)):
                    rays.append(r)
    D, _ = normalized_neurons(Phi, np.array(rays))
    J = D.shape[1]
    res = linprog(np.ones(2 * J), A_eq=np.hstack([D, -D]), b_eq=v, bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


def test_single_neuron_and_constant_closed_forms():
    Phi = _line(7)
    h = np.maximum(Phi @ np.array([1.0, -0.2]), 0)
    r = variation_norm(h, Phi)
    # atoms are unit vectors, so ||v||_A >= ||v||; one neuron attains it
    assert r.certified and r.lower <= np.linalg.norm(h) * (1 + 1e-9) <= r.upper * (1 + 1e-9)
    assert r.upper - r.lower <= 1e-4 * r.upper
    c = variation_norm(np.full(7, 1 / np.sqrt(7)), Phi)  # the bias neuron
    assert c.lower <= 1 + 1e-9 and c.upper <= 1 + 1e-4


def test_decomposition_is_feasible_and_costs_upper():
    Phi = _plane(6, seed=1)
    v = np.random.default_rng(2).normal(size=6)
    r = variation_norm(v, Phi)
    D, keep = normalized_neurons(Phi, r.thetas)
    assert keep.size == r.thetas.shape[0]
    assert np.linalg.norm(D @ r.weights - v) <= 1e-8 * np.linalg.norm(v)
    assert np.isclose(np.abs(r.weights).sum(), r.upper, rtol=1e-9)
    # the dual certificate: |<y, d>| <= 1 on every atom, <y, v> = lower
    assert np.isclose(r.dual @ v, r.lower, rtol=1e-9)
    assert np.abs(r.dual @ D).max() <= 1 + 1e-6


@pytest.mark.parametrize("seed", [0])
def test_matches_socp_over_all_patterns(seed):
    Phi = _plane(6, seed=seed)
    v = np.random.default_rng(10 + seed).normal(size=6)
    r = variation_norm(v, Phi, tol=1e-5)
    exact = _socp_norm(v, Phi)
    assert r.certified
    assert r.lower * (1 - 1e-6) <= exact <= r.upper * (1 + 1e-6)


def test_extreme_ray_lp_is_an_upper_bound_and_socp_inside():
    Phi = _line(7, seed=3)
    v = np.random.default_rng(4).normal(size=7)
    r = variation_norm(v, Phi, tol=1e-5)
    lp = _extreme_ray_lp(v, Phi)
    exact = _socp_norm(v, Phi)
    assert r.lower <= lp * (1 + 1e-9)
    assert r.lower * (1 - 1e-6) <= exact <= r.upper * (1 + 1e-6)


def test_invariances_scaling_and_change_of_coordinates():
    Phi = _plane(6, seed=5)
    v = np.random.default_rng(6).normal(size=6)
    r = variation_norm(v, Phi)
    s = variation_norm(-3.0 * v, Phi)
    assert s.lower <= 3 * r.upper * (1 + 1e-9) and 3 * r.lower <= s.upper * (1 + 1e-9)
    R = np.array([[2.0, 1.0, 0.0], [0.5, -1.0, 0.0], [3.0, -2.0, 1.0]])  # invertible: same neurons
    t = variation_norm(v, Phi @ R)
    assert t.lower <= r.upper * (1 + 1e-9) and r.lower <= t.upper * (1 + 1e-9)


def test_outside_vp_is_infinite_and_zero_is_zero():
    Phi = np.r_[_plane(5, seed=7), _plane(5, seed=7)[:1]]  # rows 0 and 5 identical
    v = np.arange(6.0)
    r = variation_norm(v, Phi)
    assert r.lower == np.inf and r.upper == np.inf
    assert variation_norm(np.zeros(6), Phi).upper == 0.0


def test_bad_input_names_the_argument():
    Phi = _line(5)
    with pytest.raises(InputError, match="v"):
        variation_norm(np.ones(4), Phi)
    with pytest.raises(InputError, match="tol"):
        variation_norm(np.ones(5), Phi, tol=0)
    with pytest.raises(InputError, match="n_directions"):
        representability_constant(np.ones((5, 1)) / np.sqrt(5), Phi, n_directions=0)


@pytest.mark.slow
def test_representability_k1_is_the_norm_and_intervals_nest():
    Phi = _plane(8, seed=8)
    u = np.random.default_rng(9).normal(size=8)
    u /= np.linalg.norm(u)
    k = representability_constant(u[:, None], Phi)
    r = variation_norm(u, Phi)
    assert k.lower <= r.upper * (1 + 1e-6) and r.lower <= k.upper * (1 + 1e-6)
    U = np.linalg.qr(np.random.default_rng(10).normal(size=(8, 2)))[0]
    k2 = representability_constant(U, Phi, n_directions=4, refine=1)
    assert k2.lower <= k2.upper
    assert k2.upper <= np.sqrt(2) * k2.basis_norms[:, 1].max() * (1 + 1e-9)  # never worse than the paper's bound
    assert np.isclose(np.linalg.norm(k2.direction), 1.0)


def test_example_5_12_cluster_indicators():
    from relu_gating.experiments.clusters import K, cluster_data, omegas

    X, lab, W = cluster_data(6, 0.4, seed=0)
    Phi = np.c_[X, np.ones(6)]
    om = omegas(X, lab, W)
    chi = np.stack([(lab == c) / np.sqrt(np.sum(lab == c)) for c in range(K)], axis=1)
    k = representability_constant(chi, Phi, n_directions=K, refine=0)
    assert np.all(k.basis_norms[:, 0] <= 2 * om * (1 + 1e-9))  # ||chi_c||_A <= 2 omega_c
    assert k.lower <= 2 * np.sqrt(K) * om.max()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_matches_socp_larger(seed):
    """Also the decomposition's feasibility at this size."""
    Phi = _plane(12, seed=20 + seed)
    v = np.random.default_rng(30 + seed).normal(size=12)
    r = variation_norm(v, Phi, tol=1e-5)
    exact = _socp_norm(v, Phi)
    assert r.certified and r.lower * (1 - 1e-6) <= exact <= r.upper * (1 + 1e-6)
    D, _ = normalized_neurons(Phi, r.thetas)
    assert np.linalg.norm(D @ r.weights - v) <= 1e-8 * np.linalg.norm(v)
