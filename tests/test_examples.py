"""The examples (and the benchmark's self-checks) run end to end as subprocesses.

Each example checks its own mathematical relations and exits 1 when one fails
(quickstart: the certified value equals the recomputed gain
``N_K([1, h]) - N_K([1])`` and ``verify`` accepts the certificate; greedy:
Prop 4.5, Thm 5.13 and the Thm 5.10 recursion at every step; CLI script: a
valid certificate passes ``verify`` and a tampered one is rejected), so a
zero exit status is a real test, not a smoke test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args: list[str], cwd: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["MPLBACKEND"] = "Agg"
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_quickstart_runs_certifies_and_verifies(tmp_path):
    proc = _run([sys.executable, os.path.join(ROOT, "examples", "quickstart.py"), "--n", "40", "--seed", "1"],
                cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "verify: VALID" in out
    assert "certified    True" in out
    value = float(re.search(r"value\s+([0-9.]+)\s+= G_H", out).group(1))
    bound = float(re.search(r"upper bound\s+([0-9.]+)", out).group(1))
    check = float(re.search(r"N_K\(\[1, h\]\) - N_K\(\[1\]\) = ([0-9.]+)", out).group(1))
    sampled = float(re.search(r"random sampling \(20,000 neurons\): best ([0-9.]+)", out).group(1))
    assert value <= bound + 1e-9
    assert abs(value - check) <= 1e-9
    # the uncertified baseline may not beat the certified optimum
    assert sampled <= value + 1e-9


@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_greedy_coverage_small_run_writes_plot(tmp_path):
    png = tmp_path / "greedy.png"
    proc = _run([sys.executable, os.path.join(ROOT, "examples", "greedy_coverage.py"), "--n", "24", "--K", "4",
                 "--T", "3", "--random-layers", "5", "--out", str(png)], cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(0 failures)" in proc.stdout
    rows = [ln.split() for ln in proc.stdout.splitlines() if re.match(r"^\s*[1-3]\s+0\.\d+", ln)]
    assert [int(r[0]) for r in rows] == [1, 2, 3]
    # captured features grow and stay below K = 4; deficits shrink
    N = [float(r[2]) for r in rows]
    assert all(a <= b + 1e-12 for a, b in zip(N, N[1:])) and N[-1] <= 4 + 1e-9
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_cli_backend_script(tmp_path):
    proc = _run(["bash", os.path.join(ROOT, "examples", "cli_backend.sh")], cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "exit 0: certificate valid" in proc.stdout
    assert "exit 1: tampered certificate rejected" in proc.stdout
    assert re.search(r"certified\s+True", proc.stdout)


@pytest.mark.slow
def test_benchmark_scip_formulation_matches_brute_force(tmp_path):
    pytest.importorskip("pyscipopt")
    proc = _run([sys.executable, os.path.join(ROOT, "benchmarks", "best_neuron.py"), "--selfcheck",
                 "--scip-time", "60"], cwd=str(tmp_path), timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(" ok") == 16 and "MISMATCH" not in proc.stdout


@pytest.mark.slow
def test_benchmark_quick_run(tmp_path):
    pytest.importorskip("pyscipopt")
    out = tmp_path / "bench.json"
    proc = _run([sys.executable, os.path.join(ROOT, "benchmarks", "best_neuron.py"), "--quick", "--repeats", "1",
                 "--scip-time", "10", "--exhaustive-max", "200", "--cases", "n16d3", "--json", str(out)],
                cwd=str(tmp_path), timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import json

    row = json.loads(out.read_text())[0]
    cert, scip = row["certified"], row["scip"]
    assert cert["certified"]
    # SCIP's recomputed value is a genuine neuron: it can never beat the certified optimum
    assert scip["value"] <= cert["value"] + 1e-9
    # the exhaustive sample is made of genuine neurons too
    assert row["exhaustive"]["naive"]["value"] <= cert["value"] + 1e-9
    # SCIP's dual bound is an upper bound whenever its box contains the optimum
    if scip["box_contains_optimum"]:
        assert scip["dual"] >= cert["value"] - 1e-6
