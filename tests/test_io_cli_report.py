"""Input files, problem resolution, coverage report and the ``report`` command."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relu_gating.cli as cli
from relu_gating import InputError
from relu_gating.coverage.metrics import captured_features, coverage_gap
from relu_gating.data.datasets import two_moons
from relu_gating.spectral.graphs import laplacian, sample_graph
from relu_gating.data.io import DEFAULT_K, InputData, load_input, resolve_problem
from relu_gating.layers.networks import layer_input
from relu_gating.coverage.report import coverage_report
from relu_gating.spectral.spectra import low_frequency_basis

from _instances import random_basis, random_features

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def main(monkeypatch):
    """``relu_gating.cli.main`` restricted to the sub-commands that import (others are in progress)."""
    ok = {}
    for name, mod in cli._COMMANDS.items():
        try:
            importlib.import_module(f"relu_gating.cli.{mod}")
            ok[name] = mod
        except ImportError:
            pass
    assert "report" in ok
    monkeypatch.setattr(cli, "_COMMANDS", ok)
    return cli.main


@pytest.fixture
def moons_npz(tmp_path):
    X = two_moons(40, seed=0)
    f = np.sin(3 * X[:, 0])
    path = tmp_path / "moons.npz"
    np.savez(path, X=X, f=f)
    return path, X, f


# ---------------------------------------------------------------- load_input


def test_load_npz_npy_csv(tmp_path, moons_npz):
    path, X, f = moons_npz
    d = load_input(path)
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.f, f)
    assert d.Phi is None and d.U_K is None and d.H is None and d.n == 40
    np.save(tmp_path / "x.npy", X)
    np.testing.assert_array_equal(load_input(tmp_path / "x.npy").X, X)
    np.savetxt(tmp_path / "x.csv", X, delimiter=",")
    np.testing.assert_allclose(load_input(tmp_path / "x.csv").X, X, rtol=1e-15)
    (tmp_path / "h.csv").write_text("a,b\n1,2\n3,4.5\n")
    np.testing.assert_array_equal(load_input(tmp_path / "h.csv").X, [[1, 2], [3, 4.5]])
    U = random_basis(40, 3, 0)
    np.savez(tmp_path / "full.npz", Phi=layer_input(X), U_K=U, H=X, eigenvalues=np.arange(3.0))
    d = load_input(tmp_path / "full.npz")
    assert d.X is None and d.Phi.shape == (40, 3) and d.U_K.shape == (40, 3)


@pytest.mark.parametrize(
    "arrays, match",
    [
        (dict(f=np.ones(4)), "needs key 'X' or 'Phi'"),
        (dict(X=np.ones((4, 2)), u_k=np.ones((4, 1))), "unknown key.*u_k"),
        (dict(X=np.ones((4, 2)), f=np.ones(5)), r"\['f'\] must have length 4"),
        (dict(X=np.array([[1.0, np.nan], [0, 1]])), r"\['X'\] contains NaN"),
        (dict(X=np.ones((4, 2)), H=np.ones((3, 2))), r"\['H'\] must have 4 rows"),
        (dict(X=np.ones((4, 2)), U_K=np.ones((4, 2))), r"\['U_K'\] must have orthonormal"),
        (dict(X=np.ones((4, 2)), eigenvalues=np.ones(2)), "'eigenvalues' given without 'U_K'"),
        (dict(X=np.ones((4, 2)), Phi=np.ones((3, 2))), r"\['Phi'\] must have 4 rows"),
        (dict(X=np.ones(4)), r"\['X'\] must be a 2-D"),
    ],
)
def test_load_input_errors_name_file_and_key(tmp_path, arrays, match):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(InputError, match=match) as info:
        load_input(path)
    assert "bad.npz" in str(info.value)


def test_load_input_file_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_input(tmp_path / "nope.npz")
    (tmp_path / "x.txt").write_text("1,2\n")
    with pytest.raises(InputError, match="unsupported extension"):
        load_input(tmp_path / "x.txt")
    (tmp_path / "bad.csv").write_text("1,2\n3,oops\n")
    with pytest.raises(InputError, match="bad.csv"):
        load_input(tmp_path / "bad.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(InputError, match="empty"):
        load_input(tmp_path / "empty.csv")


# ---------------------------------------------------------------- resolve_problem


def test_resolve_problem_builds_graph_basis(moons_npz):
    path, X, f = moons_npz
    p = resolve_problem(load_input(path), K=5, graph="knn", n_neighbors=6)
    L = laplacian(sample_graph(X, kind="knn", n_neighbors=6))
    b = low_frequency_basis(L, 5)
    np.testing.assert_allclose(p.U_K, b.U_K)
    np.testing.assert_array_equal(p.Phi, layer_input(X))
    assert p.K == 5 and p.n == 40 and p.description["source"] == "graph"
    assert p.next_eigenvalue == pytest.approx(b.next_eigenvalue)
    json.dumps(p.description)
    p_default = resolve_problem(load_input(path))
    assert p_default.K == DEFAULT_K
    ps = resolve_problem(load_input(path), K=3, laplacian="sym", graph="gaussian")
    assert ps.description["laplacian"] == "sym" and ps.description["graph"] == "gaussian"
    np.testing.assert_allclose(ps.U_K.T @ ps.U_K, np.eye(3), atol=1e-12)
    small = resolve_problem(InputData(path="<mem>", X=np.array([[0.0], [1.0], [3.0]])))
    assert small.K == 2  # clipped to n - 1


def test_resolve_problem_given_basis_and_errors(tmp_path):
    U = random_basis(10, 4, 1)
    d = InputData(path="<mem>", Phi=random_features(10, 3, 0), U_K=U, eigenvalues=np.arange(4.0))
    p = resolve_problem(d, K=2)
    np.testing.assert_array_equal(p.U_K, U[:, :2])
    np.testing.assert_array_equal(p.eigenvalues, [0.0, 1.0])
    assert p.description["source"] == "file"
    with pytest.raises(InputError, match="K must satisfy"):
        resolve_problem(d, K=5)
    with pytest.raises(InputError, match="'X', which is missing"):
        resolve_problem(InputData(path="<mem>", Phi=random_features(10, 3, 0)))
    with pytest.raises(InputError, match="K must satisfy"):
        resolve_problem(InputData(path="<mem>", X=random_features(10, 2, 0)), K=11)
    with pytest.raises(InputError, match="laplacian"):
        resolve_problem(InputData(path="<mem>", X=random_features(10, 2, 0)), laplacian="rw")


# ---------------------------------------------------------------- coverage_report


def test_coverage_report_values_against_oracles(moons_npz):
    path, X, f = moons_npz
    p = resolve_problem(load_input(path), K=4)
    rep = coverage_report(p)
    # oracle projector from the pseudo-inverse
    Phi, U = p.Phi, p.U_K
    M = U - Phi @ (np.linalg.pinv(Phi) @ U)
    np.testing.assert_allclose(rep.coverage_gap, np.linalg.norm(M, 2), atol=1e-10)
    np.testing.assert_allclose(rep.coverage_deficit, np.linalg.norm(M, "fro") ** 2, atol=1e-10)
    np.testing.assert_allclose(rep.captured_features, 4 - np.linalg.norm(M, "fro") ** 2, atol=1e-10)
    np.testing.assert_allclose(rep.etas, np.linalg.svd(M, compute_uv=False), atol=1e-10)
    assert rep.ceiling == pytest.approx(4.0) and rep.ceiling_classes == 40
    assert rep.features == "Phi" and rep.rank == 3
    t = rep.target
    assert t["residual_norm"] <= t["projection_bound"] + 1e-10 <= t["smoothness_bound"] + 2e-10
    assert t["residual_norm"] <= t["deficit_bound"] + 1e-10
    d = json.loads(json.dumps(rep.to_dict()))
    for key in ("coverage_gap", "captured_features", "coverage_deficit", "n", "K"):
        assert key in d
    assert "N_K" in rep.format() and "Cor 3.1" in rep.format()
    H = random_features(40, 6, 3)
    rep_h = coverage_report(p, H=H)
    assert rep_h.features == "H"
    np.testing.assert_allclose(rep_h.captured_features, captured_features(H, U), atol=1e-12)
    np.testing.assert_allclose(rep_h.coverage_gap, coverage_gap(H, U), atol=1e-12)
    rep_arr = coverage_report(Phi=Phi, U_K=U)
    assert rep_arr.target is None and rep_arr.coverage_gap == pytest.approx(rep.coverage_gap)
    with pytest.raises(InputError, match="Phi and U_K"):
        coverage_report(U_K=U)


# ---------------------------------------------------------------- CLI


def test_cli_report_json_and_text(main, moons_npz, capsys):
    path, X, f = moons_npz
    assert main(["report", str(path), "--json", "--K", "4", "--neighbors", "6"]) == 0
    out = json.loads(capsys.readouterr().out)
    p = resolve_problem(load_input(path), K=4, n_neighbors=6)
    assert out["n"] == 40 and out["K"] == 4
    assert out["coverage_gap"] == pytest.approx(coverage_gap(p.Phi, p.U_K), abs=1e-12)
    assert out["captured_features"] == pytest.approx(captured_features(p.Phi, p.U_K), abs=1e-12)
    assert out["coverage_deficit"] == pytest.approx(4 - out["captured_features"], abs=1e-10)
    assert out["input"]["n_neighbors"] == 6 and "/" not in out["input"]["input_name"]
    assert main(["report", str(path), "--graph", "epsilon", "--laplacian", "sym"]) == 0
    text = capsys.readouterr().out
    assert "coverage gap" in text and "K = 8" in text


def test_cli_report_errors_exit_2(main, tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing.npz")]) == 2
    assert "relu-gating report: error:" in capsys.readouterr().err
    X = np.array([[0.0, 0], [0.1, 0], [9, 9], [9.1, 9]])
    np.save(tmp_path / "x.npy", X)
    assert main(["report", str(tmp_path / "x.npy"), "--graph", "epsilon", "--epsilon", "0.5", "--K", "1"]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "x.npy"), "--K", "9"]) == 2
    assert "K must satisfy" in capsys.readouterr().err


def test_cli_report_tie_warning_on_stderr(main, tmp_path, capsys):
    np.save(tmp_path / "c.npy", np.column_stack([np.cos(np.arange(8) * np.pi / 4), np.sin(np.arange(8) * np.pi / 4)]))
    assert main(["report", str(tmp_path / "c.npy"), "--K", "2", "--neighbors", "2"]) == 0
    assert "not unique" in capsys.readouterr().err


def test_cli_report_subprocess(moons_npz):
    path, _, _ = moons_npz
    proc = subprocess.run(
        [sys.executable, "-m", "relu_gating", "report", str(path), "--json", "--K", "3"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["K"] == 3 and 0 <= out["coverage_gap"] <= 1


def test_cli_best_neuron_summary_without_out_skips_the_per_pattern_certificate(main, moons_npz, capsys, monkeypatch,
                                                                                tmp_path):
    """Without ``--out`` the summary (text or ``--json``) comes from the result's summary keys: the
    per-pattern certificate (every mask and witness as JSON lists) is not built; with ``--out``
    JSON it is, and the printed summary is the same either way (timings aside)."""
    from relu_gating.search.result import NeuronResult

    path = moons_npz[0]
    built = []
    real = NeuronResult.to_dict
    monkeypatch.setattr(NeuronResult, "to_dict", lambda self: built.append(1) or real(self))
    assert main(["best-neuron", str(path), "--quiet", "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert built == []
    cert = tmp_path / "c.json"
    assert main(["best-neuron", str(path), "--quiet", "--json", "--out", str(cert)]) == 0
    written = json.loads(capsys.readouterr().out)
    assert built and cert.exists()
    for d in (alone, written):
        d.pop("seconds")
    written.pop("certificate")
    assert alone == written
