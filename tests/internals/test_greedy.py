"""Greedy layers of certified neurons (Thm 5.10) against the paper's identities and limits."""

from __future__ import annotations

import numpy as np
import pytest

from relu_gating import InputError, greedy_layer, ky_fan_limits
from relu_gating.coverage.metrics import captured_features, coverage_gap
from relu_gating.data.datasets import two_moons
from relu_gating.data.io import InputData, resolve_problem


@pytest.fixture(scope="module")
def moons():
    X = two_moons(40, seed=2)
    return resolve_problem(InputData(path="<t>", X=X), K=4)


def test_greedy_from_bias(moons):
    g = greedy_layer(moons.Phi, moons.U_K, 3)
    assert g.certified and g.thetas.shape == (3, 3)
    # Prop 4.5: each certified gain is exactly the increase of N_K
    np.testing.assert_allclose(np.diff(g.captured), g.gains, atol=1e-9)
    # Lemma 3.2 / monotonicity: deficit and gap never increase
    assert np.all(np.diff(g.deficit) <= 1e-12) and np.all(np.diff(g.gap) <= 1e-12)
    # G_H <= s_K(H)^2 at every step
    assert np.all(g.gains <= g.gap[:-1] ** 2 + 1e-9)
    # recorded quantities are the library's metrics of the features
    assert g.captured[-1] == pytest.approx(captured_features(g.features, moons.U_K), abs=1e-12)
    assert g.gap[-1] == pytest.approx(coverage_gap(g.features, moons.U_K), abs=1e-12)
    # greedy beats (or ties) any random neuron at the first step
    rng = np.random.default_rng(0)
    H0 = np.ones((moons.n, 1))
    for theta in rng.normal(size=(300, 3)):
        h = np.maximum(moons.Phi @ theta, 0)
        if np.ptp(h) > 1e-9:
            assert captured_features(np.c_[H0, h], moons.U_K) - captured_features(H0, moons.U_K) <= g.gains[0] + 1e-9


@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_greedy_respects_ky_fan_limit_of_thm_5_13(moons):
    g = greedy_layer(moons.Phi, moons.U_K, 2, initial=moons.Phi)
    lim = ky_fan_limits(moons.Phi, moons.U_K)
    base = captured_features(moons.Phi, moons.U_K)
    for t in range(1, g.gains.size + 1):
        assert g.captured[t] - base <= lim.gain_bound(t) + 1e-9
        assert g.gap[t] >= lim.gap_bound(t) - 1e-9


def test_greedy_input_errors(moons):
    with pytest.raises(InputError, match="t must"):
        greedy_layer(moons.Phi, moons.U_K, -1)
    with pytest.raises(InputError, match="initial"):
        greedy_layer(moons.Phi, moons.U_K, 1, initial=None)


def test_greedy_enumerates_once(moons, monkeypatch):
    import relu_gating.patterns as pat

    calls = {"n": 0}
    real = pat.enumerate_patterns

    def counting(*a, **k):
        calls["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(pat, "enumerate_patterns", counting)
    g = greedy_layer(moons.Phi, moons.U_K, 3)
    assert calls["n"] == 1 and g.gains.size == 3


def test_best_neuron_rejects_patterns_of_another_phi(moons):
    from relu_gating import best_neuron, enumerate_patterns

    other = enumerate_patterns(moons.Phi[:-1])
    with pytest.raises(InputError, match="patterns"):
        best_neuron(moons.Phi, moons.U_K, features="bias", patterns=other)


@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_greedy_beyond_enumeration_runs_the_branch_and_bound(moons, monkeypatch):
    """Where ``strategy="auto"`` (the default) chooses the branch and bound, the layer enumerates
    nothing: every step is a branch and bound with its own tree, certified, and the gains are the
    enumerated layer's."""
    import relu_gating.patterns as pat
    from relu_gating.search import plan as planmod

    want = greedy_layer(moons.Phi, moons.U_K, 3)
    calls = {"n": 0}
    real = pat.enumerate_patterns

    def counting(*a, **k):
        calls["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(pat, "enumerate_patterns", counting)
    monkeypatch.setattr(planmod, "seconds_per_pattern", lambda n, m: 10.0)  # the plan: enumeration far too slow
    g = greedy_layer(moons.Phi, moons.U_K, 3, max_seconds=120)
    assert calls["n"] == 0 and g.certified and g.gains.size == 3
    np.testing.assert_allclose(g.gains, want.gains, atol=1e-9)
    with pytest.raises(InputError, match="strategy"):
        greedy_layer(moons.Phi, moons.U_K, 1, strategy="nope")
