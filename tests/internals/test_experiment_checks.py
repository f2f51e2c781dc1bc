"""Every recorded check of the experiments can fail: each is fed a deliberately wrong input.

For every experiment, one test recomputes the experiment's whole tuple of checks on inputs with one
thing made wrong at a time and asserts (``_assert_each_fails``) that every check it records fails
in at least one of them, so a check added without a wrong input fails here.  Each test first runs the check on the experiment's own numbers at a tiny size (it holds), then on
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
def rate(rate_seed0):
    """greedy-rate numbers for one seed at n = 7, K = 2, two steps (tests/internals/conftest.py)."""
    steps, starts, kappas, _ = rate_seed0
    return steps, starts, kappas


def _assert_each_fails(good, wrong_runs) -> None:
    """Every check of ``good`` holds, and each one fails in at least one of ``wrong_runs`` (each the
    experiment's whole tuple of checks recomputed on inputs with one thing made wrong)."""
    assert all(c.holds for c in good), [c.name for c in good if not c.holds]
    assert all(c.tests and c.fails_if for c in good), [c.name for c in good if not (c.tests and c.fails_if)]
    failed = {c.name for run in wrong_runs for c in run if not c.holds}
    never = [c.name for c in good if c.name not in failed]
    assert not never, f"checks that no wrong input made fail: {never}"


def _edit(rows: list, i: int, **values) -> list:
    out = copy.deepcopy(rows)
    out[i].update(values)
    return out


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


def test_every_greedy_rate_check_fails_on_a_wrong_input(rate):
    from relu_gating.coverage.metrics import captured_features
    from relu_gating.layers.greedy import greedy_layer
    from relu_gating.layers.networks import preserving_layer

    steps, starts, kappas = rate
    t1 = next(i for i, r in enumerate(steps) if r["t"] == 1)  # bias start, first neuron
    k_min = max(r["kappa_implied"] for r in steps if r["t"])
    X, Phi, U, _ = GR._problem(7, 2, 0)
    theta = greedy_layer(Phi, U, 1).thetas[0] + np.array([0.3, -0.2, 0.1])  # a perturbed neuron
    perturbed = _edit(steps, t1, delta=2 - captured_features(np.c_[np.ones(7), np.maximum(Phi @ theta, 0)], U))
    Theta = preserving_layer(Phi, U, seed=0).Theta
    H = np.c_[np.maximum(Phi @ Theta[:, [0, 1, 4, 5]], 0), np.ones(7)]  # a principal pair dropped
    p55 = next(i for i, r in enumerate(starts) if r["start"] == GR.STARTS[2])
    dropped = _edit(starts, p55, N_K=captured_features(H, U))
    eta = next(i for i, r in enumerate(steps) if r["eta_next"] > 1e-6)
    swapped = _edit(steps, t1 + 1, delta=steps[t1]["delta"] + 0.1)
    _assert_each_fails(GR._checks(steps, starts, kappas), [
        GR._checks(_edit(steps, t1, bound_G=steps[t1]["gain"] + 1e-3), starts, kappas),  # an unproven optimum
        GR._checks(_with_kappa(steps, 0.9 * k_min), starts, kappas),  # kappa below what Lemma 5.9 allows
        GR._checks(perturbed, starts, kappas),
        GR._checks(_edit(steps, t1, bound_G=0.5 * steps[t1]["gain"]), starts, kappas),  # bound below its witness
        GR._checks(_with_kappa(steps, 1e-3), starts, kappas),  # kappa shrunk by orders: both Thm 5.10 bounds
        GR._checks(_edit(steps, eta, s=0.5 * steps[eta]["eta_next"]), starts, kappas),  # below the Ky Fan limit
        GR._checks(steps, dropped, kappas),
        GR._checks(steps, starts, _edit(kappas, 0, kappa_upper=0.5 * kappas[0]["kappa_lower"])),  # kappa halved
        GR._checks(swapped, starts, kappas),  # a deficit that rises
    ])


def test_certified_fails_when_a_bound_stays_above_its_gain(rate):
    steps, _, _ = rate
    assert GR.check_certified(steps).holds
    t1 = next(i for i, r in enumerate(steps) if r["t"] == 1)
    assert GR.check_certified(_edit(steps, t1, bound_G=steps[t1]["gain"] + 0.5e-7)).holds  # within CERT_TOL
    bad = GR.check_certified(_edit(steps, t1, bound_G=1.0))  # the trivial bound of an unproven claim
    assert not bad.holds and "gain" in bad.detail


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


def test_every_clusters_check_fails_on_a_wrong_input():
    from relu_gating.experiments import clusters as CL
    from relu_gating.experiments._theory import gap_bound, lemma59_bound

    row, steps = CL._config(24, 0.4, 0.4, 3, 0)
    k = {"n": 9, "kappa_chi_lower": 2.4, "kappa_chi_upper": 3.1, "kappa_chi_explicit": 2.5,
         "kappa_UK_lower": 1.0, "kappa_UK_upper": 2.0}
    t1 = next(i for i, r in enumerate(steps) if r["t"] == 1)
    k_min = max(r["kappa_implied"] for r in steps if r["t"])
    eta = next(i for i, r in enumerate(steps) if r["eta_next"] > 1e-6)

    def shrunk(kappa: float) -> list:  # the step rows recorded with another kappa(chi)
        out = copy.deepcopy(steps)
        for r in out:
            if r["t"]:
                r["lemma59"] = lemma59_bound(r["s_prev"], r["eps"], kappa)
                r["s2_bound"] = gap_bound(r["t"], CL.K, kappa, r["alpha"], r["eps"])
        return out

    _assert_each_fails(CL._checks([row], steps, [k]), [
        CL._checks([row], _edit(steps, t1, bound_G=steps[t1]["gain"] + 1e-3), [k]),  # an unproven optimum
        CL._checks([row], shrunk(0.9 * k_min), [k]),  # kappa(chi) below what Lemma 5.9 allows
        CL._checks([row], shrunk(1e-3), [k]),  # the Thm 5.10 gap bound falls to 4 eps^2, below s_t^2
        CL._checks([row], _edit(steps, t1, delta=steps[t1]["delta"] + 0.05), [k]),  # N_K of another neuron
        CL._checks([row], _edit(steps, eta, s=0.5 * steps[eta]["eta_next"]), [k]),  # below the Ky Fan limit
        CL._checks([{**row, "omega_1": 0.4 * row["chi1_upper"]}], steps, [k]),  # a wrong margin
        CL._checks([row], steps, [{**k, "kappa_chi_lower": 3.0}]),  # a dual lower end above a decomposition
        CL._checks([{**row, "two_eps": 0.01, "t_at_s0.1": 50, "t_pred_example_s0.1": 10.0}], steps, [k]),  # stalls
    ])


def test_fit_rate_recovers_a_line():
    from relu_gating.experiments.clusters import fit_rate

    s = np.array([0.5, 0.3, 0.2])
    a, b = fit_rate(s, 2 + 0.25 / s**2)
    assert a == pytest.approx(2) and b == pytest.approx(0.25)
    assert np.isnan(fit_rate([0.5], [3])[1])


def test_graph_choice_checks_fail_with_a_wrong_laplacian():
    from relu_gating.data.datasets import two_moons
    from relu_gating.experiments import graph_choice as GC
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    X = two_moons(12, noise=0.1, seed=0)
    f = GC.targets(X, 0)["smooth + noise"]
    L = laplacian(sample_graph(X, kind="knn", n_neighbors=4))
    b = low_frequency_basis(L, 3)
    Z = np.c_[np.ones(12), np.maximum(X[:, 0], 0)]
    good = GC.bound_row(Z, f, b.U_K, L, b.next_eigenvalue)
    rows = [{**good, "K": 3}]
    assert all(c.holds for c in GC._checks(rows))
    wrong = {**GC.bound_row(Z, f, b.U_K, 1e-4 * L, b.next_eigenvalue), "K": 3}  # E(f) from a rescaled Laplacian
    assert not GC.check_lemma21([wrong]).holds
    both = GC.bound_row(np.eye(12), f, b.U_K, 1e-4 * L, b.next_eigenvalue)  # wrong Laplacian and wrong gap
    assert not GC.check_cor31([{**good, "cor31_bound": both["cor31_bound"]}]).holds
    full = GC.bound_row(np.eye(12), f, b.U_K, L, b.next_eigenvalue)  # s_K of other features (Z = I: s = 0)
    mixed = {**good, "K": 3, "cor31_projection_bound": full["cor31_projection_bound"], "s_K": full["s_K"],
             "rem61_bound": full["rem61_bound"], "N_K": 3.0}
    assert good["readout_error"] > full["cor31_projection_bound"]
    assert not GC.check_cor31_first([mixed]).holds
    assert not GC.check_rem61([{**good, "K": 3, "N_K": 3.0}]).holds  # N_K of other features: s^2 > K - N_K
    _assert_each_fails(GC._checks(rows), [GC._checks([wrong]), GC._checks([{**good, "K": 3, "cor31_bound": both["cor31_bound"]}]),
                                          GC._checks([mixed]), GC._checks([{**good, "K": 3, "N_K": 3.0}])])


def _kendall_by_pairs(a, b) -> float:
    """Kendall's tau-a by counting pairs (no ties): an oracle sharing no code with scipy."""
    n, s = len(a), 0
    for i in range(n):
        for j in range(i + 1, n):
            s += np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
    return s / (n * (n - 1) / 2)


def test_rank_agreement_against_pair_counting():
    from relu_gating.experiments.graph_choice import rank_agreement

    rng = np.random.default_rng(5)
    for _ in range(5):
        a, b = rng.standard_normal(7), rng.standard_normal(7)
        r = rank_agreement(a, b)
        assert r["kendall"] == pytest.approx(_kendall_by_pairs(a, b))
        ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
        assert r["spearman"] == pytest.approx(np.corrcoef(ra, rb)[0, 1])
        assert r["argmin_agrees"] == (np.argmin(a) == np.argmin(b))
    assert rank_agreement([1, 2, 3], [3, 2, 1])["kendall"] == pytest.approx(-1)


def test_depth_rem56_and_cor54_fail_on_wrong_layers():
    from relu_gating.coverage.metrics import captured_features
    from relu_gating.experiments import depth as D
    from relu_gating.experiments.certification import moons_problem
    from relu_gating.layers.greedy import greedy_layer
    from relu_gating.layers.networks import copy_neurons, preserving_layer

    prob = moons_problem(12, 3, seed=0, n_neighbors=4)
    X, Phi, U = prob["X"], prob["Phi"], prob["U_K"]
    NPhi = captured_features(Phi, U)
    pl = preserving_layer(Phi, U, seed=0)
    P55 = np.maximum(Phi @ pl.Theta, 0)
    one = np.ones((12, 1))
    row = {"arch": "Rem 5.6", "N_K_Phi1": NPhi, "N_K_P55": captured_features(np.c_[P55, one], U)}
    row["N_K"] = row["N_K_P55"]
    assert D.check_rem56([row]).holds
    keep = [0, 1, 6, 7]  # two of the pairs sigma(±p_i) dropped
    dropped = captured_features(np.c_[P55[:, keep], one], U)
    assert dropped < NPhi - 1e-8
    assert not D.check_rem56([{**row, "N_K_P55": dropped, "N_K": dropped}]).holds
    W, b = copy_neurons(X, first_layer=True)
    Hc = np.c_[np.maximum(X @ W + b, 0), one]
    g = greedy_layer(Phi, U, 1, initial=Hc)
    good = {"arch": "Cor 5.4", "N_K_Phi1": NPhi, "N_K": float(g.captured[-1])}
    assert D.check_cor54([good]).holds
    copy_again = captured_features(np.c_[Hc, np.maximum(X[:, 0], 0)], U)  # a zero-gain neuron: a copy again
    assert not D.check_cor54([{**good, "N_K_Phi1": copy_again, "N_K": copy_again}]).holds


def test_certification_checks_fail_on_wrong_inputs():
    from types import SimpleNamespace

    from relu_gating.experiments import certification as CE

    g = SimpleNamespace(certified=True, captured=np.array([1.0, 1.5, 1.8]), gains=np.array([0.5, 0.3]))
    steps = [{"t": 1, "method": "certified", "gain": 0.5, "upper_bound": 0.5},
             {"t": 1, "method": "local search", "gain": 0.4, "upper_bound": 0.5}]
    layers = [{"t": 1, "method": "certified", "N_K": 1.5}, {"t": 1, "method": "local search", "N_K": 1.4}]
    assert all(c.holds and c.tests and c.fails_if for c in CE._checks(g, steps, layers))
    res = CE._checks(SimpleNamespace(**{**vars(g), "certified": False}), steps, layers)
    assert not res[0].holds
    assert not CE._checks(g, steps + [{**steps[1], "gain": 0.6}], layers)[1].holds  # a heuristic above the bound
    assert not CE._checks(SimpleNamespace(**{**vars(g), "gains": np.array([0.5, 0.2])}), steps, layers)[2].holds
    assert not CE._checks(g, steps, layers + [{"t": 1, "method": "random sampling", "N_K": 1.6}])[3].holds
    _assert_each_fails(CE._checks(g, steps, layers), [
        res, CE._checks(g, steps + [{**steps[1], "gain": 0.6}], layers),
        CE._checks(SimpleNamespace(**{**vars(g), "gains": np.array([0.5, 0.2])}), steps, layers),
        CE._checks(g, steps, layers + [{"t": 1, "method": "random sampling", "N_K": 1.6}])])


def test_alpha_checks_fail_on_wrong_inputs():
    from relu_gating.experiments import alpha as AL

    steps = [{"alpha": a, "gain": 0.9, "exact_value": 0.9, "exact_upper_bound": 0.9, "certified": True,
              "upper_bound": 0.9 if a == 1.0 else 1.0} for a in AL.ALPHAS]
    solves = [5, 4, 3, 2]
    assert all(c.holds and c.tests and c.fails_if for c in AL._checks(steps, [{"exact_solves": k} for k in solves]))
    summary = [{"exact_solves": k} for k in solves]
    low = [{**r, "gain": 0.3} for r in steps]  # a search that stopped too early
    closed = [{**r, "upper_bound": r["gain"]} for r in steps]  # every search closed: alpha ignored
    assert not AL._checks(low, summary)[0].holds
    assert not AL._checks([{**steps[0], "certified": False}] + steps[1:], summary)[1].holds
    assert not AL._checks([{**steps[0], "exact_upper_bound": 0.5}] + steps[1:], summary)[2].holds
    assert not AL._checks(closed, summary)[3].holds
    _assert_each_fails(AL._checks(steps, summary), [
        AL._checks(low, summary), AL._checks([{**steps[0], "certified": False}] + steps[1:], summary),
        AL._checks([{**steps[0], "exact_upper_bound": 0.5}] + steps[1:], summary),
        AL._checks(closed, summary)])


def test_alpha_check_fails_when_the_stopping_rule_ignores_alpha(monkeypatch):
    """The real greedy paths, once with the search and once with a search that ignores alpha (always 1)."""
    import relu_gating.search.front as front
    from relu_gating.experiments import alpha as AL
    from relu_gating.experiments.certification import moons_problem
    from relu_gating.patterns import enumerate_patterns

    prob = moons_problem(16, 3, seed=0)
    pats = enumerate_patterns(prob["Phi"])

    def checks() -> object:
        steps = [r for a in AL.ALPHAS for r in AL._path(prob["Phi"], prob["U_K"], pats, a, 2)]
        return AL.check_alpha_used(steps, [0] * len(AL.ALPHAS))

    assert checks().holds
    real = front.best_neuron
    monkeypatch.setattr(front, "best_neuron", lambda *a, **k: real(*a, **{**k, "alpha": 1.0}))
    assert not checks().holds


def test_depth_checks_fail_on_wrong_inputs():
    from relu_gating.experiments import depth as D

    cdep = {"steps": [{"seed": 0, "start": "Rem 5.6 layer", "t": 0, "delta": 2.0},
                      {"seed": 0, "start": "Rem 5.6 layer", "t": 1, "delta": 1.5, "delta_prev": 2.0, "gain": 0.5,
                       "bound_G": 0.5, "alpha": 1.0}],
            "rows": [{"arch": "Rem 5.6: Prop 5.5 + t certified", "N_K_Phi1": 1.0, "N_K_P55": 1.2, "N_K": 1.5},
                     {"arch": "Cor 5.4: 2d copies + 1 certified", "N_K_Phi1": 1.0, "N_K": 1.3}]}

    def wrong(part: str, i: int, **values) -> dict:
        return {**cdep, part: _edit(cdep[part], i, **values)}

    n, K = 6, 2
    rows = [{"arch": a, "seed": 0, "layer": k, "N_K": 1.0 + 0.2 * k * (a == "skip"), "ceiling": 2.0,
             "classes_out": n, "thm53_identity_residual": 0.0, "witness_gain": 0.1, "N_K_own": 1.5}
            for a in D.ARCHS for k in (1, 2)]
    cert = [{"ceiling": 2.0, "N_K_own": 1.5, "G_star": 0.2, "certified": True, "upper_bound": 0.2,
             "witness_gain": 0.1}]
    good = D._checks(rows, cert, n, K)
    assert all(c.holds and c.tests and c.fails_if for c in good)

    def mutated(i, key, value, which="rows"):
        rs, cs = copy.deepcopy(rows), copy.deepcopy(cert)
        (rs if which == "rows" else cs)[i][key] = value
        return D._checks(rs, cs, n, K)

    assert not mutated(3, "N_K", 0.5)[0].holds  # a skip layer that lost coverage
    assert not mutated(0, "N_K", 2.5)[1].holds  # above the Cor 5.2 ceiling
    assert not mutated(2, "classes_out", n - 1)[2].holds  # merged rows in a skip network
    assert not mutated(0, "thm53_identity_residual", 1e-3)[3].holds
    assert not mutated(0, "witness_gain", 0.0)[4].holds  # below the ceiling yet no witness gains
    assert not mutated(0, "G_star", 0.0, "cert")[5].holds  # G* = 0 below the ceiling
    assert not mutated(0, "upper_bound", 0.05, "cert")[6].holds  # a bound below the witness
    _assert_each_fails(D._checks(rows, cert, n, K, cdep), [
        mutated(3, "N_K", 0.5), mutated(0, "N_K", 2.5), mutated(2, "classes_out", n - 1),
        mutated(0, "thm53_identity_residual", 1e-3), mutated(0, "witness_gain", 0.0),
        mutated(0, "G_star", 0.0, "cert"), mutated(0, "upper_bound", 0.05, "cert"),
        D._checks(rows, cert, n, K, wrong("steps", 1, bound_G=0.6)),  # an optimum not proven
        D._checks(rows, cert, n, K, wrong("steps", 1, delta=1.6)),  # N_K of another neuron (Prop 4.5)
        D._checks(rows, cert, n, K, wrong("steps", 1, bound_G=0.3)),  # a bound below its witness
        D._checks(rows, cert, n, K, wrong("rows", 0, N_K_P55=0.9)),  # a principal pair dropped
        D._checks(rows, cert, n, K, wrong("rows", 1, N_K=1.0)),  # a zero-gain neuron
    ])


@pytest.mark.slow  # the default tier keeps its siblings (under 90 s: README)
def test_closed_kappa_closes_or_says_why():
    from relu_gating.experiments._theory import closed_kappa

    x = np.linspace(-1, 1, 7)
    Phi = np.c_[x, np.ones(7)]
    U = np.linalg.qr(np.c_[np.ones(7), x])[0]
    kap, how = closed_kappa(U, Phi, seconds=20.0)
    assert kap.lower <= kap.upper * (1 + 1e-9)
    assert how["closed"] == (how["rel_width"] <= 0.05) and (how["closed"] or how["why"])
    kap2, how2 = closed_kappa(U, Phi, width=1e-9, max_directions=4, seconds=20.0)  # cannot close: says why
    assert not how2["closed"] and "budget" in how2["why"]


def test_column_basis_keeps_the_span_and_drops_dependent_columns():
    from relu_gating.coverage.metrics import captured_features
    from relu_gating.experiments._theory import column_basis

    rng = np.random.default_rng(3)
    p, one = rng.standard_normal(9), np.ones(9)
    H = np.c_[np.maximum(p, 0), np.maximum(-p, 0), p, one, 2 * one]  # relu(p) - relu(-p) = p: rank 3
    B = column_basis(H)
    assert B.shape == (9, 3) and np.linalg.matrix_rank(B) == 3
    assert all(any(np.array_equal(b, h) for h in H.T) for b in B.T)  # columns of H, not combinations
    U = np.linalg.qr(rng.standard_normal((9, 2)))[0]
    assert captured_features(B, U) == pytest.approx(captured_features(H, U))
    assert np.linalg.matrix_rank(np.c_[B, H]) == 3  # the same span
