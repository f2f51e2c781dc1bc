"""CLI tests of ``relu-gating patterns`` (in-process, plus one subprocess run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from _patterns_reference import brute_force_patterns, cover, exact_witness_ok
from relu_gating.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture()
def xfile(tmp_path):
    X = np.random.default_rng(0).normal(size=(12, 2))
    p = tmp_path / "x.npy"
    np.save(p, X)
    return p, X


def test_json_summary_npy(xfile, capsys):
    p, X = xfile
    assert main(["patterns", str(p), "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("count", "rank", "n", "m", "seconds", "expected", "count_method", "complete"):
        assert key in out
    assert out["count"] == out["expected"] == cover(12, 3)
    assert (out["rank"], out["n"], out["m"], out["complete"]) == (3, 12, 3, True)
    assert out["count_method"] == "cover" and out["seconds"] >= 0


def test_out_file_roundtrip(xfile, tmp_path, capsys):
    p, X = xfile
    o = tmp_path / "pat.npz"
    assert main(["patterns", str(p), "--out", str(o), "--quiet"]) == 0
    assert "patterns" in capsys.readouterr().out
    with np.load(o) as z:
        n = int(z["n"])
        masks = np.unpackbits(z["masks_packed"], axis=1, count=n).astype(bool)
        W = z["witnesses"]
        Phi = z["Phi"]
    np.testing.assert_array_equal(Phi, np.c_[X, np.ones(12)])
    assert masks.shape == (cover(12, 3), 12) and W.shape == (cover(12, 3), 3)
    assert {tuple(r) for r in masks.tolist()} == brute_force_patterns(Phi)
    assert exact_witness_ok(Phi, masks, W)


def test_npz_phi_and_csv(tmp_path, capsys):
    g = np.array([(i, j) for i in range(3) for j in range(3)], float)
    Phi = np.c_[g, np.ones(9)]
    f = tmp_path / "phi.npz"
    np.savez(f, Phi=Phi)
    assert main(["patterns", str(f), "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["count"] == len(brute_force_patterns(Phi)) == out["expected"]
    assert out["count_method"] == "deletion-restriction"
    c = tmp_path / "x.csv"
    np.savetxt(c, g, delimiter=",")
    assert main(["patterns", str(c), "--json", "--quiet", "--no-check"]) == 0
    out2 = json.loads(capsys.readouterr().out)
    assert out2["count"] == out["count"] and out2["complete"] is None


def test_errors_exit_2(tmp_path, capsys):
    assert main(["patterns", str(tmp_path / "missing.npy")]) == 2
    assert "relu-gating patterns: error:" in capsys.readouterr().err
    X = np.random.default_rng(1).normal(size=(10, 2))
    p = tmp_path / "x.npy"
    np.save(p, X)
    assert main(["patterns", str(p), "--max-patterns", "5", "--quiet"]) == 2
    assert "max_patterns" in capsys.readouterr().err
    bad = tmp_path / "bad.npy"
    np.save(bad, np.array([[1.0, np.nan], [0.0, 1.0]]))
    assert main(["patterns", str(bad), "--quiet"]) == 2
    assert "NaN" in capsys.readouterr().err


def test_subprocess(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.random.default_rng(2).normal(size=(9, 3)))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "relu_gating", "patterns", str(p), "--json", "--quiet"],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["count"] == cover(9, 4) and out["complete"] is True


def test_oversize_is_refused_before_any_work_in_one_line(tmp_path, capsys, monkeypatch):
    """The default guard: what the plan says exceeds half the memory is refused (exit 2) before enumerating."""
    import relu_gating.cli.patterns as cli_patterns
    from relu_gating.search import plan as planmod

    p = tmp_path / "x.npy"
    np.save(p, np.random.default_rng(3).normal(size=(60, 3)))
    est = planmod.estimate("patterns", 60, 4, cover(60, 4))
    monkeypatch.setattr(planmod, "_physical_memory", lambda: 1.5 * est.memory_bytes)  # half of it: too little
    monkeypatch.setattr(cli_patterns, "enumerate_patterns", lambda *a, **k: pytest.fail("enumerated"))
    assert main(["patterns", str(p), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("relu-gating patterns: error: n = 60, m = 4: at most")
    assert f"estimated {est.describe()}: more than max_patterns = " in err
    assert "--max-patterns none" in err and "relu-gating best-neuron" in err and "branch and bound" in err
    monkeypatch.setattr(planmod, "_physical_memory", lambda: 4 * est.memory_bytes)  # fits: runs
    monkeypatch.undo()
    assert main(["patterns", str(p), "--quiet", "--max-patterns", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == cover(60, 4)


def test_timings_cover_every_phase(xfile, tmp_path, capsys):
    p, _ = xfile
    o = tmp_path / "pat.npz"
    assert main(["patterns", str(p), "--json", "--quiet", "--out", str(o)]) == 0
    out = json.loads(capsys.readouterr().out)
    phases = out["enumerate_seconds"] + out["check_seconds"] + out["write_seconds"]
    assert 0 < phases <= out["seconds"]
    assert main(["patterns", str(p)]) == 0
    cap = capsys.readouterr()
    assert "(enumerate " in cap.out and ", check " in cap.out
    assert "relu-gating patterns: n = 12, m = 3: at most 134 gating patterns (Cover's bound); estimated" in cap.err
