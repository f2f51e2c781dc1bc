"""Experiments certification, depth, graph-choice, alpha (issue 12): recorded numbers obey the claims.

Default tier: each experiment once in quick mode (shared by the tests below), the gradient-ascent
helper against the certified search, the real-data loader.  Slow tier: the default (full) runs.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import pytest

from relu_gating import experiments as E
from relu_gating.errors import InputError

MINE = ("certification", "depth", "graph-choice", "alpha")
#: Run in the default tier (depth's and graph-choice's quick runs are slow-tier: the default tier
#: stays near 90 s; graph-choice's checks keep their failing-input tests in test_experiment_checks.py).
FAST = ("certification", "alpha")
TOL = 1e-8


class _Lazy(dict):
    """Quick results computed on first use (depth only when a slow-tier test asks for it)."""

    def __missing__(self, name: str):
        self[name] = E.run(name, seed=0, quick=True)
        return self[name]


@pytest.fixture(scope="module")
def quick_results() -> dict:
    return _Lazy()


def _tier(names):
    return [pytest.param(n, marks=pytest.mark.slow) if n not in FAST else n for n in names]


@pytest.mark.parametrize("name", _tier(MINE))
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_registered_and_checks_hold(quick_results, name):
    exp = E.get(name)
    assert exp.name == name and exp.summary and exp.plot is not None
    res = quick_results[name]
    assert res.name == name and res.checks
    assert res.ok, [c for c in res.checks if not c.holds]


@pytest.mark.parametrize("name", _tier(MINE))
def test_json_strict_with_schema_version_params(quick_results, name, tmp_path):
    d = quick_results[name].to_dict()
    text = json.dumps(d, allow_nan=False)  # strict: no NaN/inf
    back = json.loads(text)
    assert back["schema"] == E.SCHEMA and back["version"] and back["name"] == name
    assert back["params"]["seed"] == 0 and back["params"]["quick"] is True
    assert all(isinstance(c["holds"], bool) for c in back["checks"])
    paths = quick_results[name].save(str(tmp_path))
    assert len(paths) == 1 + len(back["tables"])
    assert json.loads(open(paths[0], encoding="utf-8").read())["tables"] == back["tables"]


@pytest.mark.parametrize("name", _tier(MINE))
def test_json_matches_the_published_schema(quick_results, name):
    import importlib.resources

    from _jsonschema_lite import violations

    text = importlib.resources.files("relu_gating").joinpath("schemas/experiment.schema.json").read_text()
    doc = json.loads(json.dumps(quick_results[name].to_dict(), allow_nan=False))
    assert violations(doc, json.loads(text)) == []


@pytest.mark.parametrize("name", _tier(MINE))
def test_figure_has_titles_and_labelled_axes(quick_results, name, tmp_path):
    import importlib

    mod = importlib.import_module(f"relu_gating.experiments.{name.replace('-', '_')}")
    fig = mod.figure(quick_results[name])
    try:
        assert fig._suptitle is not None and fig._suptitle.get_text()
        for ax in fig.axes:
            assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
            assert "(" in ax.get_ylabel()  # units (or what is counted) in parentheses
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    out = tmp_path / f"{name}.png"
    E.get(name).plot(quick_results[name], str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_certification_no_heuristic_beats_the_bound(quick_results):
    steps = quick_results["certification"].tables["steps"]
    methods = {r["method"] for r in steps}
    assert methods == {"certified", "random neuron", "random sampling", "local search", "gradient ascent"}
    for r in steps:
        assert r["gain"] <= r["upper_bound"] + TOL, r
        assert abs(r["gap"] - (r["upper_bound"] - r["gain"])) <= 1e-12
    for r in (r for r in steps if r["method"] == "certified"):
        assert r["gap"] <= 1e-8  # certified exact (alpha = 1)
    layers = quick_results["certification"].tables["layers"]
    cert = [r["N_K"] for r in layers if r["method"] == "certified"]
    assert np.all(np.diff(cert) > 0)  # every certified neuron adds coverage


@pytest.mark.slow
def test_depth_skips_nondecreasing_and_below_ceiling(quick_results):
    rows = quick_results["depth"].tables["layers"]
    p = quick_results["depth"].params
    for s in {r["seed"] for r in rows}:
        skip = [r["N_K"] for r in rows if r["arch"] == "skip" and r["seed"] == s]
        assert len(skip) == p["depth"] and np.all(np.diff(skip) >= -TOL)
    for r in rows:
        assert r["N_K"] <= r["ceiling"] + TOL and r["N_K_own"] <= r["ceiling"] + TOL
        if r["ceiling"] - r["N_K_own"] > TOL:  # Thm 5.3 (a)
            assert r["witness_gain"] > TOL
    for c in quick_results["depth"].tables["certified"]:
        assert c["certified"] and c["upper_bound"] >= c["witness_gain"] - TOL


@pytest.mark.slow
def test_depth_ceiling_against_brute_force_projection(quick_results):
    """Cor 5.2 ceiling recomputed independently: K - ||(I - Pi_P) U_K||_F^2 with Pi_P from class indicators."""
    from relu_gating.experiments.certification import moons_problem
    from relu_gating.layers.networks import layer_input

    p = quick_results["depth"].params
    prob = moons_problem(p["n"], p["K"], seed=0)
    U = prob["U_K"]
    rng = np.random.default_rng(0)  # the first plain network of seed 0, drawn exactly as the experiment does
    H = prob["X"]
    rows = [r for r in quick_results["depth"].tables["layers"] if r["arch"] == "plain" and r["seed"] == 0]
    for r in rows:
        _, inv = np.unique(H, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        B = np.eye(int(inv.max()) + 1)[inv]
        P = B @ np.linalg.pinv(B)
        assert abs(r["ceiling"] - (p["K"] - np.linalg.norm(U - P @ U) ** 2)) <= 1e-9
        Phi = layer_input(H)
        H = np.maximum(Phi @ (rng.standard_normal((Phi.shape[1], p["width"])) * np.sqrt(2.0 / Phi.shape[1])), 0.0)


@pytest.mark.slow  # graph-choice's quick run is slow-tier (FAST)
def test_graph_choice_readout_below_bounds_and_best_is_argmin(quick_results):
    res = quick_results["graph-choice"]
    rows = res.tables["configurations"]
    for r in rows:
        assert r["readout_error"] <= r["cor31_projection_bound"] + TOL <= r["cor31_bound"] + 2 * TOL
        assert r["readout_error"] <= r["rem61_bound"] + TOL
        assert abs(r["cor31_bound"] - (r["coverage_term"] + r["energy_term"])) <= 1e-9
    for b in res.tables["best"]:
        rs = [r for r in rows if r["target"] == b["target"] and r["seed"] == b["seed"]]
        assert b["cor31_bound"] == min(r["cor31_bound"] for r in rs)
        assert b["lowest_readout_error"] <= b["readout_error"]


def test_graph_choice_readout_error_is_least_squares():
    """Independent oracle: numpy lstsq on the same certified features gives the recorded error."""
    from relu_gating.data.datasets import two_moons
    from relu_gating.experiments.graph_choice import compare_graphs, targets
    from relu_gating.layers.greedy import greedy_layer
    from relu_gating.layers.networks import layer_input
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    X = two_moons(20, noise=0.1, seed=3)
    fs = targets(X, 3)
    rows = compare_graphs(X, fs, [("knn", {"kind": "knn", "n_neighbors": 5})], [3], 2, operators=("L",))
    U = low_frequency_basis(laplacian(sample_graph(X, kind="knn", n_neighbors=5)), 3).U_K
    Z = greedy_layer(layer_input(X), U, 2).features
    for r in rows:
        f = fs[r["target"]]
        beta = np.linalg.lstsq(Z, f, rcond=None)[0]
        assert abs(np.linalg.norm(Z @ beta - f) - r["readout_error"]) <= 1e-9


def test_alpha_values_within_alpha_of_optimum(quick_results):
    steps = quick_results["alpha"].tables["steps"]
    assert {r["alpha"] for r in steps} == {1.0, 0.99, 0.9, 0.5}
    for r in steps:
        assert r["gain"] >= r["alpha"] * r["exact_value"] - TOL
        assert r["gain"] <= r["exact_upper_bound"] + TOL
        assert r["certified"] and r["gain"] >= r["alpha"] * r["upper_bound"] - 1e-9
    summary = {s["alpha"]: s for s in quick_results["alpha"].tables["summary"]}
    assert summary[0.5]["exact_solves"] <= summary[1.0]["exact_solves"]


@pytest.mark.slow
def test_depth_reproducible_from_seed(quick_results):
    again = E.run("depth", seed=0, quick=True)
    assert again.tables == quick_results["depth"].tables and again.params == quick_results["depth"].params


def test_gradient_ascent_never_beats_certified_and_reports_true_value():
    import relu_gating as rg
    from relu_gating.experiments._local import gradient_ascent
    from relu_gating.experiments.certification import moons_problem
    from relu_gating.search.objectives import neuron_value

    prob = moons_problem(20, 3, seed=2)
    Phi, U = prob["Phi"], prob["U_K"]
    H = np.c_[np.ones(20), np.maximum(Phi @ np.array([1.0, -0.5, 0.2]), 0)]
    cert = rg.best_neuron(Phi, U, features=H)
    ga = gradient_ascent(Phi, U, features=H, restarts=4, seed=1)
    assert ga.value <= cert.upper_bound + TOL
    assert abs(ga.value - neuron_value(Phi, U, ga.theta, features=H)) <= 1e-9
    ga2 = gradient_ascent(Phi, U, features=H, restarts=4, seed=1)
    assert np.array_equal(ga.theta, ga2.theta)
    assert ga.value >= 0.5 * cert.value  # it is a working ascent, not a random draw


def test_real_dataset_shapes_and_determinism():
    from relu_gating.data.real import real_dataset

    for name, dims in (("iris", 2), ("wine", 3), ("breast-cancer", 2)):
        d = real_dataset(name, dims=dims, n=30, seed=1)
        assert d.X.shape[1] == dims and d.X.shape[0] <= 30 and d.y.shape == (d.X.shape[0],)
        assert np.unique(d.X, axis=0).shape[0] == d.X.shape[0]
        assert np.all(np.diff(d.explained) <= 0) and 0 < d.explained.sum() <= 1
        assert np.array_equal(real_dataset(name, dims=dims, n=30, seed=1).X, d.X)
    full = real_dataset("iris")
    assert full.source_shape == (150, 4) and len(np.unique(full.y)) == 3


def test_real_dataset_bad_input_and_missing_extra(monkeypatch):
    from relu_gating.data.real import real_dataset

    with pytest.raises(InputError, match="name"):
        real_dataset("mnist")
    with pytest.raises(InputError, match="dims"):
        real_dataset("iris", dims=5)
    with pytest.raises(InputError, match="n must"):
        real_dataset("iris", n=1000)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(InputError, match=r'pip install "\.\[real\]"'):
        real_dataset("iris")


@pytest.mark.slow
@pytest.mark.parametrize("name", FAST)
def test_full_runs_obey_claims_within_ten_minutes(name):
    """The full runs (graph-choice: 10 seeds x 10 graphs, 155 s here under load; depth's full run, with
    certified layers of input rank up to 5, takes longer and is not run here)."""
    t0 = time.perf_counter()
    res = E.run(name, seed=0)
    assert time.perf_counter() - t0 < 600
    assert res.ok, [c for c in res.checks if not c.holds]
    json.dumps(res.to_dict(), allow_nan=False)


def test_gradient_ascent_gradient_matches_finite_differences():
    from relu_gating.experiments._local import _value_grad
    from relu_gating.search.objectives import neuron_value

    rng = np.random.default_rng(5)
    Phi = np.c_[rng.standard_normal((15, 2)), np.ones(15)]
    U = np.linalg.qr(rng.standard_normal((15, 3)))[0]
    H = np.c_[np.ones(15), rng.standard_normal(15)]
    Q = np.linalg.qr(H)[0]
    theta = rng.standard_normal(3)
    val, g = _value_grad(Phi, U, Q, theta)
    assert abs(val - neuron_value(Phi, U, theta, features=H)) <= 1e-12
    h = 1e-6
    fd = [(_value_grad(Phi, U, Q, theta + h * e)[0] - _value_grad(Phi, U, Q, theta - h * e)[0]) / (2 * h)
          for e in np.eye(3)]
    assert np.allclose(g, fd, atol=1e-6)
