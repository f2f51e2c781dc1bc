"""Experiments "greedy-rate" and "clusters" and the ``relu-gating experiment`` command.

Default tier: the experiments' building blocks at tiny sizes, their recorded numbers re-checked
against the claims with independently recomputed quantities; the CLI's mechanics (list, files,
strict JSON, exit codes) on a stub experiment; a figure's title, labels and legend placement.
Slow tier: the registered ``--quick`` runs through the CLI.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from _clock import slowdown

from relu_gating.cli import main
from relu_gating.experiments import NAMES, Check, Experiment, ExperimentResult


def _strict_load(text: str) -> dict:
    def bad(name: str):
        raise ValueError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=bad)


@pytest.fixture(scope="module")
def rate_rows(rate_seed0):
    return rate_seed0


def test_greedy_rate_numbers_obey_the_claims(rate_rows):
    from relu_gating.coverage.bounds import ky_fan_limits
    from relu_gating.coverage.metrics import captured_features
    from relu_gating.experiments.greedy_rate import STARTS, _checks, _problem, _starts

    steps, starts, kappas, cert = rate_rows
    assert all(c.holds for c in _checks(steps, starts, kappas, cert))
    K, kappa = 2, kappas[0]["kappa_upper"]
    X, Phi, U, _ = _problem(7, K, 0)
    H0s = _starts(X, Phi, U, 0)
    for st in starts:
        sel = [r for r in steps if r["start"] == st["start"]]
        d0, a = sel[0]["delta"], st["alpha_eff"]
        assert np.isclose(d0, K - captured_features(H0s[st["start"]], U))
        eta = ky_fan_limits(H0s[st["start"]], U).etas
        for r in sel:  # Thm 5.10 and Thm 5.13, recomputed here
            assert r["delta"] <= 1 / (1 / d0 + a * r["t"] / (4 * K**2 * kappa**2)) + 1e-9
            assert r["s"] >= (eta[r["t"]] if r["t"] < K else 0.0) - 1e-9
            assert r["delta"] >= -1e-9 and r["s"] ** 2 <= r["delta"] + 1e-9  # s^2 <= K - N_K (Lemma 3.5 iv)
    p55 = next(s for s in starts if s["start"] == STARTS[2])
    assert p55["N_K"] >= captured_features(Phi, U) - 1e-9 and p55["distinct_rows"]  # Prop 5.5
    assert kappas[0]["kappa_lower"] <= kappa <= np.sqrt(K) * max(kappas[0][f"norm_u{k}_upper"] for k in (1, 2)) + 1e-9


def test_clusters_numbers_obey_the_claims():
    from relu_gating.coverage.metrics import coverage_gap
    from relu_gating.experiments.clusters import K, _basis, _config, chi_upper, cluster_data, omegas

    row, steps = _config(24, 0.4, 0.4, 3, 0)
    X, lab, W = cluster_data(24, 0.4, 0)
    om = omegas(X, lab, W)
    assert np.isclose(row["omega_max"], om.max())
    assert all(row[f"chi{c + 1}_upper"] <= 2 * om[c] + 1e-9 for c in range(K))
    for c in range(K):  # the two atoms of Example 5.12 give chi_c exactly on the sample
        z = X @ W[c]
        a, a2 = z[lab != c].max(), z[lab == c].min()
        ind = (np.maximum(z - a, 0) - np.maximum(z - a2, 0)) / (a2 - a)
        assert np.allclose(ind, lab == c, atol=1e-12)
    chi = np.stack([(lab == c) / np.sqrt(np.sum(lab == c)) for c in range(K)], axis=1)
    U, _, _ = _basis(X, 0.4)
    assert np.isclose(row["epsilon"], coverage_gap(chi, U)) and row["epsilon"] > 1e-3  # connected: eps > 0
    assert row["kappa_chi_upper"] == pytest.approx(np.sqrt(np.sum(chi_upper(X, lab, W) ** 2)))
    assert all(r["bound_G"] >= r["lemma59"] for r in steps if r["t"])


def _stub_result(fail: bool = False) -> ExperimentResult:
    return ExperimentResult(
        name="greedy-rate", title="stub: y = x^2", params={"seed": 0, "quick": True},
        tables={"rows": [{"x": 1, "y": 1.0}, {"x": 2, "y": float("nan")}]},
        checks=(Check("holds", True), Check("fails", not fail, "detail")), seconds=0.1)


def _stub_plot(result: ExperimentResult, path: str) -> None:
    from relu_gating.experiments._plotting import figure, label, save

    fig, (ax,) = figure(result.title)
    ax.plot([1, 2], [1, 4], "o-", label="y")
    label(ax, "stub", "x (count)", "y (unitless)")
    save(fig, path)


@pytest.fixture
def stub(monkeypatch):
    """``greedy-rate`` replaced by a stub (instant); other names resolve as usual."""
    import relu_gating.experiments as ex

    state = {"fail": False}
    real_get = ex.get
    exp = Experiment("greedy-rate", "stub", lambda seed=0, quick=False: _stub_result(state["fail"]), _stub_plot)
    monkeypatch.setattr(ex, "get", lambda name: exp if name == "greedy-rate" else real_get(name))
    return state


def test_cli_list_names_every_experiment(capsys):
    assert main(["experiment", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == list(NAMES)
    assert all(len(line.split(None, 1)) == 2 for line in out)


def test_cli_writes_files_strict_json_and_exit_codes(stub, tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["experiment", "greedy-rate", "--out", str(out), "--json", "--quick"]) == 0
    cap = capsys.readouterr()
    d = _strict_load(cap.out)
    assert d["schema"] == "relu-gating-experiment/1" and d["version"] and d["params"]["seed"] == 0
    assert d["tables"]["rows"][1]["y"] is None  # NaN becomes null, never NaN
    assert "2/2 checks hold" in cap.err
    for f in ("greedy-rate.json", "greedy-rate_rows.csv", "greedy-rate.png"):
        assert (out / f).stat().st_size > 0
    _strict_load((out / "greedy-rate.json").read_text())
    stub["fail"] = True
    assert main(["experiment", "greedy-rate", "--out", str(out)]) == 1
    assert "check FAILED: fails" in capsys.readouterr().err


def test_cli_bad_input_exits_2(stub, tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["experiment", "no-such"]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    assert main(["experiment", "greedy-rate", "--out", str(f)]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["experiment", "greedy-rate", "--out", str(tmp_path / "missing" / "deeper")]) == 2
    assert main(["experiment"]) == 2


def test_figure_has_title_labels_and_legend_outside(tmp_path, monkeypatch):
    import relu_gating.experiments._plotting as P

    seen = {}
    real = P.save

    def keep(fig, path):
        real(fig, path)
        seen["fig"] = fig

    monkeypatch.setattr(P, "save", keep)
    res = ExperimentResult("greedy-rate", "Greedy stub", {}, {"steps": []})
    path = str(tmp_path / "f.png")
    _stub_plot(res, path)
    fig = seen["fig"]
    assert os.path.getsize(path) > 0 and fig._suptitle.get_text() == "Greedy stub"
    fig.canvas.draw()
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
        leg = ax.get_legend()
        assert leg is not None
        assert leg.get_window_extent().y1 <= ax.get_window_extent().y0 + 1  # below the axes: hides no data


def test_plotting_without_matplotlib_is_one_line(monkeypatch):
    import builtins

    from relu_gating.errors import InputError
    from relu_gating.experiments._plotting import pyplot

    real = builtins.__import__

    def no_mpl(name, *a, **k):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_mpl)
    with pytest.raises(InputError, match=r'pip install "\.\[plot\]"'):
        pyplot()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["greedy-rate", "clusters"])
def test_quick_runs_through_the_cli(name, tmp_path, capsys):
    assert main(["experiment", name, "--quick", "--out", str(tmp_path), "--json", "--seed", "1"]) == 0
    d = _strict_load(capsys.readouterr().out)
    assert d["name"] == name and d["params"]["seed"] == 1 and d["params"]["quick"] is True
    assert d["checks"] and all(c["holds"] for c in d["checks"])
    slow = slowdown()  # the margin scales with the machine's load (about 1 when quiet)
    assert d["seconds"] < 120 * slow, (d["seconds"], slow)  # --quick takes seconds (under 20 s on an idle machine)
    assert (tmp_path / f"{name}.png").stat().st_size > 0
