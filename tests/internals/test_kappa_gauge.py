"""The weighted-hull upper end on kappa (``_gauge_upper``) against an LP oracle, and the adaptive steps."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from relu_gating.layers.variation import _gauge_upper, representability_constant, variation_norm


def _gauge_lp(V: np.ndarray, c: np.ndarray) -> float:
    """min sum |lambda| s.t. V^T lambda = c (an independent LP: the gauge of conv(±V) at c)."""
    J = V.shape[0]
    res = linprog(np.ones(2 * J), A_eq=np.hstack([V.T, -V.T]), b_eq=c, bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("K", [2, 3, 4])
@pytest.mark.parametrize("seed", range(3))
def test_gauge_upper_bounds_the_lp_gauge_everywhere_and_is_attained(K, seed):
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((3 * K + 2, K))
    C = np.vstack([np.eye(K), C / np.linalg.norm(C, axis=1, keepdims=True)])
    ups = rng.uniform(0.5, 3.0, size=C.shape[0])
    V = C / ups[:, None]
    bound, worst = _gauge_upper(C, ups)
    cs = rng.standard_normal((200, K))
    cs /= np.linalg.norm(cs, axis=1, keepdims=True)
    gauges = [_gauge_lp(V, c) for c in cs]
    assert max(gauges) <= bound * (1 + 1e-9)
    assert np.isclose(np.linalg.norm(worst), 1.0)
    assert _gauge_lp(V, worst) == pytest.approx(bound, rel=1e-6)  # the max is attained where reported
    assert bound <= np.sqrt(np.sum(ups[:K] ** 2)) * (1 + 1e-8)  # never above Cauchy-Schwarz on the basis


def test_gauge_upper_with_the_basis_alone_is_cauchy_schwarz():
    ups = np.array([1.0, 2.0, 3.0])
    assert _gauge_upper(np.eye(3), ups)[0] == pytest.approx(np.sqrt(14), rel=1e-8)


def test_gauge_upper_converges_on_a_known_norm():
    """||c||_M = sqrt(c^T M c): max over unit c is sqrt(lambda_max) = 3; a dense net gets within 2%."""
    rng = np.random.default_rng(0)
    C = rng.standard_normal((400, 3))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    M = np.diag([1.0, 4.0, 9.0])
    ups = np.sqrt(np.einsum("ij,jk,ik->i", C, M, C))
    bound = _gauge_upper(C, ups)[0]
    assert 3.0 <= bound <= 3.06


def test_gauge_upper_refuses_infinite_or_zero_ends():
    assert _gauge_upper(np.eye(2), np.array([1.0, np.inf]))[0] == np.inf
    assert _gauge_upper(np.eye(2), np.array([1.0, 0.0]))[0] == np.inf


def _plane(n: int, seed: int) -> np.ndarray:
    X = np.round(np.random.default_rng(seed).uniform(-1, 1, size=(n, 2)) * 64) / 64  # dyadic: cone pricing
    return np.c_[X, np.ones(n)]


def test_adaptive_steps_tighten_and_stay_above_every_sampled_norm():
    Phi = _plane(10, seed=3)
    U = np.linalg.qr(np.random.default_rng(4).normal(size=(10, 3)))[0]
    k0 = representability_constant(U, Phi, n_directions=1, refine=1, tol=1e-3)
    k1 = representability_constant(U, Phi, n_directions=1, refine=1, tol=1e-3, adaptive=6)
    assert k1.upper <= k0.upper * (1 + 1e-9) and k1.upper <= k1.upper_parts["basis"] * (1 + 1e-9)
    assert k1.lower <= k1.upper and k0.lower <= k1.upper * (1 + 1e-9) and k1.lower <= k0.upper * (1 + 1e-9)
    assert len(k1.rounds) == k1.coefficients.shape[0] == len(k1.solve_seconds) and np.all(k1.rounds >= 1)
    rng = np.random.default_rng(5)
    for c in rng.standard_normal((6, 3)):  # every unit direction's certified lower end is below kappa's upper end
        r = variation_norm(U @ (c / np.linalg.norm(c)), Phi, tol=1e-3)
        assert r.lower <= k1.upper * (1 + 1e-9) and k1.lower <= max(k1.upper, r.upper)


def test_adaptive_must_be_a_nonnegative_integer():
    from relu_gating.errors import InputError

    with pytest.raises(InputError, match="adaptive"):
        representability_constant(np.eye(4)[:, :2], _plane(4, 0), adaptive=-1)


def test_on_norm_reports_every_norm_with_no_upper_end_before_the_basis_is_complete():
    Phi = _plane(10, seed=6)
    U = np.linalg.qr(np.random.default_rng(7).normal(size=(10, 3)))[0]
    seen = []
    final = representability_constant(U, Phi, n_directions=1, refine=1, tol=1e-3, on_norm=seen.append)
    assert [len(k.rounds) for k in seen] == list(range(1, len(final.rounds) + 1))  # one call per norm, from the first
    for k in seen[:2]:  # two of the K = 3 basis norms: only the certified lower end
        assert k.upper == np.inf and all(v == np.inf for v in k.upper_parts.values())
    for k in seen:  # every reported lower end is below the final upper end (and every finite upper end above
        assert k.lower <= final.upper * (1 + 1e-9)  # the final lower end): each partial bracket is valid
        assert k.upper >= final.lower * (1 - 1e-9)
    assert seen[2].upper < np.inf and seen[-1].upper == final.upper and seen[-1].lower == final.lower
    for c in np.random.default_rng(8).standard_normal((4, 3)):  # the first lower end is a kappa lower end:
        r = variation_norm(U @ (c / np.linalg.norm(c)), Phi, tol=1e-3)  # no sampled norm's upper end above
        assert r.lower <= final.upper * (1 + 1e-9) and seen[0].lower <= max(final.upper, r.upper) * (1 + 1e-9)
