"""Every recorded check of the experiments can fail: each is fed a deliberately wrong input.

Each test first runs the check on the experiment's own numbers at a tiny size (it holds), then on
the same numbers with one thing made wrong -- kappa shrunk below what Lemma 5.9 allows, a perturbed
neuron appended, a wrong Laplacian, a Prop 5.5 neuron dropped -- and sees it fail.  The check
functions are called directly, so these stay fast (default tier).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from relu_gating.experiments import greedy_rate as GR


@pytest.fixture(scope="module")
def rate():
    """greedy-rate numbers for one seed at n = 7, K = 2, two steps (about a second)."""
    steps, starts, kappas, _ = GR._one_seed(7, 2, 2, 0, 2, 0)
    return steps, starts, kappas


def _with_kappa(steps: list, kappa: float) -> list:
    """The step rows recomputed with another kappa (as the experiment would have recorded them)."""
    from relu_gating.experiments._theory import gap_bound, lemma59_bound, rate_bound

    out = copy.deepcopy(steps)
    d0 = {}
    for r in out:
        d0.setdefault((r["seed"], r["start"]), r["delta"])
        r["kappa"] = kappa
        r["rate_bound"] = rate_bound(d0[(r["seed"], r["start"])], r["t"], 2, kappa, r["alpha"])
        if r["t"]:
            r["lemma59"] = lemma59_bound(r["s_prev"], r["eps"], kappa)
            r["s2_bound"] = gap_bound(r["t"], 2, kappa, r["alpha"], r["eps"])
    return out


def test_every_check_has_its_description(rate):
    for c in GR._checks(*rate):
        assert c.holds, c
        assert c.tests and c.fails_if, c.name


def test_lemma59_fails_with_kappa_below_what_the_search_allows(rate):
    steps, _, _ = rate
    assert GR.check_lemma59(steps).holds
    k_min = max(r["kappa_implied"] for r in steps if r["t"])  # Lemma 5.9 read backwards
    assert GR.check_lemma59(_with_kappa(steps, 1.01 * k_min)).holds
    assert not GR.check_lemma59(_with_kappa(steps, 0.9 * k_min)).holds


def test_kappa_interval_fails_when_the_upper_end_is_too_small(rate):
    steps, _, kappas = rate
    bad = copy.deepcopy(kappas)
    bad[0]["kappa_upper"] = 0.5 * bad[0]["kappa_lower"]  # kappa halved below its certified lower end
    assert not GR.check_kappa_interval(bad, steps).holds
    k_min = max(r["kappa_implied"] for r in steps if r["t"])
    bad = copy.deepcopy(kappas)
    bad[0]["kappa_lower"], bad[0]["kappa_upper"] = 0.5 * k_min, 0.9 * k_min  # below Lemma 5.9's lower end
    assert not GR.check_kappa_interval(bad, steps).holds


def test_prop45_fails_with_a_perturbed_neuron(rate):
    from relu_gating.coverage.metrics import captured_features

    steps, _, _ = rate
    X, Phi, U, _ = GR._problem(7, 2, 0)
    from relu_gating.layers.greedy import greedy_layer

    g = greedy_layer(Phi, U, 1)
    theta = g.thetas[0] + np.array([0.3, -0.2, 0.1])  # a perturbed neuron replaces the certified one
    H = np.c_[np.ones(7), np.maximum(Phi @ theta, 0)]
    bad = copy.deepcopy([r for r in steps if r["start"] == GR.STARTS[0]][:2])
    bad[1]["delta"] = 2 - captured_features(H, U)
    assert GR.check_prop45(bad[:2]).holds is False
    assert GR.check_prop45([r for r in steps if r["start"] == GR.STARTS[0]]).holds


def test_gain_bound_and_rate_and_thm513_fail_on_wrong_numbers(rate):
    steps, _, _ = rate
    bad = copy.deepcopy(steps)
    r = next(r for r in bad if r["t"])
    r["bound_G"] = 0.5 * r["gain"]  # a search bound below its own witness
    assert not GR.check_gain_below_bound(bad).holds
    tiny = _with_kappa(steps, 1e-3)  # kappa shrunk by orders of magnitude: both Thm 5.10 bounds fail
    assert not GR.check_rate(tiny).holds and not GR.check_gap_rate(tiny).holds
    bad = copy.deepcopy(steps)
    r = next(r for r in bad if r["eta_next"] > 1e-6)
    r["s"] = 0.5 * r["eta_next"]  # a gap below the Ky Fan limit
    assert not GR.check_thm513(bad).holds
    bad = copy.deepcopy(steps)
    bad[2]["delta"], bad[1]["delta"] = bad[1]["delta"], bad[2]["delta"] + 0.1
    assert not GR.check_monotone(bad).holds


def test_prop55_fails_with_a_dropped_principal_pair(rate):
    from relu_gating.coverage.metrics import captured_features, coverage_gap
    from relu_gating.layers.networks import preserving_layer

    _, starts, _ = rate
    X, Phi, U, _ = GR._problem(7, 2, 0)
    pl = preserving_layer(Phi, U, seed=0)
    H = np.c_[np.maximum(Phi @ pl.Theta[:, [0, 1, 4, 5]], 0), np.ones(7)]  # the pair sigma(±p_2) dropped
    bad = copy.deepcopy(starts)
    p55 = next(r for r in bad if r["start"] == GR.STARTS[2])
    p55["N_K"], p55["s_K"] = captured_features(H, U), coverage_gap(H, U)
    assert GR.check_prop55(starts).holds
    assert not GR.check_prop55(bad).holds


def test_clusters_checks_fail_on_wrong_inputs():
    from relu_gating.experiments import clusters as CL

    row, steps = CL._config(24, 0.4, 0.4, 3, 0)
    assert CL.check_example([row]).holds and GR.check_lemma59(steps).holds
    bad = copy.deepcopy(row)
    bad["omega_1"] = 0.4 * row["chi1_upper"]  # a wrong spread-to-margin ratio
    assert not CL.check_example([bad]).holds
    k_min = max(r["kappa_implied"] for r in steps if r["t"])
    from relu_gating.experiments._theory import lemma59_bound

    shrunk = copy.deepcopy(steps)
    for r in shrunk:  # kappa(chi) shrunk below what Lemma 5.9 allows with this eps
        if r["t"]:
            r["lemma59"] = lemma59_bound(r["s_prev"], r["eps"], 0.9 * k_min)
    assert not GR.check_lemma59(shrunk).holds
    k = {"n": 9, "kappa_chi_lower": 3.0, "kappa_chi_upper": 3.1, "kappa_chi_explicit": 2.5,
         "kappa_UK_lower": 1.0, "kappa_UK_upper": 2.0}
    assert not CL.check_kappa_chi([k]).holds  # a dual lower end above a feasible decomposition
    assert CL.check_kappa_chi([{**k, "kappa_chi_lower": 2.4}]).holds
    pred = {**row, "two_eps": 0.01, "t_at_s0.1": 50, "t_pred_example_s0.1": 10.0}
    assert not CL.check_prediction([pred]).holds


def test_fit_rate_recovers_a_line():
    from relu_gating.experiments.clusters import fit_rate

    s = np.array([0.5, 0.3, 0.2])
    a, b = fit_rate(s, 2 + 0.25 / s**2)
    assert a == pytest.approx(2) and b == pytest.approx(0.25)
    assert np.isnan(fit_rate([0.5], [3])[1])
